-- MIN/MAX over OPE ciphertexts (bytea, whose byte order is the plaintext order).
-- PostgreSQL has no min/max for bytea; SORTOP lets the planner answer them from a
-- B-tree index on the Ord onion, like min/max on plain columns.
CREATE OR REPLACE FUNCTION adaptive.bytea_smaller(a bytea, b bytea)
RETURNS bytea LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT CASE WHEN a <= b THEN a ELSE b END $$;

CREATE OR REPLACE FUNCTION adaptive.bytea_larger(a bytea, b bytea)
RETURNS bytea LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT CASE WHEN a >= b THEN a ELSE b END $$;

CREATE OR REPLACE AGGREGATE adaptive.min(bytea) (
    SFUNC = adaptive.bytea_smaller, STYPE = bytea, SORTOP = <, PARALLEL = SAFE,
    COMBINEFUNC = adaptive.bytea_smaller
);
CREATE OR REPLACE AGGREGATE adaptive.max(bytea) (
    SFUNC = adaptive.bytea_larger, STYPE = bytea, SORTOP = >, PARALLEL = SAFE,
    COMBINEFUNC = adaptive.bytea_larger
);
