"""Conformance of the client's column types to PostgreSQL, on PostgreSQL 15's own
regression inputs: every literal those tests feed to a type's input function, written
through the client (an encrypted database) and through psycopg (a plain one), stored
and read back alike or refused alike (same SQLSTATE); the stored values then compared
to probes, ordered and grouped alike (``conformance_runner``).

Which regression files (src/test/regress/sql) feed which case file (``cases/<type>.txt``,
written by ``extract.py`` from a PostgreSQL 15 source tree; each file's header names its
sources), and which entries (column types) read it:

| case file   | regression files                                    | entries              |
|-------------|-----------------------------------------------------|----------------------|
| date        | date                                                | date                 |
| time        | time                                                | time, time(2)        |
| timestamp   | timestamp; typed ones of date, timestamptz          | timestamp, -(2)      |
| timestamptz | timestamptz                                         | timestamptz, -(2)    |
| numeric     | numeric; numeric constants of the other files       | numeric, -(18,6)     |
| float4      | float4; typed ones of numeric, int8                 | float4, float8,      |
|             |                                                     | numeric, -(18,6)     |
| float8      | float8, test_setup; typed ones of numeric, float4,  | the same             |
|             | int8, timestamptz                                   |                      |
| int2        | int2, test_setup; typed ones of int4, int8, numeric | int2, int4, int8,    |
| int4        | int4, test_setup; typed ones of int2, int8          | numeric, -(18,6)     |
| int8        | int8, test_setup                                    | (each: all three)    |
| boolean     | boolean                                             | boolean              |
| uuid        | uuid                                                | uuid                 |
| bytea       | strings                                             | bytea                |
| text        | text, strings (all their untyped literals),         | text, varchar(4),    |
|             | test_setup, boolean                                 | char(4) (each: all   |
| varchar     | varchar, test_setup, strings                        | three files), on a C |
| char        | char, test_setup, strings                           | and an ICU database  |
| interval    | interval; interval literals of horology             | interval, interval   |
|             |                                                     | day to second(2)     |
|             |                                                     | (IntervalStyle       |
|             |                                                     | postgres and         |
|             |                                                     | sql_standard)        |
| timetz      | timetz; timetz literals of horology                 | timetz, timetz(2)    |
| json        | json; json literals of jsonb                        | json, jsonb (each:   |
| jsonb       | jsonb                                               | both files)          |
| inet        | inet                                                | inet, cidr (each:    |
| cidr        | inet                                                | both files)          |
| macaddr     | macaddr; macaddr literals of macaddr8               | macaddr, macaddr8    |
| macaddr8    | macaddr8                                            | (each: both files)   |
| bit         | bit (``B'...'`` constants as bit_in reads them)     | bit(8), varbit       |
| money       | money                                               | money                |
| int4_array  | arrays; int[] literals of json, jsonb               | int4[], numeric[]    |
| numeric_... | arrays                                              | numeric[]            |
| text_array  | arrays; text[] literals of json, jsonb              | text[] (C and ICU)   |
| date_array  | none writes one: each date case as a one-element    | date[]               |
|             | array                                               |                      |
| enum        | enum (its enum types and the domain over one)       | enum (rainbow)       |
| domain      | domain (its domains over built-in types)            | domain posint (with  |
|             |                                                     | int4), domain        |
|             |                                                     | varchar(5) (with     |
|             |                                                     | varchar)             |

The files of the later types feed only those types (``extract.py``'s
``LATER_FILES``), so that the earlier case files stay those of their own suites.

Adding a type: map its name in ``extract.py``'s ``TYPE_NAMES`` and add it to
``LATER_TYPES`` (its regression file to ``LATER_FILES``), run the script, and add one
:class:`Entry` below naming the case files and the column type; an enum type or a
domain is created by the entry's ``setup`` statements (on both databases, once).
Date/time entries run under every DateStyle × TimeZone of ``DATETIME_SETTINGS``;
interval entries under IntervalStyle postgres and sql_standard (which reads a leading
``-`` as the sign of every field); text entries on a C and an ICU database.  json has
no equality or order in PostgreSQL: its comparisons, ORDER BY, GROUP BY and DISTINCT
are checked to be refused alike (42883).

``GAPS`` lists every case the client refuses where PostgreSQL stores it, with why;
``QUERY_GAPS`` the checks it refuses where PostgreSQL answers; ``KNOWN_WRONG`` the
wrong answers found and not fixed (outside a type's Encoding and the date/time input
rules).  The test fails on anything unlisted and on a listed item that no longer
happens, so the lists stay exact.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from conformance_runner import Cases, Findings, Pair, open_pair, read_cases, run
from extract import array_of

from adaptive_client.catalog.keys import MasterKey

ICU = "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"
ZONES = ("UTC", "America/New_York", "Asia/Kolkata")
STYLES = ("ISO, MDY", "SQL, DMY")
DATETIME_SETTINGS = tuple(
    (f"SET TimeZone = '{zone}'", f"SET DateStyle = '{style}'")
    for zone, style in itertools.product(ZONES, STYLES)
)
DEFAULT_SETTINGS = (("SET TimeZone = 'UTC'", "SET DateStyle = 'ISO, MDY'"),)


@dataclass(frozen=True)
class Entry:
    """One column type of the suite: its case files, and where it runs."""

    name: str
    sql_type: str
    cases: tuple[str, ...]
    settings: tuple[tuple[str, ...], ...] = DEFAULT_SETTINGS
    locales: tuple[str, ...] = ("C",)
    setup: tuple[str, ...] = ()  # (CREATE TYPE / CREATE DOMAIN of the column's type)


# IntervalStyle sql_standard: a leading '-' applies to every field of the input
INTERVAL_SETTINGS = (*DEFAULT_SETTINGS, ("SET IntervalStyle = 'sql_standard'",))
JSONS = ("json", "jsonb")
# the enum type and the domains of enum.sql and domain.sql
RAINBOW = "CREATE TYPE rainbow AS ENUM ('red', 'orange', 'yellow', 'green', 'blue', 'purple')"
POSINT = "CREATE DOMAIN posint AS int4 CHECK (VALUE > 0)"
DOMAINVARCHAR = "CREATE DOMAIN domainvarchar varchar(5)"
INTEGERS = ("int2", "int4", "int8")
FLOATS = ("float4", "float8")
NUMBERS = ("numeric", *INTEGERS, *FLOATS)
STRINGS = ("text", "varchar", "char")
ENTRIES = (
    Entry("date", "date", ("date",), DATETIME_SETTINGS),
    Entry("time", "time", ("time",), DATETIME_SETTINGS),
    Entry("time(2)", "time(2)", ("time",), DATETIME_SETTINGS),
    Entry("timestamp", "timestamp", ("timestamp",), DATETIME_SETTINGS),
    Entry("timestamp(2)", "timestamp(2)", ("timestamp",), DATETIME_SETTINGS),
    Entry("timestamptz", "timestamptz", ("timestamptz",), DATETIME_SETTINGS),
    Entry("timestamptz(2)", "timestamptz(2)", ("timestamptz",), DATETIME_SETTINGS),
    Entry("numeric", "numeric", NUMBERS),
    Entry("numeric(18,6)", "numeric(18,6)", NUMBERS),
    Entry("float4", "real", FLOATS),
    Entry("float8", "double precision", FLOATS),
    Entry("int2", "smallint", INTEGERS),
    Entry("int4", "integer", INTEGERS),
    Entry("int8", "bigint", INTEGERS),
    Entry("boolean", "boolean", ("boolean",)),
    Entry("uuid", "uuid", ("uuid",)),
    Entry("bytea", "bytea", ("bytea",)),
    Entry("text", "text", STRINGS, locales=("C", "ICU")),
    Entry("varchar(4)", "varchar(4)", STRINGS, locales=("C", "ICU")),
    Entry("char(4)", "char(4)", STRINGS, locales=("C", "ICU")),
    Entry("interval", "interval", ("interval",), INTERVAL_SETTINGS),
    Entry(
        "interval day to second(2)", "interval day to second(2)", ("interval",), INTERVAL_SETTINGS
    ),
    Entry("timetz", "timetz", ("timetz",), DATETIME_SETTINGS),
    Entry("timetz(2)", "timetz(2)", ("timetz",), DATETIME_SETTINGS),
    Entry("json", "json", JSONS),
    Entry("jsonb", "jsonb", JSONS),
    Entry("inet", "inet", ("inet", "cidr")),
    Entry("cidr", "cidr", ("cidr", "inet")),
    Entry("macaddr", "macaddr", ("macaddr", "macaddr8")),
    Entry("macaddr8", "macaddr8", ("macaddr8", "macaddr")),
    Entry("bit(8)", "bit(8)", ("bit",)),
    Entry("varbit", "varbit", ("bit",)),
    Entry("money", "money", ("money",)),
    Entry("int4[]", "integer[]", ("int4_array",)),
    Entry("text[]", "text[]", ("text_array",), locales=("C", "ICU")),
    Entry("numeric[]", "numeric[]", ("numeric_array", "int4_array")),
    Entry("date[]", "date[]", ("date_array",)),
    Entry("enum", "rainbow", ("enum",), setup=(RAINBOW,)),
    Entry("domain posint", "posint", ("domain", "int4"), setup=(POSINT,)),
    Entry("domain varchar(5)", "domainvarchar", ("domain", "varchar"), setup=(DOMAINVARCHAR,)),
)


def _gaps(entry: str, reason: str, *literals: str) -> dict[tuple[str, str], str]:
    return {(entry, lit): reason for lit in literals}


# (entry, literal) -> why the client refuses it where PostgreSQL stores it
GAPS: dict[tuple[str, str], str] = {}
# a date[]'s elements are the date cases, refused as the date column refuses them
GAPS.update({("date[]", array_of(lit)): why for (e, lit), why in GAPS.items() if e == "date"})

_FAR_TIMESTAMP = (
    "the client engine holds timestamps of years 1 to 9999 (and the infinities): a table "
    "holding one outside them is refused in a statement it computes"
)
_SCALED_COMPARAND = (
    "a comparand with more decimals than numeric(18,6) holds (or beyond its range) is "
    "refused in a range"
)
# (entry, check) -> why the client refuses a check PostgreSQL answers (``=``, ``<``, ``>``
# in a WHERE, ``select-list`` comparisons, ``read``, ``order``, ``group``, ...)
QUERY_GAPS: dict[tuple[str, str], str] = {
    ("date", "select-list"): (
        "a select list the client engine computes over a table holding an infinite date or "
        "one outside years 1 to 9999: the engine would show them as years 9999 or 1, or "
        "as text, and the client refuses the result"
    ),
    ("timestamp", "select-list"): _FAR_TIMESTAMP,
    ("timestamp(2)", "select-list"): _FAR_TIMESTAMP,
    ("timestamptz", "select-list"): _FAR_TIMESTAMP,
    ("timestamptz(2)", "select-list"): _FAR_TIMESTAMP,
    ("numeric(18,6)", "select-list"): _SCALED_COMPARAND,
    ("numeric(18,6)", "<"): _SCALED_COMPARAND,
    ("numeric(18,6)", ">"): _SCALED_COMPARAND,
}
# (entry, check) -> a wrong answer of the client found by this suite and not fixed here
# (outside a type's Encoding and the date/time input rules), with why
KNOWN_WRONG: dict[tuple[str, str], str] = {}
# at most this share of the cases may be refusals
MAX_REFUSED = 0.02


@pytest.fixture(scope="module")
def pairs(
    new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[Callable[[str], Pair]]:
    """The pair of databases of a locale, opened when first asked for."""
    opened: dict[str, Pair] = {}
    closers: list[Iterator[Pair]] = []

    def get(locale: str) -> Pair:
        if locale not in opened:
            gen = open_pair(
                new_database, master_key, f"conf_{locale}", ICU if locale == "ICU" else ""
            )
            opened[locale] = next(gen)
            closers.append(gen)
        return opened[locale]

    yield get
    for gen in closers:
        next(gen, None)


def entry_cases(entry: Entry) -> Cases:
    """The literals of the entry's case files (each once, in order), and their probes."""
    files = [read_cases(name) for name in entry.cases]
    literals = tuple(dict.fromkeys(lit for f in files for lit in f.literals))
    return Cases(literals, frozenset().union(*(f.probes for f in files)))


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.name for e in ENTRIES])
def test_conformance(entry: Entry, pairs: Callable[[str], Pair]) -> None:
    cases = entry_cases(entry)
    refused: dict[str, str] = {}
    refused_checks: dict[str, str] = {}
    wrong: list[tuple[str, str]] = []
    for locale in entry.locales:
        for settings in entry.settings:
            found: Findings = run(pairs(locale), entry.sql_type, cases, settings, entry.setup)
            where = f"[{locale}; {'; '.join(settings)}]"
            refused.update(found.refused)
            refused_checks.update(found.refused_checks)
            wrong += [(check, f"{where} {w}") for check, w in found.wrong]
    listed = {lit for (name, lit) in GAPS if name == entry.name}
    unlisted = {lit: err for lit, err in refused.items() if lit not in listed}
    passing = listed - refused.keys()
    known = {check for (name, check) in KNOWN_WRONG if name == entry.name}
    unknown = [w for check, w in wrong if check not in known]
    assert not unknown, f"{len(unknown)} wrong answers:\n" + "\n".join(
        w[:600] for w in unknown[:20]
    )
    fixed = known - {check for check, _ in wrong}
    assert not fixed, f"in KNOWN_WRONG but right now: {sorted(fixed)}"
    assert not unlisted, f"refused, not in GAPS: {unlisted}"
    assert not passing, f"in GAPS but no longer refused: {sorted(passing)}"
    listed_checks = {check for (name, check) in QUERY_GAPS if name == entry.name}
    assert refused_checks.keys() <= listed_checks, f"checks refused: {refused_checks}"
    assert listed_checks <= refused_checks.keys(), (
        f"in QUERY_GAPS but answered now: {sorted(listed_checks - refused_checks.keys())}"
    )


def test_refusals_are_few() -> None:
    """The refusals listed are at most MAX_REFUSED of the cases (the test above keeps
    the list exact), and each names an entry and a literal of its cases."""
    cases = {e.name: set(entry_cases(e).literals) for e in ENTRIES}
    assert all(lit in cases.get(name, ()) for name, lit in GAPS)
    total = sum(map(len, cases.values()))
    assert len(GAPS) <= MAX_REFUSED * total, (len(GAPS), total)
