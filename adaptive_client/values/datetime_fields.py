"""Dates and zones as PostgreSQL's date/time code reckons them: Julian days
(``date2j``, ``j2date``), the zone of a TimeZone setting or an input's zone name
(``zone_named``: zoneinfo's names and POSIX zones without daylight rules), PostgreSQL's
``Default`` zone abbreviations (``ABBREVIATIONS``), and :class:`Fields`, a parsed
date/time input with the zone offset its local time has (``Fields.offset_at``).

The input rules (``datetime_input``) produce Fields; the encodings and the output turn
them into values.  This module imports no module of the client.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from dataclasses import dataclass
from functools import lru_cache


@lru_cache(maxsize=256)
def zone_named(name: str) -> dt.tzinfo | None:
    """The zone of a TimeZone setting or a zone name in an input (PostgreSQL matches
    them without regard to case); None if there is none."""
    key = _zone_keys().get(name.lower())
    if key is None:
        return _posix_zone(name)
    try:
        return zoneinfo.ZoneInfo(key)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None


_POSIX_RE = re.compile(
    r"([a-z]{3,}|<[^>]*>|)([+-]?)([0-9]{1,2})(?::([0-9]{1,2})(?::([0-9]{1,2}))?)?"
)


def _posix_zone(name: str) -> dt.tzinfo | None:
    """A POSIX zone without daylight rules (``GMT+8``, ``PST+8``, ``MST+7:00``,
    ``<+0330>-3:30``, ``+03:30``): the offset is west of Greenwich, as POSIX writes it;
    the zone's abbreviation is its name (``GMT``, ``+0330``; none for ``+03:30``), which
    PostgreSQL prints in upper case."""
    m = _POSIX_RE.fullmatch(name.lower())
    if m is None:
        return None
    hours, minutes, seconds = int(m.group(3)), int(m.group(4) or 0), int(m.group(5) or 0)
    if hours > 24 or minutes > 59 or seconds > 59:
        return None
    west = (hours * 60 + minutes) * 60 + seconds
    abbrev = name[: m.end(1)].strip("<>").upper()
    return dt.timezone(dt.timedelta(seconds=west if m.group(2) == "-" else -west), abbrev)


@lru_cache(maxsize=1)
def _zone_keys() -> dict[str, str]:
    return {k.lower(): k for k in zoneinfo.available_timezones()}


# PostgreSQL's "Default" time zone abbreviations (timezone_abbreviations): an offset in
# seconds east of UTC, or the zone whose offset the abbreviation names at that date
_ABBREVIATIONS_TEXT = """
    eat:10800 sast:7200 wat:3600 act:-18000 akdt:-28800 akst:-32400
    art:America/Argentina/Buenos_Aires arst:America/Argentina/Buenos_Aires bot:-14400
    bra:-10800 brst:-7200 brt:-10800 cot:-18000 cdt:-18000 clst:-10800 clt:America/Santiago
    cst:-21600 edt:-14400 egst:0 egt:-3600 est:-18000 fnt:-7200 fnst:-3600 gft:-10800
    gyt:America/Guyana mdt:-21600 mst:-25200 ndt:-9000 nft:-12600 nst:-12600 pet:-18000
    pdt:-25200 pmdt:-7200 pmst:-10800 pst:-28800 pyst:-10800 pyt:America/Asuncion
    uyst:-7200 uyt:-10800 vet:America/Caracas wgst:-7200 wgt:-10800 davt:Antarctica/Davis
    ddut:36000 mawt:Antarctica/Mawson aft:16200 almt:21600 almst:25200 amst:Asia/Yerevan
    amt:-14400 anast:Asia/Anadyr anat:Asia/Anadyr azst:Asia/Baku azt:Asia/Baku bdt:21600
    bnt:28800 bort:28800 btt:21600 cct:28800 gest:Asia/Tbilisi get:Asia/Tbilisi hkt:28800
    ict:25200 idt:10800 irkst:Asia/Irkutsk irkt:Asia/Irkutsk irt:12600 ist:7200 jayt:32400
    jst:32400 kdt:36000 kgst:21600 kgt:Asia/Bishkek krast:Asia/Krasnoyarsk
    krat:Asia/Krasnoyarsk kst:32400 lkt:Asia/Colombo magst:Asia/Magadan magt:Asia/Magadan
    mmt:23400 myt:28800 novst:Asia/Novosibirsk novt:Asia/Novosibirsk npt:20700
    omsst:Asia/Omsk omst:Asia/Omsk petst:Asia/Kamchatka pett:Asia/Kamchatka pht:28800
    pkt:18000 pkst:21600 sgt:Asia/Singapore tjt:18000 tmt:Asia/Ashgabat ulast:32400
    ulat:Asia/Ulaanbaatar uzst:21600 uzt:18000 vlast:Asia/Vladivostok vlat:Asia/Vladivostok
    xjt:21600 yakst:Asia/Yakutsk yakt:Asia/Yakutsk yekst:21600 yekt:Asia/Yekaterinburg
    adt:-10800 ast:-14400 azost:0 azot:-3600 fkst:Atlantic/Stanley fkt:Atlantic/Stanley
    acsst:37800 acdt:37800 acst:34200 acwst:31500 aesst:39600 aedt:39600 aest:36000
    awsst:32400 awst:28800 cadt:37800 cast:34200 lhdt:Australia/Lord_Howe lhst:37800
    ligt:36000 nzt:43200 sadt:37800 wadt:28800 wast:25200 wdt:32400 gmt:0 uct:0 ut:0 utc:0
    z:0 zulu:0 bst:3600 bdst:7200 cest:7200 cet:3600 cetdst:7200 eest:10800 eet:7200
    eetdst:10800 fet:10800 mest:7200 mesz:7200 met:3600 metdst:7200 mez:3600 msd:14400
    msk:Europe/Moscow volt:Europe/Volgograd wet:0 wetdst:3600 cxt:25200 iot:Indian/Chagos
    mut:14400 must:18000 mvt:18000 ret:14400 sct:14400 tft:18000 chadt:49500 chast:45900
    chut:36000 ckt:Pacific/Rarotonga easst:Pacific/Easter east:Pacific/Easter fjst:46800
    fjt:43200 galt:-21600 gamt:-32400 gilt:43200 hst:-36000 kost:Pacific/Kosrae
    lint:Pacific/Kiritimati mart:-34200 mht:43200 mpt:36000 nut:Pacific/Niue nzdt:46800
    nzst:43200 pgt:36000 pont:39600 pwt:32400 taht:-36000 tkt:Pacific/Fakaofo tot:46800
    trut:36000 tvt:43200 vut:39600 wakt:43200 wft:43200 yapt:36000
