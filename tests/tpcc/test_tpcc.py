"""TPC-C at a tiny scale: load, run, check, for plain, encrypted and adaptive databases."""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

import pytest
from client.test_differential import _rows

from tpcc import driver
from tpcc.check import check
from tpcc.load import TINY, load
from tpcc.rand import NURandConstants, TpccRandom
from tpcc.schema import ORDER_KEYS
from tpcc.transactions import MIX, Terminal


def _database(new_database: Any, config: str) -> str:
    return str(new_database(f"tpcc_{config}"))


@pytest.mark.parametrize("config", driver.CONFIGS)
def test_load_run_check(config: str, new_database: Any, master_key: Any, tmp_path: Any) -> None:
    dsn = _database(new_database, config)
    conn = driver.open_connection(config, dsn, master_key.hex(), "read committed")
    load(conn, 1, TINY)
    conn.close()
    spec = driver.RunSpec(
        config=config,
        dsn=dsn,
        clients=2,
        duration=6,
        warmup=5 if config == "adaptive" else 1,
        warehouses=1,
        master_key=master_key.hex(),
        scale=TINY,
    )
    result = driver.run(spec, log=lambda m: None)
    assert result["tpm"] > 0 and result["tpmC"] > 0
    assert not result["errors"], result["errors"]
    # where the round's clients were: connected, past a first transaction, committing
    (run,) = result["rounds"]
    assert 0 < run["slowest_connect_s"] < 60
    assert 0 < run["last_first_transaction_s"] < spec.warmup + spec.duration + 60
    assert run["clients_without_commits"] == 0
    assert set(result["transactions"]) == {name for name, _ in MIX}
    assert "no.insert_order_line" in result["statements"] and "sl.stock_count" in result["table1"]
    if config == "adaptive":
        assert result["peels"]["warmup"] > 0 and result["peels"]["measured"] == 0, result["peels"]
    else:
        assert result["peels"] == {"warmup": 0, "measured": 0}
    if config != "plain":
        insert = result["table1"]["no.insert_order_line"]
        assert insert["enc"] > 0 and insert["enc:RND"] > 0
        # the per-scheme counts (Table I's columns) add up to the totals
        per_scheme = sum(v for k, v in insert.items() if k.startswith("enc:"))
        assert per_scheme == pytest.approx(insert["enc"] + insert["enc_ope"])
        assert result["transactions"]["new_order"]["crypto_ms_mean"] > 0
    path = driver.write_results(result, tmp_path)
    assert path.exists() and (tmp_path / f"{config}-c2-l0-statements.csv").exists()
    conn = driver.open_connection(config, dsn, master_key.hex(), "repeatable read")
    assert check(conn) == []
    conn.close()


def test_same_inputs_give_same_contents(new_database: Any, master_key: Any) -> None:
    """Fixed seed, one client: plain and adaptive databases end with equal contents."""
    conns = {}
    for config in ("plain", "adaptive"):
        dsn = _database(new_database, f"same_{config}")
        conn = driver.open_connection(config, dsn, master_key.hex(), "read committed")
        load(conn, 1, TINY, seed=3)
        conns[config] = conn
    for conn in conns.values():
        ticks = itertools.count()
        term = Terminal(
            1,
            1,
            TpccRandom(9, NURandConstants(1, 2, 3)),
            TINY,
            clock=lambda ticks=ticks: dt.datetime(2026, 2, 1) + dt.timedelta(seconds=next(ticks)),
        )
        for name in [n for n, _ in MIX] * 4:
            getattr(term, name)(conn)
    for table, key in ORDER_KEYS.items():
        q = f"SELECT * FROM {table} ORDER BY {key}"
        plain = conns["plain"].execute(q).fetchall()
        enc = conns["adaptive"].execute(q).fetchall()
        assert _rows(plain, True) == _rows(enc, True), table
    for conn in conns.values():
        conn.close()


def test_plain_baseline_with_statements_kept(new_database: Any, tmp_path: Any) -> None:
    """``--plain-statements kept``: plain psycopg connections keep their prepared
    statements across rollbacks as the adaptive client does; the run is still correct."""
    from adaptive_client.dbapi.direct import KeptAcrossRollback

    dsn = _database(new_database, "plain")
    conn = driver.open_connection("plain", dsn, None, "read committed", "kept")
    assert isinstance(conn._prepared, KeptAcrossRollback)
    load(conn, 1, TINY)
    conn.close()
    spec = driver.RunSpec(
        config="plain",
        dsn=dsn,
        clients=2,
        duration=4,
        warmup=1,
        warehouses=1,
        scale=TINY,
        plain_statements="kept",
    )
    result = driver.run(spec, log=lambda m: None)
    assert result["tpm"] > 0 and not result["errors"], result["errors"]
    assert result["plain_statements"] == "kept"
    conn = driver.open_connection("plain", dsn, None, "repeatable read")
    assert check(conn) == []
    conn.close()
