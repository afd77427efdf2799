"""The Ord onion's order layer, OPE or ORE: chosen per column, per configuration or by
ADAPTIVE_ORD_LAYER, recorded in the catalog, shown by `adaptive-db layers`, and served
by the server alike (ranges, ORDER BY, MIN/MAX, BETWEEN, a range index, GROUP BY with
MIN/MAX per group) -- with the same results as plain PostgreSQL."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from psycopg import sql

import adaptive_client
from adaptive_client.admin import controls as admin
from adaptive_client.catalog import ord_layers
from adaptive_client.catalog.config import load_config
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.catalog.onions import Onion
from adaptive_client.errors import ConfigError

ROWS = [(i, f"name{(i * 37) % 101:03d}", (i * 7919) % 1000 - 500, f"2024-01-{1 + i % 28:02d}")
        for i in range(1, 121)]  # fmt: skip
QUERIES = [
    "SELECT id FROM t WHERE v > 100 ORDER BY id",
    "SELECT id FROM t WHERE v BETWEEN -50 AND 50 ORDER BY id",
    "SELECT id, v FROM t ORDER BY v DESC, id LIMIT 7",
    "SELECT min(v), max(v), min(d), max(d) FROM t",
    "SELECT name FROM t WHERE name >= 'name050' AND name < 'name060' ORDER BY name, id",
    "SELECT id FROM t ORDER BY name, id LIMIT 5",
    "SELECT id % 5, max(v), min(d) FROM t GROUP BY id % 5 ORDER BY 1",
    "SELECT id FROM t WHERE d < '2024-01-05' ORDER BY d, id",
]


def test_configuration_choices(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = load_config(
        {"defaults": {"ord_layer": "ore"}, "tables": {"t": {"v": {"ord_layer": "OPE"}}}}
    )
    assert cfg.ord_layer == "ORE"
    assert cfg.ord_layer_of("t", "v") == "OPE" and cfg.ord_layer_of("t", "w") == "ORE"
    monkeypatch.setenv(ord_layers.ENV, "ORE")
    assert load_config(None).ord_layer_of("t", "v") == "ORE"
    monkeypatch.delenv(ord_layers.ENV)
    assert load_config(None).ord_layer_of("t", "v") == "OPE"
    with pytest.raises(ConfigError):
        load_config({"defaults": {"ord_layer": "XYZ"}})
    with pytest.raises(ConfigError):
        load_config({"tables": {"t": {"v": {"ord_layer": 3}}}})


@pytest.mark.parametrize("layer", ["OPE", "ORE"])
def test_ord_onion_at_each_layer_answers_as_plain(
    new_database: Any, master_key: MasterKey, layer: str
) -> None:
    plain_dsn, enc_dsn = new_database("ordplain"), new_database("ordenc")
    ddl = "CREATE TABLE t (id integer PRIMARY KEY, name text, v integer, d date)"
    config = {"defaults": {"ord_layer": layer}, "tables": {"t": {"v": {"ord_layer": layer}}}}
    with (
        psycopg.connect(plain_dsn, autocommit=True) as plain,
        adaptive_client.connect(
            enc_dsn, master_key=master_key, config=config, autocommit=True
        ) as enc,
    ):
        for conn in (plain, enc):
            conn.execute(ddl)
            conn.cursor().executemany("INSERT INTO t VALUES (%s, %s, %s, %s)", ROWS)
        for q in QUERIES:
            assert enc.execute(q).fetchall() == plain.execute(q).fetchall(), q
        enc.execute("CREATE INDEX t_v ON t (v)")
        for q in QUERIES:
            assert enc.execute(q).fetchall() == plain.execute(q).fetchall(), q
        meta = enc.catalog.table("t")
        ords = {c: meta.column(c).onions[Onion.ORD] for c in ("name", "v", "d")}
        assert {oc.ord_scheme for oc in ords.values()} == {layer}
        assert {oc.layer for oc in ords.values()} == {"OPE"}  # the order layer, peeled
        with psycopg.connect(enc_dsn) as raw:
            types = dict(
                raw.execute(
                    "SELECT column_name, format_type(atttypid, atttypmod) FROM "
                    "information_schema.columns JOIN pg_attribute ON attname = column_name "
                    "AND attrelid = %s::regclass WHERE table_name = %s",
                    (meta.anon, meta.anon),
                ).fetchall()
            )
            stored = raw.execute(
                sql.SQL("SELECT {}::bytea FROM {} LIMIT 1").format(
                    sql.Identifier(ords["v"].anon), sql.Identifier(meta.anon)
                )
            ).fetchone()
        assert types[ords["v"].anon] == ("adaptive.ore" if layer == "ORE" else "bytea")
        assert stored is not None and bytes(stored[0])[0] == (4 if layer == "ORE" else 3)
    with psycopg.connect(enc_dsn) as raw:
        shown = {(r.column, r.onion): r for r in admin.layers_report(raw, master_key)}
    assert shown["v", "Ord"].layer == layer
    learns = shown["name", "Ord"].provider_learns
    if layer == "ORE":
        assert learns == "order of an 8-byte prefix, and its first differing byte"
    else:
        assert "readable in the stored bytes" in learns


@pytest.mark.parametrize("on_demand", [[], ["Ord"]], ids=["stored", "on-first-use"])
def test_ore_without_its_type_is_refused_at_create_table(
    new_database: Any, master_key: Any, on_demand: list[str]
) -> None:
    """A database initialised without a superuser has no ``adaptive.ore``: a table whose
    Ord onion would be at ORE is refused when it is made (a ConfigError naming the way
    out), nothing created -- not at its first ORDER BY, nor as a server error."""
    dsn = new_database("orenotype")
    with psycopg.connect(dsn, autocommit=True) as raw:
        raw.execute("DROP TYPE adaptive.ore CASCADE")
    at_ope = {"ord_layer": "OPE"}
    config = {
        "defaults": {"ord_layer": "ORE", "on_demand": on_demand},
        "tables": {"u": {"id": at_ope, "v": at_ope}},
    }
    with adaptive_client.connect(dsn, master_key=master_key, config=config) as conn:
        with pytest.raises(ConfigError, match=r"adaptive\.ore"):
            conn.execute("CREATE TABLE t (id integer PRIMARY KEY, v integer)")
        conn.rollback()
        assert "t" not in conn.catalog.tables
        conn.execute("CREATE TABLE u (id integer PRIMARY KEY, v text)")  # (at OPE)
    with psycopg.connect(dsn) as raw:
        tables = raw.execute("SELECT count(*) FROM adaptive.tables").fetchone()
        assert tables is not None and tables[0] == 1  # (u, committed as the block ended)
