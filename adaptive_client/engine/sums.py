"""``sum`` and ``avg`` in the client engine as PostgreSQL computes them.

* ``sum`` is typed as PostgreSQL types it (bigint of smallint/integer, numeric of
  bigint); ``avg`` of integers/numerics is the exact sum and count, divided with
  PostgreSQL's numeric division (:func:`exact_quotient`, or on the client for an
  output: engine/engine_sql.py);
* ``sum`` / ``avg`` of real and double precision: PostgreSQL adds the values one by one
  in its plan's order, each addition rounded, and that order is not the client's to
  know.  The client answers only where every order gives the same value -- all values
  finite multiples of one power of two whose magnitudes' sum the type holds exactly --
  and refuses at run time otherwise (:func:`float_sum`): a float sum is never answered
  with other last bits than PostgreSQL's.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from sqlglot import exp

from .kinds import INT_TYPES, duck_cast, is_bigint, is_star, kind_of, scale_of, udf
from .runtime import REFUSAL_MARKER
from .runtime import refusal as _refuse

# the real columns of the statement being transpiled, as (table alias, column): sqlglot
# types both float types double
REALS: ContextVar[frozenset[tuple[str, str]]] = ContextVar("REALS", default=frozenset())


def _real_sum(arg: exp.Expression, node: exp.Expression) -> bool:
    """Whether PostgreSQL sums ``arg`` as a real (a real column, a cast to real, their
    negation or abs): False for a double precision value; a float expression reading a
    real column otherwise is refused (its type is not known here)."""
    reals = REALS.get()
    if real_valued(arg, reals):
        return True
    if any((c.table, c.name) in reals for c in arg.find_all(exp.Column)):
        raise _refuse("a float aggregate of an expression over a real column", node)
    return False


def real_valued(node: exp.Expression, reals: frozenset[tuple[str, str]]) -> bool:
    while isinstance(node, exp.Paren | exp.Neg | exp.Abs):
        node = node.this
    if isinstance(node, exp.Column):
        return (node.table, node.name) in reals
    return isinstance(node, exp.Cast) and node.to.this is exp.DataType.Type.FLOAT


# set while transpiling a value the client only compares (a scalar subquery's value that
# bounds a fetch): its display scale does not matter
VALUES_ONLY: ContextVar[bool] = ContextVar("VALUES_ONLY", default=False)


def _value_only(node: exp.Expression, depth: int = 0) -> bool:
    """Whether only ``node``'s value matters, not its display scale: it is compared,
    ordered by, or rounded / cast to a scale of its own before anything prints it -- or
    it is a CTE's or derived table's column that every reference uses so."""
    if VALUES_ONLY.get():
        return True
    parent = node.parent
    child: Any = node
    while parent is not None:
        if isinstance(parent, exp.Predicate | exp.Ordered | exp.Round | exp.Trunc):
            return True
        if isinstance(parent, exp.Cast) and (
            parent.to.this in INT_TYPES or (parent.to.is_type(exp.DataType.Type.DECIMAL)
                                        and len(parent.to.expressions) == 2)
        ):  # fmt: skip
            return True
        if isinstance(parent, exp.Select) and isinstance(child, exp.Alias) and depth < 4:
            refs = _references(parent, child.alias)
            if refs is not None:  # a CTE's or derived table's column: how it is read
                return all(_value_only(r, depth + 1) for r in refs)
        child, parent = parent, parent.parent
    return False


def _references(select: exp.Select, name: str) -> list[exp.Column] | None:
    """The columns that read output ``name`` of ``select`` where it is a CTE's or a
    derived table's body (None where it is anything else, or a ``*`` reads it)."""
    holder = select.parent
    if isinstance(holder, exp.CTE):
        cte_name = holder.alias_or_name
        scope: Any = holder.parent.parent if holder.parent else None
        if scope is None:
            return None
        tables = [
            t for t in scope.find_all(exp.Table) if t.name == cte_name and not t.args.get("db")
        ]
        aliases = {t.alias_or_name for t in tables}
    elif isinstance(holder, exp.Subquery) and holder.alias_or_name:
        scope = holder.parent.parent if holder.parent else None
        if scope is None:
            return None
        aliases = {holder.alias_or_name}
    else:
        return None
    for sel in scope.find_all(exp.Select):
        for item in sel.expressions:
            if is_star(item) and (
                not isinstance(item, exp.Column) or not item.table or item.table in aliases
            ):
                return None  # (read whole: printed)
    return [
        c
        for c in scope.find_all(exp.Column)
        if c.table in aliases and c.name == name and c.find_ancestor(exp.CTE) is not holder
    ]


