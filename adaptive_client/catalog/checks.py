"""CHECK constraints, enforced by the server over ciphertexts where it can.

A check that compares a column with constants is rewritten over the onion that can
decide it: ``=``, ``<>``, ``IN`` over the Eq onion at DET, ``<``, ``<=``, ``>``, ``>=``,
``BETWEEN`` over the Ord onion at OPE (exact-OPE types only: numbers, dates,
timestamps), ``IS [NOT] NULL`` over any onion; combined with AND, OR, NOT.  The onion
starts at that layer, so the provider learns from the first insert what it would
learn once such a comparison is queried -- ``adaptive-db layers`` shows it.  Any other
check is refused when the table is created, naming the constraint: never dropped.
"""

from __future__ import annotations

from typing import Any

from psycopg import sql
from sqlglot import exp

from ..errors import LayerFloorViolation, UnsupportedQuery
from ..syntax.sqltext import parse
from . import defaults, recipes
from .metadata import ColumnMeta, OnionColumn, TableMeta
from .onions import Onion, layer_index

_ORDER: dict[type, str] = {exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


class _Refused(Exception):
    pass


def default_name(table: str, expr: exp.Expression, column: str | None) -> str:
    """PostgreSQL's name for an unnamed check: table_column_check when it names one
    column, else table_check."""
    cols = {c.name.lower() for c in expr.find_all(exp.Column)}
    if column is None and len(cols) == 1:
        column = cols.pop()
    return f"{table}_{column}_check" if column else f"{table}_check"


def _onion(meta: TableMeta, col: ColumnMeta, onion: Onion, layer: str) -> OnionColumn:
    """``col``'s ``onion``, made to start at ``layer`` (before the table exists)."""
    oc = col.onions.get(onion)
    if oc is None or layer not in oc.stack:
        raise _Refused
    if oc.floor is not None and layer_index(oc.stack, layer) > layer_index(oc.stack, oc.floor):
        raise LayerFloorViolation(
            f"{meta.name}.{col.name}: a CHECK constraint needs its {onion} onion at {layer}, "
            f"below its floor {oc.floor}"
        )
    if layer_index(oc.stack, layer) > layer_index(oc.stack, oc.layer):
        oc.layer = layer
    return oc


def _constant(col: ColumnMeta, node: exp.Expression) -> Any:
    ok, value = defaults.constant(node)
    if not ok:
        raise _Refused
    return col.encoding.coerce(value)


def _column(meta: TableMeta, node: exp.Expression) -> ColumnMeta:
    if not isinstance(node, exp.Column):
        raise _Refused
    return meta.column(node.name)


def _literal(col: ColumnMeta, oc: OnionColumn, value: Any) -> sql.Composable:
    if value is None:
        return sql.SQL("NULL")
    return sql.Literal(recipes.encrypt(col, oc, value))


def _compare(meta: TableMeta, left: exp.Expression, right: exp.Expression, op: str) -> Any:
    if isinstance(left, exp.Column):
        col, const = _column(meta, left), right
    else:
        col, const, op = _column(meta, right), left, _FLIP.get(op, op)
    value = _constant(col, const)
    if op in ("=", "<>"):
        oc = _onion(meta, col, Onion.EQ, "DET")
    else:
        if not col.encoding.ope_exact:
            raise _Refused
        oc = _onion(meta, col, Onion.ORD, "OPE")
    return sql.SQL("({} {} {})").format(
        sql.Identifier(oc.anon), sql.SQL(op), _literal(col, oc, value)
    )


def _server(meta: TableMeta, node: exp.Expression) -> Any:
    if isinstance(node, exp.Paren):
        return _server(meta, node.this)
    if isinstance(node, exp.And | exp.Or):
        word = "AND" if isinstance(node, exp.And) else "OR"
        return sql.SQL("({} {} {})").format(
            _server(meta, node.this), sql.SQL(word), _server(meta, node.expression)
        )
    if isinstance(node, exp.Not):
        return sql.SQL("(NOT {})").format(_server(meta, node.this))
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        col = _column(meta, node.this)
        return sql.SQL("({} IS NULL)").format(sql.Identifier(next(iter(col.onions.values())).anon))
    if isinstance(node, exp.EQ | exp.NEQ):
        return _compare(meta, node.this, node.expression, "=" if isinstance(node, exp.EQ) else "<>")
    if type(node) in _ORDER:
        return _compare(meta, node.this, node.expression, _ORDER[type(node)])
    if isinstance(node, exp.Between):
        return sql.SQL("({} AND {})").format(
            _compare(meta, node.this, node.args["low"], ">="),
            _compare(meta, node.this, node.args["high"], "<="),
        )
    if isinstance(node, exp.In) and not node.args.get("query"):
        col = _column(meta, node.this)
        oc = _onion(meta, col, Onion.EQ, "DET")
        values = [_literal(col, oc, _constant(col, e)) for e in node.expressions]
        return sql.SQL("({} IN ({}))").format(sql.Identifier(oc.anon), sql.SQL(", ").join(values))
    raise _Refused


def add_checks(
    meta: TableMeta,
    checks: list[tuple[str | None, exp.Expression, str | None]],
    anon_of: Any,
) -> list[sql.Composable]:
    """The server constraints of ``checks`` (recorded in ``meta``); the onions they use
    start at the layers they need.  ``anon_of(name)`` names a constraint."""
    parts: list[sql.Composable] = []
    for name, expr, column in checks:
        plain = name or default_name(meta.name, expr, column)
        try:
            condition = _server(meta, expr)
        except _Refused:
            raise UnsupportedQuery(
                f'CHECK constraint "{plain}" ({expr.sql("postgres")}) cannot be enforced over '
                "ciphertexts: only comparisons of a column with constants (=, <>, IN, and "
                "<, <=, >, >=, BETWEEN on numbers and dates), IS NULL, AND, OR, NOT",
                "CHECK",
            ) from None
        # (a domain's check comes named, and marked with the column's declared type)
        anon = expr.meta.get("anon") or anon_of(plain)
        meta.constraints[anon] = plain
        entry = {"name": plain, "anon": anon, "sql": expr.sql("postgres")}
        if expr.meta.get("domain"):
            entry["domain"] = expr.meta["domain"]
        meta.checks.append(entry)
        parts.append(sql.SQL("CONSTRAINT {} CHECK {}").format(sql.Identifier(anon), condition))
    return parts


def parse_condition(text: str) -> exp.Expression:
    """A check's condition from its recorded text."""
    return parse(f"SELECT {text}", names_folded=True)[0].expressions[0]


def columns_of(text: str) -> set[str]:
    """The columns a recorded check reads (PostgreSQL drops a check with its column)."""
    return {c.name.lower() for c in parse_condition(text).find_all(exp.Column)}


def drop_all(conn: Any, meta: TableMeta) -> None:
    """Drop the table's CHECK constraints on the server (their constants are ciphertexts
    under the onions' keys: a re-key makes them wrong)."""
    for c in meta.checks:
        conn.execute(
            sql.SQL("ALTER TABLE {} DROP CONSTRAINT IF EXISTS {}").format(
                sql.Identifier(meta.anon), sql.Identifier(c["anon"])
            )
        )


def restore_all(conn: Any, meta: TableMeta) -> None:
    """Add the table's CHECK constraints again, their constants encrypted under the
    onions' current keys."""
    recorded, meta.checks = meta.checks, []
    for c in recorded:
        expr = parse_condition(c["sql"])
        anon = c["anon"]
        if c.get("domain"):
            expr.meta["domain"] = c["domain"]
        for part in add_checks(meta, [(c["name"], expr, None)], lambda _, a=anon: a):
            conn.execute(sql.SQL("ALTER TABLE {} ADD {}").format(sql.Identifier(meta.anon), part))


__all__ = ["add_checks", "columns_of", "default_name", "drop_all", "parse_condition", "restore_all"]
