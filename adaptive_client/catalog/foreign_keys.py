"""Foreign keys, enforced by the server on ciphertexts.

A referencing column takes the DET key of the column it references (and its OPE key,
when both have an Ord onion): an *implied join group*.  Its Eq onion sits at DET from
the start, like a key's, so the server can check each value against the referenced
key's DET ciphertexts, and run ``ON DELETE CASCADE`` itself.  What the provider learns
from it: which rows of the two tables hold equal values (the join), from the first
insert -- ``adaptive-db layers`` shows the group.

``ON DELETE SET NULL`` nulls the Eq onion column only; a trigger on the server nulls the
column's other onions with it (it names only anonymized columns).  ``ON UPDATE CASCADE``
would rewrite the Eq ciphertext alone, leaving the other onions stale, so its columns
keep only their Eq onion.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql

from ..errors import UndefinedTable, UnsupportedQuery
from ..values.encodings import full_range, ranged, with_python_years
from .keys import new_key
from .metadata import Catalog, ForeignKeyMeta, TableMeta
from .onions import Onion

# Encoded alike: the same DET ciphertexts for the same values.
_PARAMETERS_MATTER = {"numeric", "char"}


def _ref_columns(catalog: Catalog, spec: Any, fk: Any) -> list[str]:
    if fk.ref_table == spec.name:
        pk, uniques = spec.pk, [u for _, u in spec.uniques]
    else:
        if not catalog.has_table(fk.ref_table):
            raise UndefinedTable(f'relation "{fk.ref_table}" does not exist')
        ref = catalog.table(fk.ref_table)
        pk, uniques = ref.primary_key, list(ref.unique_keys.values())
    cols = fk.ref_columns
    known = spec.types if fk.ref_table == spec.name else catalog.table(fk.ref_table).columns
    for col in cols or []:
        if col not in known:
            raise pg_errors.UndefinedColumn(
                f'column "{col}" referenced in foreign key constraint does not exist'
            )
    if cols is None:
        if not pk:
            raise pg_errors.InvalidForeignKey(
                f'there is no primary key for referenced table "{fk.ref_table}"'
            )
        cols = list(pk)
    if len(cols) != len(fk.columns):
        raise pg_errors.InvalidForeignKey(
            "number of referencing and referenced columns for foreign key disagree"
        )
    if sorted(cols) != sorted(pk) and all(sorted(cols) != sorted(u) for u in uniques):
        raise pg_errors.InvalidForeignKey(
            "there is no unique constraint matching given keys for referenced table "
            f'"{fk.ref_table}"'
        )
    return list(cols)


def _type_of(catalog: Catalog, spec: Any, table: str, column: str) -> Any:
    if table == spec.name:
        return spec.types[column]
    return catalog.table(table).column(column).type


def shared_keys(catalog: Catalog, spec: Any, name: str) -> dict[str, tuple[dict[str, bytes], str]]:
    """For each column of the new table that references (or, within the table, is
    referenced by) a key: the DET/OPE keys it must share and its group's label."""
    out: dict[str, tuple[dict[str, bytes], str]] = {}
    for fk in spec.foreign_keys:
        fk.ref_columns = _ref_columns(catalog, spec, fk)
        for col, ref_col in zip(fk.columns, fk.ref_columns, strict=True):
            a, b = spec.types[col], _type_of(catalog, spec, fk.ref_table, ref_col)
            if ranged(b) and not full_range(b):
                # (a column made before dates held PostgreSQL's whole range: the new one
                # takes its encoding, whose ciphertexts the key compares)
                a = spec.types[col] = with_python_years(a)
            if a.name != b.name or (a.name in _PARAMETERS_MATTER and a != b):
                raise UnsupportedQuery(
                    f"foreign key {name}.{col} ({a.sql()}) references {fk.ref_table}.{ref_col} "
                    f"({b.sql()}): over ciphertexts both columns need the same type",
                    "foreign key between types",
                )
            label = f"{fk.ref_table}.{ref_col}"
            if fk.ref_table == name and not catalog.has_table(name):
                # a self-reference in a new table: both columns take fresh keys (in an
                # existing table the referenced column keeps its own, which other
                # tables' references may share already)
                keys, label = out.get(ref_col, ({"DET": new_key(), "OPE": new_key()}, label))
                out[ref_col] = (keys, label)
            else:
                ref = catalog.table(fk.ref_table).column(ref_col)
                eq = ref.onions.get(Onion.EQ)
                if eq is None or "DET" not in eq.keys:
                    raise UnsupportedQuery(
                        f"{fk.ref_table}.{ref_col} has no Eq onion to reference",
                        "REFERENCES",
                    )
                keys = {"DET": eq.keys["DET"]}
                ord_ = ref.onions.get(Onion.ORD)
                if ord_ is not None and "OPE" in ord_.keys:
                    keys["OPE"] = ord_.keys["OPE"]
                label = ref.join_group or label
            if col in out and out[col][0].get("DET") != keys.get("DET"):
                raise UnsupportedQuery(
                    f"{name}.{col} references two keys that are encrypted under different "
                    "keys; a column may reference one key group",
                    "REFERENCES",
                )
            out[col] = (keys, label)
    return out