def exact_quotient(a: exp.Expression, b: exp.Expression, at: exp.Expression) -> exp.Expression:
    """PostgreSQL's numeric division, exact (:func:`engine.pg_quotient`), for quotients
    used inside the statement; an output that is a quotient is divided on the client
    (:func:`quotient_outputs`).  A quotient otherwise reaching the output (``x + a / b``,
    ``sum(a / b)``) would have another display scale than PostgreSQL's: refused."""
    if not _value_only(at):
        raise _refuse("a numeric quotient inside an output expression", at)
    return udf("pg_numeric_div", duck_cast(a, "VARCHAR"), duck_cast(b, "VARCHAR"))


def avg_parts(node: exp.Expression) -> tuple[exp.Expression, exp.Expression]:
    """``avg(x)``, ``avg(x) FILTER (...)`` or ``avg(x) OVER (...)`` as the sum and the
    count of x, wrapped alike: PostgreSQL's avg is their numeric quotient."""
    avg = node.this if isinstance(node, exp.Window | exp.Filter) else node
    arg = avg.this
    if isinstance(arg, exp.Distinct) or kind_of(arg) not in ("int", "decimal"):
        raise _refuse("avg of other than integers or numerics", avg)
    total, count = _wrapped_alike(node, avg, [exp.Sum(this=arg.copy()), exp.Count(this=arg.copy())])
    return total, count


def _wrapped_alike(
    node: exp.Expression, agg: exp.Expression, parts: list[exp.Expression]
) -> list[exp.Expression]:
    """Each of ``parts`` (aggregates standing for ``agg``) in ``node``'s place: wrapped in
    a copy of its FILTER or OVER where ``node`` has one."""
    if node is agg:
        return parts
    out = []
    for part in parts:
        wrapped = node.copy()
        wrapped.set("this", part)
        out.append(wrapped)
    return out


# PostgreSQL's variance and standard deviation aggregates of integers and numerics, by
# sqlglot's class: an output of them is computed by the client from the exact count, sum
# and sum of squares, as numeric.c's numeric_stddev_internal (engine_sql.py's
# quotient_outputs); anywhere else, refused
VARIANCES: dict[type[exp.Expression], str] = {
    exp.Stddev: "stddev_samp",
    exp.StddevSamp: "stddev_samp",
    exp.StddevPop: "stddev_pop",
    exp.Variance: "var_samp",
    exp.VariancePop: "var_pop",
}


def variance_parts(node: exp.Expression) -> list[exp.Expression]:
    """``stddev(x)`` (or a variance, ``... FILTER (...)``) as the sum, the count and the
    sum of squares of x, wrapped alike; x an integer or a numeric whose type gives its
    scale (the sums' scales are then PostgreSQL's)."""
    agg = node.this if isinstance(node, exp.Filter) else node
    arg = agg.this
    scale = scale_of(arg)
    if isinstance(arg, exp.Distinct) or kind_of(arg) not in ("int", "decimal") or scale is None:
        raise _refuse(f"{VARIANCES[type(agg)]} of other than integers or numerics", agg)
    wide = duck_cast(arg.copy(), f"DECIMAL(38,{scale})")
    squares = exp.Sum(this=exp.Mul(this=wide, expression=wide.copy()))
    return _wrapped_alike(
        node, agg, [exp.Sum(this=arg.copy()), exp.Count(this=arg.copy()), squares]
    )


def variance_elsewhere(node: exp.Expression) -> exp.Expression:
    """A variance or standard deviation not an output of its own: refused."""
    raise _refuse(f"{VARIANCES[type(node)]} inside an expression or a window", node)


def sum_typed(agg: exp.Sum, node: exp.Expression) -> exp.Expression:
    """``node`` (a sum, or a window of one) typed as PostgreSQL types the sum."""
    arg = agg.this.expressions[0] if isinstance(agg.this, exp.Distinct) else agg.this
    k = kind_of(arg)
    if k == "int":
        return duck_cast(node, "DECIMAL(38,0)" if is_bigint(arg) else "BIGINT")
    if k == "decimal":
        return node
    if k == "float" and (node is agg or isinstance(node, exp.Filter)):
        # (of DISTINCT values: checked over all of them, a bound of the distinct ones')
        where = node.expression if isinstance(node, exp.Filter) else None
        return float_sum(arg, _float_typed_sum(node, arg, agg), agg, where=where)
    raise _refuse(f"sum over {k} values", node)


# float sums: mantissa bits and largest finite value of real and double precision
_FLOAT_FORMATS = {"FLOAT": (24, 3.4028234663852886e38), "DOUBLE": (53, 1.7976931348623157e308)}


