"""Per-connection state stays with its connection, whatever thread uses it: the
statistics each connection reports count its own statements and nothing else's."""

from __future__ import annotations

import threading

import adaptive_client

from .conftest import Pair, Watchdog


def test_each_connection_counts_its_own_work(pair: Pair, watchdog: Watchdog) -> None:
    setup = adaptive_client.connect(pair.enc, master_key=pair.key, autocommit=True)
    setup.execute("CREATE TABLE t (id integer PRIMARY KEY, x integer)")
    setup.execute("INSERT INTO t VALUES (1, 10), (2, 20)")
    conns = [
        adaptive_client.connect(pair.enc, master_key=pair.key, autocommit=True) for _ in range(3)
    ]
    counts = [40, 70, 100]
    go = threading.Barrier(len(conns))

    def work(i: int) -> None:
        go.wait()
        for n in range(counts[i]):
            conns[i].execute("SELECT x FROM t WHERE id = %s", (1 + n % 2,)).fetchall()

    for i in range(len(conns)):
        watchdog.start(work, i, name=f"connection {i}")
    watchdog.join_all(120)
    for conn, n in zip(conns, counts, strict=True):
        assert conn.stats.statements["SELECT"] == n
        assert sum(conn.stats.decryptions.values()) >= n  # (its own results decrypted)
    # a connection handed to another thread keeps counting into its own statistics
    moved = threading.Thread(target=lambda: conns[0].execute("SELECT x FROM t WHERE id = 1"))
    moved.start()
    moved.join(60)
    assert conns[0].stats.statements["SELECT"] == counts[0] + 1
    assert conns[1].stats.statements["SELECT"] == counts[1]
    assert setup.stats.statements["SELECT"] == 0
    for conn in (*conns, setup):
        conn.close()


def test_a_fetch_reads_in_its_own_connections_session(pair: Pair) -> None:
    """A server-side cursor's rows are decrypted when fetched, in the session settings of
    the cursor's connection -- not of the connection whose statement ran last."""
    kolkata = adaptive_client.connect(pair.enc, master_key=pair.key)
    utc = adaptive_client.connect(pair.enc, master_key=pair.key)
    kolkata.execute("CREATE TABLE ev (id integer PRIMARY KEY, at timestamptz)")
    kolkata.execute("INSERT INTO ev VALUES (1, '2024-05-01 12:00:00+00')")
    kolkata.commit()
    kolkata.execute("SET TimeZone = 'Asia/Kolkata'")
    utc.execute("SET TimeZone = 'UTC'")
    cur = kolkata.cursor("events")
    cur.execute("SELECT at FROM ev")
    utc.execute("SELECT at FROM ev").fetchall()  # the other session ran last
    (at,) = cur.fetchone() or (None,)
    assert at is not None and at.utcoffset() is not None
    assert at.utcoffset().total_seconds() == 5.5 * 3600
    cur.close()
    for conn in (kolkata, utc):
        conn.close()
