"""to_char() of dates and timestamps in the client engine: the patterns it reproduces
(results compared with PostgreSQL's in the read-query corpus) and the formats it leaves
refused rather than formats otherwise."""

from __future__ import annotations

import datetime as dt

import pytest

from adaptive_client.engine.to_char import compile_format, to_char

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
