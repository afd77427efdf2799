"""What a compiled statement is: server SQL, parameter builders, result decoders.

A :class:`Compiled` statement depends only on the SQL text and the layers of the onions
it touches, so it is cached per (SQL text, metadata epoch) and a repeated statement skips
parsing and rewriting.  A statement whose compilation found :class:`Need` s (onions
above the layer an operator requires) is not run: the connection peels, then recompiles.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property, partial
from operator import itemgetter
from typing import Any

from ..catalog import defaults, recipes
from ..catalog.compiled_sealing import CompiledRowSealer, comparand_sealer, row_sealers
from ..catalog.metadata import ColumnMeta, OnionColumn, TableMeta
from ..catalog.onions import Cap
from ..description import described
from ..errors import UnsupportedQuery
from ..stats import STATS
from ..syntax.names import shown
from ..values.array_encoding import as_list
from ..values.collation import Collation
from ..values.encoding_base import NATIVE_BYTES, compiled_form
from .needs import BuildNeed, DesignNeed, FieldNeed, JoinNeed

Params = Sequence[Any] | Mapping[str, Any]
ParamBuilder = Callable[[Params], Any]
RowFn = Callable[[Sequence[Any]], Any]

# The parameters of the statement whose rows are being decoded (for client-side values).
CURRENT_PARAMS: ContextVar[Any] = ContextVar("CURRENT_PARAMS", default=())


@dataclass(frozen=True)
class Need:
    """An onion must be peeled down to ``layer`` before the statement can run."""

    table: TableMeta
    column: ColumnMeta
    onion: OnionColumn
    layer: str
    cap: Cap

    def describe(self) -> str:
        return (
            f"{self.table.name}.{self.column.name} ({self.onion.onion} onion) "
            f"{self.onion.layer} -> {self.layer} for {self.cap.value}"
        )


@dataclass
class Output:
    name: str
    fn: RowFn
    type_code: int = 25  # text's OID unless known
    typmod: int = -1  # the type modifier described (a stored column's), else none


@dataclass(frozen=True)
class ColumnValue:
    """A row function that decrypts one stored column of the server row.  Recognizable
    (unlike a lambda), so that a large result is decrypted column by column, one batched
    call per layer (:func:`decrypt_columns`), rather than value by value."""

    column: ColumnMeta
    onion: OnionColumn
    index: int

    def __call__(self, row: Sequence[Any]) -> Any:
        return recipes.decrypt(self.column, self.onion, row[self.index])


@dataclass(frozen=True)
class StoredValue:
    """A row function giving a value of the server row as shipped, undecrypted: a
    ciphertext the client engine carries (compile/late.py), a count the server made.
    Recognizable, so that a large result's column is copied without a call per row."""

    index: int

    def __call__(self, row: Sequence[Any]) -> Any:
        return row[self.index]


@dataclass(frozen=True)
class OpenedValue:
    """A row function giving a stored column's plaintext that its caller decrypted
    before calling it, with others of the row (a read-modify-write's assignments read
    the row so: ``RmwUpdate.open_row``)."""

    index: int

    def __call__(self, row: Sequence[Any]) -> Any:
        return row[self.index]


@dataclass(frozen=True)
class AsheSum:
    """A row function that decrypts a SUM the server computed over an ASHE onion
    (``[hi, lo, count, nonces]`` at these indexes of the row).  Recognizable, so that a
    GROUP BY's sums are decrypted in one call (their pads in one AES call)."""

    column: ColumnMeta
    onion: OnionColumn
    hi: int
    lo: int
    count: int
    nonces: int

    def __call__(self, row: Sequence[Any]) -> Any:
        return recipes.ashe_sum(
            self.column, self.onion, row[self.hi], row[self.lo], row[self.count], row[self.nonces]
        )


# From this many rows on, a result's plain column outputs are decrypted in batches: below
# it, building the per-column lists costs about what the batching saves.
BATCH_ROWS = 32


def decrypt_columns(
    outputs: Sequence[Output], raw: Sequence[Sequence[Any]]
) -> list[tuple[Any, ...]]:
    """The decrypted rows of a server result: the same values as applying each output's
    function to each row, with plain column outputs decrypted a whole column at a time."""
    if len(raw) < BATCH_ROWS or not any(isinstance(o.fn, ColumnValue | AsheSum) for o in outputs):
        fns = [o.fn for o in outputs]
        rows = [tuple([fn(r) for fn in fns]) for r in raw]
    else:
        rows = list(zip(*decrypt_columnar(outputs, raw), strict=True))
    arrays = [
        i
        for i, o in enumerate(outputs)
        if isinstance(o.fn, ColumnValue) and o.fn.column.type.element is not None
    ]
    return _as_lists(rows, arrays) if arrays and rows else rows