"""
ABBREVIATIONS: dict[str, int | str] = {
    k: (int(v) if v.lstrip("-").isdigit() else v)
    for k, v in (item.split(":", 1) for item in _ABBREVIATIONS_TEXT.split())
}

_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def days_in_month(y: int, m: int) -> int:
    return 29 if m == 2 and _leap(y) else _DAYS[m - 1]


def date2j(y: int, m: int, d: int) -> int:
    """The Julian day of a proleptic Gregorian date (year 0 is 1 BC), as PostgreSQL."""
    if m > 2:
        m += 1
        y += 4800
    else:
        m += 13
        y += 4799
    century = y // 100
    julian = y * 365 - 32167 + y // 4 - century + century // 4 + 7834 * m // 256 + d
    return julian


def j2date(jd: int) -> tuple[int, int, int]:
    julian = jd + 32044
    quad = julian // 146097
    extra = (julian - quad * 146097) * 4 + 3
    julian += 60 + quad * 3 + extra // 146097
    quad = julian // 1461
    julian -= quad * 1461
    y = julian * 4 // 1461
    julian = (julian + 305) % 365 + 123 if y else (julian + 306) % 366 + 123
    y += quad * 4
    year = y - 4800
    quad = julian * 2141 // 65536
    day = julian - 7834 * quad // 256
    month = (quad + 10) % 12 + 1
    return year, month, day


# --- results ---------------------------------------------------------------------------------


@dataclass
class Fields:
    """A parsed input: ``special`` (``epoch``, ``infinity``, ``-infinity``) or the fields
    (``year`` astronomical: 0 is 1 BC), ``offset`` the zone's seconds east of UTC when the
    input names a fixed one, ``zone`` when it names a zone (resolved at the date)."""

    year: int = 0
    month: int = 1
    day: int = 1
    hour: int = 0
    minute: int = 0
    second: int = 0
    micro: int = 0
    offset: int | None = None
    zone: dt.tzinfo | None = None
    special: str | None = None
    has_date: bool = False
    abbrev: str | None = None  # a zone abbreviation whose meaning depends on the date

    def offset_at(self, default: dt.tzinfo) -> int:
        """The zone offset (seconds east) the fields' local time has: the one written,
        else that of the zone named (or ``default``) at that local time, read as
        PostgreSQL does (a time a change skips takes the offset before it, a repeated
        one the later, standard, offset)."""
        if self.offset is not None:
            return self.offset
        zone = self.zone or default
        # a BC time: the zone's offset before its first transition (local mean time);
        # past 9999: that of the same local time in a year 400·k earlier, past the zone's
        # transitions, where its rules repeat every 400 years (as PostgreSQL reads them)
        year = self.year if self.year <= 9999 else 2400 + (self.year - 2400) % 400
        if year < 1:
            ref = dt.datetime(1, 1, 2)
        else:
            ref = dt.datetime(year, self.month, self.day, min(self.hour, 23), self.minute)
        if self.abbrev is not None:
            return _abbreviation_offset(zone, self.abbrev, ref)
        before = ref.replace(tzinfo=zone, fold=0).utcoffset() or dt.timedelta()
        after = ref.replace(tzinfo=zone, fold=1).utcoffset() or dt.timedelta()
        # a repeated hour (after < before): the later, standard, offset; a skipped one
        # (after > before): the offset before the change
        return int(min(before, after).total_seconds())


def _abbreviation_offset(zone: dt.tzinfo, abbrev: str, ref: dt.datetime) -> int:
    """The offset a dynamic abbreviation (``MSK``: Europe/Moscow's) names at ``ref``: the
    zone's where it uses the abbreviation then, else the one it had at the nearest time
    the zone used it (as PostgreSQL reads such an abbreviation).  "Then" is the instant
    the local time names in the zone (``MSK`` at 02:00 on 2011-03-27, a time the change
    to +04 skips, is read at 23:00 UTC: the new +04 ``MSK``)."""
    before = ref.replace(tzinfo=zone, fold=0).utcoffset() or dt.timedelta()
    after = ref.replace(tzinfo=zone, fold=1).utcoffset() or dt.timedelta()
    try:
        at = (ref - min(before, after)).replace(tzinfo=dt.UTC).astimezone(zone)
    except OverflowError:
        at = None
    if at is not None and at.tzname() == abbrev:
        return int((at.utcoffset() or dt.timedelta()).total_seconds())
    for months in range(0, 12 * 300, 3):
        for sign in (1, -1) if months else (1,):
            year, month = divmod(ref.year * 12 + ref.month - 1 + sign * months, 12)
            if not 1 <= year <= 9999:
                continue
            at = ref.replace(year=year, month=month + 1, day=min(ref.day, 28), tzinfo=zone)
            if at.tzname() == abbrev:
                return int((at.utcoffset() or dt.timedelta()).total_seconds())
    return int((ref.replace(tzinfo=zone).utcoffset() or dt.timedelta()).total_seconds())


def one_offset(zone: dt.tzinfo) -> bool:
    """Has the zone one offset through its whole history (``UTC``, ``Etc/GMT+5``, a
    POSIX zone without daylight rules)?  PostgreSQL's pg_get_timezone_offset."""
    key = getattr(zone, "key", None)
    return key is None or _zone_has_one_offset(key)


@lru_cache(maxsize=64)
def _zone_has_one_offset(key: str) -> bool:
    zone = zoneinfo.ZoneInfo(key)
    offsets = {
        dt.datetime(year, month, 1, tzinfo=zone).utcoffset()
        for year in range(1800, 2040)
        for month in (1, 7)
    }
    return len(offsets) == 1


# --- the tokenizer (ParseDateTime) -----------------------------------------------------------


__all__ = [
    "ABBREVIATIONS",
    "Fields",
    "date2j",
    "days_in_month",
    "j2date",
    "one_offset",
    "zone_named",
]
