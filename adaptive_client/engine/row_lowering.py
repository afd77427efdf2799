"""jsonb and array operators and functions of a qualified, annotated client-evaluated
statement, made calls of the client engine's functions (engine/row_calls.py).

:func:`lower_calls` replaces each such node -- an operator (:data:`OPERATORS`: ``@>``,
``->>``, ...; :data:`HELD_OPERATORS` where an operand is jsonb or an array: ``||``,
``-``, a subscript; :data:`QUANTIFIED`: ``= ANY(array)``), a function (by name, or by
sqlglot's class: row_operand_types.FUNCTION_CLASSES), a set-returning function (its rows
unnested), an aggregate (jsonb_agg, jsonb_object_agg: the engine function of the list
of its group's rows) -- children first, with a call of a per-statement engine function
``pg_rf_<n>`` typed with the engine type of its result, choosing the overload as
PostgreSQL resolves it (an unknown literal read as text first); and gives back the
calls' :class:`~.row_calls.CallSpec`.  :func:`annotate_lowered` types the statement
again around them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from psycopg import errors as pg_errors
from sqlglot import exp

from ..values.collation import DATABASE_COLLATION
from ..values.encodings import Encoding, encoding_for
from .held import held_of
from .jsonb_casts import CASTS
from .kinds import derived_item, kind_of, unparen
from .lowered_types import (
    annotate_lowered,
    choice_constants,
    from_function_laterals,
    type_produced_columns,
)
from .numeric_calls import EXACT_NUMBERS, held_numeric_call
from .printed_outputs import printed_outputs
from .row_calls import ArgSpec, CallSpec, record_columns
from .row_functions import AGGREGATES, ROW_FUNCTIONS, RowFunction
from .row_operand_types import (
    FUNCTION_CLASSES,
    INTERVAL_OPERATORS,
    PLAIN_ELEMENT,
    PLAIN_RESULTS,
    element_encoding,
    json_path_operand,
    scales_interval,
)
from .row_operands import (
    AggregateRows,
    interval_constant,
    number_type,
    passed,
    read_from_zero,
    slice_bounds,
    subscript,
)
from .runtime import refusal as _refuse

# PostgreSQL's operators as sqlglot parses them, by node type: the ROW_FUNCTIONS key
OPERATORS: Final[dict[type[exp.Expression], str]] = {
    exp.ArrayContainsAll: "@>",
    exp.ArrayContainedBy: "<@",
    exp.JSONBContainsTopKey: "?",
    exp.JSONBContainsAnyTopKeys: "?|",
    exp.JSONBContainsAllTopKeys: "?&",
    exp.JSONExtract: "->",
    exp.JSONExtractScalar: "->>",
    exp.JSONBExtract: "#>",
    exp.JSONBExtractScalar: "#>>",
    exp.ArrayOverlaps: "&&",
    exp.JSONBDeleteAtPath: "#-",
}
# operators that are jsonb's or arrays' only where an operand is one
HELD_OPERATORS: Final[dict[type[exp.Expression], str]] = {
    exp.DPipe: "||",
    exp.Sub: "-",
    exp.Bracket: "[]",
}
_OPERATOR_NAMES: Final = frozenset(
    {*OPERATORS.values(), *HELD_OPERATORS.values(), *INTERVAL_OPERATORS.values()}
)
# x = ANY(array), x <> ALL(array): by the comparison and the quantifier
QUANTIFIED: Final[dict[tuple[type[exp.Expression], type[exp.Expression]], str]] = {
    (exp.EQ, exp.Any): "= ANY",
    (exp.NEQ, exp.All): "<> ALL",
    (exp.EQ, exp.All): "= ALL",
    (exp.NEQ, exp.Any): "<> ANY",
    **{
        (comparison, quantifier): f"{op} {quantifier.key.upper()}"
        for comparison, op in ((exp.LT, "<"), (exp.LTE, "<="), (exp.GT, ">"), (exp.GTE, ">="))
        for quantifier in (exp.Any, exp.All)
    },
}

# an operand's engine type -> the PostgreSQL type overloads are chosen by
_PG_OF_ENGINE: Final = {
    "VARCHAR": "text",
    "TEXT": "text",
    "INT": "integer",
    "INTEGER": "integer",
    "SMALLINT": "integer",
    "BIGINT": "bigint",
    "BOOLEAN": "boolean",
}
# parameters of each declared type an operand of unknown type (a string literal, a
# parameter, NULL) is read as, best first: PostgreSQL resolves unknown to text
_UNKNOWN_PREFERENCE: Final = ("text", "jsonb", "anyarray", "text[]", "anyelement", "integer")


@dataclass
class _Operand:
    """An operand of a call, typed as PostgreSQL chooses an overload by."""

    node: exp.Expression
    pg: str  # "jsonb", "text[]", "text", "integer", "unknown", "array" (a constructor)
    duck: str | None  # held: its engine type
    encoding: Encoding | None


def _operand(node: exp.Expression, held: Mapping[str, Encoding]) -> _Operand:
    inner = node
    while isinstance(inner, exp.Paren):
        inner = inner.this
    duck = held_of(inner, held)
    if duck is not None:
        encoding = held[duck]
        # (an interval of any field restriction or precision is an interval to operators)
        pg = "interval" if encoding.sql_type.name == "interval" else encoding.sql_type.sql()
        return _Operand(inner, pg, duck, encoding)
    if isinstance(inner, exp.Placeholder | exp.Null) or (
        isinstance(inner, exp.Literal) and inner.is_string
    ):
        return _Operand(inner, "unknown", None, None)
    if isinstance(inner, exp.Array):
        return _Operand(inner, "array", None, None)
    if isinstance(inner, exp.Literal):  # (a number; one sqlglot made has no type)
        return _Operand(inner, number_type(inner.name), None, None)
    negated = inner.this if isinstance(inner, exp.Neg) else None
    if isinstance(negated, exp.Literal) and not negated.is_string:  # (-3000000000)
        return _Operand(inner, number_type(negated.name), None, None)
    t = inner.type
    if isinstance(inner, exp.Column):
        # (a derived table's column of a call lowered before it: the call's type)
        item = derived_item(inner)
        if item is not None and isinstance(item.meta.get("row_call"), CallSpec) and item.type:
            t = inner.type = item.type.copy()
    name = t.sql("duckdb") if t is not None else "UNKNOWN"
    return _Operand(inner, _PG_OF_ENGINE.get(name, name.lower()), None, None)


def _fits(declared: str, op: _Operand) -> int | None:
    """How well ``op`` fits a parameter of type ``declared``: 0 exactly, higher worse,
    None not at all."""
    is_array = op.pg.endswith("]") or op.pg == "array"
    if op.pg == "unknown":
        return _UNKNOWN_PREFERENCE.index(declared) + 1 if declared in _UNKNOWN_PREFERENCE else 9
    if declared in ("any", "variadic any"):
        return 1
    if declared == "anyarray":
        return 0 if is_array else None
    if declared == "anyelement":
        return 1 if not is_array else 2
    if declared == op.pg:
        return 0
    if declared == "numeric" and (op.pg in EXACT_NUMBERS or op.pg.startswith("decimal(")):
        return 1  # (an integer's or a numeric(p,s)'s value, as numeric)
    if declared == "double precision":  # (float8 from any number, as PostgreSQL casts)
        return 1 if scales_interval(op.pg) else None
    if declared == "text[]" and is_array:
        return 1
    if declared == "integer" and op.pg == "bigint":
        return 2  # (narrowed: a bigint overload fits it better, as PostgreSQL resolves)
    if declared in ("integer", "bigint") and op.pg in ("integer", "bigint"):
        return 1
    return None


def _declared(rf: RowFunction, count: int) -> list[str]:
    """The parameter types of ``count`` arguments (a variadic one repeated: ``variadic
    any`` stays so, ``variadic text`` is text), or others where they do not fit: a
    variadic array takes at least one argument (jsonb_extract_path(doc) does not exist),
    ``variadic any`` none or more (jsonb_build_object())."""
    declared = list(rf.args)
    if not declared or not declared[-1].startswith("variadic "):
        return declared
    last = declared[-1]
    each = last if last == "variadic any" else last.removeprefix("variadic ")
    least = 0 if last == "variadic any" else 1
    return declared[:-1] + [each] * max(count - len(declared) + 1, least)


# operators over two operands of one type: a parameter sent as another has none
_ONE_TYPE_OPERATORS: Final = frozenset({"@>", "<@", "&&"})

# PostgreSQL's type categories of array elements: an element and an array of different
# categories have no type in common (anycompatible)
_CATEGORIES: Final = {
    **dict.fromkeys(("smallint", "integer", "bigint", "numeric", "real", "double precision"), "N"),
    **dict.fromkeys(("text", "varchar", "character varying", "character", "char"), "S"),
    "boolean": "B",
    "jsonb": "U",
}


def _element_category(ops: list[_Operand]) -> str | None:
    """The type category of the held array operand's elements (None: no held array, or
    elements of another category)."""
    array = _array_of(ops)
    element = element_encoding(array.encoding) if array is not None else None
    return None if element is None else _CATEGORIES.get(element.sql_type.name)


def _category(declared: str, op: _Operand) -> str | None:
    """The type category of an element (``declared`` anyelement) or of an array's
    elements (anyarray) ``op`` gives; None where unknown (a literal, NULL)."""
    if declared == "anyelement":
        return "A" if op.pg.endswith("]") or op.pg == "array" else _CATEGORIES.get(op.pg)
    if declared != "anyarray":
        return None
    if op.duck is not None:
        return _element_category([op])
    return _CATEGORIES.get(_constructed_element(op) or "")


def _constructed_element(op: _Operand) -> str | None:
    """The PostgreSQL type of an ``ARRAY[...]`` constructor's elements (None: not one,
    or of no type the engine knows: ``ARRAY[]``)."""
    t = op.node.type
    if op.pg != "array" or t is None or not t.expressions:
        return None
    inner = t.expressions[0].sql("duckdb")
    return None if inner == "UNKNOWN" else _PG_OF_ENGINE.get(inner, inner.lower())


def _shown_type(op: _Operand) -> str | None:
    """An operand's type as PostgreSQL's error names it (None: unknown to the engine)."""
    if op.pg in _TYPED or op.pg.endswith("[]"):
        return op.pg
    element = _constructed_element(op)
    return None if element is None else element + "[]"


# operand types an overload's absence is PostgreSQL's error for (42883)
_TYPED = frozenset({"text", "integer", "bigint", "boolean", "unknown", "jsonb", "interval"})


def _choose(
    name: str, ops: list[_Operand], table: Mapping[str, tuple[RowFunction, ...]] = ROW_FUNCTIONS
) -> int:
    """The overload of ``name`` the operands fit best (an unknown literal read as text
    first, as PostgreSQL resolves it); where none fits, PostgreSQL's 42883 for operands
    of known types, else a refusal."""
    best: tuple[int, int] | None = None
    fitting: list[list[str]] = []
    for i, rf in enumerate(table[name]):
        declared = _declared(rf, len(ops))
        if len(declared) != len(ops):
            continue
        scores = [_fits(d, o) for d, o in zip(declared, ops, strict=True)]
        if any(s is None for s in scores):
            continue
        # (the elements of the overload's held anyarray operand, which the other
        # polymorphic operands must share a type with)
        element = _element_category(
            [o for d, o in zip(declared, ops, strict=True) if d == "anyarray"]
        )
        if element is not None and any(
            _category(d, o) not in (None, element) for d, o in zip(declared, ops, strict=True)
        ):
            continue  # (no type in common with the array's elements: tags || 1)
        score = sum(s for s in scores if s is not None)
        fitting.append(declared)
        if best is None or score < best[0]:
            best = (score, i)
    if (
        len(fitting) > 1
        and all(o.pg == "unknown" for o in ops)
        and not any("text" in d for d in fitting)
        and name not in _OPERATOR_NAMES
    ):
        # (only untyped operands and no overload of the string category they would
        # prefer: PostgreSQL cannot choose -- generate_series(%s, %s))
        types = ", ".join("unknown" for _ in ops)
        raise pg_errors.AmbiguousFunction(f"function {name}({types}) is not unique")
    if best is None:
        shown = [_shown_type(o) for o in ops]
        if all(shown):  # (PostgreSQL's own error)
            if name in _OPERATOR_NAMES and len(ops) == 2:
                raise pg_errors.UndefinedFunction(
                    f"operator does not exist: {shown[0]} {name} {shown[1]}"
                )
            types = ", ".join(str(t) for t in shown)
            raise pg_errors.UndefinedFunction(f"function {name}({types}) does not exist")
        types = ", ".join(o.pg for o in ops)
        raise _refuse(f"{name}({types})")
    return best[1]


def _array_of(ops: list[_Operand]) -> _Operand | None:
    """The first held array operand (the type anyarray / anyelement stand for)."""
    for op in ops:
        if op.duck is not None and op.encoding is not None and op.encoding.sql_type.element:
            return op
    return None


def _held_duck(encoding: Encoding, held: dict[str, Encoding]) -> str:
    for duck, enc in held.items():
        if enc is encoding:
            return duck
    field_name = "pg " + encoding.sql_type.sql()
    duck = 'STRUCT("' + field_name.replace('"', '""') + '" BLOB)'
    held.setdefault(duck, encoding)
    return duck


def _jsonb(held: dict[str, Encoding]) -> tuple[str, Encoding]:
    for duck, enc in held.items():
        if enc.sql_type.name == "jsonb":
            return duck, enc
    # (jsonb the statement computes, none read: its strings ordered by the database's
    # collation, as PostgreSQL orders them)
    default_of = DATABASE_COLLATION.get()
    collation = default_of() if default_of is not None else None
    field_name = "pg jsonb"
    if collation is not None and not collation.bytewise:
        field_name += f" collate {collation.describe()}"
    duck = 'STRUCT("' + field_name.replace('"', '""') + '" BLOB)'
    held[duck] = encoding_for("jsonb", collation)
    return duck, held[duck]


def _held_argument(agg: exp.ArrayAgg, held: Mapping[str, Encoding]) -> bool:
    """Whether array_agg's argument is an array the engine holds by keys."""
    arg = agg.this.this if isinstance(agg.this, exp.Order) else agg.this
    if isinstance(arg, exp.Distinct):
        return False
    op = _operand(arg, held)
    return op.duck is not None and op.pg.endswith("]")


