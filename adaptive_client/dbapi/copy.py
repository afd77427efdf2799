"""COPY through the client, in the shape of psycopg's ``cursor.copy()``.

* ``COPY t [(cols)] FROM STDIN [WITH (FORMAT text | csv, HEADER, DELIMITER ...)]``: the
  rows the application writes (``write_row`` with Python values, or ``write`` with data
  in the COPY text or CSV format) are coerced by their column's type, encrypted a batch
  at a time (one batched call per onion and layer, as a multi-row INSERT), and streamed
  to the server by a binary ``COPY`` of the onion columns.  Omitted columns take their
  defaults.  In autocommit mode the whole COPY is one transaction, as on the server.
* ``COPY t | (SELECT ...) TO STDOUT``: the rows are read through the client and handed
  out decrypted, by ``rows()`` / ``read_row()`` or as text / CSV data by ``read()``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import psycopg
from psycopg import sql
from psycopg.adapt import PyFormat
from sqlglot import exp

from ..catalog import defaults, precomputed, recipes
from ..catalog.metadata import ColumnMeta, OnionColumn, TableMeta
from ..catalog.onions import TOKEN_ONIONS, Onion
from ..compile.generated import computation_of, computed_columns
from ..errors import AdaptiveError, StaleMetadata, UnsupportedQuery
from ..stats import STATS
from ..syntax.names import show_names, shown
from ..values import handout, text_output
from ..values.array_encoding import array_text
from ..values.encodings import pg_text
from ..values.interval_encoding import intervals_as_written
from . import server_errors
from .session_protocol import StatementCursor

BATCH = 2000  # rows encrypted per batched call


class CopyOptions:
    def __init__(self, node: exp.Copy) -> None:
        self.format = "text"
        self.header = False
        self.delimiter: str | None = None
        for p in node.args.get("params") or []:
            name = p.name.upper()
            value = p.args.get("expression")
            text = value.name if isinstance(value, exp.Expression) else None
            if name == "FORMAT" and text and text.lower() in ("text", "csv"):
                self.format = text.lower()
            elif name == "HEADER":
                self.header = not (isinstance(value, exp.Boolean) and not value.this)
            elif name == "DELIMITER" and isinstance(value, exp.Literal) and len(value.this) == 1:
                self.delimiter = value.this
            else:
                raise UnsupportedQuery(f"COPY option {p.sql('postgres')}", "COPY option")
        self.sep = self.delimiter or ("," if self.format == "csv" else "\t")


def _storage_type(col: ColumnMeta, oc: OnionColumn) -> str:
    if oc.stack == ("PLAIN",):
        return col.type.sql()
    if oc.onion is Onion.SUM:
        return "int8[]" if oc.stack == ("ASHE",) else "numeric"
    if oc.onion in TOKEN_ONIONS:
        return "bytea[]"
    return "bytea"  # (an Ord onion at ORE too: its type reads and writes bytea's forms)


class CopyIn:
    """The object ``with cursor.copy("COPY t FROM STDIN") as copy:`` gives."""

    def __init__(
        self, cursor: StatementCursor, table: TableMeta, columns: list[str], opts: CopyOptions
    ):
        self.cursor = cursor
        self.table = table
        precomputed.refuse_written(table, columns)
        self.given = [table.column(c) for c in columns]
        self.opts = opts
        self.storage = [(c, oc) for c in table.stored_columns for oc in c.onions.values()]
        self._rows: list[Sequence[Any]] = []
        self._partial = ""
        self._header_pending = opts.header
        self.rowcount = 0
        self._stack = contextlib.ExitStack()
        self._server: Any = None

    # -- psycopg's Copy interface ---------------------------------------------------------
    def write_row(self, row: Sequence[Any]) -> None:
        if len(row) != len(self.given):
            raise psycopg.errors.BadCopyFileFormat(
                f"the row has {len(row)} values for {len(self.given)} columns"
            )
        self._rows.append(row)
        if len(self._rows) >= BATCH:
            self._flush()

    def write(self, data: str | bytes) -> None:
        text = data.decode() if isinstance(data, bytes | bytearray | memoryview) else data
        text = self._partial + text
        lines = text.split("\n")
        self._partial = lines.pop()
        for line in lines:
            self._line(line)

    def set_types(self, types: Sequence[Any]) -> None:
        """Accepted for compatibility: values are coerced by their column's type."""

    # -- internals -----------------------------------------------------------------------
    def _line(self, line: str) -> None:
        if line.endswith("\r"):
            line = line[:-1]
        if self._header_pending:
            self._header_pending = False
            return
        if self.opts.format == "text":
            if line == "\\.":
                return
            values: list[Any] = [_unescape(v) for v in line.split(self.opts.sep)]
        else:
            values = _csv_fields(line, self.opts.sep)
        self.write_row(values)

    def __enter__(self) -> CopyIn:
        conn = self.cursor.connection
        for _attempt in range(3):
            first_in_transaction = not conn.in_transaction()
            try:
                return self._start()
            except psycopg.errors.UndefinedColumn as exc:
                # the COPY names an onion column a join adjustment renamed (joins.py):
                # this client's metadata is stale, as execute() handles it
                self._stack.__exit__(type(exc), exc, exc.__traceback__)
                self._stack = contextlib.ExitStack()
                if not conn.epoch_moved():
                    raise
                if not conn.pg.autocommit:
                    if not first_in_transaction:
                        conn.catalog.reload(conn.control)
                        raise StaleMetadata(
                            f"{self.table.name} was re-keyed for a join after this "
                            "transaction read its layers; retry the transaction"
                        ) from None
                    conn.pg.rollback()
                    conn.after_rollback()
                conn.catalog.reload(conn.control)
                self._rebind(conn.catalog.table(self.table.name))
                STATS.retries += 1
        raise StaleMetadata("layers kept changing; retry")

    def _rebind(self, table: TableMeta) -> None:
        """Point the COPY at ``table`` 's metadata (reloaded), the same columns given."""
        self.table = table
        self.given = [table.column(c.name) for c in self.given]
        self.storage = [(c, oc) for c in table.stored_columns for oc in c.onions.values()]

    def _start(self) -> CopyIn:
        """Open the transaction (autocommit) and the server's COPY; the connection's
        lock is held until the COPY ends (as psycopg holds its own through a copy)."""
        conn = self.cursor.connection
        self._stack.enter_context(conn.lock)
        if conn.pg.autocommit:
            self._stack.enter_context(conn.pg.transaction())
        # Defaults of omitted columns are drawn while the COPY holds the connection: the
        # transaction's stable values first, sequences and volatile ones on the control
        # connection (sequences are not transactional).
        given = {c.name for c in self.given}
        self._stable = {
            col.name: conn.runtime.evaluate(col.default_sql, col.type.sql(), False)
            for col in self.table.columns.values()
            if col.name not in given and col.default_sql and not col.default_volatile
        }
        self._side = defaults.Runtime(conn.control)
        raw = self._stack.enter_context(conn.pg.cursor())
        statement = sql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
            sql.Identifier(self.table.anon),
            sql.SQL(", ").join(sql.Identifier(oc.anon) for _, oc in self.storage),
        )
        # bytea through psycopg's compiled dumper (the one for ``bytes``), not the DB-API
        # ``Binary`` wrapper's Python subclass that its oid maps to by default
        raw.adapters.register_dumper(bytes, raw.adapters.get_dumper(bytes, PyFormat.BINARY))
        self._server = self._stack.enter_context(raw.copy(statement))
        self._server.set_types([_storage_type(c, oc) for c, oc in self.storage])
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            if exc_type is None:
                if self._partial:
                    self._line(self._partial)
                    self._partial = ""
                self._flush()
        except BaseException as err:
            self._stack.__exit__(type(err), err, err.__traceback__)
            raise
        try:
            self._stack.__exit__(exc_type, exc, tb)
        except psycopg.Error as err:
            if isinstance(err, AdaptiveError) or err.diag.sqlstate is None:
                raise
            # the server's error in the application's names (a key's constraint), as a
            # statement's is
            conn = self.cursor.connection
            raise server_errors.translate(err, conn.catalog, conn.control) from None
        self.cursor.set_result([], None, self.rowcount)
        self.cursor.connection.forget_table(self.table)

    def _drawn(self, col: ColumnMeta) -> Any:
        try:
            if col.sequence_anon is not None and col.sequence is not None:
                return self._side.nextval(col.sequence_anon, col.sequence)
            assert col.default_sql is not None
            return self._side.evaluate(col.default_sql, col.type.sql(), True)
        except psycopg.errors.UndefinedTable:
            raise UnsupportedQuery(
                f"COPY into {self.table.name} omitting {col.name}: its sequence was created "
                "in this transaction; commit the CREATE TABLE first, or give the column",
                "COPY default",
            ) from None

    def _flush(self) -> None:
        rows, self._rows = self._rows, []
        if not rows:
            return
        names = [c.name for c in self.given]
        coerced: dict[str, list[Any]] = {}
        for col in self.table.columns.values():
            if col.generated is not None:
                continue  # (computed below, from the row's other values)
            if col.name in names:
                i = names.index(col.name)
                coerce = col.encoding.coerce
                coerced[col.name] = [None if r[i] is None else coerce(r[i]) for r in rows]
            elif col.sequence_anon is not None or col.default_volatile:
                coerced[col.name] = [col.encoding.coerce(self._drawn(col)) for _ in rows]
            else:
                default = self._stable.get(col.name, col.default)
                value = None if default is None else col.encoding.coerce(default)
                coerced[col.name] = [value] * len(rows)
            if not col.nullable and any(v is None for v in coerced[col.name]):
                raise psycopg.errors.NotNullViolation(
                    f'null value in column "{col.name}" of relation "{self.table.name}" '
                    "violates not-null constraint"
                )
        catalog = self.cursor.connection.catalog
        for col in computed_columns(self.table):
            if col.generated is None:
                coerced[col.name] = precomputed.values_of(self.table, col, coerced)
                continue
            computation = computation_of(catalog, self.table, col)
            coerced[col.name] = [
                computation.value({n: coerced[n][i] for n in computation.inputs})
                for i in range(len(rows))
            ]
            if not col.nullable and any(v is None for v in coerced[col.name]):
                raise psycopg.errors.NotNullViolation(
                    f'null value in column "{col.name}" of relation "{self.table.name}" '
                    "violates not-null constraint"
                )
        columns: list[list[Any]] = []
        for col, oc in self.storage:
            values = coerced[col.name]
            if None not in values:  # (no NULL: the batch as it is)
                out: list[Any] = recipes.encrypt_many(col, oc, values)
                if oc.onion in TOKEN_ONIONS:
                    out = [list(ct) for ct in out]
                columns.append(out)
                continue
            present = [i for i, v in enumerate(values) if v is not None]
            out = [None] * len(values)
            cts = recipes.encrypt_many(col, oc, [values[i] for i in present])
            for i, ct in zip(present, cts, strict=True):
                out[i] = list(ct) if oc.onion in TOKEN_ONIONS else ct
            columns.append(out)
        write_row = self._server.write_row
        for row in zip(*columns, strict=True):
            write_row(row)
        self.rowcount += len(rows)


