"""The session settings that shape PostgreSQL's text output, and the output of the
values they shape besides dates and intervals (``datetime_output``, ``interval_text``).

``current()`` is what ``pg_text`` prints under: inside ``using(settings)`` (COPY ... TO
reads the settings once, ``read``, and prints its rows under them) those settings;
elsewhere the settings the server reports by ParameterStatus (DateStyle,
IntervalStyle) and PostgreSQL's defaults for those it does not report
(``extra_float_digits`` 1, ``bytea_output`` hex): no round trip per value.

* ``float8_text`` / ``float4_text``: float8out / float4out.  ``extra_float_digits`` > 0:
  the shortest text that reads back as the value (Ryu's), in fixed notation for a
  decimal exponent from -4 up to 15 (float4: 6), else ``1.5e+20``; 0 or less: C's
  ``%.{15+n}g`` (float4: ``%.{6+n}g``, at least one digit).  ``NaN``, ``Infinity``,
  ``-Infinity`` whatever the setting.  A real reaches the client as the double
  nearest its shortest text: it is first rounded back to the float4 it stands for.
* ``bytea_text``: byteaout, ``\\x`` and hex digits, or the escape format (printable
  ASCII as itself, a backslash doubled, every other byte ``\\ooo`` in octal).
"""

from __future__ import annotations

import contextlib
import math
import struct
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from .session import connection


@dataclass(frozen=True, slots=True)
class OutputSettings:
    """The settings PostgreSQL's output functions read (as ``SHOW`` gives them)."""

    datestyle: str = "ISO, MDY"
    intervalstyle: str = "postgres"
    extra_float_digits: int = 1
    bytea_output: str = "hex"


_USING: ContextVar[OutputSettings | None] = ContextVar("text_output_settings", default=None)

# one query for all four, in the statement's transaction (a SET LOCAL counts)
READ_SQL = (
    "SELECT current_setting('DateStyle'), current_setting('IntervalStyle'), "
    "current_setting('extra_float_digits'), current_setting('bytea_output')"
)


def read(conn: Any) -> OutputSettings:
    """The settings of ``conn`` 's session (a psycopg connection), in one round trip."""
    row = conn.execute(READ_SQL).fetchone()
    return OutputSettings(str(row[0]), str(row[1]), int(row[2]), str(row[3]))


@contextlib.contextmanager
def using(settings: OutputSettings) -> Iterator[None]:
    """Values printed inside print under ``settings``."""
    token = _USING.set(settings)
    try:
        yield
    finally:
        _USING.reset(token)


def current() -> OutputSettings:
    """The settings values are printed under now (see the module)."""
    held = _USING.get()
    if held is not None:
        return held
    conn = connection()
    if conn is None:
        return _DEFAULT
    status = conn.pgconn.parameter_status
    return _reported(
        (status(b"DateStyle") or b"").decode(), (status(b"IntervalStyle") or b"").decode()
    )


_DEFAULT = OutputSettings()


def session_float_digits() -> int:
    """``extra_float_digits`` of the session running the current statement: inside
    ``using``, the settings held; else read from the server (one query: the setting is
    not reported, and SET, set_config() or a role's default may have changed it);
    PostgreSQL's default where no statement runs."""
    held = _USING.get()
    if held is not None:
        return held.extra_float_digits
    conn = connection()
    if conn is None:
        return _DEFAULT.extra_float_digits
    row = conn.execute("SELECT current_setting('extra_float_digits')::integer").fetchone()
    assert row is not None
    return int(row[0])


def _reported(datestyle: str, intervalstyle: str) -> OutputSettings:
    if datestyle == _DEFAULT.datestyle and intervalstyle == _DEFAULT.intervalstyle:
        return _DEFAULT
    return OutputSettings(datestyle or _DEFAULT.datestyle, intervalstyle or _DEFAULT.intervalstyle)


# --- float4out, float8out ------------------------------------------------------------------

_SPECIAL = {math.inf: "Infinity", -math.inf: "-Infinity"}


def float8_text(v: float, extra_float_digits: int = 1) -> str:
    """float8out of ``v`` (see the module)."""
    if v != v:
        return "NaN"
    if math.isinf(v):
        return _SPECIAL[v]
    if extra_float_digits > 0:
        return _layout(_float8_shortest(v), 15)
    return f"{v:.{max(1, 15 + extra_float_digits)}g}"


def float4_text(v: float, extra_float_digits: int = 1) -> str:
    """float4out of the real ``v`` stands for (see the module)."""
    if v != v:
        return "NaN"
    if math.isinf(v):
        return _SPECIAL[v]
    x = _as_float4(v)
    if math.isinf(x):  # (a double past float4's range: not a stored real)
        return _SPECIAL[x]
    if extra_float_digits > 0:
        return _layout(_float4_shortest(x), 6)
    return f"{x:.{max(1, 6 + extra_float_digits)}g}"


