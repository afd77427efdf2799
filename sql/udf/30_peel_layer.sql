-- Peel the outer RND layer of onion columns of one table, in place, inside the database:
-- adaptive.peel_layers for several columns at once (one UPDATE: the table is rewritten
-- once, however many onions a statement needs peeled), adaptive.peel_layer for one.
--
-- Called by a client (in its own transaction) with only those layers' keys.  Everything
-- happens in the caller's transaction, so the peel is atomic: killed at any point, the
-- column is wholly at the old layer or wholly at the new one, and adaptive.layers and
-- adaptive.peel_log match it (DDL is transactional in PostgreSQL: the dropped and rebuilt
-- indexes of step 3 come back with a rollback too).
--
--  1. lock each column's adaptive.layers row; a column another client peeled meanwhile
--     is left out (none left: return -1, nothing to do);
--  2. lock the table (ACCESS EXCLUSIVE: the column's constraint changes);
--  3. on a large table, drop the table's indexes (and the PRIMARY KEY / UNIQUE
--     constraints they back), to rebuild them once at the end: maintaining every index
--     row by row costs more than the decryption itself (see docs/peels.md);
--  4. strip the layer from every non-NULL value of each column, in one UPDATE -- set-based through pgcrypto (AES-ECB
--     keystream, XOR on bit strings) when it is installed, else with adaptive.rnd_decrypt
--     (PL/Python, pycryptodome);
--  5. rebuild the indexes and constraints dropped in step 3, under their own names;
--  6. replace each column's CHECK constraint on the ciphertexts' layer tag, so that a client whose
--     cached metadata is stale cannot write a value at the old layer afterwards;
--  7. record the new layers, bump the epoch, append to the audit log (a row per column,
--     with the rows the UPDATE rewrote), notify clients.
--
-- The table is updated in place (UPDATE), never rewritten into a new file (ALTER TABLE
-- ... TYPE, CREATE TABLE AS + swap): a rewrite is not MVCC-safe -- a REPEATABLE READ
-- transaction whose snapshot predates the peel would find the table empty afterwards.
CREATE OR REPLACE FUNCTION adaptive.peel_layers(
    p_table text, p_columns text[], p_from text, p_tos text[], p_keys bytea[],
    p_to_tags integer[])
RETURNS bigint
LANGUAGE plpython3u
VOLATILE
AS $$
import time

t0 = time.monotonic()
q = plpy.quote_ident
if "adaptive_peel_plans" not in SD:
    SD["adaptive_peel_plans"] = {
        "layer": plpy.prepare(
            "SELECT onion, layer FROM adaptive.layers "
            "WHERE anon_table = $1 AND anon_column = $2 FOR UPDATE",
            ["text", "text"]),
        "set_layer": plpy.prepare(
            "UPDATE adaptive.layers SET layer = $3, changed_at = now() "
            "WHERE anon_table = $1 AND anon_column = $2",
            ["text", "text", "text"]),
        "log": plpy.prepare(
            "INSERT INTO adaptive.peel_log "
            "(anon_table, anon_column, onion, from_layer, to_layer, mode, rows, duration_ms) "
            "VALUES ($1, $2, $3, $4, $5, 'server', $6, $7)",
            ["text", "text", "text", "text", "text", "bigint", "float8"]),
        "pgcrypto": plpy.prepare(
            "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n "
            "ON n.oid = e.extnamespace WHERE e.extname = 'pgcrypto'"),
        # The indexes worth dropping for the duration of the peel, with what rebuilds
        # them.  Left alone (maintained row by row): indexes that a foreign key, the
        # replica identity or CLUSTER depend on, exclusion constraints, and indexes not
        # valid or not ready (a concurrent build in progress cannot be, under our lock).
        "indexes": plpy.prepare(
            "SELECT i.indexrelid::regclass::text AS index_name, "
            "       pg_get_indexdef(i.indexrelid) AS index_def, "
            "       c.conname, pg_get_constraintdef(c.oid) AS constraint_def "
            "FROM pg_index i "
            "LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid "
            "     AND c.conrelid = i.indrelid AND c.contype IN ('p', 'u') "
            "WHERE i.indrelid = $1::regclass AND i.indisvalid AND i.indisready "
            "  AND i.indislive AND NOT i.indisreplident AND NOT i.indisclustered "
            "  AND NOT EXISTS (SELECT 1 FROM pg_constraint x WHERE x.conindid = i.indexrelid "
            "                  AND (x.contype IN ('f', 'x') OR x.conrelid <> i.indrelid)) "
            "ORDER BY i.indexrelid",
            ["text"]),
        "size": plpy.prepare("SELECT pg_relation_size($1::regclass) AS bytes", ["text"]),
    }
