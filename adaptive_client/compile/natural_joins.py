"""NATURAL JOIN written out as the USING join PostgreSQL reads it as.

``a NATURAL JOIN b`` joins on every column name the left input and ``b`` share, in the
left input's order (none shared: a cross join, ``ON TRUE`` for an outer one).  The
client's paths know ``USING``; this pass gives them that, from the catalog's column
names, so that no path reads a NATURAL join as the cross join it looks like without them.
A NATURAL join over a derived table (whose column names the catalog does not hold) is
refused.
"""

from __future__ import annotations

from sqlglot import exp

from ..catalog.metadata import Catalog
from ..errors import UnsupportedQuery


def with_natural_joins(catalog: Catalog, stmt: exp.Expression) -> exp.Expression:
    """``stmt`` with each NATURAL join a USING (or ON TRUE) join; the same object where
    it has none (the parse cache's trees stay as they are)."""
    if not any(j.args.get("method") == "NATURAL" for j in stmt.find_all(exp.Join)):
        return stmt
    stmt = stmt.copy()
    for select in stmt.find_all(exp.Select):
        _rewrite(catalog, select)
    return stmt


def _columns(catalog: Catalog, source: exp.Expression | None) -> list[str] | None:
    if isinstance(source, exp.Table) and catalog.has_table(source.name.lower()):
        return list(catalog.table(source.name.lower()).columns)
    return None


def _rewrite(catalog: Catalog, select: exp.Select) -> None:
    joins = select.args.get("joins") or []
    if not any(j.args.get("method") == "NATURAL" for j in joins):
        return
    from_ = select.args.get("from_")
    left = _columns(catalog, from_.this if from_ is not None else None)
    for join in joins:
        right = _columns(catalog, join.this)
        if join.args.get("method") == "NATURAL":
            if left is None or right is None:
                raise UnsupportedQuery("NATURAL JOIN with a derived table", "NATURAL JOIN")
            common = [c for c in left if c in right]
            join.set("method", None)
            if common:
                join.set("using", [exp.to_identifier(c) for c in common])
            elif join.args.get("side"):
                join.set("on", exp.true())
            else:
                join.set("kind", "CROSS")
        if left is not None and right is not None:
            merged = {i.name.lower() for i in join.args.get("using") or []}
            left = left + [c for c in right if c not in merged]
        else:
            left = None


__all__ = ["with_natural_joins"]
