"""Online design: what one statement's first run would have the database become, so
that the server does the work the client does now.

A statement the server cannot finish over the onions it has -- a sum of a column without
a Sum onion, ``sum(l_extendedprice * (1 - l_discount))``, a grouping by ``extract(year
from o_orderdate)``, a filter ``o_comment NOT LIKE '%special%requests%'`` -- is answered
by the client (split execution, or the client's aggregate over fetched rows).  The
designer (``adaptive-db advise``) proposes offline what would let the server do it; the
same analysis (design.py) runs here on the statement as it is compiled, and what it
proposes that the tables do not have yet becomes the plan's wants
(:class:`~.needs.DesignNeed`):

* a column's pending Sum onion (a column created with online design has one, built on
  first use: schema/columns.py) -- :class:`~.needs.BuildNeed`;
* a precomputed expression over one table's row, in the onions its uses ask for (Sum,
  Eq, Ord) -- :class:`~.needs.ExpressionNeed`.

Wants, not needs: the plan runs as compiled, and the executor builds them where an
adaptation may run (outside the application's transactions, peel mode not ``off``), then
the statement is compiled again and the server does the work.  Each table has a budget of
bytes per row (the configuration's ``design_budget``): what would exceed it is not
wanted.  The bytes are estimated per onion (:data:`ROW_BYTES`) and recorded with what was
built (``TableMeta.designed``): ``adaptive-db layers`` lists them in the order they
appeared, which is also what the provider sees.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlglot import exp
from sqlglot.errors import SqlglotError

from ..catalog.metadata import Catalog, TableMeta
from ..catalog.onions import Onion
from ..catalog.precomputed import compile_expression, parse
from ..errors import AdaptiveError
from .design import Proposal, analyse
from .needs import BuildNeed, DesignNeed, ExpressionNeed

# what one onion adds to a row, about (a value's ciphertext and its column's share of
# the tuple): ASHE's two int8 in an array; RND over DET's block or OPE's 16 bytes
ROW_BYTES: dict[Onion, int] = {Onion.SUM: 40, Onion.EQ: 48, Onion.ORD: 48}

_ORDER = {"Eq": 0, "Ord": 1, "Sum": 2}
_INTEGERS = ("smallint", "integer", "bigint")


def wanted(
    catalog: Catalog, stmt: exp.Expression, budget: Callable[[str], int]
) -> list[DesignNeed]:
    """What the online design would build for ``stmt`` within each table's ``budget``
    (bytes per row), in the order the analysis found them."""
    metas = _read_tables(catalog, stmt)
    if not any(budget(name) for name in metas):
        return []
    proposal = Proposal()
    try:
        types = {
            name: {c: col.type for c, col in meta.columns.items()} for name, meta in metas.items()
        }
        analyse(types, stmt, "", proposal)
    except (SqlglotError, AdaptiveError):
        return []  # (a shape the analysis does not read: nothing wanted)
    spent = {name: meta.designed_bytes for name, meta in metas.items()}
    out: list[DesignNeed] = []

    def take(table: str, need: DesignNeed) -> None:
        cost = row_bytes(need)
        if spent[table] + cost <= budget(table):
            spent[table] += cost
            out.append(need)

    for (table, column), onions in proposal.onions.items():
        if "Sum" in onions and Onion.SUM in metas[table].columns[column].on_demand:
            take(table, BuildNeed(table, column, Onion.SUM))
    for (table, text), kinds in proposal.precomputed.items():
        meta = metas[table]
        expression = _canonical(meta, text)
        if expression is None or any(c.expression == expression for c in meta.precomputed.values()):
            continue
        if expression in meta.declined:
            continue  # (a row's value did not fit it: retired, not proposed again)
        sql_type = proposal.precomputed_type[(table, text)]
        if not stored_exactly(sql_type) or not worth_a_column(meta, expression, sql_type):
            continue
        layers = tuple(Onion(k) for k in sorted(kinds, key=_ORDER.__getitem__))
        take(table, ExpressionNeed(table, expression, sql_type, layers))
    return out


def row_bytes(need: DesignNeed) -> int:
    """What ``need`` adds to each row of its table, counted against the budget."""
    onions = need.onions if isinstance(need, ExpressionNeed) else (need.onion,)
    return sum(ROW_BYTES[o] for o in onions)


def stored_exactly(sql_type: str) -> bool:
    """Whether a precomputed column of ``sql_type`` holds the expression as PostgreSQL
    evaluates it.  Not integer arithmetic (``a * b`` over integers): PostgreSQL types it
    integer, raises on its overflow and sums it as bigint, where the stored column, wide
    enough for every exact value, would answer in another type and without the error.
    (A numeric's bound is capped at the client engine's 38 digits, as the designer caps
    it, and its Sum onion is ASHE's 96 bits: a row written past either -- three
    numeric(15,2) factors near their maximum -- retires the column, and the write runs
    without it: adapt/designed.py ``retire``.)"""
    found = re.fullmatch(r"numeric\((\d+),(\d+)\)", sql_type)
    return sql_type not in _INTEGERS and (found is None or found.group(2) != "0")


def worth_a_column(meta: TableMeta, expression: str, sql_type: str) -> bool:
    """Whether a column of its own for ``expression`` would let the server do what no
    onion lets it do now.  A predicate is worth one only where it is a LIKE (a
    comparison the columns' own onions decide already), and not over a column whose
    Substr onion (built or pending) has the server filter its candidates: one column per
    pattern would cost more than it saves."""
    tree = parse(expression, "design")
    if sql_type != "boolean":
        return True
    if not tree.find(exp.Like, exp.ILike):
        return False
    return not any(
        Onion.SUBSTR in meta.columns[c.name.lower()].onions
        or Onion.SUBSTR in meta.columns[c.name.lower()].on_demand
        for c in tree.find_all(exp.Column)
        if c.name.lower() in meta.columns
    )


def _read_tables(catalog: Catalog, stmt: exp.Expression) -> dict[str, TableMeta]:
    """The catalog's tables ``stmt`` names (not a CTE's or another schema's)."""
    out: dict[str, TableMeta] = {}
    for table in stmt.find_all(exp.Table):
        if table.args.get("db"):
            continue
        meta = catalog.tables.get(table.name.lower())
        if meta is not None:
            out[meta.name] = meta
    return out


def _canonical(meta: TableMeta, text: str) -> str | None:
    """The expression's text as a precomputed column records it (None: not computable)."""
    try:
        return compile_expression(text, meta.columns, f"design of {meta.name}").text
    except AdaptiveError:
        return None


__all__ = ["ROW_BYTES", "row_bytes", "stored_exactly", "wanted", "worth_a_column"]