plans = SD["adaptive_peel_plans"]
TOKEN_ONIONS = ("Search", "Substr", "Contain")

# Rebuilding indexes costs a few catalog updates; below this size maintaining them row
# by row is as cheap (about 250 pages: some 10,000 narrow rows).
REBUILD_FROM_BYTES = 2 * 1024 * 1024

if not (len(p_columns) == len(p_tos) == len(p_keys) == len(p_to_tags)):
    plpy.error("adaptive.peel_layers: one layer, key and tag per column", sqlstate="22023")

# (k: the column's position in the arguments, its key $1[k]) -- the columns still at
# p_from: another client may have peeled one meanwhile, or a join adjustment renamed it
# (joins.py): the caller reloads its metadata and asks again
todo = []
for k, column in enumerate(p_columns, 1):
    row = plpy.execute(plans["layer"], [p_table, column])
    if row and row[0]["layer"] == p_from:
        todo.append((k, column, row[0]["onion"]))
if not todo:
    return -1

tbl = q(p_table)
plpy.execute(f"LOCK TABLE {tbl} IN ACCESS EXCLUSIVE MODE")
for _, column, _ in todo:
    plpy.execute(f"ALTER TABLE {tbl} DROP CONSTRAINT IF EXISTS {q('k_' + column)}")

rebuild = []
if plpy.execute(plans["size"], [tbl])[0]["bytes"] >= REBUILD_FROM_BYTES:
    rebuild = list(plpy.execute(plans["indexes"], [tbl]))
    for ix in rebuild:
        if ix["conname"] is not None:
            plpy.execute(f"ALTER TABLE {tbl} DROP CONSTRAINT {q(ix['conname'])}")
        else:
            plpy.execute(f"DROP INDEX {ix['index_name']}")

ext = plpy.execute(plans["pgcrypto"])

# The RND layer is ``0x01 || nonce (12) || AES-256-CTR(key, nonce || 0^32, inner)``
# (adaptive_client/schemes/rnd.py).  With pgcrypto, set-based: the counter blocks are
# written out in hex from a template (one "@" + 8-hex-digit counter per block, the "@"
# replaced by the value's nonce), encrypted with AES-ECB into the keystream, and XORed
# with the ciphertext as bit strings (varbit_send's output is the bits' bytes after a
# 4-byte length).  Values longer than the template (4 KB) spell their counter blocks out
# with generate_series.  Without pgcrypto: adaptive.rnd_decrypt, per value.
TEMPLATE_BLOCKS = 256
template = "".join("@%08x" % i for i in range(TEMPLATE_BLOCKS))


def strip_rnd(v, key):
    """The SQL expression of the inner value of the RND ciphertext ``v`` under ``key``."""
    if not ext:
        return f"adaptive.rnd_decrypt({v}, {key})"
    encrypt = q(ext[0]["nspname"]) + ".encrypt"
    nonce = f"substring({v} from 2 for 12)"
    blocks = f"((octet_length({v}) + 2) / 16)"
    counters = (
        f"CASE WHEN {blocks} <= {TEMPLATE_BLOCKS} "
        f"THEN decode(replace(left($2, 9 * {blocks}), '@', encode({nonce}, 'hex')), 'hex') "
        f"ELSE (SELECT string_agg({nonce} || int4send(i), ''::bytea ORDER BY i) "
        f"FROM generate_series(0, {blocks} - 1) AS i) END")
    keystream = f"substring({encrypt}({counters}, {key}, 'aes-ecb/pad:none') from 1 for octet_length({v}) - 13)"
    return (f"substring(varbit_send(('x' || encode(substring({v} from 14), 'hex'))::varbit "
            f"# ('x' || encode({keystream}, 'hex'))::varbit) from 5)")


