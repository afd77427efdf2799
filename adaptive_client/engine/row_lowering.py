"""jsonb and array operators and functions of a qualified, annotated client-evaluated
statement, made calls of the client engine's functions (engine/row_calls.py).

:func:`lower_calls` replaces each such node -- an operator (:data:`OPERATORS`: ``@>``,
``->>``, ...; :data:`HELD_OPERATORS` where an operand is jsonb or an array: ``||``,
``-``, a subscript; :data:`QUANTIFIED`: ``= ANY(array)``), a function (by name, or by
sqlglot's class: :data:`FUNCTION_CLASSES`), a set-returning function (its rows
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
from typing import Any, Final, cast

from psycopg import errors as pg_errors
from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types

from ..values.collation import DATABASE_COLLATION
from ..values.encodings import Encoding, encoding_for
from .held import held_of
from .jsonb_casts import CASTS
from .kinds import choice_values, derived_item, kind_of, unparen
from .printed_outputs import printed_outputs
from .row_calls import ArgSpec, CallSpec, record_columns
from .row_functions import AGGREGATES, ROW_FUNCTIONS, RowFunction
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
# PostgreSQL's functions sqlglot parses into classes of its own: their names
FUNCTION_CLASSES: Final[dict[type[exp.Expression], str]] = {
    exp.ArraySize: "array_length",
    exp.Explode: "unnest",
    exp.ArrayToString: "array_to_string",
    exp.ArrayConcat: "array_cat",
    exp.ArrayAppend: "array_append",
    exp.ArrayPrepend: "array_prepend",
    exp.ArrayRemove: "array_remove",
    exp.ArrayPosition: "array_position",
    exp.StringToArray: "string_to_array",
}

# engine types of the results that are not held
_PLAIN_RESULTS: Final = {
    "text": "VARCHAR",
    "integer": "INTEGER",
    "bigint": "BIGINT",
    "boolean": "BOOLEAN",
    "smallint": "SMALLINT",
    "double precision": "DOUBLE",
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
        return _Operand(inner, encoding.sql_type.sql(), duck, encoding)
    if isinstance(inner, exp.Placeholder | exp.Null) or (
        isinstance(inner, exp.Literal) and inner.is_string
    ):
        return _Operand(inner, "unknown", None, None)
    if isinstance(inner, exp.Array):
        return _Operand(inner, "array", None, None)
    if isinstance(inner, exp.Literal):  # (a number; one sqlglot made has no type)
        return _Operand(inner, "integer" if inner.name.isdigit() else "numeric", None, None)
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
    if declared == "text[]" and is_array:
        return 1
    if declared in ("integer", "bigint") and op.pg in ("integer", "bigint"):
        return 1
    return None


def _declared(rf: RowFunction, count: int) -> list[str]:
    """The parameter types of ``count`` arguments (a variadic one repeated: ``variadic
    any`` stays so, ``variadic text`` is text), or fewer where they do not fit."""
    declared = list(rf.args)
    if not declared or not declared[-1].startswith("variadic "):
        return declared
    last = declared[-1]
    each = last if last == "variadic any" else last.removeprefix("variadic ")
    return declared[:-1] + [each] * max(count - len(declared) + 1, 0)


# operand types an overload's absence is PostgreSQL's error for (42883)
_TYPED = frozenset({"text", "integer", "bigint", "boolean", "unknown", "jsonb"})


def _choose(
    name: str, ops: list[_Operand], table: Mapping[str, tuple[RowFunction, ...]] = ROW_FUNCTIONS
) -> int:
    """The overload of ``name`` the operands fit best (an unknown literal read as text
    first, as PostgreSQL resolves it); where none fits, PostgreSQL's 42883 for operands
    of known types, else a refusal."""
    best: tuple[int, int] | None = None
    for i, rf in enumerate(table[name]):
        declared = _declared(rf, len(ops))
        if len(declared) != len(ops):
            continue
        scores = [_fits(d, o) for d, o in zip(declared, ops, strict=True)]
        if any(s is None for s in scores):
            continue
        score = sum(s for s in scores if s is not None)
        if best is None or score < best[0]:
            best = (score, i)
    if best is None:
        if all(o.pg in _TYPED for o in ops):  # (PostgreSQL's own error)
            if name in OPERATORS.values() and len(ops) == 2:
                raise pg_errors.UndefinedFunction(
                    f"operator does not exist: {ops[0].pg} {name} {ops[1].pg}"
                )
            types = ", ".join(o.pg for o in ops)
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


@dataclass
class _Rows:
    """How an aggregate's rows are listed: in its ORDER BY's order, those its FILTER
    keeps."""

    ordered: list[exp.Expression]
    where: exp.Expression | None
    # DISTINCT values: each once, in the type's order (as PostgreSQL sorts them)
    distinct: bool = False

    def listed(self, ops: list[exp.Expression], spec: CallSpec) -> exp.Expression:
        """``array_agg(<the arguments> ORDER BY ...) [FILTER (WHERE ...)]``: the list
        the engine function is called with (a struct per row for several arguments)."""
        marked: list[exp.Expression] = []
        element: exp.Expression
        if len(ops) == 1:
            element = ops[0]
        else:
            fields = [
                exp.PropertyEQ(this=exp.to_identifier(f"a{i}"), expression=op)
                for i, op in enumerate(ops)
            ]
            element = exp.Struct(expressions=fields)
            marked += [element, *fields]
        listed: exp.Expression
        if self.distinct:
            order = exp.Order(
                this=exp.Distinct(expressions=[element]),
                expressions=[exp.Ordered(this=element.copy())],
            )
            listed = exp.ArrayAgg(this=order)
            marked += [order, order.this, listed]
        elif self.ordered:
            order = exp.Order(this=element, expressions=self.ordered)
            listed = exp.ArrayAgg(this=order)
            marked += [order, listed]
        else:
            listed = exp.ArrayAgg(this=element)
            marked.append(listed)
        if self.where is not None:
            listed = exp.Filter(this=listed, expression=exp.Where(this=self.where))
            marked.append(listed)
        for node in marked:
            node.meta["row_call"] = spec
        return listed


def _held_argument(agg: exp.ArrayAgg, held: Mapping[str, Encoding]) -> bool:
    """Whether array_agg's argument is an array the engine holds by keys."""
    arg = agg.this.this if isinstance(agg.this, exp.Order) else agg.this
    if isinstance(arg, exp.Distinct):
        return False
    op = _operand(arg, held)
    return op.duck is not None and op.pg.endswith("]")


