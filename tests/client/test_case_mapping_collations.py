"""lower() / upper() of a value given ``COLLATE "C"`` map the ASCII letters alone, as
PostgreSQL maps them under C: the client engine mapped them by the database's collation
(``upper('Ωμέγα' COLLATE "C")`` was 'ΩΜΈΓΑ', a wrong answer).  Under another explicit
collation, and initcap / ILIKE under any, they are refused; concat() of a char(n) prints
its padding, as bpchar's output function does (it was dropped: a wrong answer)."""

from __future__ import annotations

from .pairs import Pair, outcome, script_differences

DDL = [
    "CREATE TABLE t (id int PRIMARY KEY, s text, c char(4))",
    "INSERT INTO t VALUES (1, 'Ωμέγα straße', 'ß'), (2, 'abc Ǆ', 'aBc'), (3, NULL, NULL),"
    " (4, 'İstanbul', '')",
]

SCRIPT = [
    'SELECT id, upper(s COLLATE "C"), lower(s COLLATE "POSIX"), upper(s), lower(s)'
    " FROM t ORDER BY id",
    "SELECT id FROM t WHERE upper(s COLLATE \"C\") LIKE 'ABC%' ORDER BY id",
    "SELECT id, concat(c, '|'), concat_ws(',', c, s), c || '|' FROM t ORDER BY id",
]


def test_case_mapping_under_c(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, SCRIPT) == []


def test_other_collations_refused(collated_pair: Pair) -> None:
    _, enc = collated_pair
    for sql in (
        'SELECT upper(s COLLATE "en-x-icu") FROM t',
        'SELECT initcap(s COLLATE "C") FROM t',
        "SELECT id FROM t WHERE s COLLATE \"C\" ILIKE 'ω%'",
    ):
        assert outcome(enc, sql) == ("error", "0A000"), sql
