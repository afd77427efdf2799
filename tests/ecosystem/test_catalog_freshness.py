"""A table another client has just created (committed) is usable at once, even before
the catalog notification reaches this client: SQLAlchemy's pool hands a statement to a
connection that has not read it yet."""

from __future__ import annotations

import adaptive_client
from adaptive_client.keys import MasterKey


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
