"""Candidate filters over a Contain onion: containment and membership on the server.

Split execution's fetches (``CompileMode.candidate_filters``) may return a superset of
the rows a conjunct keeps: the client engine evaluates every conjunct again, exactly, on
the rows that come back.  There, a containment or membership predicate between a
column with a Contain onion and a constant or parameter compiles to a test over the
column's token array (``bytea[]``, GIN-indexed once peeled) that every matching row
passes -- the superset property proved in :mod:`adaptive_client.catalog.containment`:

=====================================  ===============================================
the application's predicate            the server's filter (t: tokens of features)
=====================================  ===============================================
``col @> c``, ``c <@ col``             ``tokens @> t(c)``
``col <@ c``, ``c @> col``             ``tokens <@ t(c)``
``col && c``, ``c && col`` (arrays)    ``tokens && t(c)``
``x = ANY(col)`` (arrays)              ``tokens @> t(ARRAY[x])``
``col ? k`` (jsonb)                    ``tokens && t(key k)``
``col ?| keys`` (jsonb)                ``tokens && t(every key)``
``col ?& keys`` (jsonb)                one ``tokens && t(key)`` per key written as a
                                       string; keys known only when bound: ``tokens &&
                                       t(every key) OR (no key)``
=====================================  ===============================================

Never under NOT (a superset cannot be negated).  Where the tokens *decide* the
predicate (:func:`exact_filter`: arrays' ``@>``, ``&&`` and ``x = ANY(col)``; jsonb's
``?``, ``?|``, ``?&`` of literal keys, and ``@>`` of a document whose features decide
it -- ``catalog.containment.decides_jsonb``), the same test is exact and the statement
the server answers alone holds it; elsewhere the exact compile refuses the predicate,
which is then left to the client engine (the relation fetched with the filter above, a
superset).  A jsonb ``@>`` of a parameter is decided or not by the document bound: the
plan assumes it (``Compiler.assume``) and carries split execution's plan for the other
documents (compile/statements.py, ``Compiled.for_params``).  A parameter's tokens are
computed when the statement is bound; a NULL operand gives a NULL filter (no row), as
PostgreSQL's operators give NULL -- except under ``?&``, whose NULL keys PostgreSQL skips.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from psycopg import errors as pg_errors
from sqlglot import exp

from ..catalog import containment
from ..catalog.metadata import OnionColumn
from ..catalog.onions import Cap, Onion
from ..values.array_encoding import UNFIT, shape
from ..values.encodings import encoding_for, parse_sql_type
from ..values.sent_types import mismatched
from .plan import ParamBuilder, Params
from .scope import ColumnRef, Scope


class FilterCompiler(Protocol):
    """What a candidate filter needs of the compiler (``compiler.Compiler``)."""

    @property
    def negated(self) -> bool: ...

    def param(self, builder: ParamBuilder) -> exp.Placeholder: ...

    def value_of(self, node: exp.Expression) -> ParamBuilder | None: ...

    def require(
        self, ref: ColumnRef, cap: Cap, prefer: OnionColumn | None = None
    ) -> OnionColumn: ...

    def col_expr(self, ref: ColumnRef, oc: OnionColumn) -> exp.Column: ...

    def column_side(self, scope: Scope, node: exp.Expression) -> ColumnRef | None: ...


# the predicates a Contain onion filters, and the column types each applies to
_ARRAY_OPS: dict[type[exp.Expression], frozenset[str]] = {
    exp.ArrayContainsAll: frozenset({"jsonb", "array"}),
    exp.ArrayContainedBy: frozenset({"jsonb", "array"}),
    exp.ArrayOverlaps: frozenset({"array"}),
}
_KEY_OPS = (exp.JSONBContainsTopKey, exp.JSONBContainsAnyTopKeys, exp.JSONBContainsAllTopKeys)
# (the client engine's lowered form of the same: a call of one of its row functions named
# for the operator, with the operands as written -- engine/row_calls.py)
PREDICATES = (*_ARRAY_OPS, *_KEY_OPS, exp.EQ, exp.Anonymous)
_WRITTEN: dict[str, Callable[[exp.Expression, exp.Expression], exp.Expression]] = {
    "@>": lambda a, b: exp.ArrayContainsAll(this=a, expression=b),
    "<@": lambda a, b: exp.ArrayContainedBy(this=a, expression=b),
    "&&": lambda a, b: exp.ArrayOverlaps(this=a, expression=b),
    "?": lambda a, b: exp.JSONBContainsTopKey(this=a, expression=b),
    "?|": lambda a, b: exp.JSONBContainsAnyTopKeys(this=a, expression=b),
    "?&": lambda a, b: exp.JSONBContainsAllTopKeys(this=a, expression=b),
    "= ANY": lambda a, b: exp.EQ(this=a, expression=exp.Any(this=b)),
}
# ``c op col`` read as ``col op' c``
_FLIPPED: dict[type[exp.Expression], type[exp.Expression]] = {
    exp.ArrayContainsAll: exp.ArrayContainedBy,
    exp.ArrayContainedBy: exp.ArrayContainsAll,
    exp.ArrayOverlaps: exp.ArrayOverlaps,
}
# a key list (?|, ?&) read as text[] reads it: a literal, ARRAY[...], a list
_KEYS = encoding_for(parse_sql_type("text[]"))
BYTEA_ARRAY = exp.DataType.build("bytea[]")


def candidate_filter(
    c: FilterCompiler, scope: Scope, node: exp.Expression
) -> exp.Expression | None:
    """The server's candidate filter for ``node``, or None where it has none (no Contain
    onion, not a column against a constant, under NOT, an operator the column's type
    does not have): the predicate then takes the compiler's other paths."""
    if c.negated:
        return None
    if isinstance(node, exp.Anonymous):
        node = _as_written(node)
    if isinstance(node, exp.EQ):
        return _member(c, scope, node)
    if isinstance(node, _KEY_OPS):
        ref = c.column_side(scope, node.this)
        if ref is None or not _has_onion(ref, frozenset({"jsonb"})):
            return None
        value = c.value_of(node.expression)
        return None if value is None else _key_filter(c, ref, node, value)
    if type(node) not in _ARRAY_OPS:
        return None
    operands = _column_against_value(c, scope, node)
    if operands is None:
        return None
    ref, other, op, written = operands
    value = c.value_of(other)
    if value is None or not _has_onion(ref, _ARRAY_OPS[op]):
        return None
    oc = c.require(ref, Cap.CONTAIN)
    build = _token_builder(oc, ref.column.encoding, value, written, complete=False)
    return op(this=c.col_expr(ref, oc), expression=_tokens(c, build))


