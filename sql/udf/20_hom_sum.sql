-- Paillier addition for the Sum onion: the sum of plaintexts is the product of the
-- ciphertexts modulo n^2.  Ciphertexts are stored as numeric; plain SQL, so SUM works
-- even where untrusted PL/Python is forbidden.
CREATE OR REPLACE FUNCTION adaptive.hom_add(state numeric, c numeric, n2 numeric)
RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT CASE WHEN c IS NULL THEN state
                WHEN state IS NULL THEN c
                ELSE mod(state * c, n2) END
$$;

CREATE OR REPLACE AGGREGATE adaptive.hom_sum(numeric, numeric) (
    SFUNC = adaptive.hom_add,
    STYPE = numeric,
    PARALLEL = SAFE
);
