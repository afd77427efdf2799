"""Identifiers: the provider's catalogs (pg_class, pg_attribute, pg_constraint, pg_index,
sequences, types, comments) name no table, column, index or constraint by its plain name.
Every stored name is a keyed hash of the plain one, the same for every client of the
database, and unlinkable across databases (each has its own random root key)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import psycopg

import adaptive_client
from adaptive_client.catalog.keys import MasterKey
from adaptive_client.errors import AdaptiveError

CONFIG: dict[str, Any] = {
    "defaults": {"sum": True, "search": True, "hom_bits": 512},
    "tables": {
        "plumage": {"nestid": {"join_group": "nesting"}},
        "aviary": {"nestid": {"join_group": "nesting"}},
    },
}
DDL = [
    "CREATE TABLE aviary (nestid integer PRIMARY KEY, warbler varchar(20) NOT NULL UNIQUE, "
    "wingspan numeric(6,2) DEFAULT 0, sighted date, chirpnote text)",
    "CREATE TABLE plumage (featherid bigint, nestid integer NOT NULL, hue text, "
    "PRIMARY KEY (featherid))",
    "CREATE INDEX plumage_huelookup ON plumage (hue)",
    "CREATE INDEX aviary_spanorder ON aviary (wingspan, sighted)",
]
PLAIN = [
    "aviary",
    "nestid",
    "warbler",
    "wingspan",
    "sighted",
    "chirpnote",
    "plumage",
    "featherid",
    "hue",
    "huelookup",
    "spanorder",
    "nesting",
    "pkey",
    "_key",
    "_idx",
]
# every user-visible name the client creates: t_<hex> tables, c_<hex>_<onion> columns,
# i_<hex>[_n] indexes and key constraints, k_c_<hex>_<onion> layer-tag constraints,
# s_<hex> sequences of serial and identity columns
ANON = re.compile(
    r"^([ts]_[0-9a-f]{16}|c_[0-9a-f]{12}_(eq|ord|sum|search|single)|i_[0-9a-f]{16}(_\d+)?"
    r"|k_c_[0-9a-f]{12}_(eq|ord))$"
)

CATALOG_NAMES = {
    "relations": "SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace",
    "columns": "SELECT a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
    "WHERE c.relnamespace = 'public'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped "
    "AND c.relkind <> 'S'",  # (a sequence's columns are PostgreSQL's: last_value, ...)
    "constraints": "SELECT conname FROM pg_constraint WHERE connamespace = 'public'::regnamespace",
    "indexes": "SELECT i.indexrelid::regclass::text FROM pg_index i JOIN pg_class c "
    "ON c.oid = i.indrelid WHERE c.relnamespace = 'public'::regnamespace",
    "sequences": "SELECT seqrelid::regclass::text FROM pg_sequence",
    "types": "SELECT typname FROM pg_type WHERE typnamespace = 'public'::regnamespace",
}
CATALOG_TEXTS = {
    "index definitions": "SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c "
    "ON c.oid = i.indrelid WHERE c.relnamespace = 'public'::regnamespace",
    "constraint definitions": "SELECT pg_get_constraintdef(oid) FROM pg_constraint "
    "WHERE connamespace = 'public'::regnamespace",
    "comments": "SELECT description FROM pg_description",
    "schemas": "SELECT nspname FROM pg_namespace",
    "column defaults": "SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef",
    "metadata in the clear": "SELECT anon_table || ' ' || anon_column || ' ' || onion "
    "FROM adaptive.layers UNION ALL SELECT anon_name FROM adaptive.tables "
    "UNION ALL SELECT anon_name FROM adaptive.key_groups",
}


def _catalog(dsn: str) -> dict[str, list[str]]:
    with psycopg.connect(dsn) as raw:
        return {
            what: [str(r[0]) for r in raw.execute(q).fetchall() if r[0] is not None]
            for what, q in {**CATALOG_NAMES, **CATALOG_TEXTS}.items()
        }


def _build(dsn: str, key: MasterKey) -> dict[str, str]:
    with adaptive_client.connect(dsn, master_key=key, config=CONFIG, autocommit=True) as conn:
        for stmt in DDL:
            conn.execute(stmt)
        conn.execute("INSERT INTO aviary VALUES (1, 'wren', 15.5, '2024-05-01', 'tweet')")
        conn.execute("INSERT INTO plumage VALUES (7, 1, 'brown')")
        conn.execute("SELECT a.warbler FROM aviary a JOIN plumage p ON a.nestid = p.nestid")
        return {t.name: t.anon for t in conn.catalog.tables.values()}


def test_no_plain_identifier_in_the_catalogs(new_database: Callable[..., str]) -> None:
    dsn = new_database("idents")
    key = MasterKey.generate()
    _build(dsn, key)
    with adaptive_client.connect(dsn, master_key=key, autocommit=True) as conn:
        try:  # a sequence-backed column: either refused, or its sequence anonymized too
            conn.execute("CREATE TABLE roost (perchid serial, perchname text)")
            refused = False
        except AdaptiveError:
            refused = True
        assert refused != conn.catalog.has_table("roost")
    found = _catalog(dsn)
    assert len(found["relations"]) >= 8 and len(found["columns"]) >= 15
    assert len(found["constraints"]) >= 4 and len(found["indexes"]) >= 5
    # (a layer-tag check exists once a peel made it: the join above peeled an Eq onion)
    assert any(n.startswith("k_c_") for n in found["constraints"])
    leaks = [
        (what, name, plain)
        for what, names in found.items()
        for name in names
        for plain in [*PLAIN, "roost", "perch"]
        if plain in name.lower()
    ]
    assert not leaks, leaks
    # names: every relation, column, constraint is anonymized (types: the tables' row types)
    for what in ("relations", "columns", "constraints", "types"):
        odd = [n for n in found[what] if not ANON.match(n) and not n.startswith("_t_")]
        odd = [n for n in odd if not re.match(r"^i_[0-9a-f]{16}(_\d+)?$", n)]
        assert not odd, (what, odd)


def test_names_are_consistent_per_database_and_unlinkable_across(
    new_database: Callable[..., str],
) -> None:
    key = MasterKey.generate()
    one, two = new_database("idents1"), new_database("idents2")
    first = _build(one, key)
    with adaptive_client.connect(one, master_key=key) as again:  # another client, same names
        assert {t.name: t.anon for t in again.catalog.tables.values()} == first
        assert again.catalog.anon_table("aviary") == first["aviary"]
        cols = {
            c.name: [o.anon for o in c.onions.values()]
            for c in again.catalog.table("aviary").columns.values()
        }
    assert len({a for anons in cols.values() for a in anons}) == sum(len(a) for a in cols.values())
    other = _build(two, key)  # same master key, same plain names, another database
    assert set(first) == set(other) and not set(first.values()) & set(other.values())
    a, b = _catalog(one), _catalog(two)
    assert not set(a["columns"]) & set(b["columns"])