def _aggregate_target(
    node: exp.Expression, held: Mapping[str, Encoding]
) -> tuple[str, list[exp.Expression], AggregateRows] | None:
    """(name, arguments, rows) of a jsonb aggregate (under its FILTER, if any)."""
    where = None
    agg = node
    if isinstance(node, exp.Filter):
        where, agg = node.expression, node.this
    elif isinstance(node.parent, exp.Filter):
        return None  # (lowered with its FILTER)
    if isinstance(agg, exp.Anonymous) and agg.name.lower() in AGGREGATES:
        name, args = agg.name.lower(), list(agg.expressions)
    elif isinstance(agg, exp.JSONBObjectAgg):
        name, args = "jsonb_object_agg", [agg.this, agg.expression]
    elif isinstance(agg, exp.ArrayAgg) and _held_argument(agg, held):
        name, args = "array_agg", [agg.this]  # (of arrays: a row function)
    elif isinstance(agg, exp.Sum | exp.Avg) and _is_held_number(_operand(agg.this, held)):
        name, args = agg.key, [agg.this]  # (sum, avg of a held numeric)
    else:
        return None
    if isinstance(node.parent, exp.Window):
        raise _refuse(f"{name} as a window function", node)
    ordered: list[exp.Expression] = []
    if args and isinstance(args[-1], exp.Order):
        ordered = list(args[-1].expressions)
        args[-1] = args[-1].this
    distinct = bool(args) and isinstance(args[0], exp.Distinct)
    if distinct:
        if ordered or len(args[0].expressions) != 1:
            raise _refuse(f"{name} of DISTINCT values with an ORDER BY", node)
        args[0] = args[0].expressions[0]
    # (without ORDER BY: answered where the order of aggregation cannot change the
    # result, else refused when run -- row_calls.RowCall)
    rows = AggregateRows(ordered, where.this if isinstance(where, exp.Where) else where, distinct)
    return name, args, rows