@dataclass(frozen=True)
class RowOpening:
    """How a plan's result rows are opened by the compiled layer (see open_rows): its
    row opener, the outputs it leaves to the Python path, and the array outputs."""

    opener: Any
    others: list[Output]
    arrays: list[int]
    # per output: the innermost layer its opener removes ("DET", or "RND" for a Single
    # onion), None for the others (the statistics' names)
    schemes: list[str | None]


def row_opening(outputs: Sequence[Output]) -> RowOpening | None:
    """The compiled opening of ``outputs``' rows; None where no output is a column the
    compiled layer opens (or it is not installed)."""
    cells = [_cell(o.fn) for o in outputs]
    opener = recipes.row_opener(cells)
    if opener is None:
        return None
    others = [o for o, c in zip(outputs, cells, strict=True) if c is None]
    arrays = [i for i, o in enumerate(outputs) if _is_array(o)]
    schemes = [None if c is None else c[1].innermost for c in cells]
    return RowOpening(opener, others, arrays, schemes)


def open_rows(
    outputs: Sequence[Output], raw: list[tuple[Any, ...]], opening: RowOpening | None
) -> list[tuple[Any, ...]]:
    """:func:`decrypt_columns` of ``raw``, the outputs that have one opened by the
    compiled row opener in one call, the others computed here column by column; the
    same values either way."""
    if opening is None or not raw:
        return decrypt_columns(outputs, raw)
    others = opening.others
    if not others:
        filled: list[list[Any]] = []
    elif len(raw) < BATCH_ROWS:  # (value by value: the values read before are kept)
        filled = [[o.fn(r) for r in raw] for o in others]
    else:
        filled = decrypt_columnar(others, raw)
    rows, redo, counts = opening.opener.open(raw, filled)
    STATS.opened_columns(opening.schemes, counts)
    if redo:
        _open_left(outputs, rows, redo, raw.__getitem__)
    arrays = opening.arrays
    return _as_lists(rows, arrays) if arrays and rows else rows


# rows of a server result opened in one call (about a millisecond of work: the GIL it
# holds is given to other threads between calls)
OPENED_AT_ONCE = 2048


class ResultOpener:
    """:func:`open_rows` of a server result still in libpq's hands (psycopg's
    ``PGresult``, every column a ``bytea`` in binary format), each of whose outputs has
    a compiled opener: read in one call through libpq's ``functions``
    (dbapi/libpq.py), no stored value made a Python object first.

    ``left``: whether the last result had values the compiled opener left to the
    general path -- the only values of such a result that can be a form of the client's
    own (values/handout.py), so that a result without any is handed out as it is."""

    __slots__ = ("functions", "left", "opening", "outputs")

    def __init__(
        self, outputs: Sequence[Output], opening: RowOpening, functions: tuple[int, int, int]
    ) -> None:
        self.outputs = outputs
        self.opening = opening
        self.functions = functions
        self.left = False

    def __call__(self, result: Any) -> list[tuple[Any, ...]]:
        opening = self.opening
        opener, ptr, n, width = opening.opener, result.pgresult_ptr, result.ntuples, result.nfields
        self.left = False
        with STATS.crypto():
            rows: list[tuple[Any, ...]] = []
            for start in range(0, n, OPENED_AT_ONCE):
                # (a range at a time: the opener holds the GIL, given to other threads
                # between)
                part, redo, counts = opener.open_result(
                    ptr, start, min(n, start + OPENED_AT_ONCE), self.functions
                )
                STATS.opened_columns(opening.schemes, counts)
                if redo:
                    self.left = True
                    _open_left(
                        self.outputs, part, redo, partial(_fetched_row, result, start, width)
                    )
                rows += part
            arrays = opening.arrays
            return _as_lists(rows, arrays) if arrays and rows else rows


def _fetched_row(result: Any, start: int, width: int, i: int) -> tuple[Any, ...]:
    """Row ``start + i`` of a server result as psycopg loads a row of ``bytea``s."""
    return tuple(result.get_value(start + i, k) for k in range(width))