# a token no feature has (tokens are 16 bytes): a comparand's NULL element, or one no
# stored element can equal, makes ``@>`` false for every row, as PostgreSQL's does
NO_TOKEN = b"\x00"


# (the operator as written and whether the column is its left operand: a parameter's
# type is checked against the column's when bound, ``_sent_as_column``)
Written = tuple[type[exp.Expression], bool] | None


def _column_against_value(
    c: FilterCompiler, scope: Scope, node: exp.Expression
) -> tuple[ColumnRef, exp.Expression, type[exp.Expression], Written] | None:
    """(the column, the other operand, the operator read with the column on its left,
    what a bare parameter is checked against) of a binary containment predicate between
    a column and something that is not one, else None."""
    op = type(node)
    lref, rref = c.column_side(scope, node.this), c.column_side(scope, node.expression)
    if lref is not None and rref is None:
        ref, other = lref, node.expression
    elif rref is not None and lref is None:
        ref, other, op = rref, node.this, _FLIPPED[op]
    else:
        return None
    written = (type(node), lref is not None) if _bare_parameter(other) else None
    return ref, other, op, written


def _token_builder(
    oc: OnionColumn, encoding: Any, value: ParamBuilder, written: Written, complete: bool
) -> ParamBuilder:
    """The tokens of the comparand's features, computed when bound (NULL: a NULL
    filter).  ``complete``: an array comparand's NULL element, or one the column's type
    cannot hold, adds a token no row has (``@>`` is then false, as in PostgreSQL)."""

    def build(p: Params) -> Any:
        v = value(p)
        if v is None:
            return None
        if written is not None:
            _sent_as_column(encoding, v, *written)
        comparand = encoding.comparand(v)
        tokens = oc.contain.tokens(containment.features(encoding, comparand))
        if complete and any(x is None or x is UNFIT for x in shape(comparand)[2]):
            tokens.append(NO_TOKEN)
        return tokens

    return build


class ExactCompiler(FilterCompiler, Protocol):
    """What an exact filter needs besides: a place to record what it assumes of the
    parameters (``Compiler.assume``)."""

    def assume(self, holds: Callable[[Params], bool]) -> None: ...