class CopyOut:
    """``COPY ... TO STDOUT`` read through the client."""

    def __init__(
        self,
        rows: list[tuple[Any, ...]],
        names: list[str],
        opts: CopyOptions,
        settings: text_output.OutputSettings | None = None,
        type_codes: Sequence[int] = (),
    ):
        self._rows = rows
        self._names = names
        self.opts = opts
        self._pos = 0
        self._typed = False
        # printed under the session's output settings; a real as a real
        self._settings = settings or text_output.OutputSettings()
        self._texts = [_COLUMN_TEXT.get(t, pg_text) for t in type_codes] or None
        self._type_codes = list(type_codes)

    def set_types(self, types: Sequence[Any]) -> None:
        """As in psycopg: rows() gives typed values after set_types(), text before."""
        self._typed = True

    def __enter__(self) -> CopyOut:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def rows(self) -> Iterator[tuple[Any, ...]]:
        while (row := self.read_row()) is not None:
            yield row

    def read_row(self) -> tuple[Any, ...] | None:
        row = self._next()
        if row is None:
            return row
        if self._typed:
            codes = self._type_codes or [0] * len(row)
            return tuple(_application(v, oid) for v, oid in zip(row, codes, strict=True))
        with text_output.using(self._settings):
            return tuple(self._texts_of(row))

    def _texts_of(self, row: Sequence[Any]) -> list[str | None]:
        if self._texts is None:
            return [_text(v) for v in row]
        return [text(v) for text, v in zip(self._texts, row, strict=True)]

    def _next(self) -> tuple[Any, ...] | None:
        if self._pos >= len(self._rows):
            return None
        row = self._rows[self._pos]
        self._pos += 1
        return row

    def read(self) -> memoryview:
        """The next chunk of data in the COPY's format (empty at the end)."""
        if self.opts.header and self._pos == 0 and self._names is not None:
            names, self._names = self._names, None  # type: ignore[assignment]
            return memoryview(self._format(names, header=True).encode())
        row = self._next()
        if row is None:
            return memoryview(b"")
        return memoryview(self._format(row).encode())

    def __iter__(self) -> Iterator[memoryview]:
        while data := self.read():
            yield data

    def _format(self, row: Sequence[Any], header: bool = False) -> str:
        if header:
            texts: list[str | None] = list(row)
        else:
            with text_output.using(self._settings):
                texts = self._texts_of(row)
        if self.opts.format == "csv":
            alone = len(texts) == 1
            return self.opts.sep.join(_csv_field(v, self.opts.sep, alone) for v in texts) + "\n"
        return self.opts.sep.join(_escape(v) for v in texts) + "\n"


