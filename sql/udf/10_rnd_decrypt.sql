-- Strip one RND layer from a single value, in the database.
--
-- Ciphertext format (written by the client's RND scheme):
--     0x01 || nonce (12 bytes) || AES-256-CTR(key, counter block nonce || 0^32, inner)
-- The inner ciphertext keeps its own leading layer tag.  Works with pycryptodome under
-- either of its namespaces (Debian ships it as `Cryptodome`).
CREATE OR REPLACE FUNCTION adaptive.rnd_decrypt(ct bytea, key bytea)
RETURNS bytea
LANGUAGE plpython3u
IMMUTABLE STRICT PARALLEL SAFE
AS $$
if "adaptive_aes" not in SD:
    try:
        from Cryptodome.Cipher import AES
    except ImportError:
        from Crypto.Cipher import AES
    SD["adaptive_aes"] = AES
AES = SD["adaptive_aes"]
data = bytes(ct)
if len(data) < 13 or data[0] != 1:
    plpy.error("adaptive.rnd_decrypt: not an RND ciphertext", sqlstate="22000")
return AES.new(bytes(key), AES.MODE_CTR, nonce=data[1:13], initial_value=0).decrypt(data[13:])
$$;