class _Lowering:
    def __init__(self, held: dict[str, Encoding]) -> None:
        self.held = held
        self.specs: list[CallSpec] = []
        self.written: dict[tuple[Any, ...], CallSpec] = {}

    def call(
        self,
        node: exp.Expression,
        name: str,
        operands: list[exp.Expression],
        rows: AggregateRows | None = None,
    ) -> exp.Expression:
        # (an argument's explicit COLLATE is its text result's, as PostgreSQL derives
        # it: attrs ->> 'name' COLLATE "C" reads 'name' COLLATE "C")
        collation = None
        for i, o in enumerate(operands):
            if isinstance(unparen(o), exp.Collate):
                collation = collation or unparen(o).expression
                operands[i] = unparen(o).this
        ops = [_operand(o, self.held) for o in operands]
        if name in ("->", "->>") and len(ops) == 2 and isinstance(ops[1].node, exp.Placeholder):
            # (a key or an index: psycopg's type of the value bound chooses, as PostgreSQL's
            # overloads do -- compile/residual.py tags an integer)
            name += "?"
            ops[1].node.meta["json_key"] = True
        table = AGGREGATES if rows is not None else ROW_FUNCTIONS
        index = _choose(name, ops, table)
        rf = table[name][index]
        # (the others' result is the same for equal values; DISTINCT values are keys)
        if rf.text_sensitive and not (rows is not None and rows.distinct):
            for op in ops:
                self._print_argument(op)
        array = _array_of(ops)
        uses_jsonb = "jsonb" in rf.args or rf.result.removeprefix("setof ") == "jsonb"
        enc: Encoding | None
        if uses_jsonb:
            jsonb_duck, enc = _jsonb(self.held)
        elif array is not None:
            jsonb_duck, enc = "", array.encoding
        elif "interval" in rf.args:
            jsonb_duck, enc = "", encoding_for("interval")
        elif "numeric" in rf.args:
            jsonb_duck, enc = "", encoding_for("numeric")
        elif rf.result.endswith("[]"):  # (string_to_array of text: its result's type)
            jsonb_duck, enc = "", encoding_for(rf.result)
        elif rf.result.removeprefix("setof ") in PLAIN_RESULTS:  # (generate_series)
            jsonb_duck, enc = "", encoding_for(rf.result.removeprefix("setof "))
        else:
            raise _refuse(f"{name} of no array argument", node)
        declared = _declared(rf, len(ops))
        args = tuple(
            self._arg(d, op, jsonb_duck, array, node) for d, op in zip(declared, ops, strict=True)
        )
        if name in _ONE_TYPE_OPERATORS and len(ops) == 2:
            for i, op in enumerate(ops):
                other = _shown_type(ops[1 - i])
                if isinstance(op.node, exp.Placeholder) and args[i].kind == "const" and other:
                    # (a parameter sent as another type: PostgreSQL's 42883 when bound)
                    op.node.meta["row_arg_operator"] = (name, other, i == 1)
        result, held_result = self._result(rf.result, jsonb_duck, array, node)
        spec = CallSpec(
            udf=f"pg_rf_{len(self.specs)}",
            function=name,
            overload=index,
            args=args,
            result=result,
            enc=enc,
            held_result=held_result,
            result_encoding=self.held.get(result.removesuffix("[]")) if held_result else None,
            column=node.meta.get("srf_column"),
            ordinality=bool(node.meta.get("ordinality")),
            aggregate=rows is not None,
            unordered=rows is not None and not rows.ordered and not rows.distinct,
        )
        # one engine function for the calls written alike: the engine matches a grouped
        # expression to a select item by its text (GROUP BY 1 copies the item)
        same = (
            name,
            index,
            args,
            result,
            spec.column,
            spec.ordinality,
            tuple(op.node.sql("duckdb") for op in ops),
        )
        if same in self.written:
            spec = self.written[same]
        else:
            self.written[same] = spec
            self.specs.append(spec)
        given = [passed(op.node, op.pg, a, spec) for op, a in zip(ops, args, strict=True)]
        if rows is not None:
            call = exp.Anonymous(this=spec.udf, expressions=[rows.listed(given, spec)])
        else:
            call = exp.Anonymous(this=spec.udf, expressions=given)
        call.meta["row_call"] = spec
        call.type = exp.DataType.build(result, dialect="duckdb")
        if collation is not None and rf.result == "text":
            collated = exp.Collate(this=call, expression=collation.copy())
            collated.type = call.type
            return collated
        if not rf.result.startswith("setof "):
            return call
        # a set-returning function: its rows unnested (several in one select list
        # zipped, the shorter padded with NULLs, as PostgreSQL 10 and later do)
        unnested = exp.Explode(this=call)
        unnested.meta["row_call"] = spec
        unnested.type = exp.DataType.build(result.removesuffix("[]"), dialect="duckdb")
        return unnested

    def _print_argument(self, op: _Operand) -> None:
        """A held result of a call passed to another as its exact bytes: the value the
        row computed (``attrs -> 'price'`` is ``1.0`` in one row, ``1`` in another),
        not a key equal values share.  Not where the call is a grouping key (the
        engine matches grouped expressions by their text)."""
        node = op.node
        spec = node.meta.get("row_call")
        if not isinstance(node, exp.Anonymous) or not isinstance(spec, CallSpec):
            return
        if not spec.held_result or spec.printed or spec.result_encoding is None:
            return
        select = node.find_ancestor(exp.Select)
        group = select.args.get("group") if select is not None else None
        if group is not None and any(g.sql() == node.sql() for g in group.expressions):
            return
        printed = dataclasses.replace(spec, udf=f"{spec.udf}_printed", result="BLOB", printed=True)
        if all(s.udf != printed.udf for s in self.specs):
            self.specs.append(printed)
        node.set("this", printed.udf)
        node.meta["row_call"] = printed
        node.meta["printed_arg"] = True
        node.type = exp.DataType.build("BLOB")

    def _arg(
        self,
        declared: str,
        op: _Operand,
        jsonb_duck: str,
        array: _Operand | None,
        at: exp.Expression,
    ) -> ArgSpec:
        encoding: Encoding | None = None
        if op.node.meta.get("omitted"):  # (a slice's bound left out)
            return ArgSpec("omitted", "INTEGER", None)
        if op.node.meta.get("printed_arg"):  # (its exact bytes: _print_argument)
            return ArgSpec("const", "BLOB", op.encoding)
        if declared == "jsonb":
            encoding = self.held[jsonb_duck]
        elif declared == "anyarray" or declared.endswith("[]"):
            if array is None and declared == "anyarray":
                # (an array the client does not hold as one: ARRAY[n, id] of columns)
                raise _refuse("an array function of an array constructor", at)
            encoding = array.encoding if array is not None else encoding_for(declared)
        elif declared == "anyelement" and array is not None:
            encoding = element_encoding(array.encoding)
        elif declared == "numeric":
            encoding = encoding_for("numeric")  # (a string or parameter read as numeric)
        elif declared == "interval":
            encoding = encoding_for("interval")
            constant = interval_constant(op.node)
            if constant is not None:  # (interval '1 hour', '1 day'::interval)
                op.node, op.pg = constant, "unknown"
            elif op.duck is None and op.pg != "unknown":
                raise _refuse(f"interval arithmetic with a {op.pg} computed per row", at)
        if op.duck is not None:
            return ArgSpec("held", op.duck, op.encoding)
        if encoding is not None and op.pg == "unknown":
            if isinstance(op.node, exp.Literal | exp.Placeholder):
                op.node.meta["row_arg"] = encoding
            return ArgSpec("const", "BLOB", encoding)
        if encoding is not None and isinstance(op.node, exp.Cast) and op.pg.endswith("]"):
            # a constant cast to an array type: NULL::text[], ARRAY[]::text[]
            if isinstance(op.node.this, exp.Null):
                op.node = exp.Null()
                return ArgSpec("const", "BLOB", encoding)
            if isinstance(op.node.this, exp.Array) and declared != "anyelement":
                duck = op.node.type.sql("duckdb") if op.node.type is not None else ""
                op.node = op.node.this
                return ArgSpec("list", duck if duck.endswith("[]") else "VARCHAR[]", encoding)
        if encoding is not None and op.pg == "array" and declared != "anyelement":
            element = op.node.type.sql("duckdb") if op.node.type is not None else "VARCHAR"
            duck = element if element.endswith("[]") else "VARCHAR[]"
            return ArgSpec("list", duck, encoding)
        if declared in ("jsonb", "anyarray") or declared.endswith("[]"):
            raise _refuse(f"a {op.pg} value where {declared} is taken", at)
        duck = op.node.type.sql("duckdb") if op.node.type is not None else "VARCHAR"
        if op.pg == "unknown" or duck == "UNKNOWN":
            duck = "VARCHAR"
        if declared == "anyelement" and encoding is not None:
            duck = PLAIN_ELEMENT.get(encoding.sql_type.name, duck)
        if declared == "numeric" and op.pg != "unknown":
            # (an integer as it is; a numeric(p,s) as its text: its display scale)
            if kind_of(op.node) == "decimal":
                return ArgSpec("numeric", "VARCHAR", None)
            return ArgSpec("plain", duck, None)
        if declared == "double precision" and op.pg != "unknown":
            # (an interval's factor: float8 made of the number in the function, as
            # PostgreSQL casts it -- a numeric from its text, correctly rounded)
            if kind_of(op.node) == "decimal":
                return ArgSpec("numeric", "VARCHAR", None)
            return ArgSpec("plain", duck, None)
        duck = PLAIN_RESULTS.get(declared, duck)  # (a constant of the type declared)
        if declared in ("any", "variadic any", "anyelement") and kind_of(op.node) == "decimal":
            # (a numeric as its text: its display scale, which the engine's type may not
            # show -- sqlglot types 1.50 double)
            return ArgSpec("numeric", "VARCHAR", None)
        return ArgSpec("plain", duck, None)

    def _result(
        self, result: str, jsonb_duck: str, array: _Operand | None, at: exp.Expression
    ) -> tuple[str, bool]:
        if result.startswith("setof "):
            column = at.meta.get("srf_column")
            element = result.removeprefix("setof ")
            if element.startswith("record("):
                if at.meta.get("ordinality"):
                    return "BIGINT[]", False
                if column is None:
                    raise _refuse("a set-returning function of records in a select list", at)
                element = record_columns(element)[column][1]
            elif at.meta.get("ordinality"):
                return "BIGINT[]", False
            duck, held_result = self._result(element, jsonb_duck, array, at)
            return duck + "[]", held_result
        if result == "jsonb":
            return jsonb_duck, True
        if result in ("interval", "numeric"):
            return _held_duck(encoding_for(result), self.held), True
        if result == "anyarray" and array is not None and array.duck is not None:
            return array.duck, True
        if result.endswith("[]"):
            return _held_duck(encoding_for(result), self.held), True
        if result == "anyelement" and array is not None and array.encoding is not None:
            of_element = element_encoding(array.encoding)
            name = of_element.sql_type.name if of_element is not None else ""
            if name in PLAIN_ELEMENT:
                return PLAIN_ELEMENT[name], False
        if result in PLAIN_RESULTS:
            return PLAIN_RESULTS[result], False
        raise _refuse(f"a result of type {result}", at)