def _aggregate_target(
    node: exp.Expression, held: Mapping[str, Encoding]
) -> tuple[str, list[exp.Expression], _Rows] | None:
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
    rows = _Rows(ordered, where.this if isinstance(where, exp.Where) else where, distinct)
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
        rows: _Rows | None = None,
    ) -> exp.Expression:
        ops = [_operand(o, self.held) for o in operands]
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
        elif rf.result.endswith("[]"):  # (string_to_array of text: its result's type)
            jsonb_duck, enc = "", encoding_for(rf.result)
        else:
            raise _refuse(f"{name} of no array argument", node)
        declared = _declared(rf, len(ops))
        args = tuple(
            self._arg(d, op, jsonb_duck, array, node) for d, op in zip(declared, ops, strict=True)
        )
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
        if rows is not None:
            passed = [_passed(op, a, spec) for op, a in zip(ops, args, strict=True)]
            call = exp.Anonymous(this=spec.udf, expressions=[rows.listed(passed, spec)])
        else:
            call = exp.Anonymous(
                this=spec.udf,
                expressions=[_passed(op, a, spec) for op, a in zip(ops, args, strict=True)],
            )
        call.meta["row_call"] = spec
        call.type = exp.DataType.build(result, dialect="duckdb")
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
            encoding = array.encoding if array is not None else encoding_for(declared)
        elif declared == "anyelement" and array is not None:
            encoding = _element(array.encoding)
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
            duck = _PLAIN_ELEMENT.get(encoding.sql_type.name, duck)
        duck = _PLAIN_RESULTS.get(declared, duck)  # (a constant of the type declared)
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
        if result == "anyarray" and array is not None and array.duck is not None:
            return array.duck, True
        if result.endswith("[]"):
            return _held_duck(encoding_for(result), self.held), True
        if result == "anyelement" and array is not None and array.encoding is not None:
            element_encoding = _element(array.encoding)
            name = element_encoding.sql_type.name if element_encoding is not None else ""
            if name in _PLAIN_ELEMENT:
                return _PLAIN_ELEMENT[name], False
        if result in _PLAIN_RESULTS:
            return _PLAIN_RESULTS[result], False
        raise _refuse(f"a result of type {result}", at)


def _element(encoding: Encoding | None) -> Encoding | None:
    """An array encoding's element encoding."""
    return cast(Encoding | None, getattr(encoding, "element", None))


# array element types given to and taken from row functions as the engine's values
_PLAIN_ELEMENT: Final = {
    "text": "VARCHAR",
    "varchar": "VARCHAR",
    "integer": "INTEGER",
    "smallint": "SMALLINT",
    "bigint": "BIGINT",
    "boolean": "BOOLEAN",
}


