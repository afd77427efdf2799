"""The client engine's dialect of PostgreSQL's date and time functions (entries of
engine/transforms.py's table): ``extract`` gives numeric and ``date_part`` double
precision, exact to the microsecond; ``date_trunc`` is of its argument's type, of a date
the timestamptz one in the session's zone; ``age()`` of timestamps and ``to_char()`` of
dates and timestamps in the engine's functions; timestamptz differences as the instants'
distance; intervals with units DuckDB's syntax lacks read by its interval input."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

from psycopg import errors as pg_errors
from sqlglot import exp

from .kinds import duck_cast, kind_of, udf
from .runtime import refusal as _refuse
from .to_char import compile_format

_ISO_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}( \d{2}:\d{2}:\d{2}(\.\d{1,6})?)?")


def age(node: exp.Anonymous) -> exp.Expression:
    """``age(a, b)`` of timestamps (a string constant in ISO form read as one): DuckDB's
    age() subtracts field by field, borrowing from the month before as PostgreSQL's does
    (checked against it); ``age(b)`` was made ``age(CURRENT_DATE::timestamp, b)``
    before (residual._age_of_today).  Of a date PostgreSQL's age is the timestamptz one,
    in the session's time zone: refused."""
    args = node.expressions
    if len(args) != 2:
        raise _refuse("age() with other than two arguments", node)
    typed = []
    for arg in args:
        if isinstance(arg, exp.Literal) and arg.is_string:
            text = arg.name
            if not _ISO_TIMESTAMP.fullmatch(text):
                raise _refuse("age() of a string other than an ISO timestamp", node)
            try:
                dt.datetime.fromisoformat(text)
            except ValueError:
                raise _refuse("age() of a string other than an ISO timestamp", node) from None
            typed.append(duck_cast(arg, "TIMESTAMP"))
        elif kind_of(arg) == "timestamp":
            typed.append(arg)
        else:
            raise _refuse(f"age() of a {kind_of(arg)} value", node)
    return exp.Anonymous(this="age", expressions=typed)


# the fields counted in microseconds: the engine's function giving them, the scale of
# PostgreSQL's numeric (its unit's digits after the point)
_MICRO_FIELDS = {
    "EPOCH": ("epoch_us", 6),
    "SECOND": ("microsecond", 6),  # (DuckDB's: the minute's microseconds)
    "MILLISECONDS": ("microsecond", 3),
    "MICROSECONDS": ("microsecond", 0),
}

# the fields a date has not
_TIME_FIELDS = ("HOUR", "MINUTE", "SECOND", "MILLISECONDS", "MICROSECONDS")


def _micro_field(field: str, node: exp.Extract) -> exp.Expression:
    """extract(epoch | second | milliseconds | microseconds ...): PostgreSQL's numeric,
    exact to the microsecond (an epoch of a date: scale 0), or date_part()'s double
    precision of it."""
    value = node.expression
    if kind_of(value) == "date":  # (epoch only: a second of a date is refused before)
        seconds = exp.IntDiv(
            this=udf("epoch_us", duck_cast(value, "TIMESTAMP")),
            expression=exp.Literal.number(10**6),
        )
        micros: exp.Expression | None = None
    else:
        micros = udf(_MICRO_FIELDS[field][0], value)
    scale = _MICRO_FIELDS[field][1]
    if node.meta.get("pg_function") == "date_part":
        if micros is None:
            return duck_cast(seconds, "DOUBLE")
        per_unit = exp.Literal.number(f"1e{scale}")
        return exp.Div(this=duck_cast(micros, "DOUBLE"), expression=per_unit)
    if micros is None:
        return duck_cast(seconds, "DECIMAL(38,0)")
    if scale == 0:
        return duck_cast(micros, "DECIMAL(38,0)")
    unit = duck_cast(
        exp.Literal.number(f"{Decimal(1).scaleb(-scale):f}"), f"DECIMAL({scale + 1},{scale})"
    )
    return exp.Mul(this=duck_cast(micros, "DECIMAL(38,0)"), expression=unit)


def to_char(node: exp.Anonymous) -> exp.Expression:
    """to_char(date | timestamp | timestamptz, 'constant format') by the client engine,
    as PostgreSQL formats it -- a timestamptz as its local time in the session's zone,
    which the engine computes in (a zone's name or offset, TZ and OF, are patterns not
    reproduced); other arguments, and formats with patterns not reproduced, refused."""
    args = node.expressions
    if len(args) != 2 or kind_of(args[0]) not in ("date", "timestamp", "timestamptz"):
        raise _refuse("to_char() of other than a date or timestamp", node)
    fmt = args[1]
    if not (isinstance(fmt, exp.Literal) and fmt.is_string):
        raise _refuse("to_char() with other than a constant format", node)
    if compile_format(str(fmt.this)) is None:
        raise _refuse("to_char() format pattern", node)
    return udf("pg_to_char", duck_cast(args[0], "TIMESTAMP"), fmt)


