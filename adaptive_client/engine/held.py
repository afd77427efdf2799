"""Columns the client engine holds by their order keys: inet, cidr, macaddr, macaddr8,
jsonb, bit, varbit, money, interval, time, timetz, enums, arrays and numerics beyond
DuckDB's 38 digits (``numeric`` without a precision), which DuckDB has no type for with
PostgreSQL's semantics.

Such a column is loaded as ``STRUCT("pg <type>" BLOB)``: one field, named after the
column's type (and collation, where the type's order depends on it), holding
:func:`order_bytes.key_bytes` of the value's ``order_key`` -- bytes whose order is
PostgreSQL's order of the values, and whose equality is PostgreSQL's ``=`` (each type's
``order_key`` is checked to be so: jsonb ``1.0`` and ``1``, interval ``1 day`` and ``24
hours`` share a key, as they are equal).  DuckDB compares, sorts, groups, takes DISTINCT
and min/max of structs by their field, so every statement over such a column that only
compares, orders, groups or copies it is answered in PostgreSQL's order; the type in the
field name keeps the values of two types from being compared (DuckDB would compare
structs of different field names as unequal, silently).

What the engine returns is mapped back to the value through the keys of the values
loaded (:class:`Shown`).  Where values equal under ``=`` print differently (jsonb
``1.0`` and ``1``) and the engine returns such a key, which of them PostgreSQL prints
depends on its plan (the first value of a group it meets), or on the row the engine no
longer knows: the statement is refused at run time rather than answered otherwise.

A string literal or a parameter compared with such a column is read as PostgreSQL reads
it there (the type's ``comparand``: its input function, or the Python value psycopg
sends) and compared by its key.  jsonb's and arrays' operators, functions and
aggregates, intervals' arithmetic, and a numeric's ``+ - * / %``, ``sum`` and ``avg``
are calls of the client engine's functions, which map the keys back to values through
``Shown`` and evaluate PostgreSQL's semantics (engine/row_calls.py);
everything else over such a column -- a cast, another function or operator, an
aggregate other than count, min and max -- is refused before anything is fetched
(:func:`check_uses`): DuckDB would answer it over the struct, not over the value.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from psycopg import errors as pg_errors
from sqlglot import exp

from ..catalog.metadata import ColumnMeta
from ..catalog.usertypes import EnumType
from ..errors import OperandTypeMismatch, ValueTypeMismatch
from ..values.encodings import Encoding, encoding_for
from ..values.interval_encoding import PgInterval, interval_value
from .order_bytes import key_bytes
from .runtime import refusal as _refuse

_PREFIX: Final = "pg "
_HELD_NAMES: Final = frozenset(
    {"inet", "cidr", "macaddr", "macaddr8", "jsonb", "json", "bit", "varbit", "money",
     "interval", "time", "timetz"}
)  # fmt: skip
# the types PostgreSQL has min() and max() for (anyarray's and anyenum's included);
# cidr's are inet's (their result is an inet): refused rather than typed so
_ORDERED_AGGREGATES: Final = frozenset({"inet", "money", "interval", "time", "timetz", "numeric"})
# the most digits DuckDB's DECIMAL holds: a numeric that may have more is held
DECIMAL_DIGITS: Final = 38
_STRUCT: Final = re.compile(r'STRUCT\("((?:[^"]|"")*)" BLOB\)')


def held_type(col: ColumnMeta) -> str | None:
    """The client engine type holding ``col`` by its order keys, or None where the
    column is not of such a type."""
    t = col.type
    element = t.element
    if not (
        t.name in _HELD_NAMES
        or (t.name == "numeric" and (t.precision is None or t.precision > DECIMAL_DIGITS))
        or isinstance(t, EnumType)
        or (element is not None and element.name not in ("json",))
    ):
        return None
    field = _PREFIX + t.sql()
    coll = col.collation
    if coll is not None and not coll.bytewise:
        field += f" collate {coll.describe()}"
    return 'STRUCT("' + field.replace('"', '""') + '" BLOB)'


def field_of(duck: str) -> str | None:
    """The field name of a held type (as DuckDB prints the type), else None."""
    m = _STRUCT.fullmatch(duck)
    return m.group(1).replace('""', '"') if m else None


def type_name(duck: str) -> str:
    """The PostgreSQL type a held type holds (for messages)."""
    field = field_of(duck) or duck
    return field[len(_PREFIX) :].split(" collate ")[0]


def held_types(columns: Iterable[ColumnMeta]) -> dict[str, Encoding]:
    """The held types among ``columns``, each with the columns' encoding."""
    out: dict[str, Encoding] = {}
    for col in columns:
        duck = held_type(col)
        if duck is not None:
            out.setdefault(duck, col.encoding)
    return out


