"""ORDER BY a bare name that is a select item's implicit output name
(compile/order_names.py), judged against PostgreSQL on an ICU and a libc collation:
``SELECT j::text FROM t ORDER BY j`` orders by the text (the output is named ``j``),
``ORDER BY count`` names ``count(*)``, two different outputs of the name are 42702.
Before, the name was the input column's (a different order), an unknown column (42703),
or a refusal.  With them: a text min/max inside a cast or ``||``, and a string the
client engine cannot read as the type a CASE resolves to (22P02 as in PostgreSQL), and a
column name of a table read twice (42702)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from adaptive_client.catalog.keys import MasterKey

from .pairs import Pair, plain_and_encrypted, script_differences

DDL = [
    "CREATE TABLE t (k int PRIMARY KEY, j int, s text, f float8)",
    "INSERT INTO t VALUES (1, -2, 'b', 1.5), (2, -4, 'a', -2), (3, 10, 'c', NULL),"
    " (4, 3, 'B', 0), (5, 3, 'x', 7.25), (6, NULL, NULL, 1)",
]

SCRIPT = [
    # the output's name, not the input column: text order
    "SELECT j::text FROM t ORDER BY j",
    "SELECT k, j::text FROM t ORDER BY j DESC, k",
    "SELECT j::text FROM t ORDER BY 1",
    "SELECT DISTINCT j::text FROM t ORDER BY j",
    "SELECT k, CASE WHEN j IS NULL THEN 'none' ELSE j::text END FROM t ORDER BY j, k",
    "SELECT k, coalesce(j::text, 'x') FROM t ORDER BY coalesce, k",
    "SELECT * FROM (SELECT k, j::text FROM t ORDER BY j LIMIT 3) x ORDER BY k",
    # function names
    "SELECT j, count(*) FROM t GROUP BY j ORDER BY count, j",
    "SELECT upper(s) FROM t ORDER BY upper",
    "SELECT max(s) FROM t GROUP BY j ORDER BY max",
    "SELECT max(s)::text FROM t GROUP BY j ORDER BY max",
    # an input column where no output has the name; the same output twice is one
    "SELECT k FROM t ORDER BY j, k",
    "SELECT j, t.j FROM t ORDER BY j",
    "SELECT -j AS j FROM t ORDER BY j",
    # two different outputs of the name
    "SELECT j::text, j FROM t ORDER BY j",
    "SELECT upper(s), lower(s) AS upper FROM t ORDER BY upper",
    # text min/max under a cast or concatenation
    "SELECT max(s) || '!', min(s)::varchar(1), length(max(s)) FROM t",
    # a CASE resolved to integer: the string is not one
    "SELECT CASE WHEN f > 0 THEN 'x' ELSE 1 END FROM t",
    "SELECT CASE WHEN f > 0 THEN j ELSE 'y' END FROM t",
    # a name of one table read twice is ambiguous (42702, was 42703); qualified it is not
    "SELECT count(*) FROM t x, t y WHERE x.k = y.k GROUP BY j ORDER BY j",
    "SELECT count(j) FROM t x, t y WHERE x.k = y.k GROUP BY x.j",
    "SELECT x.j, count(*) FROM t x, t y WHERE x.k = y.k GROUP BY x.j ORDER BY x.j",
    # outputs and inputs of GROUP BY: the input column first
    "SELECT s AS j FROM t GROUP BY j ORDER BY j",
    "SELECT j + 1 AS x, count(*) FROM t GROUP BY x ORDER BY x",
    "SELECT count(*) FROM t GROUP BY k ORDER BY j",
]

LOCALES = {
    "icu": "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'",
    "libc": "LC_COLLATE 'en_US.UTF-8' LC_CTYPE 'en_US.UTF-8'",
}


@pytest.fixture(params=sorted(LOCALES))
def pair(
    request: pytest.FixtureRequest, new_database: Callable[..., str], master_key: MasterKey
) -> Iterator[Pair]:
    locale = LOCALES[request.param]
    with plain_and_encrypted(new_database, master_key, "order_names", {}, DDL, {}, locale) as p:
        yield p


def test_order_by_names_as_in_postgresql(pair: Pair) -> None:
    assert script_differences(pair, SCRIPT) == []
