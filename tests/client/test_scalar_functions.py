"""Scalar functions the client engine now computes as PostgreSQL does (refused before),
judged against PostgreSQL on an ICU and a libc collation: ``initcap`` (ICU's titlecasing,
libc's character by character), ``chr``, ``overlay``, ``quote_literal``, ``gcd``,
``lcm``, ``num_nulls``, ``num_nonnulls``, ``to_hex``, ``quote_nullable``, ``encode``,
``length`` and ``octet_length`` of a bytea (its bytes), ``scale`` and ``min_scale``, and
``split_part`` counting from the end, with their errors' classes."""

from __future__ import annotations

from .pairs import Pair, outcome, script_differences

DDL = [
    "CREATE TABLE g (k int PRIMARY KEY, n int, b bigint, m smallint, s text, c char(6),"
    " d numeric(8,3), y bytea)",
    "INSERT INTO g VALUES"
    " (1, 12, 9000000000, 4, 'hello wORLD o''neil foo-bar ǆemal ßtraße 1st x2y', 'ab cd',"
    " 12.340, '\\x00ff415c0a'),"
    " (2, -2147483648, -9223372036854775808, -6, 'Foo\\bar it''s', NULL, -0.5, ''),"
    " (3, NULL, 0, NULL, NULL, 'x', NULL, NULL), (4, 0, 6, 9, 'ÉCOLE élève', 'q', 0,"
    " '\\x" + "4142434445464748494a4b4c4d4e4f505152535455565758595a" * 3 + "')",
]

ANSWERED = [
    "SELECT k, initcap(s), initcap(c), initcap(s || ' ABC') FROM g ORDER BY k",
    "SELECT k, quote_literal(s), quote_literal(n), quote_literal(c) FROM g ORDER BY k",
    "SELECT k, num_nulls(n, s, c), num_nonnulls(n, s, c), num_nulls(n) FROM g ORDER BY k",
    "SELECT k, gcd(n, 4), lcm(n, 6) FROM g WHERE k <> 2 ORDER BY k",
    "SELECT k, gcd(b, 4), lcm(b, 6), gcd(m, n), lcm(n, m) FROM g WHERE k <> 2 ORDER BY k",
    "SELECT k, gcd(n, b) FROM g ORDER BY k",
    "SELECT k, chr(n + 53), chr(n + 233), chr(n + 128512) FROM g WHERE k IN (1, 4) ORDER BY k",
    "SELECT k, overlay(s placing 'XY' from 3), overlay(s placing '' from 2 for 4),"
    " overlay(s placing 'Z' from 4 for -2), overlay(s placing 'Z' from 100) FROM g ORDER BY k",
    "SELECT initcap(s) AS t, count(*) FROM g GROUP BY initcap(s) ORDER BY t",
    "SELECT k FROM g WHERE initcap(s) LIKE 'Hello%' ORDER BY k",
    "SELECT k, to_hex(n), to_hex(b), quote_nullable(s), quote_nullable(n) FROM g ORDER BY k",
    "SELECT k, encode(y, 'hex'), encode(y, 'base64'), encode(y, 'Escape') FROM g ORDER BY k",
    "SELECT k, scale(d), min_scale(d) FROM g ORDER BY k",
    "SELECT k, length(y), octet_length(y), length(s) FROM g ORDER BY k",
    "SELECT k FROM g WHERE length(y) > 2 AND upper(s) <> '' ORDER BY k",
    "SELECT k, split_part(s, ' ', -1), split_part(s, 'o', -2), split_part(s, '', -1),"
    " split_part(s, ' ', -20), split_part(s, ' ', 2) FROM g ORDER BY k",
]

ERRORS = [
    "SELECT gcd(n, 0) FROM g WHERE k = 2",  # 2^31: 22003
    "SELECT gcd(b, 0) FROM g WHERE k = 2",
    "SELECT lcm(n, 2) FROM g WHERE k = 2",
    "SELECT lcm(n, 2147483647) FROM g WHERE k = 1",
    "SELECT gcd(m, m) FROM g",  # 42725: not unique
    "SELECT gcd(s, 1) FROM g",  # 42883
    "SELECT chr(n) FROM g WHERE k = 4",  # 54000: the null character
    "SELECT chr(n - 13) FROM g WHERE k = 1",  # 22023
    "SELECT chr(n + 1114100) FROM g WHERE k = 1",  # 54000
    "SELECT chr(n + 55284) FROM g WHERE k = 1",  # a surrogate: 54000
    "SELECT chr(b) FROM g WHERE k = 4",  # 42883: chr(bigint)
    "SELECT overlay(s placing 'Z' from n) FROM g WHERE k = 4",  # 22011
    "SELECT overlay(n placing 'Z' from 1) FROM g",  # 42883
    "SELECT initcap(n) FROM g",  # 42883
    "SELECT num_nulls() FROM g",  # 42883
    "SELECT to_hex(m) FROM g",  # 42725: not unique
    "SELECT to_hex(s) FROM g",  # 42883
    "SELECT encode(y, 'base32') FROM g",  # 22023
    "SELECT split_part(s, ' ', 0) FROM g",  # 22023
]


def test_scalar_functions_as_in_postgresql(collated_pair: Pair) -> None:
    assert script_differences(collated_pair, ANSWERED) == []


def test_scalar_function_errors_as_in_postgresql(collated_pair: Pair) -> None:
    differences = script_differences(collated_pair, ERRORS)
    assert differences == []
    plain, _ = collated_pair
    assert all(outcome(plain, s)[0] == "error" for s in ERRORS)


MODE_DDL = [
    "CREATE TABLE md (k int PRIMARY KEY, g int, n int, b bigint, s text, d date, f bool)",
    "INSERT INTO md VALUES (1, 1, 3, 30, 'b', '2024-01-02', true),"
    " (2, 1, 1, 10, 'B', '2024-01-01', false), (3, 1, 3, 30, 'a', '2024-01-02', true),"
    " (4, 1, 1, 10, 'a', '2024-01-01', false), (5, 2, NULL, NULL, NULL, NULL, NULL),"
    " (6, 2, 7, 70, 'é', '2020-01-01', true), (7, 3, 5, 5, 'e', '2021-01-01', false),"
    " (8, 3, 5, 5, 'f', '2021-01-01', true), (9, 1, 2, 20, 'b', '2024-01-03', true)",
]

# mode(): the first, in the ORDER BY's order (text under the collation), of the most
# frequent values
MODES = [
    "SELECT mode() WITHIN GROUP (ORDER BY n), mode() WITHIN GROUP (ORDER BY n DESC) FROM md",
    "SELECT g, mode() WITHIN GROUP (ORDER BY s), mode() WITHIN GROUP (ORDER BY s DESC),"
    " mode() WITHIN GROUP (ORDER BY d), mode() WITHIN GROUP (ORDER BY b) FROM md"
    " GROUP BY g ORDER BY g",
    "SELECT mode() WITHIN GROUP (ORDER BY f), mode() WITHIN GROUP (ORDER BY n + 1) FROM md",
    "SELECT mode() WITHIN GROUP (ORDER BY n) FROM md WHERE k > 100",
    "SELECT g, mode() WITHIN GROUP (ORDER BY n) AS m FROM md GROUP BY g"
    " HAVING mode() WITHIN GROUP (ORDER BY n) > 2 ORDER BY g",
]


def test_mode_as_in_postgresql(collated_pair: Pair) -> None:
    plain, enc = collated_pair
    for conn in (plain, enc):
        for statement in MODE_DDL:
            conn.execute(statement)
    assert script_differences(collated_pair, MODES) == []