def exact_filter(c: ExactCompiler, scope: Scope, node: exp.Expression) -> exp.Expression | None:
    """The server's exact test for ``node`` over a Contain onion, where the tokens decide
    it (see the table in the docstring), else None:

    * arrays: ``col @> c`` (a NULL element in c, or one the column's type cannot hold,
      gives a token no row has: false, as in PostgreSQL), ``col && c``, ``x = ANY(col)``
      (NULL and false alike drop a row: never under NOT);
    * jsonb: ``?``, ``?|``, ``?&``; ``col @> c`` where c's features decide it
      (catalog/containment.py ``decides_jsonb``): a literal checked now, a parameter
      assumed and checked when bound (``Compiler.assume``: a value it does not hold
      runs the statement by split execution).

    ``<@`` is never exact (a NULL element or an element repeated at another depth escapes
    the tokens), nor anything under NOT."""
    if c.negated:
        return None
    if isinstance(node, exp.EQ):
        return _member(c, scope, node)
    if isinstance(node, _KEY_OPS):
        if isinstance(node, exp.JSONBContainsAllTopKeys) and not _literal_keys(node.expression):
            return None  # (keys known only when bound: a superset, ``tokens && all``)
        return candidate_filter(c, scope, node)
    if type(node) not in _ARRAY_OPS:
        return None
    operands = _column_against_value(c, scope, node)
    if operands is None or operands[2] is exp.ArrayContainedBy:
        return None
    ref, other, op, written = operands
    value = c.value_of(other)
    if value is None or not _has_onion(ref, _ARRAY_OPS[op]) or not _same_kind(ref, other):
        return None
    encoding = ref.column.encoding
    jsonb = encoding.sql_type.name == "jsonb"
    if jsonb:
        if isinstance(other, exp.Literal):
            if not containment.decides_jsonb(encoding.comparand(value(()))):
                return None
        else:
            c.assume(lambda p: _decided(encoding, value(p)))
    oc = c.require(ref, Cap.CONTAIN)
    complete = op is exp.ArrayContainsAll and not jsonb
    build = _token_builder(oc, encoding, value, written, complete)
    return op(this=c.col_expr(ref, oc), expression=_tokens(c, build))


_SYMBOLS: dict[type[exp.Expression], str] = {
    exp.ArrayContainsAll: "@>",
    exp.ArrayContainedBy: "<@",
    exp.ArrayOverlaps: "&&",
}


def _bare_parameter(node: exp.Expression) -> bool:
    """A parameter not cast: of the type psycopg sends it as."""
    while isinstance(node, exp.Paren):
        node = node.this
    return isinstance(node, exp.Placeholder)


def _sent_as_column(
    encoding: Any, v: Any, written: type[exp.Expression], column_left: bool
) -> None:
    """PostgreSQL's 42883 where a parameter is sent as another type than the column's
    (``integer[] && smallint[]``: psycopg sends a list of small ints as smallint[]); the
    operators take two operands of one type."""
    sent = mismatched(encoding.sql_type, v)
    if sent is None:
        return
    column = encoding.sql_type.sql()
    left, right = (column, sent) if column_left else (sent, column)
    raise pg_errors.UndefinedFunction(
        f"operator does not exist: {left} {_SYMBOLS[written]} {right}"
    )


# the element types whose ARRAY[...] of string literals PostgreSQL reads as the column's
_STRING_ELEMENTS = frozenset({"text", "varchar", "char"})
_INTEGER_ELEMENTS = frozenset({"smallint", "integer", "bigint"})


def _same_kind(ref: ColumnRef, other: exp.Expression) -> bool:
    """Whether ``ARRAY[...]`` compared with an array column has elements of the column's
    kind (strings for text, numbers for numbers): otherwise PostgreSQL has no such
    operator (42883), which the client engine raises; a string literal or a parameter
    is read as the column's type."""
    element = ref.column.type.element
    if element is None:
        return True  # (jsonb: any comparand is read as jsonb)
    items = other.expressions if isinstance(other, exp.Array) else [other]
    if not isinstance(other, exp.Array) and not isinstance(other, exp.Literal):
        return True  # a parameter, NULL
    strings = element.name in _STRING_ELEMENTS
    integers = element.name in _INTEGER_ELEMENTS
    for item in items:
        if isinstance(item, exp.Null) or (item is other and item.is_string):
            continue  # ('{a,b}' is read as the column's type)
        if isinstance(item, exp.Placeholder) and strings:
            continue  # (a str parameter is text)
        if not isinstance(item, exp.Literal) or item.is_string != strings:
            return False
        if integers and not str(item.this).isdigit():
            return False
    return True


def _decided(encoding: Any, v: Any) -> bool:
    return v is None or containment.decides_jsonb(encoding.comparand(v))