def key_of(encoding: Encoding, value: Any) -> bytes:
    return key_bytes(encoding.order_key(value))


def comparand_reader(duck: str, encoding: Encoding) -> Callable[[Any], Any]:
    """A parameter's value (or a literal's text) compared with a column of the held type
    ``duck``, as the engine's struct: read as PostgreSQL reads it there."""
    field = field_of(duck)
    encoding = _unmodified(encoding)

    def read(v: Any) -> Any:
        if v is None:
            return None
        try:
            value = encoding.comparand(v)
        except ValueTypeMismatch as mismatch:  # (compared: no such operator, 42883)
            raise OperandTypeMismatch(str(mismatch)) from None
        try:
            return {field: key_of(encoding, value)}
        except (TypeError, KeyError, AttributeError):
            # (a comparand no stored value can equal: an array element beyond the
            # element type's modifier)
            raise _refuse(
                f"comparing a {type_name(duck)} column with a value its type cannot hold"
            ) from None

    return read


def _unmodified(encoding: Encoding) -> Encoding:
    """The encoding a comparand of an array of ``numeric(p,s)`` or ``varchar(n)`` is read
    with: PostgreSQL reads it as an array of the element type without its modifier
    (``'{1.555}'`` is not rounded to a numeric(5,2)'s 1.56); the elements' keys are
    those of the type without it (a number, a string)."""
    t = encoding.sql_type
    element = t.element
    if element is None or element.name not in ("numeric", "varchar") or element.precision is None:
        return encoding
    collation = getattr(getattr(encoding, "element", None), "collation", None)
    free = dataclasses.replace(element, precision=None, scale=None)
    return encoding_for(dataclasses.replace(t, element=free), collation)


def unbounded_range(conjunct: exp.Expression, held: Mapping[str, Encoding]) -> bool:
    """Whether ``conjunct`` compares an array of ``numeric(p,s)`` or ``varchar(n)`` by
    order: such a range is left to the client engine, not given to the server, whose
    Ord onion cannot take a comparand beyond the elements' modifier."""
    for node in conjunct.find_all(exp.LT, exp.LTE, exp.GT, exp.GTE, exp.Between):
        for side in node.iter_expressions():
            duck = held_of(_unparen(side), held)
            if duck is not None and _unmodified(held[duck]) is not held[duck]:
                return True
    return False


# -- what the statement may do with a held value ---------------------------------------------

# nodes whose value is the held value itself (of the same type)
_PASSING = (exp.Paren, exp.Alias, exp.Coalesce, exp.Case, exp.If, exp.Nullif, exp.Min,
            exp.Max, exp.Window, exp.FirstValue, exp.LastValue, exp.NthValue, exp.Lag,
            exp.Lead, exp.Subquery, exp.Filter)  # fmt: skip
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ,
                exp.NullSafeNEQ)  # fmt: skip
# nodes that only compare, order, group, count or output the held value
_USING = (*_COMPARISONS, exp.Between, exp.In, exp.Is, exp.Ordered, exp.Group, exp.Count,
          exp.Select, exp.Distinct, exp.Tuple)  # fmt: skip


def held_of(node: Any, held: Mapping[str, Encoding]) -> str | None:
    """The held type ``node`` is annotated with, if any."""
    t = node.type if isinstance(node, exp.Expression) else None
    if t is None or not t.is_type(exp.DataType.Type.STRUCT):
        return None
    duck = t.sql("duckdb")
    return duck if duck in held else None