def onions_kept(spec: Any, column: str, onions: tuple[Onion, ...]) -> tuple[Onion, ...]:
    """A column whose key is rewritten by the server (``ON UPDATE CASCADE``) keeps only
    its Eq onion: the server cannot rewrite the others."""
    for fk in spec.foreign_keys:
        if column in fk.columns and fk.on_update in ("CASCADE", "SET DEFAULT"):
            return tuple(o for o in onions if o is Onion.EQ) or onions
    return onions


def resolve(catalog: Catalog, spec: Any, meta: TableMeta) -> list[ForeignKeyMeta]:
    out = []
    for i, fk in enumerate(spec.foreign_keys):
        for action in (fk.on_delete, fk.on_update):
            if action == "SET DEFAULT" and any(meta.column(c).has_default for c in fk.columns):
                raise UnsupportedQuery(
                    f"ON ... SET DEFAULT on {meta.name}.{', '.join(fk.columns)}, which has "
                    "a default: the server cannot write its encryption",
                    "SET DEFAULT",
                )
        out.append(
            ForeignKeyMeta(
                name=fk.name or f"{meta.name}_{'_'.join(fk.columns)}_fkey",
                anon=catalog.anon_index(meta.name, f"__fkey{i}__"),
                columns=list(fk.columns),
                ref_table=fk.ref_table,
                ref_columns=list(fk.ref_columns),
                on_delete=fk.on_delete,
                on_update=fk.on_update,
            )
        )
    return out


def _eq(meta: TableMeta, column: str) -> str:
    oc = meta.column(column).onions.get(Onion.EQ)
    if oc is None:
        raise UnsupportedQuery(f"{meta.name}.{column} has no Eq onion", "REFERENCES")
    return oc.anon


def server_constraints(
    catalog: Catalog, meta: TableMeta, fks: list[ForeignKeyMeta]
) -> list[sql.Composable]:
    parts: list[sql.Composable] = []
    for fk in fks:
        ref = meta if fk.ref_table == meta.name else catalog.table(fk.ref_table)
        # DEFERRABLE (INITIALLY IMMEDIATE: checked per statement, as declared) so that a
        # join adjustment may re-key a group's columns one statement at a time
        parts.append(
            sql.SQL(
                "CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {} ({}) ON DELETE {} ON UPDATE {} "
                "DEFERRABLE"
            ).format(
                sql.Identifier(fk.anon),
                sql.SQL(", ").join(sql.Identifier(_eq(meta, c)) for c in fk.columns),
                sql.Identifier(ref.anon),
                sql.SQL(", ").join(sql.Identifier(_eq(ref, c)) for c in fk.ref_columns),
                sql.SQL(fk.on_delete),
                sql.SQL(fk.on_update),
            )
        )
    return parts


def trigger_name(meta: TableMeta) -> str:
    return f"{meta.anon}_nulls"


def set_null_trigger(conn: psycopg.Connection[Any], meta: TableMeta) -> None:
    """Null a column's other onions when the server nulls its Eq onion (SET NULL)."""
    nulled = {
        c
        for fk in meta.foreign_keys
        if "SET" in fk.on_delete or "SET" in fk.on_update
        for c in fk.columns
    }
    fn = sql.Identifier(trigger_name(meta))
    conn.execute(sql.SQL("DROP FUNCTION IF EXISTS {}() CASCADE").format(fn))
    if not nulled:
        return
    body = []
    for c in sorted(nulled):
        col = meta.column(c)
        eq = sql.Identifier(_eq(meta, c))
        others = [oc.anon for oc in col.onions.values() if oc.onion is not Onion.EQ]
        if not others:
            continue
        body.append(
            sql.SQL("IF NEW.{} IS NULL AND OLD.{} IS NOT NULL THEN {} END IF;").format(
                eq,
                eq,
                sql.SQL(" ").join(
                    sql.SQL("NEW.{} := NULL;").format(sql.Identifier(o)) for o in others
                ),
            )
        )
    if not body:
        return
    conn.execute(
        sql.SQL(
            "CREATE FUNCTION {}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {} "
            "RETURN NEW; END $$"
        ).format(fn, sql.SQL(" ").join(body))
    )
    conn.execute(
        sql.SQL("CREATE TRIGGER {} BEFORE UPDATE ON {} FOR EACH ROW EXECUTE FUNCTION {}()").format(
            sql.Identifier("nulls"), sql.Identifier(meta.anon), fn
        )
    )


__all__ = [
    "onions_kept",
    "resolve",
    "server_constraints",
    "set_null_trigger",
    "shared_keys",
    "trigger_name",
]
