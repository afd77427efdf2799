"""``percentile_disc(f) WITHIN GROUP (ORDER BY x)``, ``percentile_cont`` and ``mode()`` in
the client engine, computed as PostgreSQL computes them (orderedsetaggs.c) rather than by
DuckDB's quantiles and mode, which pick and interpolate differently.

All three read the group's non-null values of ``x`` sorted by the ORDER BY (under the text's
collation where the key is text: the ORDER BY has been keyed by ``text_order`` before,
so its key is the collation key and the value is its argument), as a list:

* ``percentile_disc``: the ``max(ceil(f * n), 1)``-th value (1-based) -- x's own value
  and type;
* ``percentile_cont``: with ``pos = f * (n - 1)`` in double precision, the values at
  ``floor(pos)`` and ``ceil(pos)`` (0-based), the first where they are one, else
  ``lo + (hi - lo) * (pos - floor(pos))`` -- float8_lerp's arithmetic, operation for
  operation, so its bits are PostgreSQL's.

``mode()`` takes the first value of the longest run of equal values in that list.

The fraction is a constant between 0 and 1 (compile/allowed.py checks it); no row, or
no non-null value, gives NULL."""

from __future__ import annotations

from sqlglot import exp

from .kinds import duck_cast, int_width, kind_of, udf
from .scalar_udfs import MODE_TYPES
from .text_order import KEY_FUNCTION


def _value_and_key(ordered: exp.Ordered) -> tuple[exp.Expression, exp.Expression]:
    """The value an ORDER BY key sorts, and the key itself (a text's collation key)."""
    key = ordered.this
    if isinstance(key, exp.Anonymous) and key.name.lower().startswith(KEY_FUNCTION):
        return key.expressions[0], key
    return key, key


def _sorted_values(value: exp.Expression, key: exp.Expression, desc: bool) -> exp.Expression:
    """The group's non-null values, sorted as the ORDER BY sorts them."""
    ordered = exp.Ordered(this=key.copy(), desc=desc, nulls_first=False)
    values = exp.ArrayAgg(this=exp.Order(this=value.copy(), expressions=[ordered]))
    not_null = exp.Not(this=exp.Is(this=value.copy(), expression=exp.Null()))
    return exp.Filter(this=values, expression=exp.Where(this=not_null))


def _nth(values: exp.Expression, index: exp.Expression) -> exp.Expression:
    return udf("list_extract", values.copy(), index)


def _mode(value: exp.Expression, key: exp.Expression, desc: bool) -> exp.Expression:
    """mode(): the first of the longest runs of equal values in the sorted values
    (scalar_udfs.mode), in the value's own type."""
    duck = MODE_TYPES[kind_of(value)]
    call = udf(f"pg_mode_{duck.lower()}", _sorted_values(value, key, desc))
    width = int_width(value) if duck == "BIGINT" else None
    return duck_cast(call, _INT_TYPES[width]) if width is not None else call


_INT_TYPES = {2: "SMALLINT", 4: "INTEGER", 8: "BIGINT"}


def percentile(node: exp.WithinGroup) -> exp.Expression:
    """The ordered-set aggregate ``node`` as DuckDB computes it exactly."""
    ordered = node.expression.expressions[0]
    value, key = _value_and_key(ordered)
    if isinstance(node.this, exp.Mode):
        return _mode(value, key, bool(ordered.args.get("desc")))
    fraction = duck_cast(node.this.this.copy(), "DOUBLE")
    count = exp.Count(this=value.copy())
    if isinstance(node.this, exp.PercentileDisc):
        values = _sorted_values(value, key, bool(ordered.args.get("desc")))
        rank = duck_cast(exp.Ceil(this=exp.Mul(this=fraction, expression=count)), "BIGINT")
        return _nth(values, exp.Greatest(this=rank, expressions=[exp.Literal.number(1)]))
    values = _sorted_values(duck_cast(value, "DOUBLE"), key, bool(ordered.args.get("desc")))
    position = exp.Paren(
        this=exp.Mul(
            this=fraction,
            expression=duck_cast(exp.Sub(this=count, expression=exp.Literal.number(1)), "DOUBLE"),
        )
    )
    first = exp.Floor(this=position.copy())
    one = exp.Literal.number(1)
    low = _nth(values, exp.Add(this=duck_cast(first.copy(), "BIGINT"), expression=one))
    high = _nth(
        values,
        exp.Add(this=duck_cast(exp.Ceil(this=position.copy()), "BIGINT"), expression=one.copy()),
    )
    between = exp.Add(
        this=low.copy(),
        expression=exp.Mul(
            this=exp.Paren(this=exp.Sub(this=high, expression=low.copy())),
            expression=exp.Paren(this=exp.Sub(this=position.copy(), expression=first.copy())),
        ),
    )
    same = exp.EQ(this=first, expression=exp.Ceil(this=position))
    return exp.Case(ifs=[exp.If(this=same, true=low)], default=between)


__all__ = ["percentile"]
