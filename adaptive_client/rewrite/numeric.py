"""PostgreSQL's numeric division, reproduced so client-computed AVGs match the server's.

``AVG`` over integers and numerics is ``numeric_div(sum, count)`` in PostgreSQL, whose
result scale comes from ``select_div_scale`` (numeric.c): at least 16 significant digits,
and no fewer decimals than either input shows.  Rounding is half away from zero.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Any

NBASE = 10000
DEC_DIGITS = 4
MIN_SIG_DIGITS = 16
MAX_DISPLAY_SCALE = 1000


def _weight_first(v: Decimal) -> tuple[int, int]:
    """Weight and first digit of |v| in PostgreSQL's base-10000 representation."""
    v = abs(v)
    if v == 0:
        return 0, 0
    weight = 0
    while v >= NBASE:
        v /= NBASE
        weight += 1
    while v < 1:
        v *= NBASE
        weight -= 1
    return weight, int(v)


def _dscale(v: Decimal) -> int:
    exp = v.as_tuple().exponent
    return max(0, -exp) if isinstance(exp, int) else 0


def numeric_div(a: Decimal, b: Decimal) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 2000
        w1, f1 = _weight_first(a)
        w2, f2 = _weight_first(b)
        qweight = w1 - w2
        if f1 <= f2:
            qweight -= 1
        rscale = MIN_SIG_DIGITS - qweight * DEC_DIGITS
        rscale = max(rscale, _dscale(a), _dscale(b), 0)
        rscale = min(rscale, MAX_DISPLAY_SCALE)
        return (a / b).quantize(Decimal(1).scaleb(-rscale), rounding=ROUND_HALF_UP)


def pg_avg(total: Any, n: int | None, sql_type: Any) -> Any:
    if total is None or not n:
        return None
    if isinstance(total, float):
        return total / n
    return numeric_div(Decimal(total), Decimal(n))