def _open_left(
    outputs: Sequence[Output],
    rows: list[tuple[Any, ...]],
    redo: list[tuple[int, int]],
    raw_row: Callable[[int], Sequence[Any]],
) -> None:
    """The values the compiled opener left to the general path (``redo``: (row,
    output)), computed from the fetched row ``raw_row(i)``, in place."""
    at: dict[int, list[int]] = {}
    for i, j in redo:
        at.setdefault(i, []).append(j)
    for i, js in at.items():
        raw = raw_row(i)
        values = list(rows[i])
        for j in js:
            values[j] = outputs[j].fn(raw)
        rows[i] = tuple(values)


def _cell(fn: RowFn) -> tuple[ColumnMeta, OnionColumn, int] | None:
    """(column, onion, position) of ``fn`` where it is a column the compiled row opener
    decrypts, else None."""
    if type(fn) is not ColumnValue:
        return None
    form = compiled_form(fn.column.encoding)
    # (a plaintext it would hand back undecoded is decoded by the Python path instead)
    if form[0] == NATIVE_BYTES or fn.onion.opener(form) is None:
        return None
    return fn.column, fn.onion, fn.index


def _is_array(o: Output) -> bool:
    return isinstance(o.fn, ColumnValue) and o.fn.column.type.element is not None


def _as_lists(rows: list[tuple[Any, ...]], at: list[int]) -> list[tuple[Any, ...]]:
    """The rows with the arrays at positions ``at`` as psycopg returns them: lists,
    without the lower bounds the client keeps for ordering and re-encryption."""
    out = []
    for row in rows:
        values = list(row)
        for i in at:
            values[i] = as_list(values[i])
        out.append(tuple(values))
    return out