def _operator_operands(node: exp.Expression) -> list[exp.Expression] | None:
    """The operands of an operator node lowered here, or None where it is not one."""
    name = OPERATORS.get(type(node))
    if name is not None:
        right = node.expression
        if isinstance(node, exp.JSONExtract | exp.JSONExtractScalar):
            if node.args.get("expressions") or node.this.is_string:  # (json's, not ->)
                raise _refuse("json_extract_path of a json value", node)
            right = json_path_operand(right)
        return [node.this, right]
    return None


def lower_calls(tree: exp.Expression, held: dict[str, Encoding]) -> list[CallSpec]:
    """Replace the jsonb and array operators and functions of the annotated ``tree``
    with engine function calls (see the module docstring), children first; ``held``
    gains the held types of their results.  Their specs, in order."""
    lowering = _Lowering(held)
    for bracket in tree.find_all(exp.Bracket):
        if read_from_zero(bracket):
            bracket.meta["from_zero"] = True

    def visit(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.Expression):
            return node
        aggregate = _aggregate_target(node, held)
        if aggregate is not None:
            return lowering.call(node, aggregate[0], aggregate[1], aggregate[2])
        if isinstance(node, exp.Case | exp.Coalesce | exp.Greatest | exp.Least):
            choice_constants(node, held, lambda c, reader: lowering.call(c, reader, [c]))
            return node
        name, operands = _target(node, held)
        if name is None:
            return node
        call = lowering.call(node, name, operands)
        if name == CASTS["DECIMAL"][0]:  # (the number's text, read as numeric)
            read = exp.Cast(this=call, to=exp.DataType.build("DECIMAL"))
            read.type = exp.DataType.build("DECIMAL")
            return read
        if name == "numeric_float8":  # (its text: a Python function's NaN would be NULL)
            double = exp.Cast(this=call, to=exp.DataType.build("DOUBLE"))
            double.type = exp.DataType.build("DOUBLE")
            return double
        return call

    # (bottom up, so that an operand is already a typed call: attrs -> 'a' ->> 'b'; the
    # FROM functions first, so that the columns read from them are typed: e.value)
    nodes = list(reversed(list(tree.walk(bfs=False))))
    produced = {id(n) for lateral in from_function_laterals(tree) for n in lateral.walk()}
    for phase in (True, False):
        for node in nodes:
            if node is tree or (id(node) in produced) != phase:
                continue
            new = visit(node)
            if new is not node:
                node.replace(new)
        if phase and produced:
            type_produced_columns(tree)
    return lowering.specs