def _unparen(node: Any) -> Any:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def check_uses(tree: exp.Expression, held: Mapping[str, Encoding]) -> None:
    """Refuse, before anything is fetched, every use of a held value other than a
    comparison with a value of its type (or a string or parameter read as one), an
    ORDER BY, GROUP BY or DISTINCT key, count, min and max (where PostgreSQL has them),
    and copying it to the output; and mark the strings and parameters it is compared
    with (``held`` in their meta: read by :func:`comparand_reader`)."""
    if not held:
        return
    for node in list(tree.walk()):
        duck = held_of(node, held)
        if duck is None or isinstance(node, exp.Struct):
            continue
        name = type_name(duck)
        parent = node.parent
        if name == "json":
            _check_json_use(node, parent)
        if isinstance(parent, exp.In) and parent.args.get("query") is node:
            continue  # (the subquery of ``x IN (SELECT ...)``: checked with x)
        if isinstance(parent, exp.Case) and parent.args.get("this") is node:
            raise _refuse(f"CASE over a {name} value", parent)
        if isinstance(parent, exp.Min | exp.Max):
            base = name if not name.endswith("]") else "anyarray"
            if name == "cidr":
                raise _refuse("min/max of cidr (typed inet by PostgreSQL)", parent)
            if base not in _ORDERED_AGGREGATES and base != "anyarray" and not _is_enum(held[duck]):
                fn = "min" if isinstance(parent, exp.Min) else "max"
                raise pg_errors.UndefinedFunction(f"function {fn}({name}) does not exist")
        if parent is None or "row_call" in parent.meta or parent.meta.get("set_function"):
            continue  # (an argument or rows of a jsonb or array function: row_calls.py)
        if isinstance(parent, exp.Window) and parent.this is not node:
            continue  # (a PARTITION BY key)
        if isinstance(parent, exp.Greatest | exp.Least) and name == "numeric":
            continue  # (its keys order as the numbers do; each branch a held numeric)
        if isinstance(parent, _PASSING):
            if held_of(parent, held) != duck and not isinstance(parent, exp.If | exp.Subquery):
                raise _refuse(f"{parent.key} of a {name} value", parent)
            continue
        if not isinstance(parent, _USING) or (
            isinstance(parent, exp.Tuple) and not isinstance(parent.parent, exp.Distinct)
        ):
            raise _refuse(f"{parent.key} of a {name} value", parent)
        if isinstance(parent, _COMPARISONS):
            for other in (parent.this, parent.expression):
                if other is not node:
                    _compared(other, duck, held, parent)
        elif isinstance(parent, exp.Between) and parent.this is node:
            for arg in ("low", "high"):
                _compared(parent.args[arg], duck, held, parent)
        elif isinstance(parent, exp.Between):
            _compared(parent.this, duck, held, parent)
        elif isinstance(parent, exp.In) and parent.this is node:
            for other in parent.expressions:
                _compared(other, duck, held, parent)
            query = parent.args.get("query")
            if query is not None:
                items = query.this.expressions if isinstance(query, exp.Subquery) else []
                if len(items) != 1 or held_of(items[0], held) != duck:
                    raise _refuse(f"comparing a {name} value with another type", parent)
        elif isinstance(parent, exp.In):
            raise _refuse(f"a {name} value in an IN list", parent)


# a json value may be output, passed on, counted and tested for NULL; PostgreSQL has no
# equality or order for json: every other use is its error
_JSON_PASSING = (exp.Select, exp.Alias, exp.Paren, exp.Is, exp.Subquery, exp.Coalesce,
                 exp.Case, exp.If, exp.Nullif, exp.Window, exp.Filter)  # fmt: skip


def _check_json_use(node: Any, parent: Any) -> None:
    """PostgreSQL's 42883 where a json value is grouped, ordered, made distinct or
    compared (the comparisons of a json column: refuse_json_comparisons, at compile)."""
    if isinstance(parent, exp.Ordered):
        raise pg_errors.UndefinedFunction("could not identify an ordering operator for type json")
    if (
        isinstance(parent, exp.Group | exp.Distinct)
        or (isinstance(parent, exp.Tuple) and isinstance(parent.parent, exp.Distinct))
        or (isinstance(parent, exp.Select) and _made_distinct(parent))
    ):
        raise pg_errors.UndefinedFunction("could not identify an equality operator for type json")
    if isinstance(parent, exp.Count) and isinstance(node, exp.Distinct):
        raise pg_errors.UndefinedFunction("could not identify an equality operator for type json")
    if isinstance(parent, (*_COMPARISONS, exp.In, exp.Between)):
        raise pg_errors.UndefinedFunction("operator does not exist: json = json")
    if (
        parent is not None
        and not isinstance(parent, (*_JSON_PASSING, exp.Count))
        and "row_call" not in parent.meta
    ):
        raise _refuse(f"{parent.key} of a json value", parent)


