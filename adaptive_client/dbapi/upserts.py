"""``INSERT ... ON CONFLICT DO UPDATE`` whose new values are computed from the rows
(``SET hits = t.hits + 1``, ``SET qty = t.qty + EXCLUDED.qty``), which one statement over
ciphertexts cannot compute: run as the steps PostgreSQL takes for each proposed row.

For each row of the VALUES list, in order:

1. ``INSERT ... ON CONFLICT (keys) DO NOTHING`` of that row: inserted, the row is done;
2. else the conflicting row is locked (``SELECT ... WHERE keys = the row's FOR UPDATE``):
   gone meanwhile (a concurrent delete), the insert is tried again;
3. and updated: ``UPDATE t SET ... WHERE keys = the row's [AND the DO UPDATE's WHERE]``,
   ``EXCLUDED.c`` read as the proposed row's value of ``c`` -- an UPDATE, whose values
   computed from the row the client computes as for any UPDATE.

As in PostgreSQL, two proposed rows with one key are 21000 ("cannot affect row a second
time"), RETURNING gives the inserted or updated rows in order, the row count counts
both, and the statement is one unit: in autocommit mode its own transaction, else a
failure fails the application's transaction (whose savepoint undoes every step).  Under
REPEATABLE READ or SERIALIZABLE a conflicting row committed after the transaction's
snapshot is invisible to step 2: PostgreSQL's 40001 is raised, as its own ON CONFLICT
raises it then.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import psycopg
from sqlglot import exp

from ..catalog.metadata import Catalog, ColumnMeta, TableMeta
from ..compile.writes import is_default
from ..errors import UnsupportedQuery
from ..syntax.names import folded, show_names, shown
from .session_protocol import Session, StatementCursor
from .statement_units import as_one_statement

# how many times a row's insert is tried again after its conflicting row vanished
_ATTEMPTS = 3

Run = Callable[[StatementCursor, str, Any], None]


def applies(stmt: exp.Expression) -> bool:
    """Whether ``stmt`` is an INSERT of a VALUES list with ON CONFLICT DO UPDATE."""
    if not isinstance(stmt, exp.Insert) or not isinstance(stmt.expression, exp.Values):
        return False
    conflict = stmt.args.get("conflict")
    action = conflict.args.get("action") if isinstance(conflict, exp.OnConflict) else None
    return action is not None and action.name.upper() == "DO UPDATE"


class _Upsert:
    """One statement's parts, its names as written (for the steps' SQL)."""

    def __init__(self, catalog: Catalog, stmt: exp.Insert, refused: UnsupportedQuery) -> None:
        self.refused = refused
        written: Any = stmt.copy().transform(show_names)
        target = written.this
        columns = None
        if isinstance(target, exp.Schema):
            columns = [c.name for c in target.expressions]
            target = target.this
        assert isinstance(target, exp.Table)
        meta = catalog.table(folded(target.name, True))
        self.table = target
        self.alias = target.alias or target.name
        self.columns = columns if columns is not None else _written_columns(meta)
        conflict: exp.OnConflict = written.args["conflict"]
        self.keys = _conflict_keys(meta, conflict, refused)
        missing = [k for k in self.keys if k not in self.columns]
        if missing:
            raise refused  # (a key drawn from its default: nothing to find the row by)
        self.sets = list(conflict.expressions)
        where = conflict.args.get("where")
        self.where = where.this if where is not None else None
        self.returning = written.args.get("returning")
        self.defaults = {shown(name): _default_of(col) for name, col in meta.columns.items()}
        self.rows = [list(row.expressions) for row in written.expression.expressions]
        for row in self.rows:
            if len(row) != len(self.columns):
                raise refused  # (PostgreSQL's own error comes from the insert, below)

    def insert(self, row: list[exp.Expression]) -> str:
        into = exp.Schema(
            this=self.table.copy(), expressions=[exp.to_identifier(c, True) for c in self.columns]
        )
        node = exp.Insert(
            this=into,
            expression=exp.Values(expressions=[exp.Tuple(expressions=[e.copy() for e in row])]),
            conflict=exp.OnConflict(
                conflict_keys=[exp.to_identifier(k, True) for k in self.keys],
                action=exp.var("DO NOTHING"),
            ),
            returning=self.returning.copy() if self.returning is not None else None,
        )
        return node.sql("postgres")

    def _matching(self, row: list[exp.Expression]) -> Any:
        proposed = dict(zip(self.columns, row, strict=True))
        if any(is_default(proposed[k]) for k in self.keys):
            raise self.refused  # (a key drawn from its default)
        conditions = [
            exp.EQ(this=exp.column(k, table=self.alias, quoted=True), expression=proposed[k].copy())
            for k in self.keys
        ]
        return exp.and_(*conditions)

    def lock(self, row: list[exp.Expression]) -> str:
        return (
            exp.select("1")
            .from_(self.table.copy())
            .where(self._matching(row))
            .lock(update=True)
            .sql("postgres")
        )

    def update(self, row: list[exp.Expression]) -> str:
        proposed = dict(zip(self.columns, row, strict=True))

        def excluded(node: exp.Expression) -> exp.Expression:
            if isinstance(node, exp.Column) and node.table.lower() == "excluded":
                value = proposed.get(node.name)
                if value is None or is_default(value):
                    value = self.defaults.get(node.name)
                if value is None:
                    raise UnsupportedQuery(
                        f"ON CONFLICT DO UPDATE reading EXCLUDED.{node.name}, a default the "
                        "client does not compute twice",
                        "ON CONFLICT DO UPDATE",
                    )
                return exp.paren(value.copy())
            return node

        sets = [s.copy().transform(excluded) for s in self.sets]
        for s in sets:  # (a SET names the column alone: UPDATE's grammar)
            if isinstance(s, exp.EQ) and isinstance(s.this, exp.Column):
                s.set("this", exp.column(s.this.name, quoted=True))
        where: Any = self._matching(row)
        if self.where is not None:
            where = exp.and_(where, exp.paren(self.where.copy().transform(excluded)))
        node = exp.Update(
            this=self.table.copy(),
            expressions=sets,
            where=exp.Where(this=where),
            returning=self.returning.copy() if self.returning is not None else None,
        )
        return node.sql("postgres")


def _written_columns(meta: TableMeta) -> list[str]:
    return [shown(c) for c in meta.columns]


def _default_of(col: ColumnMeta) -> exp.Expression | None:
    """The value a column not written gets, where computing it again gives the same:
    NULL for a column without a default; None for any other default."""
    if col.default is not None or col.default_sql or col.sequence:
        return None
    return exp.Null()


def _conflict_keys(meta: TableMeta, conflict: exp.OnConflict, refused: Exception) -> list[str]:
    keys = conflict.args.get("conflict_keys") or []
    if keys:
        out = []
        for k in keys:
            col = k.this if isinstance(k, exp.Ordered) else k
            if not isinstance(col, exp.Column | exp.Identifier):
                raise refused
            out.append(col.name)
        return out
    constraint = conflict.args.get("constraint")
    if (
        constraint is not None
        and constraint.name == f"{shown(meta.name)}_pkey"
        and meta.primary_key
    ):
        return [shown(k) for k in meta.primary_key]
    raise refused


def _parameter(name: str, params: Any) -> Any:
    """A placeholder's value: a mapping's by its key, else the positional one the parser
    named ``u<index>``."""
    if isinstance(params, Mapping):
        return params.get(name)
    return params[int(name[1:])] if params is not None else None


def _key_values(upsert: _Upsert, row: list[exp.Expression], params: Any) -> tuple[Any, ...] | None:
    """The proposed row's key values where the statement gives them as constants or
    parameters (None where it does not: then no repeat is looked for)."""
    proposed = dict(zip(upsert.columns, row, strict=True))
    out: list[tuple[Any, ...]] = []
    for k in upsert.keys:
        node = proposed[k]
        if isinstance(node, exp.Placeholder):
            out.append(("param", _parameter(node.name, params)))
        elif isinstance(node, exp.Literal):
            out.append(("literal", node.this, node.is_string))
        else:
            return None
    return tuple(out)


def run_upsert(
    cur: StatementCursor,
    stmt: exp.Insert,
    params: Any,
    refused: UnsupportedQuery,
    run: Run,
) -> None:
    """Run ``stmt`` by the steps of the module's docstring, its result on ``cur``."""
    conn = cur.connection
    upsert = _Upsert(conn.catalog, stmt, refused)

    def steps() -> tuple[list[tuple[Any, ...]], Any, int]:
        rows: list[tuple[Any, ...]] = []
        desc: Any = None
        total = 0
        seen: set[tuple[Any, ...]] = set()
        for row in upsert.rows:
            key = _key_values(upsert, row, params)
            if key is not None:
                if key in seen:
                    raise psycopg.errors.CardinalityViolation(
                        "ON CONFLICT DO UPDATE command cannot affect row a second time"
                    )
                seen.add(key)
            done, out, desc = _one_row(conn, upsert, row, params, run)
            rows += out
            total += done
        return rows, desc, total

    rows, desc, total = as_one_statement(conn, steps)
    cur.set_result(rows, desc if upsert.returning is not None else None, total)


def _one_row(
    conn: Session, upsert: _Upsert, row: list[exp.Expression], params: Any, run: Run
) -> tuple[int, list[tuple[Any, ...]], Any]:
    """One proposed row inserted or its conflicting row updated: (rows written, the
    rows RETURNING gives, their description)."""
    step = conn.cursor()
    for _ in range(_ATTEMPTS):
        run(step, upsert.insert(row), params)
        rows, desc, count = step.result()
        if count:
            return count, list(rows), desc
        run(step, upsert.lock(row), params)
        if step.result()[0]:
            run(step, upsert.update(row), params)
            rows, desc, count = step.result()
            return count, list(rows), desc
    raise psycopg.errors.SerializationFailure("could not serialize access due to concurrent update")


__all__ = ["applies", "run_upsert"]
