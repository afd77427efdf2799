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
named by it); with ``FROM`` (a DELETE's ``USING``) its tables are joined in the read, and
a row joined to several of their rows is written once, with the first (PostgreSQL uses
one of them, which one not defined); anything else keeps the rewrite's refusal.  ``SET c =
DEFAULT`` stays so in each write (its value made there, per row, as PostgreSQL makes
it).  With ``RETURNING``, each write by key returns its row's items; where they need
the client (``length(name)``), the read computes them instead, over the row as written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from sqlglot import exp

from ..catalog.metadata import Catalog
from ..catalog.table_meta import TableMeta
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
    # where the write's RETURNING items need the client: the read with them after the
    # SET expressions (each column set replaced by its expression: the row as written),
    # and the write without them -- None where an item reads a column set to DEFAULT or
    # a generated one (known only once written)
    read_returning: exp.Select | None = None
    bare_update_sql: str = ""
    # RETURNING items of an UPDATE ... FROM / DELETE ... USING that read the other
    # tables: only the read can compute them
    reads_returning: bool = False

    @property
    def values(self) -> int:
        """How many columns of ``select`` follow the key: the values written."""
        return len(self.select.expressions) - self.keys

    @property
    def select_sql(self) -> str:
        """The read's text (the plan cache's key: it names the rows and the values)."""
        return self.select.sql("postgres")


def derive(catalog: Catalog, stmt: exp.Expression) -> RowUpdate | None:
    """The row-by-row form of ``stmt``, or None where it has none (see the module)."""
    if isinstance(stmt, exp.Delete):
        return _derive_delete(catalog, stmt)
    if not isinstance(stmt, exp.Update):
        return None
    stmt = cast(exp.Update, with_expansions(stmt))  # (SET (a, b) = (x, y): one by one)
    keyed = _keyed(catalog, stmt, ("joins", "order", "limit", "with_"))
    if keyed is None:
        return None
    meta, table, select = keyed
    targets: list[str] = []
    defaulted: set[str] = set()  # (``SET c = DEFAULT``: written as such, by the write)
    values: list[exp.Expression] = []
    for item in stmt.expressions:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
            return None
        name = item.this.name.lower()
        if name in targets or name not in meta.columns:
            return None
        targets.append(name)
        if is_default(item.expression):
            defaulted.add(name)
        else:
            values.append(item.expression.copy())
    select.set("expressions", [*select.expressions, *values])
    sets = ", ".join(f"{_quoted(t)} = {'DEFAULT' if t in defaulted else '%s'}" for t in targets)
    written = dict(zip([t for t in targets if t not in defaulted], values, strict=True))
    return _row_form(
        meta, table, select, f"UPDATE {_named(meta, table)} SET {sets}", stmt, written, defaulted
    )


def _derive_delete(catalog: Catalog, stmt: exp.Delete) -> RowUpdate | None:
    """``DELETE FROM t WHERE <predicate> [RETURNING <items>]`` where the predicate or
    the items need the client: the read of the keys (and the items), then a delete by
    key per row (its RETURNING, of the row as it was, as PostgreSQL's)."""
    keyed = _keyed(catalog, stmt, ("joins", "order", "limit", "with_"))
    if keyed is None:
        return None
    meta, table, select = keyed
    return _row_form(meta, table, select, f"DELETE FROM {_named(meta, table)}", stmt, {}, set())


def _keyed(
    catalog: Catalog, stmt: exp.Expression, clauses: tuple[str, ...]
) -> tuple[TableMeta, exp.Table, exp.Select] | None:
    """The table ``stmt`` writes and the read of its rows' keys, filtered by the
    statement's WHERE; None where it has none of the ``clauses`` that have no form by
    key, a table with a primary key, and a WHERE other than a cursor's row."""
    table = stmt.this
    if any(stmt.args.get(k) for k in clauses) or not isinstance(table, exp.Table):
        return None
    if not catalog.has_table(table.name.lower()):
        return None
    meta = catalog.table(table.name.lower())
    if not meta.primary_key:
        return None
    alias = table.alias or table.name
    keys = [exp.column(k, table=alias, quoted=True) for k in meta.primary_key]
    select = exp.Select(expressions=keys).from_(table.copy())
    joined = _joined_sources(stmt)
    if joined:
        # (UPDATE ... FROM, DELETE ... USING: the other tables joined in the read; a row
        # joined to several of their rows is written once, dispatch keeps its first)
        returning = stmt.args.get("returning")
        if returning is not None and returning.find(exp.Star):
            return None  # (RETURNING * is the other tables' columns too)
        select.set("joins", joined)
    where = stmt.args.get("where")
    if where is not None:
        if "CURRENT OF" in where.sql("postgres").upper():  # (a cursor's row: not by key)
            return None
        select.set("where", where.copy())
    return meta, table, select


def _joined_sources(stmt: exp.Expression) -> list[exp.Join]:
    """The tables an UPDATE's FROM or a DELETE's USING adds, as joins of the read (a
    table's own JOINs after it)."""
    if isinstance(stmt, exp.Update):
        source = stmt.args.get("from_")
        items = [source.this] if isinstance(source, exp.From) else []
    else:
        items = list(stmt.args.get("using") or [])
    joins: list[exp.Join] = []
    for item in items:
        bare = item.copy()
        own = bare.args.pop("joins", None) or []
        joins += [exp.Join(this=bare), *own]
    return joins


def _row_form(
    meta: TableMeta,
    table: exp.Table,
    select: exp.Select,
    head: str,
    stmt: exp.Expression,
    written: dict[str, exp.Expression],
    defaulted: set[str],
) -> RowUpdate | None:
    """The row-by-row form of a write ``head`` (its statement up to WHERE) by key, with
    the statement's RETURNING where it has one; None where its items read the other
    tables of a FROM / USING and the read cannot compute them."""
    bare = f"{head} WHERE " + " AND ".join(f"{_quoted(k)} = %s" for k in meta.primary_key)
    keys = len(meta.primary_key)
    returning = stmt.args.get("returning")
    if returning is None:
        return RowUpdate(meta.name, select, keys, bare)
    alias = table.alias or table.name
    read = _read_returning(select, returning, meta, alias, written, defaulted)
    targets = {alias.lower(), meta.name}
    # (an item reading a FROM / USING table: qualified by it, or a name not the target's)
    others = bool(select.args.get("joins")) and any(
        c.table.lower() not in targets if c.table else c.name.lower() not in meta.columns
        for c in returning.find_all(exp.Column)
    )
    if others and read is None:
        return None  # (the items need the read, which cannot compute them)
    return RowUpdate(
        meta.name,
        select,
        keys,
        f"{bare} {returning.transform(show_names).sql('postgres')}",
        True,
        read,
        bare,
        reads_returning=others,
    )


def _named(meta: TableMeta, table: exp.Table) -> str:
    """The written table as the write names it (and its alias)."""
    return _quoted(meta.name) + (f" AS {_quoted(table.alias)}" if table.alias else "")


def _quoted(name: str) -> str:
    # (the text is parsed again: the name as written, syntax/names.py)
    return exp.to_identifier(shown(name), quoted=True).sql("postgres")


def _read_returning(
    select: exp.Select,
    returning: exp.Returning,
    meta: TableMeta,
    alias: str,
    written: dict[str, exp.Expression],
    defaulted: set[str],
) -> exp.Select | None:
    """The read of the rows to update with the RETURNING items after its columns, each
    column the statement sets replaced by its expression (see ``RowUpdate``)."""
    items: list[exp.Expression] = []
    for item in returning.expressions:
        target = item.this if isinstance(item, exp.Column) else None
        if isinstance(item, exp.Star) or (target is not None and isinstance(target, exp.Star)):
            if target is not None and item.table.lower() not in (alias.lower(), meta.name):
                return None
            items += [exp.column(c, quoted=True) for c in meta.columns]
        else:
            items.append(item.copy())
    out: list[exp.Expression] = []
    for item in items:
        for col in list(item.find_all(exp.Column)):
            name = col.name.lower()
            if col.table and col.table.lower() not in (alias.lower(), meta.name):
                continue  # (a subquery's own table)
            if name in defaulted or (name in meta.columns and meta.columns[name].generated):
                return None
            if name in written and not _outermost(col, item):
                return None  # (a subquery over the row as written: not replaced here)
            if name in written:
                replaced = exp.Paren(this=written[name].copy())
                if col is item:
                    item = exp.alias_(replaced, col.name, quoted=True)
                else:
                    col.replace(replaced)
        out.append(item)
    read = select.copy()
    read.set("expressions", [*read.expressions, *out])
    return read


def _outermost(col: exp.Column, item: exp.Expression) -> bool:
    """Whether ``col`` is the statement's row's, not inside a subquery of the item."""
    node = col.parent
    while node is not None and node is not item.parent:
        if isinstance(node, exp.Subquery | exp.Select):
            return False
        node = node.parent
    return True


__all__ = ["RowUpdate", "derive"]
