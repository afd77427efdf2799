"""jsonb and array functions in a client-evaluated statement, as the client engine calls
them: each call site (:class:`CallSpec`, data the plan carries, made by
engine/row_lowering.py) registered as an engine function ``pg_rf_<n>``
(:func:`engine_functions`) that calls PostgreSQL's semantics (engine/row_functions.py).

The engine function's arguments, by what each operand is (:class:`ArgSpec`):

* a held value (engine/held.py) arrives as its struct of key bytes and is mapped back
  to a value through the statement's :class:`held.Shown` -- any of the values equal
  to it, or, for a function whose result depends on how the value prints (``->>`` of
  a number), the value itself (refused where values equal to it print otherwise);
* a string literal or a parameter where the function takes jsonb or an array is read
  as PostgreSQL reads it there (the type's comparand) when the parameters are bound,
  and arrives as its exact bytes (:func:`constant_bytes`); an ``ARRAY[...]``
  constructor arrives as a list read likewise;
* anything else arrives as the engine's value (text, integers, numerics, booleans);
* an aggregate's arguments arrive as the list of its group's rows (a struct per row
  for several arguments), in its ORDER BY's order.

A held result (jsonb, an array) is registered in the statement's ``Shown`` and
returned as its struct, so that it compares, orders, groups and prints as a loaded
value does; a text, integer or boolean result plainly; a set-returning function's rows
as a list the engine unnests.

The statement's ``Shown``, its session's context variables (the engine calls from its
own threads) and the errors the functions raise (PostgreSQL's, typed) are the running
statement's (:class:`CallContext`): an error raised inside the engine is raised as
itself once the engine gives up.
"""

from __future__ import annotations

import contextvars
import inspect
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from psycopg import errors as pg_errors

from ..values.encodings import Encoding
from ..values.interval_encoding import intervals_as_written
from ..values.json_encoding import JsonText
from ..values.sent_types import mismatched
from .array_functions import OMITTED
from .held import Shown
from .row_functions import AGGREGATES, ROW_FUNCTIONS, RowFunction
from .runtime import far_value, refusal


@dataclass(frozen=True)
class ArgSpec:
    """How one argument reaches the engine function (see the module docstring)."""

    kind: str  # "held" | "const" | "list" | "numeric" (its text) | "omitted" | "plain"
    duck: str  # the engine type of the function's parameter
    encoding: Encoding | None = None  # held/const/list: the value's encoding


@dataclass(frozen=True)
class CallSpec:
    """One call site of a row function: the engine function ``udf`` calling
    ``ROW_FUNCTIONS[function][overload]`` with ``enc`` and the arguments."""

    udf: str
    function: str
    overload: int
    args: tuple[ArgSpec, ...]
    result: str  # the engine type of the result
    enc: Encoding | None
    held_result: bool
    # a set-returning function's: the column of its records taken (None: its values),
    # or its rows' numbers (WITH ORDINALITY)
    column: int | None = None
    ordinality: bool = False
    # an aggregate's: called once per group with the list of its rows' arguments
    aggregate: bool = False
    # an aggregate without ORDER BY: its rows come in an order PostgreSQL's plan decides
    unordered: bool = False
    # a held result's encoding; ``printed``: returned as its exact bytes (an output the
    # statement only shows: as the row computed it, not as a key several may share)
    result_encoding: Encoding | None = None
    printed: bool = False

    @property
    def row_function(self) -> RowFunction:
        table = AGGREGATES if self.aggregate else ROW_FUNCTIONS
        return table[self.function][self.overload]

    @property
    def parameters(self) -> list[str]:
        """The engine function's parameter types (an aggregate's: one list)."""
        if not self.aggregate:
            return [a.duck for a in self.args]
        if len(self.args) == 1:
            return [self.args[0].duck + "[]"]
        fields = ", ".join(f"a{i} {a.duck}" for i, a in enumerate(self.args))
        return [f"STRUCT({fields})[]"]


@dataclass
class CallContext:
    """The running statement's values mapped from keys, and the errors its row
    functions raised."""

    shown: Shown
    raised: list[BaseException] = field(default_factory=list)
    # the statement's context variables (its session: TimeZone, DateStyle, ...), which
    # the engine's threads run the functions in -- a timestamptz printed into jsonb is
    # printed in the session's zone, and added to on its calendar (None: the calling
    # thread's own)
    session: contextvars.Context | None = None


