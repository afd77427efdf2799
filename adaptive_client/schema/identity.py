"""ALTER TABLE's identity actions (syntax/identity_actions.py) on a column of the client's.

An identity column draws its values as a serial column does: the client takes them from
a plain server sequence owned by the table and encrypts them (catalog/defaults.py).  So
these actions change that sequence and the column's sealed metadata:

* ``ADD GENERATED ... AS IDENTITY``: a new sequence (the rows already there keep their
  values, as in PostgreSQL); the column must be an integer one, NOT NULL, without a
  default, and not already an identity column -- PostgreSQL's errors otherwise;
* ``SET GENERATED``, ``SET <option>``, ``RESTART``: the column's kind in the metadata,
  the options an ``ALTER SEQUENCE`` of keywords and integers, the values this session
  drew ahead forgotten;
* ``DROP IDENTITY [IF EXISTS]``: the sequence dropped; the column stays NOT NULL.
"""

from __future__ import annotations

from psycopg import errors as pg_errors
from psycopg import sql

from ..catalog.metadata import ColumnMeta, TableMeta
from ..catalog.tablespec import SequenceSpec
from ..syntax.identity_actions import AlterIdentity, sequence_options
from .columns import column_sequence_anon, create_sequence
from .context import DdlContext
from .sequence_objects import alter_server_sequence

#: the types an identity column may have (PostgreSQL's 22023 for any other)
INTEGER_TYPES = frozenset({"smallint", "integer", "bigint"})


def check_type(type_name: str) -> None:
    """PostgreSQL's refusal of an identity column of another type than an integer one."""
    if type_name not in INTEGER_TYPES:
        raise pg_errors.InvalidParameterValue(
            "identity column type must be smallint, integer, or bigint"
        )


def refuse_default_change(meta: TableMeta, col: ColumnMeta, what: str) -> None:
    """PostgreSQL's 42601 where ALTER COLUMN sets or drops the default, or drops the NOT
    NULL, of an identity column (``what``: the hint's action)."""
    if col.identity is not None:
        raise pg_errors.SyntaxError(
            f'column "{col.name}" of relation "{meta.name}" is an identity column'
            + (f"\nHINT:  Use ALTER TABLE ... ALTER COLUMN ... {what} instead." if what else "")
        )


def alter_identity(ctx: DdlContext, meta: TableMeta, action: AlterIdentity) -> None:
    col = meta.column(action.this.name)
    where = f'column "{col.name}" of relation "{meta.name}"'
    kind = action.args["kind"]
    if kind == "add":
        _add(ctx, meta, col, action, where)
        return
    if col.identity is None:
        if kind == "drop" and action.args.get("exists"):
            return  # (PostgreSQL's NOTICE: nothing to drop)
        raise pg_errors.ObjectNotInPrerequisiteState(f"{where} is not an identity column")
    assert col.sequence_anon is not None
    if kind == "drop":
        ctx.conn.execute(sql.SQL("DROP SEQUENCE {}").format(sql.Identifier(col.sequence_anon)))
        ctx.runtime.reset(col.sequence_anon)
        col.identity, col.sequence, col.sequence_anon = None, None, None
        return
    if action.args.get("generated"):
        col.identity = action.args["generated"]
    options = sequence_options(action)
    if options:
        alter_server_sequence(ctx.conn, ctx.runtime, col.sequence_anon, options)


def _add(
    ctx: DdlContext, meta: TableMeta, col: ColumnMeta, action: AlterIdentity, where: str
) -> None:
    check_type(col.type.name)
    if col.nullable:
        raise pg_errors.ObjectNotInPrerequisiteState(
            f"{where} must be declared NOT NULL before identity can be added"
        )
    if col.identity is not None:
        raise pg_errors.ObjectNotInPrerequisiteState(f"{where} is already an identity column")
    if col.sequence is not None or col.default is not None or col.default_sql is not None:
        raise pg_errors.ObjectNotInPrerequisiteState(f"{where} already has a default value")
    col.sequence = f"{meta.name}_{col.name}_seq"
    col.identity = action.args["generated"]
    col.sequence_anon = column_sequence_anon(ctx.catalog, meta.name, col.name)
    options = sequence_options(action)
    create_sequence(ctx, meta, col, SequenceSpec(col.identity, [options] if options else []))


__all__ = ["alter_identity", "check_type", "refuse_default_change"]