_text = pg_text  # PostgreSQL's text output of a value


def _float4_text(v: Any) -> str | None:
    if v is None:
        return None
    return text_output.float4_text(v, text_output.current().extra_float_digits)


# the text output of a column by its type's OID where the value alone does not say it
# (a real and a double precision are both Python floats)
_COLUMN_TEXT: dict[int, Callable[[Any], str | None]] = {
    700: _float4_text,
    1021: lambda v: None if v is None else array_text(v, _float4_text),
}


def _application(v: Any, oid: int) -> Any:
    """A value of a COPY's row as the application receives it (``rows()``)."""
    convert = handout.APPLICATION.get(type(v))
    return v if convert is None else convert(v, oid)


def _escape(s: str | None) -> str:
    if s is None:
        return "\\N"
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _csv_field(s: str | None, sep: str, alone: bool) -> str:
    """A CSV field as COPY writes it: NULL as nothing, quoted where it holds the
    delimiter, a quote, a line break, where it is empty (not NULL) or, alone on its
    line, the end-of-data marker."""
    if s is None:
        return ""
    if s == "" or any(c in s for c in (sep, '"', "\n", "\r")) or (alone and s == "\\."):
        return '"' + s.replace('"', '""') + '"'
    return s


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "\\": "\\"}


def _unescape(field: str) -> str | None:
    if field == "\\N":
        return None
    if "\\" not in field:
        return field
    out = []
    i = 0
    while i < len(field):
        ch = field[i]
        if ch == "\\" and i + 1 < len(field):
            out.append(_ESCAPES.get(field[i + 1], field[i + 1]))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _csv_fields(line: str, sep: str) -> list[str | None]:
    """One CSV line's fields, with PostgreSQL's NULL rule: an unquoted empty field is NULL,
    a quoted one (``""``) the empty string."""
    fields: list[str | None] = []
    buf: list[str] = []
    quoted = in_quotes = False
    i = 0
    while i < len(line):
        ch = line[i]
        if in_quotes:
            if ch == '"' and i + 1 < len(line) and line[i + 1] == '"':
                buf.append('"')
                i += 1
            elif ch == '"':
                in_quotes = False
            else:
                buf.append(ch)
        elif ch == '"':
            in_quotes = quoted = True
        elif ch == sep:
            fields.append("".join(buf) if buf or quoted else None)
            buf, quoted = [], False
        else:
            buf.append(ch)
        i += 1
    if in_quotes:
        raise psycopg.errors.BadCopyFileFormat("unterminated CSV quoted field")
    fields.append("".join(buf) if buf or quoted else None)
    return fields