class RowCall:
    """The engine function of one :class:`CallSpec`."""

    def __init__(self, spec: CallSpec, context: CallContext) -> None:
        self.spec = spec
        self.context = context
        self.function = spec.row_function
        # (the engine counts a Python function's parameters by its signature)
        self.__signature__ = inspect.Signature(
            [
                inspect.Parameter(f"a{i}", inspect.Parameter.POSITIONAL_ONLY)
                for i in range(len(spec.parameters))
            ]
        )

    def __call__(self, *raw: Any) -> Any:
        context = self.context
        try:
            if context.session is None:
                return self._in_session(raw)
            # (a copy per call: the engine may call from several threads at once)
            return context.session.copy().run(self._in_session, raw)
        except Exception as exc:
            context.raised.append(exc)
            raise

    def _in_session(self, raw: tuple[Any, ...]) -> Any:
        # (an interval argument given as its bytes -- a constant, another call's
        # printed result -- read as its fields, as the held values are: '2 mons'
        # printed so, not as the '60 days' of a timedelta)
        with intervals_as_written():
            return self._call(self.context.shown, raw)

    def _call(self, shown: Shown, raw: tuple[Any, ...]) -> Any:
        spec, function = self.spec, self.function
        if spec.aggregate:
            return self._aggregate(shown, raw[0], function.text_sensitive)
        if function.text_sensitive:
            # (a held argument whose key values of different text share: each of them,
            # answered where all give the same result)
            options = [
                shown.candidates(a.duck, v)
                if a.kind == "held" and v is not None
                else [_argument(shown, a, v, False)]
                for a, v in zip(spec.args, raw, strict=True)
            ]
        else:
            options = [[_argument(shown, a, v, False)] for a, v in zip(spec.args, raw, strict=True)]
        results = self._evaluate(options)
        if (
            len(results) > 1
            and spec.held_result
            and not spec.printed
            and not function.result.startswith("setof ")
        ):
            # a held result: equal values of different text, one key (what uses it next
            # tries each, as for a loaded value)
            held = shown.load(spec.result, results)
            if len({None if h is None else next(iter(h.values())) for h in held}) == 1:
                return held[0]
        if len({_printed(r) for r in results}) > 1:
            raise refusal(
                f"{spec.function} of a value equal to others that print differently, "
                "whose result depends on which (PostgreSQL's depends on the row)"
            )
        result = results[0]
        if function.result.startswith("setof "):
            return self._rows(shown, result)
        return self._held(shown, result)

    def _held(self, shown: Shown, result: Any) -> Any:
        """A result as the engine function returns it (see :class:`CallSpec`)."""
        spec = self.spec
        if result is None or not spec.held_result:
            return result
        if spec.printed:
            assert spec.result_encoding is not None
            return spec.result_encoding.to_exact_bytes(result)
        return shown.load(spec.result, [result])[0]

    def _evaluate(self, options: list[list[Any]]) -> list[Any]:
        """The function's results for each combination of its arguments' values."""
        spec, function = self.spec, self.function
        results: list[Any] = []
        for values in itertools.islice(itertools.product(*options), _MOST_CANDIDATES + 1):
            if function.strict and any(v is None for v in values):
                results.append(None)
            else:
                results.append(function.impl(spec.enc, *values))
        if len(results) > _MOST_CANDIDATES:
            raise refusal(f"{spec.function} of values equal to many that print differently")
        return results

    def _aggregate(self, shown: Shown, rows: Any, exact: bool) -> Any:
        """An aggregate over a group's rows (NULL for no rows, as PostgreSQL's)."""
        spec = self.spec
        if rows is None:
            return None
        if len(spec.args) == 1:
            columns = [[_argument(shown, spec.args[0], v, exact) for v in rows]]
        else:
            columns = [
                [_argument(shown, a, r[f"a{i}"], exact) for r in rows]
                for i, a in enumerate(spec.args)
            ]
        if spec.unordered and len(columns[0]) > 1 and not _order_free(spec, columns):
            raise refusal(f"{spec.function} without ORDER BY (order of aggregation)")
        return self._held(shown, self.function.impl(spec.enc, *columns))

    def _rows(self, shown: Shown, result: Any) -> Any:
        """A set-returning function's rows as the list the engine unnests."""
        spec = self.spec
        rows = list(result or ())
        if spec.ordinality:
            return list(range(1, len(rows) + 1))
        if spec.column is not None:
            rows = [None if r is None else r[spec.column] for r in rows]
        if spec.printed:  # (rows only shown: each as its exact bytes)
            assert spec.result_encoding is not None
            return [None if r is None else spec.result_encoding.to_exact_bytes(r) for r in rows]
        if spec.held_result:
            return shown.load(spec.result.removesuffix("[]"), rows)
        return rows


