"""A table named with column aliases -- ``FROM j1 AS t1 (a, b)`` -- rewritten as the
derived table it stands for, ``(SELECT i AS a, j AS b FROM j1) AS t1``: the table's
columns renamed in their order (the columns past the list keep their names; more aliases
than columns is PostgreSQL's 42P10).  The client's paths compile a derived table; they
did not read the list (the aliases were unknown columns: 42703)."""

from __future__ import annotations

from psycopg import errors as pg_errors
from sqlglot import exp

from ..catalog.metadata import Catalog


def with_column_aliases(catalog: Catalog, tree: exp.Expression) -> exp.Expression:
    """``tree`` with each catalog table that has column aliases a derived table (a copy
    where it has any)."""
    if not any(_aliased(catalog, t) for t in tree.find_all(exp.Table)):
        return tree
    tree = tree.copy()
    for table in list(tree.find_all(exp.Table)):
        if not _aliased(catalog, table):
            continue
        alias = table.args["alias"]
        names = [c.name for c in alias.columns]
        columns = list(catalog.table(table.name).columns)
        if len(names) > len(columns):
            raise pg_errors.InvalidColumnReference(
                f'table "{alias.name}" has {len(columns)} columns available but '
                f"{len(names)} columns specified"
            )
        bare = exp.Table(this=table.this.copy())
        select = exp.Select(
            expressions=[
                exp.alias_(exp.column(c, table=table.name), n, quoted=True)
                for c, n in zip(columns, names + columns[len(names) :], strict=True)
            ]
        ).from_(bare)
        table.replace(exp.Subquery(this=select, alias=exp.TableAlias(this=alias.this.copy())))
    return tree


def _aliased(catalog: Catalog, table: exp.Table) -> bool:
    alias = table.args.get("alias")
    return (
        alias is not None
        and bool(alias.columns)
        and not table.args.get("db")
        and catalog.has_table(table.name)
    )


__all__ = ["with_column_aliases"]