def _json_path_operand(node: exp.Expression) -> exp.Expression:
    """The right operand of ``->`` / ``->>`` as written (sqlglot reads a constant key
    or index into a JSON path)."""
    if not isinstance(node, exp.JSONPath):
        return node
    parts = node.expressions[1:]
    if len(parts) != 1:
        raise _refuse("a JSON path operand", node)
    part = parts[0]
    if isinstance(part, exp.JSONPathKey):
        return exp.Literal.string(str(part.this))
    if isinstance(part, exp.JSONPathSubscript):
        return exp.Literal.number(int(part.this))
    raise _refuse("a JSON path operand", node)


def _operator_operands(node: exp.Expression) -> list[exp.Expression] | None:
    """The operands of an operator node lowered here, or None where it is not one."""
    name = OPERATORS.get(type(node))
    if name is not None:
        right = node.expression
        if isinstance(node, exp.JSONExtract | exp.JSONExtractScalar):
            right = _json_path_operand(right)
        return [node.this, right]
    return None


def lower_calls(tree: exp.Expression, held: dict[str, Encoding]) -> list[CallSpec]:
    """Replace the jsonb and array operators and functions of the annotated ``tree``
    with engine function calls (see the module docstring), children first; ``held``
    gains the held types of their results.  Their specs, in order."""
    lowering = _Lowering(held)

    def visit(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.Expression):
            return node
        aggregate = _aggregate_target(node, held)
        if aggregate is not None:
            return lowering.call(node, aggregate[0], aggregate[1], aggregate[2])
        if isinstance(node, exp.Case | exp.Coalesce):
            _jsonb_choice(node, held, lowering)
            return node
        name, operands = _target(node, held)
        if name is None:
            return node
        call = lowering.call(node, name, operands)
        if name == CASTS["DECIMAL"][0]:  # (the number's text, read as numeric)
            read = exp.Cast(this=call, to=exp.DataType.build("DECIMAL"))
            read.type = exp.DataType.build("DECIMAL")
            return read
        return call

    # (bottom up, so that an operand is already a typed call: attrs -> 'a' ->> 'b'; the
    # FROM functions first, so that the columns read from them are typed: e.value)
    nodes = list(reversed(list(tree.walk(bfs=False))))
    produced = {id(n) for lateral in _from_functions(tree) for n in lateral.walk()}
    for phase in (True, False):
        for node in nodes:
            if node is tree or (id(node) in produced) != phase:
                continue
            new = visit(node)
            if new is not node:
                node.replace(new)
        if phase and produced:
            _type_produced_columns(tree)
    return lowering.specs


def _jsonb_choice(node: exp.Expression, held: dict[str, Encoding], lowering: _Lowering) -> None:
    """A CASE or COALESCE of jsonb values and string constants: the constants read as
    jsonb (PostgreSQL types them by the jsonb branch), made held values."""
    branches = choice_values(node)
    ducks = {held_of(unparen(b), held) for b in branches}
    if not any(d is not None and held[d].sql_type.name == "jsonb" for d in ducks):
        return
    for branch in branches:
        inner = unparen(branch)
        if isinstance(inner, exp.Literal) and inner.is_string:
            constant = inner.copy()
            inner.replace(lowering.call(constant, "jsonb_in", [constant]))


def _from_functions(tree: exp.Expression) -> list[exp.Lateral]:
    """The lateral subqueries of set-returning functions in FROM (set_functions.py)."""
    return [
        lateral
        for lateral in tree.find_all(exp.Lateral)
        if lateral.meta.get("set_function") and isinstance(lateral.this, exp.Subquery)
    ]


def _type_produced_columns(tree: exp.Expression) -> dict[int, exp.DataType]:
    """Type the columns read from FROM functions as their lowered select items; {id of
    each column typed: its type}."""
    produced: dict[tuple[str, str], exp.DataType] = {}
    for lateral in _from_functions(tree):
        for item in lateral.this.this.expressions:
            typed = item.unalias().type or item.type
            if typed is not None and not typed.is_type(exp.DataType.Type.UNKNOWN):
                produced[(lateral.alias_or_name, item.alias_or_name)] = typed
    out: dict[int, exp.DataType] = {}
    for column in tree.find_all(exp.Column):
        typed = produced.get((column.table, column.name))
        if typed is not None:
            column.type = typed.copy()
            out[id(column)] = column.type
    return out


