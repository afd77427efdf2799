"""WITH in front of an INSERT, UPDATE or DELETE, moved to where its names are read.

The write compilers (insert.py, update_delete.py) compile a statement's target and the
queries inside it, each on its own: a WITH that heads the write would name relations
none of them knows, and its names would be read as missing tables (42P01) where
PostgreSQL runs the statement.  This pass rewrites the statement into one PostgreSQL
reads the same way:

* ``WITH ... INSERT INTO t SELECT ...``: the WITH goes onto the SELECT (its names are
  visible to the source query alone, as they are to PostgreSQL's);
* otherwise (UPDATE, DELETE, INSERT ... VALUES): each CTE is put in place of its one
  reference as a derived table, with the CTE's name and column names as its alias -- what
  PostgreSQL itself does with a CTE referenced once; one never referenced is dropped (a
  query CTE that is not read is not run).

Refused by name (0A000), never misread: a data-modifying CTE (``WITH d AS (DELETE ...
RETURNING ...)``: its rows would be the statement's own writes), a RECURSIVE WITH, and
a CTE referenced more than once by a write (inlined twice it would be run twice).
"""

from __future__ import annotations

from sqlglot import exp

from .scope import unsupported

_WRITES = (exp.Insert, exp.Update, exp.Delete)


def refuse_data_modifying_ctes(stmt: exp.Expression) -> None:
    """Refuse a data-modifying CTE anywhere in ``stmt``."""
    for cte in stmt.find_all(exp.CTE):
        if isinstance(cte.this, _WRITES):
            raise unsupported(cte.this, f"{cte.this.key.upper()} in WITH (a data-modifying CTE)")


def with_write_ctes(stmt: exp.Expression) -> exp.Expression:
    """``stmt`` with the WITH heading an INSERT, UPDATE or DELETE moved (see the module's
    docstring); any other statement as it is."""
    head = stmt.args.get("with_")
    if not isinstance(stmt, _WRITES) or head is None:
        return stmt
    if head.args.get("recursive"):
        raise unsupported(head, "WITH RECURSIVE before a write")
    stmt = stmt.copy()
    head = stmt.args["with_"]
    stmt.set("with_", None)
    source = stmt.expression if isinstance(stmt, exp.Insert) else None
    if isinstance(source, exp.Query) and not isinstance(source, exp.Values):
        inner = source.args.get("with_")
        ctes = [*head.expressions, *(inner.expressions if inner is not None else [])]
        source.set("with_", exp.With(expressions=ctes))
        return stmt
    ctes = list(head.expressions)
    for i, cte in enumerate(ctes):
        _inline([stmt, *(later.this for later in ctes[i + 1 :])], cte)
    return stmt


def _inline(readers: list[exp.Expression], cte: exp.CTE) -> None:
    """``cte`` in place of its one reference in ``readers``: the statement and the CTEs
    after it (which may read it)."""
    name = cte.alias_or_name.lower()
    refs = [
        t
        for reader in readers
        for t in reader.find_all(exp.Table)
        if not t.args.get("db") and isinstance(t.this, exp.Identifier) and t.name.lower() == name
    ]
    if len(refs) > 1:
        raise unsupported(cte, f"a CTE read {len(refs)} times by a write")
    if not refs:
        return
    ref = refs[0]
    alias = cte.args["alias"].copy()
    if ref.alias:
        alias.set("this", exp.to_identifier(ref.alias))
    ref.replace(exp.Subquery(this=cte.this.copy(), alias=alias))


__all__ = ["refuse_data_modifying_ctes", "with_write_ctes"]
