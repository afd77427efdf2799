"""The FROM items a statement's names resolve in, and the two ways compiling one ends early.

A :class:`Scope` maps the application's table aliases to their tables and to the
anonymized aliases of the server's statement; :meth:`Scope.resolve` turns a column
reference into a :class:`ColumnRef`.  :func:`unsupported` is the refusal of a
construct over encrypted columns; :class:`OnionNotBuilt` stops compiling where the
statement needs an onion built on first use (the entry returns it as a need).
"""

from __future__ import annotations

from psycopg import errors as pg_errors
from sqlglot import exp

from ..catalog.metadata import ColumnMeta, TableMeta
from ..catalog.tablespec import SYSTEM_COLUMNS
from ..errors import UndefinedColumn, UndefinedTable, UnsupportedQuery
from .needs import BuildNeed


class OnionNotBuilt(Exception):
    """The statement needs an onion its column builds on first use: compiling stops at the
    first such onion, and the statement's entry returns the need as its plan's
    ``builds`` (one build per compilation, as each build changes the catalog the
    statement is compiled against next).  An exception, so that it leaves every strategy
    and every tentative compilation of the split planner at once; deliberately not an
    :class:`~adaptive_client.errors.AdaptiveError`, which those take for a refusal."""

    def __init__(self, need: BuildNeed) -> None:
        super().__init__(need.describe())
        self.need = need


def unsupported(node: exp.Expression, what: str | None = None) -> UnsupportedQuery:
    construct = what or type(node).__name__
    # sqlglot leaves a flag (a bool) where a node is missing, e.g. DELETE without FROM
    text = node.sql("postgres") if isinstance(node, exp.Expression) else str(node)
    if len(text) > 80:
        text = text[:77] + "..."
    return UnsupportedQuery(
        f"not supported over encrypted columns: {construct} in `{text}`", construct
    )


class ColumnRef:
    """A resolved column reference."""

    __slots__ = ("alias", "column", "table")

    def __init__(self, alias: str, table: TableMeta, column: ColumnMeta) -> None:
        self.alias = alias
        self.table = table
        self.column = column


class Scope:
    def __init__(self) -> None:
        self.entries: list[tuple[str, TableMeta, str]] = []  # (user alias, table, server alias)

    def add(self, alias: str, table: TableMeta, server_alias: str | None = None) -> str:
        server_alias = server_alias or f"a{len(self.entries)}"
        if any(a == alias for a, _, _ in self.entries):
            raise pg_errors.DuplicateAlias(f'table name "{alias}" specified more than once')
        self.entries.append((alias, table, server_alias))
        return server_alias

    def resolve(self, col: exp.Column) -> ColumnRef:
        name = col.name.lower()
        qual = col.table.lower() if col.table else None
        hits = []
        for alias, table, server_alias in self.entries:
            if qual is not None and qual != alias:
                continue
            if qual is None and server_alias == "excluded":
                continue  # ON CONFLICT's proposed row is named only as EXCLUDED.col
            if name in table.columns:
                hits.append(ColumnRef(server_alias, table, table.columns[name]))
            elif qual is not None and name in table.precomputed:  # (compile/precomputed_pass.py)
                hits.append(ColumnRef(server_alias, table, table.precomputed[name]))
        if not hits:
            if qual is not None and all(a != qual for a, _, _ in self.entries):
                raise UndefinedTable(f'missing FROM-clause entry for table "{qual}"')
            if name in SYSTEM_COLUMNS and self.entries:
                raise UnsupportedQuery(f"the system column {name}", "system column")
            if qual is None and any(a == name for a, _, _ in self.entries):
                raise UnsupportedQuery(f"a whole-row reference ({name})", "whole-row reference")
            where = f"{qual}.{name}" if qual else f'"{name}"'  # (as PostgreSQL quotes it)
            raise UndefinedColumn(f"column {where} does not exist")
        if len(hits) > 1:
            # (refused, not PostgreSQL's 42702 yet: ORDER BY id may name an output column,
            # which the client's engine resolves -- and raises 42702 where it is not)
            raise UnsupportedQuery(f'column reference "{name}" is ambiguous', "ambiguous column")
        return hits[0]

    def star(self, qual: str | None) -> list[ColumnRef]:
        if qual is not None and all(a != qual for a, _, _ in self.entries):
            raise UndefinedTable(f'missing FROM-clause entry for table "{qual}"')
        refs = []
        for alias, table, server_alias in self.entries:
            if qual is None or qual == alias:
                refs += [ColumnRef(server_alias, table, c) for c in table.columns.values()]
        return refs


class NestedScope(Scope):
    """The FROM items of a subquery (``EXISTS (SELECT ...)``): a name resolves among
    them first, else in the enclosing query (a correlated reference), as in SQL; their
    server aliases carry a prefix of their own, unique in the statement."""

    def __init__(self, parent: Scope, prefix: str) -> None:
        super().__init__()
        self.parent = parent
        self.prefix = prefix

    def add(self, alias: str, table: TableMeta, server_alias: str | None = None) -> str:
        return super().add(alias, table, server_alias or f"{self.prefix}{len(self.entries)}")

    def resolve(self, col: exp.Column) -> ColumnRef:
        qual = col.table.lower() if col.table else None
        if qual is not None and all(a != qual for a, _, _ in self.entries):
            return self.parent.resolve(col)
        try:
            return super().resolve(col)
        except UndefinedColumn:
            if qual is not None:
                raise
            return self.parent.resolve(col)


def server_lock(scope: Scope, lock: exp.Lock) -> exp.Lock:
    """A locking clause with its ``OF`` tables named by their server aliases (the
    application's names never reach the server); a name the FROM clause lacks is
    PostgreSQL's error."""
    out = lock.copy()
    named = []
    for table in out.expressions:
        alias = table.name.lower()
        server = next((s for a, _, s in scope.entries if a == alias), None)
        if server is None:
            raise pg_errors.UndefinedTable(
                f'relation "{table.name}" in FOR {"UPDATE" if lock.args.get("update") else "SHARE"}'
                " clause not found in FROM clause"
            )
        named.append(exp.Table(this=exp.to_identifier(server)))
    out.set("expressions", named)
    return out