def _as_float4(v: float) -> float:
    try:
        return float(struct.unpack("<f", struct.pack("<f", v))[0])
    except OverflowError:
        return math.copysign(math.inf, v)


def _layout(shortest: str, fixed_below: int) -> str:
    """The digits of ``shortest`` (a decimal text) laid out as Ryu's output does:
    fixed notation for a decimal exponent in [-4, fixed_below), else ``d.ddde±XX``."""
    sign, digits, exponent = Decimal(shortest).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    exponent += len(digits) - len(text)  # (trailing zeros into the exponent)
    minus = "-" if sign else ""
    if text == "0":
        return minus + "0"
    e = exponent + len(text) - 1  # the exponent of the first digit
    if -4 <= e < fixed_below:
        if exponent >= 0:
            return minus + text + "0" * exponent
        point = len(text) + exponent
        if point > 0:
            return f"{minus}{text[:point]}.{text[point:]}"
        return f"{minus}0.{'0' * -point}{text}"
    mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
    return f"{minus}{mantissa}e{'-' if e < 0 else '+'}{abs(e):02d}"


def _float4_bits(x: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", x))[0])


def _float4_of_bits(bits: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", bits))[0])


def _float4_shortest(x: float) -> str:
    """Ryu's shortest text of the float4 ``x`` (see ``_shortest``)."""
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    bits = _float4_bits(abs(x))
    below = _float4_of_bits(bits - 1) if bits > 1 else 0.0
    above = _float4_of_bits(bits + 1) if bits < 0x7F7FFFFF else None
    return _shortest(x, below, above, 9)


_EXACT_FROM = 2.0**53  # (below it Python's repr is Ryu's shortest: see float8's)


def _float8_shortest(x: float) -> str:
    """Ryu's shortest text of the float8 ``x`` (see ``_shortest``).  Python's ``repr``
    is the shortest text that reads back, a text on the edge of the values that round
    to ``x`` included; PostgreSQL's Ryu excludes the edges.  An edge is a number
    halfway between two doubles, whose decimal digits are more than 17 below 2**53,
    so ``repr`` never picks it there; above, it is checked."""
    text = repr(x)
    if abs(x) < _EXACT_FROM or math.isinf(x):
        return text
    bits = int(struct.unpack("<Q", struct.pack("<d", abs(x)))[0])
    below = float(struct.unpack("<d", struct.pack("<Q", bits - 1))[0])
    above_bits = bits + 1
    above = (
        None
        if above_bits >= 0x7FF0000000000000
        else float(struct.unpack("<d", struct.pack("<Q", above_bits))[0])
    )
    exact = Fraction(abs(x))
    low, high = _bounds(exact, below, above)
    if low < abs(Fraction(Decimal(text))) < high:
        return text
    return _shortest(x, below, above, 17)


def _bounds(exact: Fraction, below: float, above: float | None) -> tuple[Fraction, Fraction]:
    low = (exact + Fraction(below)) / 2
    high = (exact + Fraction(above)) / 2 if above is not None else exact + (exact - low)
    return low, high


def _shortest(x: float, below: float, above: float | None, most: int) -> str:
    """The shortest decimal strictly between the numbers halfway from ``|x|`` to its
    neighbours ``below`` and ``above`` (None: past the largest), the nearest ``|x|``
    of those as short (a tie: the even last digit), signed as ``x``: Ryu's choice as
    PostgreSQL builds it (the edges excluded whatever the mantissa)."""
    exact = Fraction(abs(x))
    low, high = _bounds(exact, below, above)
    sign = "-" if x < 0 else ""
    for p in range(1, most + 1):
        nearest = Decimal(f"{abs(x):.{p - 1}e}")
        unit = Decimal(1).scaleb(nearest.adjusted() - (p - 1))
        inside = [
            c
            for c in (nearest, nearest - unit, nearest + unit)
            if c > 0 and low < Fraction(c) < high
        ]
        if inside:
            best = min(
                inside, key=lambda c: (abs(Fraction(c) - exact), c.as_tuple().digits[-1] % 2)
            )
            return sign + str(best)
    return sign + repr(abs(x))  # (not reached: ``most`` digits always read back)


# --- byteaout ------------------------------------------------------------------------------

_ESCAPED = [
    "\\\\" if b == 0x5C else chr(b) if 0x20 <= b <= 0x7E else f"\\{b:03o}" for b in range(256)
]


def bytea_text(v: bytes, bytea_output: str = "hex") -> str:
    """byteaout of ``v`` under ``bytea_output`` (``hex`` or ``escape``)."""
    if bytea_output == "escape":
        return "".join([_ESCAPED[b] for b in v])
    return "\\x" + v.hex()


__all__ = [
    "READ_SQL",
    "OutputSettings",
    "bytea_text",
    "current",
    "float4_text",
    "float8_text",
    "read",
    "using",
]