def _made_distinct(select: exp.Select) -> bool:
    """Whether a select list's values are compared for equality: SELECT DISTINCT, or an
    operand of UNION, INTERSECT or EXCEPT without ALL."""
    if select.args.get("distinct") is not None:
        return True
    node: Any = select
    while isinstance(node.parent, exp.SetOperation | exp.Subquery):
        node = node.parent
        if isinstance(node, exp.SetOperation) and node.args.get("distinct") is not False:
            return True
    return False


def _is_enum(encoding: Encoding) -> bool:
    return isinstance(encoding.sql_type, EnumType)


def _compared(
    other: exp.Expression, duck: str, held: Mapping[str, Encoding], at: exp.Expression
) -> None:
    inner = _unparen(other)
    if isinstance(inner, exp.Null):
        return
    if isinstance(inner, exp.Placeholder) or (isinstance(inner, exp.Literal) and inner.is_string):
        inner.meta["held"] = (duck, held[duck])
        return
    if type_name(duck) == "numeric":  # (a number: read by numeric's input function)
        number = inner.this if isinstance(inner, exp.Neg) else inner
        if isinstance(number, exp.Literal) and not number.is_string:
            sign = "-" if number is not inner else ""
            written = inner.replace(exp.Literal.string(sign + str(number.this)))
            written.meta["held"] = (duck, held[duck])
            return
    found = held_of(inner, held)
    if found == duck:
        return
    if found is not None:
        raise _refuse(f"comparing a {type_name(duck)} value with a {type_name(found)} one", at)
    raise _refuse(f"comparing a {type_name(duck)} value with another type", at)


class Shown:
    """The values loaded into held columns, by type and key: what the engine's keys are
    mapped back to.  A key several values of different text share is *ambiguous*."""

    def __init__(self, held: Mapping[str, Encoding]) -> None:
        self._held = held
        self._values: dict[str, dict[bytes, Any]] = {duck: {} for duck in held}
        self._ambiguous: dict[str, set[bytes]] = {duck: set() for duck in held}
        # an ambiguous key's values, one of each text
        self._variants: dict[str, dict[bytes, dict[bytes, Any]]] = {duck: {} for duck in held}

    def load(self, duck: str, values: list[Any]) -> list[Any]:
        """A fetched column's values as the engine holds them."""
        encoding = self._held[duck]
        field = field_of(duck)
        known = self._values[duck]
        exact = encoding.exact_display
        out: list[Any] = []
        for v in values:
            if v is None:
                out.append(None)
                continue
            key = key_of(encoding, v)
            seen = known.setdefault(key, v)
            if exact and seen is not v:
                printed = encoding.to_exact_bytes(v)
                if printed != encoding.to_exact_bytes(seen):
                    self._ambiguous[duck].add(key)
                    variants = self._variants[duck].setdefault(
                        key, {encoding.to_exact_bytes(seen): seen}
                    )
                    variants.setdefault(printed, v)
            out.append({field: key})
        return out

    def member(self, duck: str, held: Any) -> Any:
        """A value of a key the engine returned, any of those equal to it (a semi-join's
        value, which the server compares by ``=``)."""
        if held is None:
            return None
        return self._values[duck][next(iter(held.values()))]

    def candidates(self, duck: str, held: Any) -> list[Any]:
        """The values a key the engine returned may stand for: one, or each text of an
        ambiguous key (a function of them answers where all give the same)."""
        key = next(iter(held.values()))
        if key in self._ambiguous[duck]:
            return list(self._variants[duck][key].values())
        return [self.value(duck, held)]

    def value(self, duck: str, held: Any) -> Any:
        """The value of a key the engine returned."""
        if held is None:
            return None
        key = next(iter(held.values()))
        if key in self._ambiguous[duck] and not _one_application_value(
            list(self._variants[duck][key].values())
        ):
            raise _refuse(
                f"returning a {type_name(duck)} value equal to others that print "
                "differently (which one PostgreSQL prints depends on its plan)"
            )
        try:
            return self._values[duck][key]
        except KeyError:
            raise _refuse(f"returning a {type_name(duck)} value not read from a table") from None


def _one_application_value(variants: list[Any]) -> bool:
    """Whether the values of an ambiguous key are intervals the application is handed
    as one value ('1 mon' and '30 days' are both psycopg's 30 days; their fields differ
    where a timestamp is added to them)."""
    return all(isinstance(v, PgInterval) for v in variants) and (
        len({interval_value(v) for v in variants}) == 1
    )


__all__ = ["Shown", "check_uses", "comparand_reader", "field_of", "held_type", "held_types"]
