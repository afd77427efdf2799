"""The session settings a client-evaluated statement's result depends on: which of them
its engine SQL reads (:func:`needed`), and their values set on the engine before it
runs (:func:`apply`) -- the session's TimeZone (timestamptz values are computed and
shown in it), its DateStyle (dates printed as text or read from it) and its
extra_float_digits (floats printed as text; the server does not report it, so it is read
from the server when a statement needs it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..values.clock import session_zone
from ..values.encodings import session_datestyle
from ..values.text_output import session_float_digits

# the engine variables holding the session's DateStyle and extra_float_digits while a
# statement runs
DATESTYLE = "pg_datestyle"
FLOAT_DIGITS = "pg_extra_float_digits"

# the engine's functions that read each variable
_DATESTYLE_FUNCTIONS = ("PG_DATE_TEXT(", "PG_DATE_IN(", "PG_TIMESTAMP_IN(")
_FLOAT_DIGITS_FUNCTIONS = ("PG_FLOAT8_OUT(", "PG_FLOAT4_OUT(")


@dataclass(frozen=True, slots=True)
class SettingsNeeded:
    zone: bool  # timestamptz (now(), date_trunc of a date): the session's zone
    datestyle: bool  # a date printed as text, or read from it
    float_digits: bool  # a float printed as text


def needed(sql: str, engine_types: list[str]) -> SettingsNeeded:
    """What the engine statement ``sql`` over tables of ``engine_types`` reads."""
    upper = sql.upper()
    return SettingsNeeded(
        zone="TIMESTAMPTZ" in sql or "TIME ZONE" in sql or "TIMESTAMPTZ" in engine_types,
        datestyle=any(f in upper for f in _DATESTYLE_FUNCTIONS),
        float_digits=any(f in upper for f in _FLOAT_DIGITS_FUNCTIONS),
    )


def apply(con: Any, needs: SettingsNeeded) -> None:
    """Set the session's values of what ``needs`` names on the engine connection."""
    if needs.zone:
        con.execute("SET TimeZone = $zone", {"zone": session_zone()})
    if needs.datestyle:
        con.execute(f"SET VARIABLE {DATESTYLE} = $s", {"s": session_datestyle()})
    if needs.float_digits:
        digits = session_float_digits()
        con.execute(f"SET VARIABLE {FLOAT_DIGITS} = $d::INTEGER", {"d": digits})


__all__ = ["DATESTYLE", "FLOAT_DIGITS", "SettingsNeeded", "apply", "needed"]