def float_sum(
    arg: exp.Expression,
    total: exp.Expression,
    node: exp.Expression,
    real: bool | None = None,
    where: exp.Expression | None = None,
) -> exp.Expression:
    """``total`` (the sum of ``arg``, or a value computed from it) where the sum does not
    depend on the order of addition, else a refusal at run time.

    PostgreSQL adds a float sum's values one by one in the order its plan feeds them
    (float8pl / float4pl, and float8_accum for avg), each addition rounded: the last
    bits of the result depend on that order, which the client does not know (its rows
    come from another statement's plan, and the client engine adds in parallel).  The
    client does not guess: it answers only when every order gives the same sum, which it
    checks exactly -- all values finite, each an integer multiple of 2**e (e the lowest
    set bit's exponent among them), and the sum of their magnitudes below 2**(p+e) (p the
    type's mantissa bits) and below the type's largest value.  Then every partial sum,
    in any order, is a multiple of 2**e below 2**(p+e), held exactly: the sum is the
    exact one, whatever the order (sums of integers, of halves, of cents stored as
    whole numbers).  Otherwise (0.1 + 0.2 + 0.3, whose order changes the last bit) it is
    refused, never answered with other last bits."""
    if real is None:  # (an avg accumulates in double precision, a real's too)
        real = _real_sum(arg, node)
    bits, largest = _FLOAT_FORMATS["FLOAT" if real else "DOUBLE"]
    x = duck_cast(arg.copy(), "DOUBLE")

    def filtered(aggregate: exp.Expression) -> exp.Expression:  # (sum(x) FILTER (...))
        return aggregate if where is None else exp.Filter(this=aggregate, expression=where.copy())

    magnitude = filtered(exp.Sum(this=exp.Abs(this=x.copy())))
    low = filtered(exp.Min(this=udf("pg_float_low_exponent", x.copy())))
    bound = udf(
        "pow",
        exp.Literal.number(2.0),
        exp.Add(
            this=exp.Literal.number(bits),
            expression=exp.Coalesce(this=low, expressions=[exp.Literal.number(0)]),
        ),
    )
    exact = exp.or_(
        exp.EQ(this=filtered(exp.Count(this=x.copy())), expression=exp.Literal.number(0)),
        exp.and_(
            filtered(udf("bool_and", udf("isfinite", x.copy()))),
            exp.LT(this=magnitude.copy(), expression=bound),
            exp.LTE(this=magnitude, expression=exp.Literal.number(largest)),
        ),
    )
    reason = "a float sum whose last bits depend on the order of addition"
    message = exp.Literal.string(REFUSAL_MARKER + reason)
    refused = exp.Not(this=exp.Paren(this=exact))
    return exp.Case(ifs=[exp.If(this=refused, true=udf("error", message))], default=total)


def _float_typed_sum(total: exp.Expression, arg: exp.Expression, agg: exp.Sum) -> exp.Expression:
    """The sum of a real or double precision ``arg`` in its type (DuckDB sums a real as
    a double), plus 0.0 as PostgreSQL's sum starts from 0.0 (a sum of -0.0 is 0)."""
    real = _real_sum(arg, agg)
    return duck_cast(
        exp.Add(this=total, expression=exp.Literal.number(0.0)), "FLOAT" if real else "DOUBLE"
    )


def float_avg(node: exp.Avg) -> exp.Expression:
    """PostgreSQL's avg of reals or doubles: its float8 sum (float8_accum: in double
    precision, of a real too) divided by the count, in double precision -- where no
    order of addition changes it (:func:`float_sum`)."""
    distinct = isinstance(node.this, exp.Distinct)
    arg = node.this.expressions[0] if distinct else node.this

    def over(value: exp.Expression) -> exp.Expression:  # (avg(DISTINCT x)'s parts: too)
        return exp.Distinct(expressions=[value]) if distinct else value

    total = exp.Add(
        this=exp.Sum(this=over(duck_cast(arg.copy(), "DOUBLE"))),
        expression=exp.Literal.number(0.0),
    )
    count = exp.Count(this=over(arg.copy()))
    quotient = exp.Div(this=exp.Paren(this=total), expression=duck_cast(count, "DOUBLE"))
    # (its accumulator of squared deviations raises an overflow PostgreSQL's values near
    # the double's limit meet: such an avg is refused)
    small = exp.or_(
        exp.LTE(this=count.copy(), expression=exp.Literal.number(1)),
        exp.LT(
            this=exp.Max(this=exp.Abs(this=duck_cast(arg.copy(), "DOUBLE"))),
            expression=exp.Literal.number("1e145"),
        ),
    )
    reason = exp.Literal.string(REFUSAL_MARKER + "an avg of floats near the overflow")
    guarded = exp.Case(
        ifs=[exp.If(this=exp.Not(this=exp.Paren(this=small)), true=udf("error", reason))],
        default=quotient,
    )
    # (of DISTINCT values: checked over all of them, a bound of the distinct ones')
    return float_sum(duck_cast(arg.copy(), "DOUBLE"), guarded, node, real=False)
