"""to_char() of dates and timestamps (and timestamptz) in the client engine: the patterns it reproduces
(results compared with PostgreSQL's in the read-query corpus) and the formats it leaves
refused rather than formats otherwise."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey
from adaptive_client.engine.to_char import compile_format, to_char

from .pairs import Pair, outcome, plain_and_encrypted, script_differences

T = dt.datetime(2024, 3, 5, 14, 7, 9, 123456)


@pytest.mark.parametrize(
    "fmt,expected",
    [  # PostgreSQL 15's output for timestamp '2024-03-05 14:07:09.123456'
        ("YYYY-MM-DD HH24:MI:SS.MS US", "2024-03-05 14:07:09.123 123456"),
        ("HH12 AM pm", "02 PM pm"),
        ("Month|Mon|MON|month|FMMonth", "March    |Mar|MAR|march    |March"),
        ("Day|Dy|DY|FMDay", "Tuesday  |Tue|TUE|Tuesday"),
        ("DDD DD D ID Q WW IW IYYY", "065 05 3 2 1 10 10 2024"),
        ("FMDD FMMM FMHH12", "5 3 2"),
        ('"quoted text"\\Y \\"', 'quoted text\\4 "'),
    ],
)
def test_known_answers(fmt: str, expected: str) -> None:
    assert to_char(T, fmt) == expected


@pytest.mark.parametrize(
    "fmt",
    # (a letter no pattern reads is copied by PostgreSQL; refused here, to be safe)
    ["DDth", "TMMonth", "J", "CC", "Y,YYY", "SSSS", "IDDD", "yyyy", "TZ", "RM", "W", '"open', "x"],
)
def test_formats_not_reproduced_are_refused(fmt: str) -> None:
    assert compile_format(fmt) is None


def test_null_and_empty_format_give_null() -> None:
    assert to_char(None, "YYYY") is None
    assert to_char(T, "") is None


TIMESTAMPTZ_SCRIPT = [
    "CREATE TABLE e (id int PRIMARY KEY, at timestamptz)",
    "INSERT INTO e VALUES (1, '2024-03-10 01:30:00-05'), (2, '2024-11-03 05:30:00.123456+00'),"
    " (3, NULL)",
    "SELECT id, to_char(at, 'YYYY-MM-DD HH24:MI:SS') FROM e ORDER BY id",
    "SET TIME ZONE 'America/New_York'",
    "SELECT id, to_char(at, 'Day, DD Mon YYYY HH12:MI AM US') FROM e ORDER BY id",
    "SET TIME ZONE 'Asia/Kolkata'",
    "SELECT id, to_char(at, 'FMMonth DD, YYYY HH:MI:SS.MS') FROM e ORDER BY id",
    "SELECT to_char(at, 'YYYY') AS y, count(*) FROM e GROUP BY 1 ORDER BY 1",
]


@pytest.fixture
def pair(new_database: Callable[..., str], master_key: MasterKey) -> Iterator[Pair]:
    with plain_and_encrypted(new_database, master_key, "to_char_tz", {}, [], {}) as pair:
        yield pair


def test_timestamptz_formatted_in_the_session_zone(pair: Pair) -> None:
    """to_char of a timestamptz: its local time in the session's zone, as PostgreSQL's
    (was refused); a zone pattern (TZ) stays refused."""
    plain, enc = pair
    assert script_differences(pair, TIMESTAMPTZ_SCRIPT) == []
    sql = "SELECT to_char(at, 'HH24:MI TZ') FROM e"
    assert outcome(plain, sql)[0] == "rows"
    assert outcome(enc, sql) == ("error", "0A000")