sets, peelable = [], []
for k, column, onion in todo:
    col, key = q(column), f"($1)[{k}]"
    if onion in TOKEN_ONIONS:
        # the tokens are comparable from now on: the GIN index that serves `@>` (before
        # the peel it would index random values).  Built before the UPDATE, which then
        # maintains it: built after, over the UPDATE's broken HOT chains, it would be
        # marked indcheckxmin and unusable until every older transaction of the cluster
        # ends.  One RND value in a one-element array: the row's 16-byte tokens
        # concatenated (13 + 16k bytes, never 16), split back into the token array.
        plpy.execute(f"CREATE INDEX IF NOT EXISTS {q('g_' + column)} ON {tbl} USING gin ({col})")
        at_rnd = f"({col} IS NOT NULL AND octet_length({col}[1]) <> 16)"
        stripped = (
            f"(SELECT ARRAY(SELECT substring(d.v FROM 1 + 16 * i FOR 16) "
            f"FROM generate_series(0, octet_length(d.v) / 16 - 1) AS i ORDER BY i)::bytea[] "
            f"FROM (SELECT {strip_rnd(col + '[1]', key)} AS v) AS d)")
    else:
        # counter mode has no padding to fail on a wrong key: the inner layer's tag is
        # checked on a few stripped values first (a wrong key misses it with probability
        # 255/256 per value), the way a DET re-key checks its first block's padding
        # (cast: an Ord onion at ORE is of type adaptive.ore, which is bytea only explicitly)
        val = f"{col}::bytea"
        at_rnd = f"({col} IS NOT NULL AND get_byte({val}, 0) = 1)"
        probe = plpy.execute(plpy.prepare(
            f"SELECT count(*) FILTER (WHERE get_byte(s.v, 0) <> {int(p_to_tags[k - 1])}) "
            f"AS wrong FROM (SELECT {strip_rnd(val, key)} AS v FROM {tbl} "
            f"WHERE {at_rnd} LIMIT 16) AS s",
            ["bytea[]", "text"]), [p_keys, template])
        if probe[0]["wrong"]:
            plpy.error("adaptive.peel_layers: stripped values lack the inner layer's tag "
                       "(wrong key?)", sqlstate="22000")
        stripped = strip_rnd(val, key)
    if len(todo) == 1:
        sets.append(f"{col} = {stripped}")
    else:
        kept = col if onion in TOKEN_ONIONS else f"{col}::bytea"
        sets.append(f"{col} = CASE WHEN {at_rnd} THEN {stripped} ELSE {kept} END")
    peelable.append(at_rnd)

update = plpy.prepare(
    f"UPDATE {tbl} SET {', '.join(sets)} WHERE {' OR '.join(peelable)}", ["bytea[]", "text"])
rows = plpy.execute(update, [p_keys, template]).nrows()

for ix in rebuild:
    if ix["conname"] is not None:
        plpy.execute(
            f"ALTER TABLE {tbl} ADD CONSTRAINT {q(ix['conname'])} {ix['constraint_def']}")
    else:
        plpy.execute(ix["index_def"])

elapsed_ms = (time.monotonic() - t0) * 1000.0
for k, column, onion in todo:
    col = q(column)
    if onion in TOKEN_ONIONS:  # a stale client's RND value is one element longer than a token
        check = f"coalesce(octet_length({col}[1]), 16) = 16"
    else:
        check = f"get_byte({col}::bytea, 0) = {int(p_to_tags[k - 1])}"
    plpy.execute(f"ALTER TABLE {tbl} ADD CONSTRAINT {q('k_' + column)} CHECK ({check}) NOT VALID")
    plpy.execute(plans["set_layer"], [p_table, column, p_tos[k - 1]])
    plpy.execute(plans["log"], [p_table, column, onion, p_from, p_tos[k - 1], rows, elapsed_ms])
plpy.execute("UPDATE adaptive.epoch SET value = value + 1 WHERE id = 1")
plpy.execute("NOTIFY adaptive_epoch")
return rows
$$;

-- One column: the same peel (clients and databases of before peel_layers call it).
CREATE OR REPLACE FUNCTION adaptive.peel_layer(
    p_table text, p_column text, p_from text, p_to text, p_key bytea, p_to_tag integer)
RETURNS bigint
LANGUAGE sql
VOLATILE
AS $$
SELECT adaptive.peel_layers(p_table, ARRAY[p_column], p_from, ARRAY[p_to], ARRAY[p_key],
                            ARRAY[p_to_tag])
$$;