def _subscript(index: exp.Expression) -> exp.Expression:
    """A subscript as written: sqlglot reads a constant one counting from 0."""
    if isinstance(index, exp.Literal) and not index.is_string and str(index.this).isdigit():
        return exp.Literal.number(int(index.this) + 1)
    return index


def _slice_bounds(index: exp.Expression) -> list[exp.Expression]:
    """A subscript's bounds among slices, flat: ``[l:u]`` (a bound left out marked
    omitted), ``[i]`` as ``[1:i]``."""
    if not isinstance(index, exp.Slice):
        return [exp.Literal.number(1), _subscript(index)]
    bounds = []
    for bound in (index.this, index.expression):
        if bound is None:
            bound = exp.Null()
            bound.meta["omitted"] = True
        bounds.append(bound)
    return bounds


def _is_held_composite(op: _Operand) -> bool:
    """A held jsonb or array value (the others' operators are not row functions)."""
    return op.duck is not None and (op.pg == "jsonb" or op.pg.endswith("]"))


def _target(
    node: exp.Expression, held: Mapping[str, Encoding]
) -> tuple[str | None, list[exp.Expression]]:
    operands = _operator_operands(node)
    if operands is not None:
        return OPERATORS[type(node)], operands
    name = HELD_OPERATORS.get(type(node))
    if name is not None:
        if isinstance(node, exp.Bracket) and any(
            isinstance(e, exp.Slice) for e in node.expressions
        ):
            sides = [node.this, *(b for e in node.expressions for b in _slice_bounds(e))]
            if any(_is_held_composite(_operand(s, held)) for s in sides[:1]):
                return "[:]", sides
            return None, []
        if isinstance(node, exp.Bracket):
            sides = [node.this, *map(_subscript, node.expressions)]
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
    if isinstance(node, exp.Cast) and not isinstance(node, exp.TryCast):
        literal = unparen(node.this)
        if node.to.is_type(exp.DataType.Type.JSONB) and (
            isinstance(literal, exp.Literal) and literal.is_string
        ):
            return "jsonb_in", [literal]  # (a constant document: '{"a": 1}'::jsonb)
        cast = CASTS.get(node.to.this.value) if not node.to.expressions else None
        if cast is not None and _operand(node.this, held).pg == "jsonb":
            return cast[0], [node.this]
    if isinstance(node, exp.Anonymous) and node.name.lower() in ROW_FUNCTIONS:
        return node.name.lower(), list(node.expressions)
    fn = FUNCTION_CLASSES.get(type(node))
    if fn is not None and fn in ROW_FUNCTIONS:
        args = [a for a in node.iter_expressions()]
        if isinstance(node, exp.ArrayPrepend):  # (sqlglot holds the array first)
            args.reverse()
        return fn, args
    return None, []


def _passed(op: _Operand, arg: ArgSpec, spec: CallSpec) -> exp.Expression:
    """An operand as the engine function takes it: a numeric as its text (the engine
    prints a decimal with its scale)."""
    if arg.kind != "numeric":
        return op.node
    text = exp.Anonymous(this="concat", expressions=[op.node])
    text.meta["row_call"] = spec
    return text


def annotate_lowered(tree: exp.Expression, schema: dict[str, dict[str, str]]) -> None:
    """The statement's types again once its calls are lowered: each call keeps the type
    of its result, what stands on it is typed from it; a set-returning function's
    columns in FROM (read through its lateral subquery, which the annotation does not
    follow) are typed as its select items."""
    kept = {
        id(d) for n in tree.walk() if isinstance(n.meta.get("row_call"), CallSpec) for d in n.walk()
    }
    _annotate_keeping(tree, schema, kept)
    typed = _type_produced_columns(tree)
    if not typed:
        return
    kept.update(typed)
    _annotate_keeping(tree, schema, kept)


def _annotate_keeping(
    tree: exp.Expression, schema: dict[str, dict[str, str]], kept: set[int]
) -> None:
    # (sqlglot leaves a column an ORDER BY reads untyped when it keeps types: its type
    # before is its type, a column's does not depend on the calls lowered)
    columns = {id(c): c.type for c in tree.find_all(exp.Column) if c.type is not None}
    for node in tree.walk():
        if id(node) not in kept:
            node.type = None
    annotate_types(
        tree, schema=cast(dict[str, object], schema), dialect="postgres", overwrite_types=False
    )
    for column in tree.find_all(exp.Column):
        before = columns.get(id(column))
        if before is not None and (column.type is None or column.type.is_type("unknown")):
            column.type = before


__all__ = ["annotate_lowered", "lower_calls", "printed_outputs"]
