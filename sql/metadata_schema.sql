-- Metadata of the adaptive encryption client.  Installed by `adaptive-db init`; idempotent.
--
-- What is sealed (AES-256-GCM under a key only clients can derive from the master key):
-- plain table/column names, SQL types, onion configuration, floors, join groups and every
-- layer key.  What is in the clear: the anonymized names and the layer each onion column
-- is at now -- the provider can observe those from the data anyway.

CREATE SCHEMA IF NOT EXISTS adaptive;

-- The root key, wrapped by the master key, and the master key's key-check value.
CREATE TABLE IF NOT EXISTS adaptive.keyring (
    id           smallint PRIMARY KEY CHECK (id = 1),
    format       smallint NOT NULL,
    kcv          bytea NOT NULL,
    wrapped_root bytea NOT NULL,
    rotated_at   timestamptz NOT NULL DEFAULT now()
);

-- One row per encrypted table: its sealed description.  The sealing is bound to
-- (anon_name, version), so a row moved to another table or renumbered fails to open;
-- the catalog head below detects older versions, deletions and restored rows.
CREATE TABLE IF NOT EXISTS adaptive.tables (
    anon_name text PRIMARY KEY,
    version   bigint NOT NULL,
    sealed    bytea NOT NULL
);

-- The catalog head: a sealed list of every adaptive.tables row's current version and
-- every key group, at a generation that each metadata write increments (versions are
-- taken from it).  A deleted row, a restored old version of a row or a restored dropped
-- table no longer matches the head, and clients refuse a generation going backwards.
CREATE TABLE IF NOT EXISTS adaptive.catalog_head (
    id         smallint PRIMARY KEY CHECK (id = 1),
    generation bigint NOT NULL,
    sealed     bytea NOT NULL
);

-- Join groups: the DET/OPE keys shared by the columns of one group, sealed.
CREATE TABLE IF NOT EXISTS adaptive.key_groups (
    anon_name text PRIMARY KEY,
    sealed    bytea NOT NULL
);

-- The actual layer of every onion column (observable by the provider anyway).
CREATE TABLE IF NOT EXISTS adaptive.layers (
    anon_table  text NOT NULL REFERENCES adaptive.tables (anon_name) ON DELETE CASCADE,
    anon_column text NOT NULL,
    onion       text NOT NULL,
    layer       text NOT NULL,
    changed_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (anon_table, anon_column)
);

-- A counter bumped by every DDL statement and every peel: clients compare it with the
-- value their cache was built at.
CREATE TABLE IF NOT EXISTS adaptive.epoch (
    id    smallint PRIMARY KEY CHECK (id = 1),
    value bigint NOT NULL
);
INSERT INTO adaptive.epoch (id, value) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;

-- Audit log: one row per peel (who, when, which anonymized column, from -> to).
CREATE TABLE IF NOT EXISTS adaptive.peel_log (
    id          bigserial PRIMARY KEY,
    at          timestamptz NOT NULL DEFAULT now(),
    anon_table  text NOT NULL,
    anon_column text NOT NULL,
    onion       text NOT NULL,
    from_layer  text NOT NULL,
    to_layer    text NOT NULL,
    mode        text NOT NULL,
    rows        bigint,
    duration_ms double precision,
    by_user     text NOT NULL DEFAULT current_user,
    client_addr inet DEFAULT inet_client_addr(),
    application text DEFAULT current_setting('application_name', true)
);

-- Settings every client must agree on, in the clear (the provider sees their effect anyway):
-- `peel` is the database's default peel mode (server, client or off), which a client uses
-- when neither its `peel` argument nor its configuration names one.  `adaptive-db init`
-- records `client` where the role may not create the PL/Python peel functions (hosted
-- PostgreSQL), else `server`; `adaptive-db init --peel MODE` sets it.
CREATE TABLE IF NOT EXISTS adaptive.settings (
    setting text PRIMARY KEY,
    value   text NOT NULL
);
