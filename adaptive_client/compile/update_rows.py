"""An UPDATE the rewrite cannot run on the server, run as a read and a write per row.

``UPDATE t SET x = <expression> WHERE <predicate>`` where the expression or the
predicate needs the client (``upper(name)``, a correlated subquery, a comparison with a
subquery's value, ``x * 1.1``) becomes

* ``SELECT <t's primary key>, <each SET expression> FROM t WHERE <predicate>``, which
  the client answers by any of its paths (split execution included), and
* ``UPDATE t SET x = %s, ... WHERE <key> = %s``, run for each row it returned, with
  that row's values: the assignment's plaintext encrypted like any parameter.

PostgreSQL evaluates every SET expression on the row as it was before the statement and
writes each row once; so does this, provided nothing else writes the table between the
read and the writes: the connection takes ``SHARE ROW EXCLUSIVE`` on the table first
(:mod:`adaptive_client.dbapi.connection` does, in the statement's transaction), which lets
readers through and makes other writers wait, as PostgreSQL's own row locks would make
those touching the same rows wait.  Only where the table has a primary key (a row is
named by it), without ``FROM`` or ``DEFAULT``; anything else keeps the rewrite's
refusal.  With ``RETURNING``, each write by key returns its row's items.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from sqlglot import exp

from ..catalog.metadata import Catalog
from ..syntax.names import show_names, shown
from .expansions import with_expansions
from .writes import is_default


@dataclass(frozen=True)
class RowUpdate:
    """The two statements of an UPDATE run row by row."""

    table: str  # the plain table name
    select: exp.Select  # the key's columns first, then each SET expression
    keys: int  # how many leading columns of ``select`` are the key
    update_sql: str  # UPDATE ... SET <columns> = %s ... WHERE <key> = %s ... [RETURNING]
    returning: bool = False

    @property
    def select_sql(self) -> str:
        """The read's text (the plan cache's key: it names the rows and the values)."""
        return self.select.sql("postgres")


def derive(catalog: Catalog, stmt: exp.Update) -> RowUpdate | None:
    """The row-by-row form of ``stmt``, or None where it has none (see the module)."""
    stmt = cast(exp.Update, with_expansions(stmt))  # (SET (a, b) = (x, y): one by one)
    if any(stmt.args.get(k) for k in ("from_", "joins", "order", "limit", "with_")):
        return None
    table = stmt.this
    if not isinstance(table, exp.Table) or not catalog.has_table(table.name.lower()):
        return None
    meta = catalog.table(table.name.lower())
    if not meta.primary_key:
        return None
    alias = table.alias or table.name
    targets: list[str] = []
    values: list[exp.Expression] = []
    for item in stmt.expressions:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
            return None
        name = item.this.name.lower()
        if name in targets or name not in meta.columns or is_default(item.expression):
            return None
        targets.append(name)
        values.append(item.expression.copy())
    keys = [exp.column(k, table=alias, quoted=True) for k in meta.primary_key]
    select = exp.Select(expressions=[*keys, *values]).from_(table.copy())
    where = stmt.args.get("where")
    if where is not None:
        if "CURRENT OF" in where.sql("postgres").upper():  # (a cursor's row: not by key)
            return None
        select.set("where", where.copy())

    def quoted(name: str) -> str:
        # (the text is parsed again: the name as written, syntax/names.py)
        return exp.to_identifier(shown(name), quoted=True).sql("postgres")

    returning = stmt.args.get("returning")
    update_sql = (
        f"UPDATE {quoted(meta.name)}"
        + (f" AS {quoted(table.alias)}" if table.alias else "")
        + " SET "
        + ", ".join(f"{quoted(t)} = %s" for t in targets)
        + " WHERE "
        + " AND ".join(f"{quoted(k)} = %s" for k in meta.primary_key)
        + (f" {returning.transform(show_names).sql('postgres')}" if returning else "")
    )
    return RowUpdate(meta.name, select, len(keys), update_sql, returning is not None)


__all__ = ["RowUpdate", "derive"]
