"""Split execution over a schema with foreign keys: joins the server runs, semi-join
filters computed at run time (a leaf table filtered on the client, subqueries correlated
by an equality), each statement compared with plain PostgreSQL -- NULL keys, keys
without partners, anti-joins and NOT IN included."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

import adaptive_client
from adaptive_client.catalog.onions import Onion
from adaptive_client.compile.statements import compile_statement

from .test_differential import _rows

DDL = [
    "CREATE TABLE team (id integer PRIMARY KEY, name varchar(20), city char(8))",
    "CREATE TABLE player (id integer PRIMARY KEY, team_id integer REFERENCES team (id), "
    "nick text, goals integer, rating numeric(6,2))",
]


def _team_rows() -> list[tuple[Any, ...]]:
    names = ["Lions", "tigers", "Bears", None, "lynx", "Wolves", "owls", "Hawks"]
    return [(i, names[i - 1], ["north", "south", None][i % 3]) for i in range(1, 9)]


def _player_rows() -> list[tuple[Any, ...]]:
    rows = []
    for i in range(1, 201):
        team = None if i % 13 == 0 else (i * 7) % 7 + 1 if i % 5 else (i % 6) + 1
        nick = [f"p{i}", f"Star{i}", None, f"green{i % 4}"][i % 4]
        goals = None if i % 17 == 0 else (i * 31) % 29
        rows.append((i, team, nick, goals, None if i % 19 == 0 else (i * 113) % 1000 / 10))
    return rows


class Pair:
    def __init__(self, plain: psycopg.Connection[Any], enc: adaptive_client.Connection):
        self.plain, self.enc = plain, enc


@pytest.fixture(scope="module")
def pair(new_database: Any, master_key: Any) -> Iterator[Pair]:
    plain = psycopg.connect(new_database("splitplain"), autocommit=True)
    enc = adaptive_client.connect(new_database("splitenc"), master_key=master_key, autocommit=True)
    for stmt in DDL:
        plain.execute(stmt)
        enc.execute(stmt)
    for c in (plain, enc):
        c.cursor().executemany("INSERT INTO team VALUES (%s, %s, %s)", _team_rows())
        c.cursor().executemany("INSERT INTO player VALUES (%s, %s, %s, %s, %s)", _player_rows())
    try:
        yield Pair(plain, enc)
    finally:
        plain.close()
        enc.close()


QUERIES = [
    # a leaf filtered on the client: its keys filter the other side on the server
    "SELECT p.id, t.name FROM player p, team t WHERE p.team_id = t.id AND lower(t.name) LIKE '%s%' ORDER BY p.id",
    "SELECT t.city, count(*), sum(p.goals) FROM player p JOIN team t ON p.team_id = t.id WHERE t.name LIKE '_i%' AND p.goals > 3 GROUP BY t.city ORDER BY 1",
    "SELECT p.id FROM player p, team t WHERE p.team_id = t.id AND upper(t.name) = 'NOBODY' ORDER BY 1",
    "SELECT t.id, p.nick FROM team t, player p WHERE t.id = p.team_id AND p.nick LIKE 'green%' AND t.id < 6 ORDER BY 1, 2",
    # correlated subqueries: EXISTS, NOT EXISTS, scalar, IN, NOT IN
    "SELECT t.id FROM team t WHERE EXISTS (SELECT * FROM player p WHERE p.team_id = t.id AND lower(p.nick) LIKE 'star%') ORDER BY 1",
    "SELECT t.id FROM team t WHERE NOT EXISTS (SELECT 1 FROM player p WHERE p.team_id = t.id AND p.goals > 25 AND lower(p.nick) <> 'x') ORDER BY 1",
    "SELECT t.id, (SELECT max(p.goals) FROM player p WHERE p.team_id = t.id AND lower(coalesce(p.nick, '')) <> 'p1') FROM team t ORDER BY 1",
    "SELECT p.id FROM player p WHERE p.goals > (SELECT avg(q.goals) FROM player q WHERE q.team_id = p.team_id) * 1.2 ORDER BY 1",
    "SELECT t.id FROM team t WHERE t.id IN (SELECT p.team_id FROM player p WHERE p.team_id = t.id AND lower(p.nick) LIKE '%1') ORDER BY 1",
    "SELECT t.id FROM team t WHERE 5 NOT IN (SELECT p.goals FROM player p WHERE p.team_id = t.id AND lower(coalesce(p.nick, 'n')) <> 'zz') ORDER BY 1",
    "SELECT p.id FROM player p WHERE p.team_id IS NULL AND NOT EXISTS (SELECT 1 FROM team t WHERE t.id = p.team_id AND lower(t.name) = 'lions') ORDER BY 1",
    # the outer rows' own client-side filter narrows the inner fetch too
    "SELECT t.id FROM team t WHERE lower(t.name) LIKE '%o%' AND NOT EXISTS (SELECT 1 FROM player p WHERE p.team_id = t.id AND p.goals > 27) ORDER BY 1",
    "SELECT t.id, (SELECT count(*) FROM player p WHERE p.team_id = t.id AND p.goals > 10) FROM team t WHERE upper(coalesce(t.name, 'Z')) < 'M' ORDER BY 1",
    # the correlated table is itself joined on the server
    "SELECT t.name, count(*) FROM team t, player p WHERE t.id = p.team_id AND p.rating > (SELECT avg(r.rating) FROM player r WHERE r.team_id = t.id) GROUP BY t.name ORDER BY 1",
]


@pytest.mark.parametrize("sql", QUERIES, ids=[q[:60] for q in QUERIES])
def test_split_equal_to_plain(pair: Pair, sql: str) -> None:
    ordered = "ORDER BY" in sql.upper().rsplit(")", 1)[-1]
    expected = pair.plain.execute(sql).fetchall()
    got = pair.enc.execute(sql).fetchall()
    assert _rows(got, ordered) == _rows(expected, ordered)


def _same_as_plain(pair: Pair, sql: str) -> None:
    """The statement's rows, in order, are plain PostgreSQL's."""
    expected = pair.plain.execute(sql).fetchall()
    assert pair.enc.execute(sql).fetchall() == expected


def _plan(pair: Pair, sql: str) -> Any:
    plan = compile_statement(pair.enc.catalog, pair.enc.parse(sql)[0])
    assert plan.residual is not None
    return plan


def test_leaf_filtered_first_then_semi_join(pair: Pair) -> None:
    """The team rows go first; the player fetch carries the run-time filter."""
    sql = QUERIES[0]
    pair.enc.execute(sql).fetchall()  # peels, if any
    plan = _plan(pair, sql)
    parts = plan.residual.parts
    assert parts == ["the rows of team t", "the rows of player p"]
    assert "ANY(" in plan.residual.fetches[1].sql
    pair.enc.execute(sql).fetchall()
    shipped = pair.enc.stats.last_residual
    assert shipped is not None and shipped.fetches[1][1] < 200  # not every player


def test_correlated_subquery_fetches_matching_rows(pair: Pair) -> None:
    sql = QUERIES[4]
    plan = _plan(pair, sql)
    assert plan.residual.parts[0] == "the rows of team t"
    assert "ANY(" in plan.residual.fetches[1].sql


IN_QUERIES = [
    # uncorrelated IN: its values, computed on the client, filter the outer fetch
    "SELECT p.id FROM player p WHERE p.team_id IN (SELECT t.id FROM team t WHERE lower(t.name) LIKE '%o%') ORDER BY 1",
    "SELECT p.id FROM player p WHERE p.goals IN (SELECT max(q.goals) FROM player q WHERE lower(q.nick) <> 'x' GROUP BY q.team_id) ORDER BY 1",
    "SELECT t.id FROM team t WHERE t.id IN (SELECT p.team_id FROM player p GROUP BY p.team_id HAVING sum(p.goals) > 200) AND lower(t.name) <> 'x' ORDER BY 1",
    "SELECT p.id FROM player p WHERE p.team_id NOT IN (SELECT t.id FROM team t WHERE lower(t.name) LIKE '%o%') ORDER BY 1",
    # a nested subquery correlated with the outermost query: not a semi-join source
    "SELECT t.id FROM team t WHERE t.id IN (SELECT p.team_id FROM player p WHERE p.goals > (SELECT count(*) FROM player r WHERE r.team_id = t.id) AND lower(p.nick) <> 'x') ORDER BY 1",
]


@pytest.mark.parametrize("sql", IN_QUERIES, ids=[q[:60] for q in IN_QUERIES])
def test_in_subquery_equal_to_plain(pair: Pair, sql: str) -> None:
    _same_as_plain(pair, sql)


def test_in_subquery_values_filter_the_outer_fetch(pair: Pair) -> None:
    plan = _plan(pair, IN_QUERIES[0])
    assert plan.residual.parts == ["the rows of team t", "the rows of player p"]
    assert "ANY(" in plan.residual.fetches[1].sql
    plan = _plan(pair, IN_QUERIES[4])  # correlated through its nested subquery
    assert all("ANY(" not in f.sql for f in plan.residual.fetches[:1])


SCALAR_QUERIES = [
    # col <op> (uncorrelated scalar subquery): its value bounds the outer fetch
    "SELECT p.id FROM player p WHERE p.rating > (SELECT avg(q.rating) FROM player q WHERE lower(q.nick) <> 'x') ORDER BY 1",
    "SELECT p.id FROM player p WHERE (SELECT avg(q.rating) FROM player q) <= p.rating ORDER BY 1",
    "SELECT p.id FROM player p WHERE p.goals < (SELECT avg(q.goals) FROM player q WHERE q.team_id = 3) AND lower(p.nick) <> 'x' ORDER BY 1",
    "SELECT p.id FROM player p WHERE p.rating >= (SELECT min(q.rating) FROM player q WHERE q.team_id = 2 AND lower(q.nick) <> 'x') ORDER BY 1",
    "SELECT p.id FROM player p WHERE p.rating <= (SELECT max(q.rating) FROM player q WHERE q.team_id = 2 AND lower(q.nick) <> 'x') ORDER BY 1",
    # NULL (no row): nothing passes; bounds past the column's range
    "SELECT p.id FROM player p WHERE p.goals >= (SELECT max(q.goals) FROM player q WHERE q.team_id = 99) ORDER BY 1",
    "SELECT count(*) FROM player p WHERE p.rating < (SELECT max(q.rating) * 1000 FROM player q WHERE lower(q.nick) <> 'x')",
    "SELECT count(*) FROM player p WHERE p.rating > (SELECT min(q.rating) - 100000 FROM player q WHERE lower(q.nick) <> 'x')",
    "SELECT count(*) FROM player p WHERE p.rating > (SELECT max(q.rating) + 100000 FROM player q WHERE lower(q.nick) <> 'x')",
    "SELECT count(*) FROM player p WHERE p.goals < (SELECT min(q.goals) - 3000000000 FROM player q WHERE lower(q.nick) <> 'x')",
]


@pytest.mark.parametrize("sql", SCALAR_QUERIES, ids=[q[:70] for q in SCALAR_QUERIES])
def test_scalar_subquery_bound_equal_to_plain(pair: Pair, sql: str) -> None:
    _same_as_plain(pair, sql)


def test_scalar_subquery_bounds_the_outer_fetch(pair: Pair) -> None:
    sql = SCALAR_QUERIES[0]
    plan = _plan(pair, sql)
    assert plan.residual.parts[-1] == "the rows of player p"
    assert ">= ANY(" in plan.residual.fetches[-1].sql  # rounded outwards: not strict
    pair.enc.execute(sql).fetchall()
    shipped = pair.enc.stats.last_residual
    above = pair.plain.execute(
        "SELECT count(*) FROM player WHERE rating >= (SELECT avg(rating) FROM player) - 0.01"
    ).fetchone()
    assert shipped is not None and above is not None
    assert shipped.fetches[-1][1] <= above[0] < 150  # only the candidates, not 200 players


def test_scalar_subquery_of_several_rows_is_psycopgs_error(pair: Pair) -> None:
    sql = (
        "SELECT p.id FROM player p WHERE p.rating > "
        "(SELECT q.rating FROM player q WHERE lower(q.nick) LIKE 'star%')"
    )
    with pytest.raises(psycopg.errors.CardinalityViolation):
        pair.plain.execute(sql)
    with pytest.raises(psycopg.errors.CardinalityViolation):
        pair.enc.execute(sql).fetchall()


# EXISTS whose SELECT the server evaluates over ciphertexts: the statement runs whole
# on the server (no relation fetched)
SERVER_EXISTS = [
    "SELECT t.id FROM team t WHERE EXISTS (SELECT 1 FROM player p WHERE p.team_id = t.id AND p.goals > 20) ORDER BY 1",
    "SELECT t.id FROM team t WHERE NOT EXISTS (SELECT * FROM player p WHERE p.team_id = t.id AND p.goals > 25) ORDER BY 1",
    "SELECT count(*) FROM team WHERE EXISTS (SELECT 1 FROM player WHERE goals > 27)",
    "SELECT count(*) FROM team WHERE NOT EXISTS (SELECT 1 FROM player WHERE goals > 2700)",
    # an unqualified name is the subquery's own first (player.id, not team.id)
    "SELECT t.id FROM team t WHERE EXISTS (SELECT 1 FROM player WHERE team_id = t.id AND id > 150) ORDER BY 1",
    "SELECT id FROM team WHERE EXISTS (SELECT 1 FROM player WHERE team_id = team.id AND goals < 3) ORDER BY 1",
    # Q21's shape: the same table again, <> and a range between the two
    "SELECT p.id FROM player p WHERE EXISTS (SELECT 1 FROM player q WHERE q.team_id = p.team_id AND q.id <> p.id AND q.goals > p.goals) AND NOT EXISTS (SELECT 1 FROM player r WHERE r.team_id = p.team_id AND r.id <> p.id AND r.rating > 99) ORDER BY 1",
    "SELECT t.id FROM team t WHERE t.id = 1 OR NOT EXISTS (SELECT 1 FROM player p WHERE p.team_id = t.id AND p.goals > 25) ORDER BY 1",
    "SELECT t.id FROM team t WHERE EXISTS (SELECT 1 FROM player p JOIN team u ON u.id = p.team_id WHERE p.team_id = t.id AND u.city = 'north') ORDER BY 1",
    "SELECT count(*) FROM player p WHERE NOT EXISTS (SELECT 1 FROM team t WHERE t.id = p.team_id)",
    "SELECT p.team_id, count(*) FROM player p WHERE EXISTS (SELECT 1 FROM team t WHERE t.id = p.team_id AND t.city IS NULL) GROUP BY p.team_id ORDER BY 1",
]
# EXISTS the server cannot evaluate exactly: split as before, still PostgreSQL's answer
CLIENT_EXISTS = [
    "SELECT t.id FROM team t WHERE EXISTS (SELECT 1 FROM player p WHERE p.team_id = t.id AND p.nick > 'green') ORDER BY 1",
    "SELECT t.id FROM team t WHERE NOT EXISTS (SELECT 1 FROM player p WHERE p.team_id = t.id AND p.nick LIKE '%ar1%') ORDER BY 1",
    "SELECT t.id FROM team t WHERE EXISTS (SELECT count(*) FROM player p WHERE p.team_id = t.id AND p.goals > 100) ORDER BY 1",
    "SELECT t.id FROM team t WHERE EXISTS (SELECT 1 FROM player p WHERE p.team_id = t.id LIMIT 0) ORDER BY 1",
    "SELECT t.id FROM team t WHERE EXISTS (SELECT 1 FROM player p WHERE p.team_id = t.id AND EXISTS (SELECT 1 FROM team u WHERE u.id = p.id)) ORDER BY 1",
]


# a split statement: the server SELECT of the tables an EXISTS correlates with applies it
# (the subquery's own tables are never fetched), or the aggregating one does
SPLIT_EXISTS = [
    "SELECT lower(t.name) FROM team t WHERE EXISTS (SELECT 1 FROM player q WHERE q.team_id = t.id AND q.goals > 20) ORDER BY 1",
    "SELECT upper(p.nick), p.id FROM player p WHERE NOT EXISTS (SELECT 1 FROM player q WHERE q.team_id = p.team_id AND q.id <> p.id AND q.goals > p.goals) ORDER BY 2",
    "SELECT t.city, count(*) FROM team t WHERE EXISTS (SELECT 1 FROM player q WHERE q.team_id = t.id AND q.goals > 20) GROUP BY t.city ORDER BY 1",
    "SELECT lower(t.name), count(*) FROM team t, player p WHERE p.team_id = t.id AND EXISTS (SELECT * FROM player q WHERE q.team_id = p.team_id AND q.id <> p.id) GROUP BY 1 ORDER BY 1",
]
# not a conjunct, or not evaluable exactly: the subquery's tables are fetched as before
SPLIT_EXISTS_FETCHED = [
    "SELECT lower(t.name) FROM team t WHERE t.id = 3 OR EXISTS (SELECT 1 FROM player q WHERE q.team_id = t.id AND q.goals > 20) ORDER BY 1",
    "SELECT lower(t.name) FROM team t WHERE EXISTS (SELECT 1 FROM player q WHERE q.team_id = t.id AND lower(q.nick) = 'p1') ORDER BY 1",
    # correlated with two tables of the FROM
    "SELECT lower(t.name), p.id FROM team t JOIN player p ON p.team_id = t.id WHERE NOT EXISTS (SELECT 1 FROM player q WHERE q.team_id = t.id AND q.goals > p.goals) ORDER BY 1, 2",
]


def test_exists_in_writes_as_postgresql(pair: Pair) -> None:
    """UPDATE and DELETE with a correlated EXISTS: the server evaluates it."""
    statements = [
        "UPDATE player SET goals = 0 WHERE goals > 20 AND EXISTS "
        "(SELECT 1 FROM team t WHERE t.id = player.team_id AND t.city IS NOT NULL)",
        "DELETE FROM player WHERE goals = 0 AND NOT EXISTS "
        "(SELECT 1 FROM team t WHERE t.id = player.team_id AND t.city = 'south')",
    ]
    pair.plain.execute("BEGIN")
    pair.enc.execute("BEGIN")
    try:
        for sql in statements:
            assert pair.enc.execute(sql).rowcount == pair.plain.execute(sql).rowcount > 0
        _same_as_plain(pair, "SELECT id, goals FROM player ORDER BY id")
    finally:
        pair.plain.execute("ROLLBACK")
        pair.enc.execute("ROLLBACK")


@pytest.mark.parametrize("sql", SPLIT_EXISTS, ids=[q[:70] for q in SPLIT_EXISTS])
def test_exists_applied_by_the_server_in_a_split_statement(pair: Pair, sql: str) -> None:
    _same_as_plain(pair, sql)
    plan = compile_statement(pair.enc.catalog, pair.enc.parse(sql)[0])
    parts = plan.residual.parts if plan.residual is not None else []  # (or whole)
    assert not any("player q" in part for part in parts), parts


@pytest.mark.parametrize("sql", SPLIT_EXISTS_FETCHED, ids=[q[:70] for q in SPLIT_EXISTS_FETCHED])
def test_exists_the_server_cannot_apply_is_fetched(pair: Pair, sql: str) -> None:
    _same_as_plain(pair, sql)
    parts = _plan(pair, sql).residual.parts
    assert any("player q" in part for part in parts), parts


@pytest.mark.parametrize("sql", SERVER_EXISTS, ids=[q[:70] for q in SERVER_EXISTS])
def test_exists_runs_on_the_server(pair: Pair, sql: str) -> None:
    _same_as_plain(pair, sql)
    plan = compile_statement(pair.enc.catalog, pair.enc.parse(sql)[0])
    assert plan.residual is None and "EXISTS" in (plan.sql or "")


@pytest.mark.parametrize("sql", CLIENT_EXISTS, ids=[q[:70] for q in CLIENT_EXISTS])
def test_exists_the_server_cannot_evaluate_is_split(pair: Pair, sql: str) -> None:
    _same_as_plain(pair, sql)


OUTER_ON = [
    # conjuncts of a LEFT JOIN's ON clause that read only its nullable side filter that
    # side's fetch; a WHERE conjunct on it must not (it sees the NULL-extended rows)
    "SELECT t.id, count(p.id) FROM team t LEFT JOIN player p ON p.team_id = t.id AND p.goals > 10 GROUP BY t.id ORDER BY 1",
    "SELECT t.id, count(p.id) FROM team t LEFT JOIN player p ON p.team_id = t.id AND p.nick NOT LIKE '%1%' GROUP BY t.id ORDER BY 1",
    "SELECT t.id, p.id FROM team t LEFT JOIN player p ON p.team_id = t.id AND p.goals > 25 WHERE p.id IS NULL ORDER BY 1, 2",
    "SELECT t.id, p.id FROM team t LEFT JOIN player p ON p.team_id = t.id AND t.city = 'north' AND p.goals < 3 ORDER BY 1, 2",
    "SELECT t.id, p.id FROM team t LEFT JOIN player p ON p.team_id = t.id AND p.goals IS NULL ORDER BY 1, 2",
    "SELECT p.id, t.id FROM player p LEFT JOIN team t ON t.id = p.team_id AND t.name LIKE '%o%' WHERE p.goals > 20 ORDER BY 1",
]


@pytest.mark.parametrize("sql", OUTER_ON, ids=[q[:70] for q in OUTER_ON])
def test_left_join_on_filters_equal_to_plain(pair: Pair, sql: str) -> None:
    expected = pair.plain.execute(sql).fetchall()
    got = pair.enc.execute(sql).fetchall()
    assert _rows(got, True) == _rows(expected, True)


def test_left_join_on_filter_runs_on_the_server(pair: Pair) -> None:
    sql = OUTER_ON[0]
    pair.enc.execute(sql).fetchall()
    shipped = pair.enc.stats.last_residual
    kept = pair.plain.execute("SELECT count(*) FROM player WHERE goals > 10").fetchone()
    assert shipped is not None and kept is not None
    rows = {part: n for part, n, *_ in shipped.fetches}
    assert rows["the rows of team t"] == 8
    assert 0 < rows["the rows of player p"] <= kept[0] < 200


SET_QUERIES = [
    # the inner tables matter only as a set: their fetch is SELECT DISTINCT
    # (under OR: not a conjunct the server SELECT of team could apply alone)
    "SELECT t.id FROM team t WHERE (EXISTS (SELECT 1 FROM player p WHERE p.team_id = t.id AND p.goals > 3) OR t.id < 0) AND lower(coalesce(t.name, '')) <> 'x' ORDER BY 1",
    "SELECT t.id FROM team t WHERE NOT EXISTS (SELECT * FROM player p WHERE p.team_id = t.id AND p.goals > 20) AND lower(coalesce(t.name, '')) <> 'x' ORDER BY 1",
    "SELECT p.id FROM player p WHERE p.team_id IN (SELECT q.team_id FROM player q WHERE q.goals > 25 AND lower(coalesce(q.nick, '')) <> 'x') ORDER BY 1",
    "SELECT t.id FROM team t WHERE t.id NOT IN (SELECT p.team_id FROM player p WHERE p.goals < 5 AND lower(coalesce(p.nick, '')) <> 'x') ORDER BY 1",
    # counted rows: no DISTINCT
    "SELECT t.id, (SELECT count(*) FROM player p WHERE p.team_id = t.id) FROM team t WHERE lower(coalesce(t.name, '')) <> 'x' ORDER BY 1",
]


@pytest.mark.parametrize("sql", SET_QUERIES, ids=[q[:60] for q in SET_QUERIES])
def test_subquery_read_as_a_set_equal_to_plain(pair: Pair, sql: str) -> None:
    _same_as_plain(pair, sql)


def test_exists_fetches_each_key_once(pair: Pair) -> None:
    sql = SET_QUERIES[0]
    pair.enc.execute(sql).fetchall()  # peels, if any
    plan = _plan(pair, sql)
    inner = plan.residual.fetches[1].sql
    assert plan.residual.parts[1] == "the rows of player p"
    assert inner.startswith("SELECT DISTINCT"), inner
    pair.enc.execute(sql).fetchall()
    shipped = pair.enc.stats.last_residual
    (keys,) = pair.plain.execute(
        "SELECT count(DISTINCT team_id) FROM player WHERE goals > 3"
    ).fetchone()
    assert shipped is not None and shipped.fetches[1][1] == keys
    # a count reads every row: its fetch keeps them
    counted = _plan(pair, SET_QUERIES[4])
    assert not any(f.sql.startswith("SELECT DISTINCT") for f in counted.residual.fetches)


def test_conjuncts_applied_by_the_server_are_not_shipped(pair: Pair) -> None:
    """``p.goals > 3`` runs on the server over the Ord onion, exactly: the client's
    statement no longer checks it, so the goals column is neither shipped nor
    decrypted; ``lower(p.nick)`` only the client can evaluate, so nick is shipped."""
    sql = (
        "SELECT p.id FROM player p WHERE p.goals > 3 AND lower(coalesce(p.nick, '')) "
        "LIKE 'star%' ORDER BY 1"
    )
    _same_as_plain(pair, sql)
    plan = _plan(pair, sql)
    player = pair.enc.catalog.table("player")
    goals = {oc.anon for oc in player.column("goals").onions.values()}
    nick = {oc.anon for oc in player.column("nick").onions.values()}
    (fetch,) = plan.residual.fetches
    select_list = fetch.sql.split(" FROM ")[0]
    assert not any(anon in select_list for anon in goals), fetch.sql
    assert any(anon in fetch.sql.split(" WHERE ")[1] for anon in goals), fetch.sql
    assert any(anon in select_list for anon in nick), fetch.sql


PREFIX_QUERIES = [
    "SELECT p.id FROM player p WHERE p.nick LIKE 'Star1%' ORDER BY 1",
    "SELECT p.id FROM player p WHERE p.nick LIKE 'green_' ORDER BY 1",
    "SELECT p.id FROM player p WHERE p.nick LIKE 'Sta%1%' ORDER BY 1",
    "SELECT p.id FROM player p WHERE p.nick NOT LIKE 'Star1%' ORDER BY 1",
    "SELECT t.id FROM team t WHERE t.name LIKE 'L%' OR t.name LIKE 'o%' ORDER BY 1",
    "SELECT p.id, t.name FROM player p JOIN team t ON p.team_id = t.id "
    "WHERE t.name LIKE 'W%' AND p.nick LIKE 'p1%' ORDER BY 1",
]


@pytest.mark.parametrize("sql", PREFIX_QUERIES, ids=[q[:60] for q in PREFIX_QUERIES])
def test_like_prefix_equal_to_plain(pair: Pair, sql: str) -> None:
    _same_as_plain(pair, sql)


def test_like_prefix_is_a_server_range(pair: Pair) -> None:
    """``LIKE 'Star1%'``: the server keeps the values in ['Star1', 'Star2') over the Ord
    onion, the client checks the LIKE exactly; ``NOT LIKE`` has no such range."""
    sql = PREFIX_QUERIES[0]
    pair.enc.execute(sql).fetchall()
    plan = _plan(pair, sql)
    player = pair.enc.catalog.table("player")
    ord_anon = player.column("nick").onions[Onion.ORD].anon
    (fetch,) = plan.residual.fetches
    assert ord_anon in fetch.sql.split(" WHERE ")[1], fetch.sql
    pair.enc.execute(sql).fetchall()
    shipped = pair.enc.stats.last_residual
    (candidates,) = pair.plain.execute(
        "SELECT count(*) FROM player WHERE nick >= 'Star1' AND nick < 'Star2'"
    ).fetchone()
    assert shipped is not None and shipped.fetches[0][1] <= candidates < 200
    negated = _plan(pair, PREFIX_QUERIES[3])
    assert " WHERE " not in negated.residual.fetches[0].sql


def test_client_order_keeps_every_key_after_a_computed_one(pair: Pair) -> None:
    """``ORDER BY goals % 2, id``: the first key only the client computes, so it sorts by
    both -- ties of the first broken by the second, not left in the server's row order
    (which an UPDATE has moved away from id order)."""
    for c in (pair.plain, pair.enc):
        c.execute("UPDATE player SET goals = goals WHERE id <= 100")
    for sql in [
        "SELECT id, goals FROM player ORDER BY (goals % 2), id",
        "SELECT id, goals FROM player ORDER BY (goals % 2) DESC, nick, id DESC",
        "SELECT id FROM player ORDER BY abs(goals - 10) NULLS FIRST, rating, id",
    ]:
        expected = pair.plain.execute(sql).fetchall()
        assert pair.enc.execute(sql).fetchall() == expected, sql


FULL_JOINS = [
    ("SELECT lower(t.name), p.id FROM team t FULL JOIN player p ON t.id = p.team_id OR p.goals = 1 ORDER BY 2, 1", True),
    ("SELECT lower(t.name), p.id FROM team t FULL JOIN player p ON p.goals > 3 ORDER BY 2, 1", True),
    ("SELECT lower(t.name), p.id FROM team t FULL JOIN player p ON (t.id = p.team_id AND p.goals > 3) OR p.goals = 1 ORDER BY 2, 1", True),
    ("SELECT lower(t.name), p.id FROM team t FULL JOIN player p ON t.id = p.team_id AND p.goals > 3 ORDER BY 2, 1", False),
    ("SELECT lower(t.name), p.id FROM team t FULL JOIN player p ON t.id + 0 = p.team_id AND t.id < p.goals ORDER BY 2, 1", False),
    ("SELECT lower(t.name), p.id FROM team t FULL JOIN player p ON false ORDER BY 2, 1", False),
]  # fmt: skip


@pytest.mark.parametrize(("sql", "refused"), FULL_JOINS, ids=[q[:70] for q, _ in FULL_JOINS])
def test_full_join_conditions_as_postgresql(pair: Pair, sql: str, refused: bool) -> None:
    if not refused:
        _same_as_plain(pair, sql)
        return
    with pytest.raises(psycopg.errors.FeatureNotSupported):
        pair.plain.execute(sql)
    with pytest.raises(psycopg.errors.FeatureNotSupported):
        pair.enc.execute(sql).fetchall()
