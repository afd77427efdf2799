-- ORE (adaptive_client/schemes/ore.py): Lewi–Wu block order-revealing encryption.
--
-- A stored value is  0x04 || key id (8) || left (17 n) || nonce (16) || right (32 n)  for
-- n 8-bit blocks.  adaptive.ore_cmp compares two of them from their bytes alone, in
-- PL/pgSQL over the built-in sha256 (no extension, no superuser): values under two key
-- ids are ordered by key id (two keys' values have no order between them, yet a B-tree
-- may hold both, dead row versions included, while a join adjustment re-keys a column:
-- the comparison stays a total order); under one key, equal left parts are equal values;
-- otherwise the first differing 17-byte left block i of a, a hash key k and a permuted
-- byte h, unmasks bit 256 i + h of b's right part with the low bit of sha256(k || b's
-- nonce): 1 when a > b.  An RND ciphertext (before the onion's peel) compares as bytea;
-- other values that are not two ORE ciphertexts of one domain (an OPE ciphertext) are an
-- error, never an order.
--
-- The type adaptive.ore wraps it: bytea's representation and input/output functions, so
-- that a column of it reads, writes and copies as bytea does (each converts to the other
-- on assignment, never implicitly: an expression that would compare it as bytea is an
-- error, not a wrong order), with its own comparison operators -- against itself and
-- against bytea, the type the client sends constants in; in the schema public, which the
-- client keeps on the search path (dbapi/search_path.py), as its tables -- and a
-- default B-tree operator class, so that range predicates, ORDER BY, MIN/MAX (the
-- adaptive.min/max aggregates below), merge joins, DISTINCT, CHECK constraints and
-- B-tree indexes order an Ord onion at ORE by its plaintexts.  Creating a base type and
-- an operator class takes a superuser: where the installing role is not one, this script
-- is skipped (catalog/install.py) and Ord onions stay at OPE.

DO $ore$
DECLARE
    pairs text[][] := ARRAY[
        ARRAY['bytea', 'bytea'],
        ARRAY['adaptive.ore', 'adaptive.ore'],
        ARRAY['adaptive.ore', 'bytea'],
        ARRAY['bytea', 'adaptive.ore']];
    ops text[][] := ARRAY[
        ARRAY['<', 'lt', '< 0', '>', '>='],
        ARRAY['<=', 'le', '<= 0', '>=', '>'],
        ARRAY['=', 'eq', '= 0', '=', '<>'],
        ARRAY['<>', 'ne', '<> 0', '<>', '='],
        ARRAY['>=', 'ge', '>= 0', '<=', '<'],
        ARRAY['>', 'gt', '> 0', '<', '<=']];
    -- the comparison, with %1$s its result type and %2$s the result from res (-1, 0, 1):
    -- each operator's function is this whole body (PL/pgSQL, never inlined: an inlined
    -- operator would not match an index), not a call of adaptive.ore_cmp
    body text := $body$
DECLARE
    a bytea := p_a::bytea;
    b bytea := p_b::bytea;
    len integer := octet_length(a);
    n integer := (len - 25) / 49;
    i integer := 0;
    off integer;
    nonce integer;
    res integer;
BEGIN
    IF get_byte(a, 0) = 1 OR get_byte(b, 0) = 1 THEN
        -- an onion still at RND (tag 1) is ordered as bytea, below every ORE value
        -- (tag 4), so that an index made on the column before its peel stays a valid
        -- B-tree through it
        res := CASE WHEN a < b THEN -1 WHEN a > b THEN 1 ELSE 0 END;
    ELSIF octet_length(b) <> len OR n < 1 OR (len - 25) %% 49 <> 0
            OR get_byte(a, 0) <> 4 OR get_byte(b, 0) <> 4 THEN
        -- (an OPE ciphertext against an ORE one, or two domains: no order between them)
        RAISE EXCEPTION 'adaptive.ore_cmp: the values are not ORE ciphertexts of one domain'
            USING ERRCODE = '22000';
    ELSIF substr(a, 2, 8) <> substr(b, 2, 8) THEN
        res := CASE WHEN substr(a, 2, 8) < substr(b, 2, 8) THEN -1 ELSE 1 END;
    ELSIF substr(a, 10, 17 * n) = substr(b, 10, 17 * n) THEN
        res := 0;
    ELSE
        WHILE substr(a, 10 + 17 * i, 17) = substr(b, 10 + 17 * i, 17) LOOP
            i := i + 1;
        END LOOP;
        off := 9 + 17 * i;  -- a's left block i, from 0
        nonce := 9 + 17 * n;  -- b's nonce, from 0
        res := CASE WHEN get_bit(b, 8 * (nonce + 16 + 32 * i) + get_byte(a, off + 16))
            # (get_byte(sha256(substr(a, off + 1, 16) || substr(b, nonce + 1, 16)), 0) & 1) = 1
            THEN 1 ELSE -1 END;
    END IF;
    RETURN %2$s;
END
$body$;
    pair text[];
    op text[];
    l text;
    r text;