def decrypt_columnar(outputs: Sequence[Output], raw: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """The decrypted values of a server result, a list per output column (what
    :func:`decrypt_columns` computes, without turning it into rows)."""
    columns: list[list[Any]] = []
    for o in outputs:
        fn = o.fn
        if isinstance(fn, ColumnValue):
            stored = [r[fn.index] for r in raw]
            columns.append(recipes.decrypt_many(fn.column, fn.onion, stored))
        elif isinstance(fn, AsheSum):
            sums = [(r[fn.hi], r[fn.lo], r[fn.count], r[fn.nonces]) for r in raw]
            columns.append(recipes.ashe_sum_many(fn.column, fn.onion, sums))
        elif isinstance(fn, StoredValue):
            columns.append([r[fn.index] for r in raw])
        else:
            columns.append([fn(r) for r in raw])
    return columns


@dataclass
class SortKey:
    fn: RowFn
    desc: bool
    nulls_first: bool


@dataclass
class RmwUpdate:
    """``UPDATE t SET x = <expression of the row>``: read, compute on the client, write."""

    table: TableMeta
    select_sql: str
    select_params: dict[str, ParamBuilder]
    # for each assigned column: function(row of the SELECT, user params) -> plaintext
    assignments: list[tuple[ColumnMeta, Callable[[Sequence[Any], Params], Any]]]
    # the stored columns the assignments read (as OpenedValue): opened together first
    opened: list[ColumnValue] = field(default_factory=list)
    # the names of every column the assignments read: a kept row serves the update if
    # it holds them (Compiled.lock_columns)
    reads: frozenset[str] = frozenset()
    # the WHERE names one row by its primary key: rows this transaction already locked
    # with SELECT ... FOR UPDATE (cached in the row layout) spare the SELECT's round trip
    lock_key: Callable[[Params], Any] | None = None
    # RETURNING of the statement, over the table under ``alias``, added to each write
    returning: str | None = None
    alias: str = ""
    _writes: dict[tuple[str, ...], bytes] = field(default_factory=dict, repr=False)

    @cached_property
    def select(self) -> Compiled:
        """The SELECT ... FOR UPDATE as a compiled statement: ``$n`` placeholders, run
        like any other (prepared by the server once repeated)."""
        return Compiled(kind="select", sql=self.select_sql, params=self.select_params)

    @cached_property
    def _opening(self) -> tuple[list[Output], RowOpening | None]:
        outputs = [Output(v.column.name, v) for v in self.opened]
        return outputs, row_opening(outputs)

    def open_row(self, row: Sequence[Any]) -> Sequence[Any]:
        """``row`` (the SELECT's, or the row this transaction locked) with the stored
        values the assignments read replaced by their plaintexts, which the compiled
        layer opens in one call (their AES blocks together) where it has openers."""
        if not self.opened:
            return row
        outputs, opening = self._opening
        values = list(row)
        # (a connection made with native=False opens in Python alone, as its results)
        (plain,) = open_rows(outputs, [tuple(row)], opening if recipes.COMPILED.get() else None)
        for value, plaintext in zip(self.opened, plain, strict=True):
            values[value.index] = plaintext
        return values

    @cached_property
    def _sealer(
        self,
    ) -> tuple[list[OnionColumn], recipes.RowSealer, CompiledRowSealer | None]:
        slots = [
            (i, i, col, oc)
            for i, (col, _) in enumerate(self.assignments)
            for oc in col.onions.values()
        ]
        return [oc for _, _, _, oc in slots], *row_sealers(slots)

    def seal(self, values: list[Any]) -> list[tuple[str, Any]]:
        """(onion column, stored value) of every onion of every assigned column, from the
        assigned plaintexts in order: one :class:`recipes.RowSealer` call (the row's RND
        layers sealed together, as a single-row INSERT's), or one call of the compiled
        layer where it takes them."""
        onions, sealer, compiled = self._sealer
        if compiled is not None and recipes.COMPILED.get():
            stored = compiled(values)
        else:
            stored = sealer(
                [
                    None if v is None else col.encoding.coerce(v)
                    for (col, _), v in zip(self.assignments, values, strict=True)
                ]
            )
        # (names read now: a join adjustment renames an onion column in place)
        return [(oc.anon, v) for oc, v in zip(onions, stored, strict=True)]

    def write_sql(self, columns: Sequence[str]) -> bytes:
        """``UPDATE t SET c1 = $1, ... WHERE ctid = $n`` for these onion columns: the text
        made once per set of columns, so that the server prepares it once."""
        key = tuple(columns)
        written = self._writes.get(key)
        if written is None:
            sets = ", ".join(f"{_quoted(c)} = ${i}" for i, c in enumerate(key, start=1))
            text = f"UPDATE {_quoted(self.table.anon)} SET {sets} WHERE ctid = ${len(key) + 1}"
            written = self._writes[key] = text.encode()
        return written


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass
class Residual:
    """Split execution: one server SELECT per table the statement reads (its used
    columns, decrypted, filtered by what the server can evaluate), then ``finish`` runs
    the whole statement over those rows on the client (see compile/residual.py)."""

    fetches: list[Compiled]
    # finish(fetch, params): calls fetch(i) for each fetch in order (the decrypted values
    # of fetches[i], a list per column; its parameters may depend on earlier fetches)
    finish: Callable[[Callable[[int], list[list[Any]]], Params], list[tuple[Any, ...]]]
    # its answer depends on text order or case mapping: exact only under C/POSIX
    needs_c_locale: bool = False
    # what the server could not run (why the statement is finished on the client), and
    # per fetch what it reads: named by the row cap's error and the shipping statistics
    reason: str = ""
    parts: list[str] = field(default_factory=list)


class CompiledBinder:
    """A statement's parameters in ``$n`` order, its DET and OPE comparands of ``%s``
    parameters -- the keys and bounds of a point statement -- made by the compiled
    layer in one call (``comparand_sealer``), the others by their builders, in order.
    A comparand the compiled layer does not decide (another Python type, a value the
    column cannot hold) is its builder's, which gives the precise value or error."""

    __slots__ = ("_at", "_builders", "_nonces", "_sealer")

    def __init__(self, builders: list[ParamBuilder], at: list[int], sealer: Any) -> None:
        self._builders = builders
        self._at = at  # per builder, its slot in the sealer (-1: the builder's)
        self._sealer = sealer
        # (the sealer's nonces, never read: a comparand's slot is never sealed under RND)
        self._nonces = bytes(12 * sum(1 for j in at if j >= 0))

    @classmethod
    def of(cls, builders: list[ParamBuilder]) -> CompiledBinder | None:
        """The binder of ``builders``, or None where the compiled layer makes none of
        their values."""
        at: list[int] = []
        slots: list[tuple[Any, ...]] = []
        for build in builders:
            slot_of = getattr(build, "compiled_slot", None)
            slot = slot_of() if slot_of is not None else None
            at.append(len(slots) if slot is not None else -1)
            if slot is not None:
                slots.append(slot)
        return cls(builders, at, comparand_sealer(slots)) if slots else None

    def __call__(self, user: Params) -> list[Any]:
        if type(user) is not tuple and type(user) is not list:
            return [build(user) for build in self._builders]
        made, left, (det, ope, _) = self._sealer.seal(user, self._nonces)
        out = [
            made[j] if j >= 0 and (not left or j not in left) else build(user)
            for build, j in zip(self._builders, self._at, strict=True)
        ]
        if det:  # (as each builder counts one it made)
            STATS.count("DET", False, det)
        if ope:
            STATS.count("OPE", False, ope)
        return out


@dataclass
class Compiled:
    kind: str  # select | insert | update | delete | ddl | utility | build (see builds)
    sql: str = ""
    params: dict[str, ParamBuilder] = field(default_factory=dict)
    outputs: list[Output] = field(default_factory=list)
    returns_rows: bool = False
    client_sort: list[SortKey] | None = None
    client_limit: tuple[ParamBuilder | None, ParamBuilder | None] | None = None
    rmw: RmwUpdate | None = None
    # aggregates the server cannot compute: rows are fetched, the client reduces them
    reduce: Callable[[list[Sequence[Any]]], tuple[Any, ...]] | None = None
    # SELECT ... FOR UPDATE by primary key: the key, and where the row layout sits
    lock_key: Callable[[Params], Any] | None = None
    lock_layout: list[int] | None = None
    # the columns whose values the layout holds (NULL in the others' places); None: all
    lock_columns: frozenset[str] | None = None
    locks_rows: bool = False  # SELECT ... FOR UPDATE (else a snapshot read, see _select)
    # the table whose rows read by key the plan keeps as the rule of kept rows says
    # (compile/settings.py KeptRows): the plan is the same under any rule that keeps the
    # same columns of it (None: no rule changes the plan)
    kept_table: str | None = None
    needs: list[Need] = field(default_factory=list)
    # column pairs to bring under one key (join adjustments) before the statement runs
    joins: list[JoinNeed] = field(default_factory=list)
    # onions built on first use that the statement needs before it can be compiled (the
    # plan is then only this: built, the statement is compiled again)
    builds: list[BuildNeed] = field(default_factory=list)
    # with ``builds``: the plan the statement would have once every onion still to be
    # built is (compile/as_if_built.py): the layers it needs them at and what the online
    # design wants, so that all of a table's are built in one pass
    as_if: Compiled | None = None
    # with ``builds``: the plan over the onions stored now, where one exists (None: the
    # statement cannot run without the builds) -- run inside a transaction instead
    without_builds: Compiled | None = None
    # field onions the plan would leave to the server once built (wants, not needs: the
    # plan runs as it is where they cannot be built)
    fields: list[FieldNeed] = field(default_factory=list)
    # what the online design would build for the plan to leave more to the server (wants
    # too: compile/design_wants.py)
    designs: list[DesignNeed] = field(default_factory=list)
    # a plan of kind "build" with only ``fields``: why the statement is refused until
    # they are built (raised where they cannot be)
    refusal: Exception | None = None
    tables: list[TableMeta] = field(default_factory=list)
    statement_type: str = "other"  # for stats: "SELECT", "INSERT", ...
    # whether the server's rows are all bytea (ciphertexts), fetched in binary format
    # (None: not known until the statement's first direct run; dbapi/cursor.py)
    binary_rows: bool | None = None
    # multi-row INSERT: the leading parameters (those of its VALUES, made first) all at
    # once, encrypted in batches; the rest (RETURNING's) by their builders
    bulk: Callable[[Params], list[Any]] | None = None
    bulk_size: int = 0  # how many values bulk makes
    # INSERT ... SELECT through the client: the SELECT (decrypted), then the single-row
    # INSERT whose %s parameters are one row of it
    insert_select: tuple[Compiled, Compiled] | None = None
    # a SELECT the server cannot evaluate over ciphertexts, finished on the client
    residual: Residual | None = None
    # reads the server's clock (now(), CURRENT_DATE, ...): read once per execution
    uses_clock: bool = False
    # the collations of the text the statement orders (None: a column without a recorded
    # collation, ordered bytewise); the connection checks them before running it
    text_orders: list[Collation | None] = field(default_factory=list)
    # the plan is exact only for parameters ``serves`` holds for (a containment whose
    # tokens decide some documents only: compile/containment.py); ``otherwise``, the plan
    # for the rest (split execution), or None: refused for them
    serves: Callable[[Params], bool] | None = None
    otherwise: Compiled | None = None

    # a plain read, after which a transaction may be started again (dbapi/restart.py;
    # None: not known yet)
    only_reads: bool | None = field(default=None, repr=False)
    # how the rows are opened from the server's result (dbapi/cursor.py; False: they are
    # not, None: not known until binary_rows is)
    result_opener: ResultOpener | bool | None = field(default=None, repr=False)
    _positional: tuple[bytes, list[ParamBuilder]] | None = field(default=None, repr=False)
    _ordered: bool | None = field(default=None, repr=False)
    _placed: list[int] | None = field(default=None, repr=False)

    @cached_property
    def binder(self) -> CompiledBinder | None:
        """The compiled binder of the parameters in ``$n`` order (None: the compiled
        layer makes none of them)."""
        return CompiledBinder.of(self._to_positional()[1])

    @cached_property
    def locked_row(self) -> Callable[[Sequence[Any]], tuple[Any, ...]]:
        """The row layout's values out of a result row (``lock_layout``'s positions:
        ctid and a stored value per column, never fewer than two)."""
        return itemgetter(*(self.lock_layout or []))

    def for_params(self, user: Params) -> Compiled:
        """The plan that runs the statement for these parameters (see ``serves``)."""
        if self.serves is None or self.serves(user):
            return self
        if self.otherwise is None:
            raise UnsupportedQuery(
                "containment of a jsonb document its tokens do not decide (an empty "
                "container, a top-level array, an array element with several values) "
                "in a statement split execution cannot evaluate",
                "containment of such a document",
            )
        return self.otherwise.for_params(user)

    def bind(self, user: Params) -> dict[str, Any]:
        defaults.next_bind()
        builders = list(self.params.values())
        return dict(zip(self.params, self._values(user, builders), strict=True))

    def _values(self, user: Params, builders: list[ParamBuilder]) -> list[Any]:
        """The values of ``builders`` (in creation order), the leading ones from ``bulk``."""
        if self.bulk is None:
            return [build(user) for build in builders]
        head = self.bulk(user)
        return head + [build(user) for build in builders[len(head) :]]

    @cached_property
    def row_opening(self) -> RowOpening | None:
        """How the compiled layer opens this plan's result rows (None: it does not)."""
        return row_opening(self.outputs)

    @cached_property
    def description(self) -> list[tuple[Any, ...]]:
        """DB-API ``cursor.description`` of the decrypted result (fixed once compiled)."""
        return [
            described(
                shown(o.name),
                o.type_code,
                o.fn.column.type.typmod if type(o.fn) is ColumnValue else o.typmod,
            )
            for o in self.outputs
        ]

    @property
    def positional_sql(self) -> bytes:
        """The server SQL with ``$n`` placeholders, for :class:`psycopg.RawCursor`."""
        return self._to_positional()[0]

    def bind_positional(self, user: Params) -> list[Any]:
        """Parameters in ``$n`` order: psycopg has no placeholder parsing left to do, which
        for a multi-row INSERT with thousands of parameters is most of its work."""
        builders = self._to_positional()[1]
        defaults.next_bind()
        if self._in_creation_order():
            if self.bulk is not None:
                if self.bulk_size == len(builders):  # (no RETURNING, ON CONFLICT)
                    return self.bulk(user)
                return self._values(user, builders)
            binder = self.binder
            if binder is not None and recipes.COMPILED.get():
                return binder(user)
            return [build(user) for build in builders]
        # built in creation order (a row's given values are checked before its defaults
        # draw sequence numbers), sent in $n order
        made = [build(user) for build in self.params.values()]
        return [made[i] for i in self._positions()]

    def _positions(self) -> list[int]:
        """Per ``$n``, the place of its builder among the parameters in creation order."""
        if self._placed is None:
            place = {id(build): i for i, build in enumerate(self.params.values())}
            self._placed = [place[id(build)] for build in self._to_positional()[1]]
        return self._placed

    def _in_creation_order(self) -> bool:
        """Do the ``$n`` follow the order the parameters were made in (textual order)?"""
        if self._ordered is None:
            builders = self._to_positional()[1]
            self._ordered = len(builders) == len(self.params) and all(
                a is b for a, b in zip(builders, self.params.values(), strict=True)
            )
        return self._ordered

    def _to_positional(self) -> tuple[bytes, list[ParamBuilder]]:
        if self._positional is None:
            builders: list[ParamBuilder] = []

            def number(m: re.Match[str]) -> str:
                if m.group(1) is None:
                    return "%"  # psycopg's escaped percent
                builders.append(self.params[m.group(1)])
                return f"${len(builders)}"

            text = _PSYCOPG_PLACEHOLDER.sub(number, self.sql)
            self._positional = (text.encode(), builders)
        return self._positional


# the only placeholders and escapes in generated SQL (see params.escape_percent)
_PSYCOPG_PLACEHOLDER = re.compile(r"%\((p\d+)\)s|%%")
