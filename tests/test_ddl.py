"""How CREATE TABLE through the client stores the onions: ciphertexts are never offered to
PostgreSQL's compression, and a row of onions stays whole in its page up to 8 kB."""

from __future__ import annotations

from typing import Any

import psycopg

import adaptive_client


def test_onion_rows_are_neither_compressed_nor_moved_out_of_line(
    new_database: Any, master_key: Any
) -> None:
    dsn = new_database("ddl")
    conn = adaptive_client.connect(dsn, master_key=master_key, autocommit=True)
    conn.execute(
        "CREATE TABLE wide (id integer PRIMARY KEY, n integer, "
        + ", ".join(f"s{i} varchar(24)" for i in range(12))
        + ")"
    )
    anon = conn.catalog.table("wide").anon
    rows = [(i, i, *(f"value {i} of column {k:02}.." for k in range(12))) for i in range(200)]
    conn.cursor().executemany("INSERT INTO wide VALUES (" + ", ".join(["%s"] * 14) + ")", rows)
    conn.execute("UPDATE wide SET n = n + 1 WHERE id < 50")  # writes new row versions
    with psycopg.connect(dsn) as raw:
        options, toast = raw.execute(
            "SELECT reloptions, reltoastrelid FROM pg_class WHERE relname = %s", (anon,)
        ).fetchone()  # type: ignore[misc]
        assert "toast_tuple_target=8160" in options
        storage = raw.execute(
            "SELECT DISTINCT attstorage FROM pg_attribute "
            "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
            (anon,),
        ).fetchall()
        assert storage == [("e",)]  # every onion column: external, never compressed
        width = raw.execute(f'SELECT min(pg_column_size(t.*)) FROM "{anon}" AS t').fetchone()[0]  # type: ignore[index]
        assert width > 2032  # past the default toast threshold ...
        assert raw.execute("SELECT pg_relation_size(%s)", (toast,)).fetchone() == (0,)  # ... inline
    assert sorted(conn.execute("SELECT id, n, s11 FROM wide WHERE id < 3").fetchall()) == [
        (0, 1, "value 0 of column 11.."),
        (1, 2, "value 1 of column 11.."),
        (2, 3, "value 2 of column 11.."),
    ]
    conn.close()