def _order_free(spec: CallSpec, columns: list[list[Any]]) -> bool:
    """Whether an aggregate's result is the same in every order of its rows: an object
    of distinct keys (jsonb orders an object's keys itself; a repeated key keeps the
    last value, which the order decides)."""
    if spec.function in ("sum", "avg"):
        return True  # (exact: the same in any order)
    if spec.function != "jsonb_object_agg":
        return False
    keys = [None if k is None else str(k) for k in columns[0]]
    return len(set(keys)) == len(keys)


# the combinations of an ambiguous argument's values a call tries at most
_MOST_CANDIDATES = 64


def _printed(v: Any) -> Any:
    """How a function's result prints (jsonb by its text: 1.0 is not 1)."""
    if isinstance(v, JsonText):
        return ("json", v.text)
    if isinstance(v, list | tuple):
        return (type(v).__name__, tuple(_printed(x) for x in v))
    return (type(v).__name__, repr(v))


def _argument(shown: Shown, arg: ArgSpec, raw: Any, exact: bool) -> Any:
    if arg.kind == "omitted":
        return OMITTED
    if raw is None:
        return None
    if arg.kind == "held":
        return shown.value(arg.duck, raw) if exact else shown.member(arg.duck, raw)
    if arg.kind == "const":
        assert arg.encoding is not None
        return arg.encoding.from_exact_bytes(raw)
    if arg.kind == "plain" and isinstance(raw, str) and arg.duck in ("DATE", "TIMESTAMP"):
        return far_value(raw, arg.duck == "TIMESTAMP")  # (the engine's text: BC, past 9999)
    if arg.kind == "numeric":  # (concat() of NULL is '': no numeric's text)
        return Decimal(raw) if raw else None
    if arg.kind == "list":
        assert arg.encoding is not None
        return arg.encoding.comparand(raw)
    return raw


def constant_bytes(
    encoding: Encoding, operator: tuple[str, str, bool] | None = None
) -> Callable[[Any], Any]:
    """A parameter's value (or a literal's text) given to a row function where it takes
    ``encoding``'s type: read as PostgreSQL reads it there, as its exact bytes.
    ``operator``: (symbol, the other operand's type, the parameter on the right) of an
    operator over two operands of one type, which a parameter sent as another type has
    not (``integer[] && smallint[]``: PostgreSQL's 42883)."""

    def read(v: Any) -> Any:
        if v is None:
            return None
        sent = mismatched(encoding.sql_type, v) if operator is not None else None
        if operator is not None and sent is not None:
            symbol, other, right = operator
            left, right_type = (other, sent) if right else (sent, other)
            raise pg_errors.UndefinedFunction(
                f"operator does not exist: {left} {symbol} {right_type}"
            )
        return encoding.to_exact_bytes(encoding.comparand(v))

    return read


def engine_functions(
    specs: list[CallSpec], context: CallContext
) -> list[tuple[str, Callable[..., Any], list[str], str, bool]]:
    """The engine functions of the calls, reading and raising into ``context``: (name,
    function, parameter types, result type, whether it is called with NULL
    arguments: always, as a function may return NULL of non-NULL ones).  (The engine
    calls them from its own threads: the context is theirs, not a context variable's.)"""
    return [(s.udf, RowCall(s, context), s.parameters, s.result, True) for s in specs]


def record_columns(record: str) -> list[tuple[str, str]]:
    """The (name, type) columns of ``record(key text, value jsonb)``."""
    body = record.removeprefix("record(").removesuffix(")")
    return [
        (part.strip().split(" ", 1)[0], part.strip().split(" ", 1)[1]) for part in body.split(",")
    ]


__all__ = [
    "ArgSpec",
    "CallContext",
    "CallSpec",
    "constant_bytes",
    "engine_functions",
    "record_columns",
]
