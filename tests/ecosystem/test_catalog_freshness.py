"""A table another client has just created (committed) is usable at once, even before
the catalog notification reaches this client: SQLAlchemy's pool hands a statement to a
connection that has not read it yet."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

import adaptive_client
from adaptive_client.catalog.keys import MasterKey

from .conftest import sa_url


def test_table_created_by_another_client_is_seen_at_once(
    dsn_pair: tuple[str, str], master_key: MasterKey
) -> None:
    dsn = dsn_pair[1]
    with (
        adaptive_client.connect(dsn, master_key=master_key, autocommit=True) as a,
        adaptive_client.connect(dsn, master_key=master_key) as b,
    ):
        for i in range(15):
            a.execute(f"CREATE TABLE t{i} (id integer PRIMARY KEY, v integer)")
            b.execute(f"INSERT INTO t{i} VALUES (1, %s)", (i,))
            b.commit()
            a.execute(f"ALTER TABLE t{i} ADD COLUMN w integer")
            assert b.execute(f"SELECT v, w FROM t{i}").fetchall() == [(i, None)]
            b.commit()


def test_if_not_exists_and_has_table_see_another_clients_drop(
    dsn_pair: tuple[str, str], key_file: Any
) -> None:
    """CREATE TABLE IF NOT EXISTS and SQLAlchemy's has_table (create_all's checkfirst)
    decide on the committed catalog, right after another client dropped the table."""
    dsn = dsn_pair[1]
    eng = sa.create_engine(sa_url(dsn, "adaptive", master_key_file=str(key_file)))
    md = sa.MetaData()
    t = sa.Table("t", md, sa.Column("id", sa.Integer, primary_key=True, autoincrement=False))
    with (
        adaptive_client.connect(dsn, master_key=key_file, autocommit=True) as a,
        eng.connect() as warm,
    ):
        warm.execute(sa.text("SELECT 1")).all()  # a pooled connection with its catalog read
        warm.rollback()
        for _ in range(15):
            a.execute("CREATE TABLE t (id integer PRIMARY KEY)")
            a.execute("DROP TABLE t")
            md.create_all(warm)  # has_table must say no: the table is created
            warm.commit()
            assert warm.execute(sa.select(sa.func.count()).select_from(t)).scalar() == 0
            warm.commit()
            a.execute(
                "CREATE TABLE IF NOT EXISTS t (id integer PRIMARY KEY)"
            )  # exists: nothing to do
            warm.execute(sa.text("DROP TABLE t"))
            warm.commit()
            a.execute("CREATE TABLE IF NOT EXISTS t (id integer PRIMARY KEY)")  # dropped: created
            assert a.execute("SELECT count(*) FROM t").fetchone() == (0,)
            a.execute("DROP TABLE t")