def open_copy(cursor: StatementCursor, node: exp.Copy, params: Any) -> CopyIn | CopyOut:
    """The Copy object for a parsed COPY statement."""
    opts = CopyOptions(node)
    target = node.this
    files = node.args.get("files") or []
    if len(files) != 1 or files[0].name.upper() not in ("STDIN", "STDOUT"):
        raise UnsupportedQuery("COPY other than FROM STDIN / TO STDOUT", "COPY")
    if node.args.get("kind"):  # FROM
        cols = None
        if isinstance(target, exp.Schema):
            cols = [c.name.lower() for c in target.expressions]
            target = target.this
        if not isinstance(target, exp.Table):
            raise UnsupportedQuery("COPY FROM into other than a table", "COPY")
        table = cursor.connection.catalog.table(target.name)
        for name in cols or []:
            if name in table.columns and table.columns[name].generated is not None:
                raise psycopg.errors.InvalidColumnReference(
                    f'column "{shown(name)}" is a generated column\n'
                    "DETAIL:  Generated columns cannot be used in COPY."
                )
        # (without a column list: every column but the generated ones, as PostgreSQL)
        given = cols or [c.name for c in table.columns.values() if c.generated is None]
        return CopyIn(cursor, table, given, opts)
    # (the query runs as the application's statement: its names as written, names.py)
    target = target.transform(show_names)
    if isinstance(target, exp.Subquery):
        query = target.this.sql("postgres")
    else:
        cols_sql = "*"
        if isinstance(target, exp.Schema):
            cols_sql = ", ".join(c.sql("postgres") for c in target.expressions)
            target = target.this
        query = f"SELECT {cols_sql} FROM {target.sql('postgres')}"
    # (the values as the client holds them: COPY prints json and intervals as PostgreSQL
    # does, which the application's loaded values cannot tell)
    cursor.internal_values = True
    try:
        with intervals_as_written():
            cursor.execute(query, params)
    finally:
        cursor.internal_values = False
    desc = cursor.description or []
    rows = cursor.fetchall()
    conn = cursor.connection
    with conn.lock:  # the output settings, once for the COPY (in its transaction)
        settings = text_output.read(conn.pg)
    return CopyOut(rows, [d[0] for d in desc], opts, settings, [d[1] for d in desc])


__all__ = ["BATCH", "CopyIn", "CopyOut", "open_copy"]
