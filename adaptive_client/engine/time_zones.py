"""AT TIME ZONE in the client engine: the IANA zone a name (or a parameter's value)
names, and the rewrite of ``x AT TIME ZONE zone`` into DuckDB's ``timezone()``
(transforms.py lists it)."""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable
from typing import Any

from psycopg import errors as pg_errors
from sqlglot import exp

from ..errors import UnsupportedQuery
from .kinds import kind_of
from .runtime import refusal as _refuse


def _zones_by_folded_name() -> dict[str, str]:
    return {z.lower(): z for z in zoneinfo.available_timezones() if "/" in z} | {"utc": "UTC"}


_ZONES = _zones_by_folded_name()


def zone_name(text: Any) -> str:
    """The IANA zone ``text`` names, as the engine knows it, for AT TIME ZONE: an
    Area/City name or UTC, in any case; an unknown Area/City is PostgreSQL's 22023; any
    other text is refused (PostgreSQL reads it first as an abbreviation or a POSIX
    offset)."""
    name = _ZONES.get(str(text).lower())
    if name is None and "/" in str(text):
        raise pg_errors.InvalidParameterValue(f'time zone "{text}" not recognized')
    if name is None:
        raise UnsupportedQuery(
            f"not supported in a client-evaluated query: AT TIME ZONE {text!r}, other than "
            "an IANA zone (Area/City) or UTC",
            "AT TIME ZONE",
        )
    return name


def mark_zone_parameters(tree: exp.Expression) -> None:
    """Mark each ``AT TIME ZONE %s`` parameter, whose value :func:`zone_named` reads when
    bound (compile/residual.py's to_duckdb)."""
    for shift in tree.find_all(exp.AtTimeZone):
        if isinstance(shift.args.get("zone"), exp.Placeholder):
            shift.args["zone"].meta["time_zone"] = True


def zone_named(builder: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A parameter's builder whose value is a zone's name, read by :func:`zone_name`."""

    def bound(params: Any) -> Any:
        value = builder(params)
        return None if value is None else zone_name(value)

    return bound


def at_time_zone(node: exp.AtTimeZone) -> exp.Expression:
    """``x AT TIME ZONE 'Area/City'``: a timestamptz's local time there (a timestamp), a
    timestamp read as the local time there (a timestamptz) -- DuckDB's ``timezone()``
    over its ICU zones, the IANA zones PostgreSQL reads.  Only a zone so named (or
    UTC): PostgreSQL reads other text first as an abbreviation (``CET``: +1 all year,
    where the IANA zone CET keeps summer time) or a POSIX offset (its sign inverted)."""
    kind = kind_of(node.this)
    zone = node.args.get("zone")
    if kind not in ("timestamp", "timestamptz"):
        raise _refuse("AT TIME ZONE of other than a timestamp", node)
    if isinstance(zone, exp.Placeholder):
        named: exp.Expression = zone  # (its value read by zone_name when bound: residual.py)
    elif isinstance(zone, exp.Literal) and zone.is_string:
        named = exp.Literal.string(zone_name(zone.name))
    else:
        raise _refuse("AT TIME ZONE other than a zone named by a constant", node)
    out = exp.Anonymous(this="timezone", expressions=[named, node.this])
    out.type = exp.DataType.build("TIMESTAMP" if kind == "timestamptz" else "TIMESTAMPTZ")
    return out


__all__ = ["at_time_zone", "mark_zone_parameters", "zone_name", "zone_named"]