def instants_apart(node: exp.Sub) -> exp.Expression:
    """timestamptz - timestamptz (a timestamp beside one read in the session's zone):
    PostgreSQL's difference of the two instants, in microseconds -- DuckDB's counts
    the days and times of the two local clocks, an hour apart across a DST change."""
    a, b = (
        udf("epoch_us", duck_cast(side, "TIMESTAMPTZ")) for side in (node.this, node.expression)
    )
    return udf("to_microseconds", exp.Paren(this=exp.Sub(this=a, expression=b)))


def interval_literal(node: exp.Interval) -> exp.Expression:
    if node.unit is None:
        return node
    # INTERVAL '1' MON is how sqlglot writes PostgreSQL's '1 mon', a unit DuckDB's syntax
    # lacks and its interval input reads
    return duck_cast(exp.Literal.string(f"{node.this.name} {node.unit.name}"), "INTERVAL")


# the fields that count years, whose BC years the engine numbers astronomically (1 BC is
# its year 0) and PostgreSQL does not (-1: there is no year 0)
_BC_YEARS = {"YEAR": "year", "ISOYEAR": "isoyear", "DECADE": "year"}


def _bc_years(field: str, value: exp.Expression) -> exp.Expression:
    """PostgreSQL's year, ISO year or decade (timestamp_part's arithmetic) from the
    engine's astronomical year ``y``: a year ``y`` above 0, else ``y - 1``; a decade
    ``y / 10`` from 0 on, else ``-((8 - (y - 1)) / 10)``, in integer division."""
    year = exp.Anonymous(
        this="date_part", expressions=[exp.Literal.string(_BC_YEARS[field]), value]
    )
    sql = (
        "CASE WHEN y >= 0 THEN y // 10 ELSE -((8 - (y - 1)) // 10) END"
        if field == "DECADE"
        else "CASE WHEN y > 0 THEN y ELSE y - 1 END"
    )
    return exp.maybe_parse(sql, dialect="duckdb").transform(
        lambda n: year.copy() if isinstance(n, exp.Column) and n.name == "y" else n
    )


def extract(node: exp.Extract) -> exp.Expression:
    field = node.this.name.upper()
    # (a timestamptz's fields are those of its time in the session's zone: the engine
    # computes in that zone)
    if kind_of(node.expression) not in ("date", "timestamp", "timestamptz"):
        raise _refuse("extract of other than a date or timestamp", node)
    if field in _TIME_FIELDS and kind_of(node.expression) == "date":
        raise pg_errors.FeatureNotSupported(  # as PostgreSQL raises it
            f'unit "{field.lower()}" not supported for type date'
        )
    if field in _MICRO_FIELDS:
        return _micro_field(field, node)
    if field in _BC_YEARS:
        part = _bc_years(field, node.expression)
    else:
        part = exp.Anonymous(
            this="date_part", expressions=[exp.Literal.string(field.lower()), node.expression]
        )
    if node.meta.get("pg_function") == "date_part":
        return duck_cast(part, "DOUBLE")
    return duck_cast(part, "DECIMAL(18,0)")


def date_trunc(node: exp.TimestampTrunc) -> exp.Expression:
    if kind_of(node.this) == "date":
        # PostgreSQL's date_trunc(unit, date) is the timestamptz one, of the date's
        # midnight in the session's time zone: so computed in the engine, its time zone
        # set to the session's (see residual.run)
        local = duck_cast(duck_cast(node.this, "TIMESTAMP"), "TIMESTAMPTZ")
        trunc = exp.TimestampTrunc(this=local, unit=node.args["unit"])
        trunc.type = exp.DataType.build("TIMESTAMPTZ")  # (cast, compared, shown as one)
        return trunc
    # (a timestamptz is truncated in the session's time zone: the engine computes in it)
    kind = kind_of(node.this)
    if kind not in ("timestamp", "timestamptz"):
        raise _refuse("date_trunc of other than a date or timestamp", node)
    node.type = exp.DataType.build(kind.upper())  # (of its argument's type, as in PostgreSQL)
    return node


_ISO_TIME = r"\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?"
_ISO_FORMS = {
    exp.DataType.Type.TIME: re.compile(_ISO_TIME),
    # a date, a time of day, an offset of whole hours or minutes
    exp.DataType.Type.TIMESTAMPTZ: re.compile(
        rf"\d{{4}}-\d{{2}}-\d{{2}}( {_ISO_TIME}([+-]\d{{2}}(:\d{{2}})?)?)?"
    ),
}


def iso_constant(value: exp.Expression, to: exp.DataType) -> bool:
    """A string constant in an ISO form both engines read alike (not a parameter): what
    a cast to time or timestamptz is answered of."""
    if not (isinstance(value, exp.Literal) and value.is_string):
        return False
    text = value.name
    if _ISO_FORMS[to.this].fullmatch(text) is None:
        return False
    try:  # (a valid one: 25:00 and February 30 are PostgreSQL's errors, not DuckDB's)
        if to.this is exp.DataType.Type.TIME:
            dt.time.fromisoformat(text)
        else:
            dt.datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


__all__ = [
    "age",
    "date_trunc",
    "extract",
    "instants_apart",
    "interval_literal",
    "iso_constant",
    "to_char",
]