def _as_written(call: exp.Anonymous) -> exp.Expression:
    """The operator a lowered row-function call stands for (the call itself otherwise:
    no filter).  The engine's meta names the operator; the operands are as written."""
    operator = getattr(call.meta.get("row_call"), "function", None)
    make = _WRITTEN.get(operator) if isinstance(operator, str) else None
    if make is None or len(call.expressions) != 2:
        return call
    return make(*call.expressions)


def _has_onion(ref: ColumnRef, types: frozenset[str]) -> bool:
    """Whether the column has a Contain onion (or one built on first use: requiring it
    then asks for the build) and its type has the operator."""
    col = ref.column
    return (Onion.CONTAIN in col.onions or Onion.CONTAIN in col.on_demand) and (
        col.type.name in types
    )


def _tokens(c: FilterCompiler, build: ParamBuilder) -> exp.Expression:
    return exp.Cast(this=c.param(build), to=BYTEA_ARRAY.copy())


def _member(c: FilterCompiler, scope: Scope, node: exp.EQ) -> exp.Expression | None:
    """``x = ANY(col)``: the rows whose array holds an element equal to x."""
    quantified, other = node.expression, node.this
    if not isinstance(quantified, exp.Any):
        return None
    inner = quantified.this
    while isinstance(inner, exp.Paren):
        inner = inner.this
    ref = c.column_side(scope, inner)
    if ref is None or c.column_side(scope, other) is not None:
        return None
    value = c.value_of(other)
    if value is None or not _has_onion(ref, frozenset({"array"})):
        return None
    if not _same_kind(ref, other):
        return None
    oc = c.require(ref, Cap.CONTAIN)
    encoding = ref.column.encoding

    def build(p: Params) -> Any:
        v = value(p)
        if v is None:
            return None
        return oc.contain.tokens(containment.features(encoding, encoding.comparand([v])))

    return exp.ArrayContainsAll(this=c.col_expr(ref, oc), expression=_tokens(c, build))


def _keys(v: Any) -> list[str]:
    """The non-NULL keys of a ``?|`` / ``?&`` operand (PostgreSQL skips NULL keys)."""
    return [str(k) for k in shape(_KEYS.comparand(v))[2] if k is not None]


def _key_tokens(oc: OnionColumn, keys: list[str]) -> list[bytes]:
    return oc.contain.tokens(f for k in keys for f in containment.key_features(k))


def _key_filter(
    c: FilterCompiler, ref: ColumnRef, node: exp.Expression, value: ParamBuilder
) -> exp.Expression:
    oc = c.require(ref, Cap.CONTAIN)
    column = c.col_expr(ref, oc)
    if isinstance(node, exp.JSONBContainsTopKey):
        return exp.ArrayOverlaps(this=column, expression=_tokens(c, _one_key(oc, value)))
    if isinstance(node, exp.JSONBContainsAnyTopKeys):

        def any_key(p: Params) -> Any:
            v = value(p)
            return None if v is None else _key_tokens(oc, _keys(v))

        return exp.ArrayOverlaps(this=column, expression=_tokens(c, any_key))
    # ?&: every key present
    written = node.expression
    if _literal_keys(written):
        assert isinstance(written, exp.Array)
        keys = [x for x in written.expressions if isinstance(x, exp.Literal)]
        tests: list[exp.Expression] = [
            exp.ArrayOverlaps(
                this=column.copy(),
                expression=_tokens(c, _one_key(oc, _constant(str(k.this)))),
            )
            for k in keys
        ]
        if not tests:  # no key: every document has them all (NULL stays NULL)
            return exp.Not(this=exp.Is(this=column.copy(), expression=exp.Null()))
        return exp.and_(*tests)  # type: ignore[return-value]

    def all_keys(p: Params) -> Any:  # None: no key, every row passes
        v = value(p)
        keys = [] if v is None else _keys(v)
        return _key_tokens(oc, keys) if keys else None

    return exp.Paren(
        this=exp.Or(
            this=exp.ArrayOverlaps(this=column, expression=_tokens(c, all_keys)),
            expression=exp.Is(this=_tokens(c, all_keys), expression=exp.Null()),
        )
    )


def _literal_keys(written: exp.Expression) -> bool:
    """Whether a key list is ``ARRAY[...]`` of string literals (and NULLs)."""
    return isinstance(written, exp.Array) and all(
        (isinstance(x, exp.Literal) and x.is_string) or isinstance(x, exp.Null)
        for x in written.expressions
    )


def _constant(v: Any) -> ParamBuilder:
    return lambda p: v


def _one_key(oc: OnionColumn, value: ParamBuilder) -> Callable[[Params], Any]:
    def build(p: Params) -> Any:
        v = value(p)
        return None if v is None else _key_tokens(oc, [str(v)])

    return build