BEGIN
    IF to_regtype('adaptive.ore') IS NULL THEN
        CREATE TYPE adaptive.ore;
        CREATE FUNCTION adaptive.ore_in(cstring) RETURNS adaptive.ore
            LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE AS 'byteain';
        CREATE FUNCTION adaptive.ore_out(adaptive.ore) RETURNS cstring
            LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE AS 'byteaout';
        CREATE FUNCTION adaptive.ore_recv(internal) RETURNS adaptive.ore
            LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE AS 'bytearecv';
        CREATE FUNCTION adaptive.ore_send(adaptive.ore) RETURNS bytea
            LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE AS 'byteasend';
        CREATE TYPE adaptive.ore (
            INPUT = adaptive.ore_in, OUTPUT = adaptive.ore_out,
            RECEIVE = adaptive.ore_recv, SEND = adaptive.ore_send, LIKE = bytea);
        CREATE CAST (adaptive.ore AS bytea) WITHOUT FUNCTION AS ASSIGNMENT;
        CREATE CAST (bytea AS adaptive.ore) WITHOUT FUNCTION AS ASSIGNMENT;
    END IF;
    FOREACH pair SLICE 1 IN ARRAY pairs LOOP
        l := pair[1];
        r := pair[2];
        EXECUTE format(
            'CREATE OR REPLACE FUNCTION adaptive.ore_cmp(p_a %s, p_b %s) RETURNS integer '
            'LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS %L',
            l, r, format(body, 'integer', 'res'));
        IF l = 'bytea' AND r = 'bytea' THEN
            CONTINUE;  -- (bytea has its own operators: only the function)
        END IF;
        FOREACH op SLICE 1 IN ARRAY ops LOOP
            EXECUTE format(
                'CREATE OR REPLACE FUNCTION adaptive.ore_%s(p_a %s, p_b %s) RETURNS boolean '
                'LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS %L',
                op[2], l, r, format(body, 'boolean', 'res ' || op[3]));
            IF NOT EXISTS (
                SELECT 1 FROM pg_operator
                WHERE oprname = op[1] AND oprleft = l::regtype AND oprright = r::regtype
                  AND oprnamespace = 'public'::regnamespace
                  AND oprcode <> 0) THEN  -- (a commutator named earlier left a shell)
                EXECUTE format(
                    'CREATE OPERATOR public.%s (LEFTARG = %s, RIGHTARG = %s, '
                    'FUNCTION = adaptive.ore_%s, COMMUTATOR = OPERATOR(public.%s), '
                    'NEGATOR = OPERATOR(public.%s), RESTRICT = %s, JOIN = %s%s)',
                    op[1], l, r, op[2], op[4], op[5],
                    CASE WHEN op[1] = '=' THEN 'eqsel' WHEN op[1] = '<>' THEN 'neqsel'
                         WHEN op[1] LIKE '<%' THEN 'scalarltsel' ELSE 'scalargtsel' END,
                    CASE WHEN op[1] = '=' THEN 'eqjoinsel' WHEN op[1] = '<>' THEN 'neqjoinsel'
                         WHEN op[1] LIKE '<%' THEN 'scalarltjoinsel' ELSE 'scalargtjoinsel' END,
                    CASE WHEN op[1] = '=' THEN ', MERGES' ELSE '' END);
            END IF;
        END LOOP;
    END LOOP;
    IF NOT EXISTS (
        SELECT 1 FROM pg_opfamily f JOIN pg_am am ON am.oid = f.opfmethod
        WHERE f.opfname = 'ore_ops' AND am.amname = 'btree'
          AND f.opfnamespace = 'adaptive'::regnamespace) THEN
        CREATE OPERATOR FAMILY adaptive.ore_ops USING btree;
        CREATE OPERATOR CLASS adaptive.ore_ops DEFAULT FOR TYPE adaptive.ore
            USING btree FAMILY adaptive.ore_ops AS
            OPERATOR 1 public.< , OPERATOR 2 public.<= , OPERATOR 3 public.= ,
            OPERATOR 4 public.>= , OPERATOR 5 public.> ,
            FUNCTION 1 adaptive.ore_cmp(adaptive.ore, adaptive.ore);
        -- constants arrive as bytea: an index on the column serves col < $1 as well
        ALTER OPERATOR FAMILY adaptive.ore_ops USING btree ADD
            OPERATOR 1 public.< (adaptive.ore, bytea),
            OPERATOR 2 public.<= (adaptive.ore, bytea),
            OPERATOR 3 public.= (adaptive.ore, bytea),
            OPERATOR 4 public.>= (adaptive.ore, bytea),
            OPERATOR 5 public.> (adaptive.ore, bytea),
            FUNCTION 1 adaptive.ore_cmp(adaptive.ore, bytea),
            OPERATOR 1 public.< (bytea, adaptive.ore),
            OPERATOR 2 public.<= (bytea, adaptive.ore),
            OPERATOR 3 public.= (bytea, adaptive.ore),
            OPERATOR 4 public.>= (bytea, adaptive.ore),
            OPERATOR 5 public.> (bytea, adaptive.ore),
            FUNCTION 1 adaptive.ore_cmp(bytea, adaptive.ore);
    END IF;
END
$ore$;

-- MIN/MAX over an Ord onion at ORE, answered from a B-tree index on it as for OPE
CREATE OR REPLACE FUNCTION adaptive.ore_smaller(a adaptive.ore, b adaptive.ore)
RETURNS adaptive.ore LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT CASE WHEN adaptive.ore_cmp(a, b) <= 0 THEN a ELSE b END $$;

CREATE OR REPLACE FUNCTION adaptive.ore_larger(a adaptive.ore, b adaptive.ore)
RETURNS adaptive.ore LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT CASE WHEN adaptive.ore_cmp(a, b) >= 0 THEN a ELSE b END $$;

CREATE OR REPLACE AGGREGATE adaptive.min(adaptive.ore) (
    SFUNC = adaptive.ore_smaller, STYPE = adaptive.ore, SORTOP = OPERATOR(public.<),
    PARALLEL = SAFE, COMBINEFUNC = adaptive.ore_smaller
);
CREATE OR REPLACE AGGREGATE adaptive.max(adaptive.ore) (
    SFUNC = adaptive.ore_larger, STYPE = adaptive.ore, SORTOP = OPERATOR(public.>),
    PARALLEL = SAFE, COMBINEFUNC = adaptive.ore_larger
);
