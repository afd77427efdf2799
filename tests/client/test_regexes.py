"""``regexp_replace`` and ``SIMILAR TO`` in the client engine (engine/regexes.py), judged against
PostgreSQL on an ICU and a libc collation: constant patterns with no alternation and at
most one quantifier, PostgreSQL's replacement escapes (``\\1``, ``\\&``, ``\\\\``, a
group the pattern lacks), ``.`` matching a newline, the ``g`` flag; the patterns whose
matches the engines tell apart, other flags and the position forms stay refused.
SIMILAR TO's patterns as PostgreSQL translates them (``%``, ``_``, groups, alternation,
repetitions, escapes), and its 2201B for a quantifier of nothing."""

from __future__ import annotations

from .pairs import Pair, outcome, script_differences

DDL = [
    "CREATE TABLE r (k int PRIMARY KEY, s text, n int)",
    "INSERT INTO r VALUES (1, 'hello world', 1), (2, E'a\\nb\\nab aab', 2), (3, NULL, 3),"
    " (4, '00012-34-56', 4), (5, E'a\\\\b\\\\\\\\c&d', 5), (6, 'ÉÉé caféé', 6)",
]

ANSWERED = [
    "SELECT k, regexp_replace(s, 'o', '0'), regexp_replace(s, 'o', '0', 'g') FROM r ORDER BY k",
    "SELECT k, regexp_replace(s, 'a.', 'X', 'g'), regexp_replace(s, '^0+', ''),"
    " regexp_replace(s, '-', '', 'g') FROM r ORDER BY k",
    "SELECT k, regexp_replace(s, '(l+)', '<\\1>', 'g'), regexp_replace(s, 'o', '[\\&]', 'g'),"
    " regexp_replace(s, 'b', '\\\\', 'g'), regexp_replace(s, '(b)', '\\2\\q', 'g')"
    " FROM r ORDER BY k",
    "SELECT k, regexp_replace(s, 'x*', '-', 'g'), regexp_replace(s, 'a*?', '-'),"
    " regexp_replace(s, '[^a-z]', '', 'g'), regexp_replace(s, 'é+', 'E', 'g') FROM r ORDER BY k",
    "SELECT k, regexp_replace(s, 'a{2}', 'Y', 'g'), regexp_replace(s, 'l$', 'L'),"
    " regexp_replace(s, '\\.', '!', 'g') FROM r ORDER BY k",
    "SELECT k FROM r WHERE regexp_replace(s, '-', '', 'g') = '000123456'",
    "SELECT regexp_replace(s, 'o', 'x') AS t, count(*) FROM r GROUP BY 1 ORDER BY 1",
    "SELECT regexp_replace(n, 'a', 'b') FROM r",  # 42883
]

# refused: the engines' matches differ (longest against first), or flags and forms not
# carried over
REFUSED = [
    "SELECT regexp_replace(s, 'a?(ab)?', 'X') FROM r ORDER BY k",
    "SELECT regexp_replace(s, 'a|ab', 'X') FROM r ORDER BY k",
    "SELECT regexp_replace(s, 'a', 'b', 'i') FROM r ORDER BY k",
    "SELECT regexp_replace(s, 'o', 'x', 2) FROM r ORDER BY k",
    "SELECT regexp_replace(s, '\\d', 'x') FROM r ORDER BY k",
]


SIMILAR = [
    "INSERT INTO r VALUES (7, 'a.c', 7), (8, 'é%_', 8), (9, 'aaa', 9), (10, 'ab', 10)",
    "SELECT k, s SIMILAR TO 'a%', s SIMILAR TO 'a_c', s SIMILAR TO '%(b|z)%',"
    " s NOT SIMILAR TO 'a%' FROM r ORDER BY k",
    "SELECT k, s SIMILAR TO 'a.c', s SIMILAR TO '[a-c]+', s SIMILAR TO 'a{2,3}',"
    " s SIMILAR TO '(ab|xy)%', s SIMILAR TO 'é\\%\\_' FROM r ORDER BY k",
    "SELECT k, s SIMILAR TO '%', s SIMILAR TO '', s SIMILAR TO 'a*c', s SIMILAR TO 'a+?',"
    " s SIMILAR TO '(a|b)*c', s SIMILAR TO 'a{2,}', s SIMILAR TO '^a%' FROM r ORDER BY k",
    "SELECT k FROM r WHERE s SIMILAR TO '%c' ORDER BY k",
    "SELECT s SIMILAR TO '*a' FROM r",  # 2201B
    "SELECT s SIMILAR TO 'a|*b' FROM r",
    "SELECT s SIMILAR TO 'a{2' FROM r",
    "SELECT n SIMILAR TO '1' FROM r",  # 42883
]


def test_similar_to_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, SIMILAR) == []


def test_regexp_replace_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, ANSWERED) == []


def test_regexp_replace_refused_where_the_engines_differ(collated_pair: Pair) -> None:
    _, enc = collated_pair
    assert [s for s in REFUSED if outcome(enc, s) != ("error", "0A000")] == []