def _is_held_composite(op: _Operand) -> bool:
    """A held jsonb or array value (the others' operators are not row functions)."""
    return op.duck is not None and (op.pg == "jsonb" or op.pg.endswith("]"))


def _is_held_interval(op: _Operand) -> bool:
    """A held interval value (its arithmetic and text cast are row functions)."""
    return op.duck is not None and op.pg == "interval"


def _is_held_number(op: _Operand) -> bool:
    """A held numeric (one without a precision: its arithmetic is row functions)."""
    return op.duck is not None and op.pg == "numeric"


def _target(
    node: exp.Expression, held: Mapping[str, Encoding]
) -> tuple[str | None, list[exp.Expression]]:
    operands = _operator_operands(node)
    if operands is not None:
        return OPERATORS[type(node)], operands
    name = INTERVAL_OPERATORS.get(type(node))
    if name is not None:
        sides = [node.this] if isinstance(node, exp.Neg) else [node.this, node.expression]
        if any(_is_held_interval(_operand(s, held)) for s in sides):
            return name, sides
        if any(_is_held_number(_operand(s, held)) for s in sides):
            return name, sides
    name = HELD_OPERATORS.get(type(node))
    if name is not None:
        if isinstance(node, exp.Bracket) and any(
            isinstance(e, exp.Slice) for e in node.expressions
        ):
            sides = [node.this, *(b for e in node.expressions for b in slice_bounds(e))]
            if any(_is_held_composite(_operand(s, held)) for s in sides[:1]):
                return "[:]", sides
            return None, []
        if isinstance(node, exp.Bracket):
            from_zero = bool(node.meta.get("from_zero"))
            sides = [node.this, *(subscript(e, from_zero) for e in node.expressions)]
            inner = node.this.meta.get("row_call")
            if isinstance(inner, CallSpec) and inner.function == "[]" and not inner.printed:
                # a[i][j]: one subscript per dimension, as PostgreSQL reads it (not the
                # element a[i] subscripted again)
                sides = [*node.this.expressions, *sides[1:]]
        else:
            sides = [node.this, node.expression]
        if any(_is_held_composite(_operand(s, held)) for s in sides):
            return name, sides
        return None, []
    for (comparison, quantifier), name in QUANTIFIED.items():
        if not isinstance(node, comparison):
            continue
        right = node.expression
        if isinstance(right, quantifier):
            inner = right.this
        elif isinstance(right, exp.Anonymous) and right.name.upper() == quantifier.key.upper():
            inner = right.expressions[0] if len(right.expressions) == 1 else None
        else:
            continue
        # (over a held array; x = ANY(ARRAY[...]) or of a parameter stays the engine's)
        if (
            inner is not None
            and not isinstance(inner, exp.Subquery | exp.Select)
            and _is_held_composite(_operand(inner, held))
        ):
            return name, [node.this, inner]
    numeric = held_numeric_call(node, lambda n: _is_held_number(_operand(n, held)))
    if numeric is not None:
        return numeric
    if isinstance(node, exp.Cast) and not isinstance(node, exp.TryCast):
        if node.to.is_type("text") and _is_held_interval(_operand(node.this, held)):
            return "interval_out", [node.this]  # (its text in the IntervalStyle)
        if (
            node.to.is_type("text", "varchar")
            and not node.to.expressions
            and (_operand(node.this, held).pg == "json")
        ):
            return "json_out", [node.this]  # (the document as written)
        literal = unparen(node.this)
        to_jsonb = node.to.is_type(exp.DataType.Type.JSONB)
        if to_jsonb and (
            (isinstance(literal, exp.Literal) and literal.is_string)
            or isinstance(literal, exp.Placeholder)
        ):
            return "jsonb_in", [literal]  # (a constant document: '{"a": 1}'::jsonb, %s::jsonb)
        # (a text per row: (doc ->> 'k')::jsonb; a jsonb as it is: (doc -> 'k')::jsonb)
        reader = _JSONB_READERS.get(_operand(node.this, held).pg) if to_jsonb else None
        if reader is not None:
            return reader, [node.this]
        cast = (
            CASTS.get(node.to.this.value)
            if isinstance(node.to.this, exp.DataType.Type) and not node.to.expressions
            else None  # (an object identifier type: 't'::regclass)
        )
        if cast is not None and _operand(node.this, held).pg == "jsonb":
            return cast[0], [node.this]
    if isinstance(node, exp.Anonymous) and node.name.lower() in ROW_FUNCTIONS:
        return node.name.lower(), list(node.expressions)
    fn = FUNCTION_CLASSES.get(type(node))
    if fn is not None and fn in ROW_FUNCTIONS:
        operands = list(node.iter_expressions())
        if isinstance(node, exp.ArrayPrepend):  # (sqlglot keeps the array first)
            operands.reverse()
        return fn, operands
    return None, []


# the row function that reads a value of each type as jsonb (a cast to jsonb)
_JSONB_READERS: Final = {"text": "jsonb_in_text", "jsonb": "jsonb_in", "json": "jsonb_of_json"}


__all__ = ["annotate_lowered", "lower_calls", "printed_outputs"]
