-- Strip one RND layer from a single value, in the database.
--
-- Ciphertext format (written by the client's RND scheme):
--     0x01 || iv (16 bytes) || AES-256-CBC(key, iv, PKCS#7(inner))
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
if len(data) < 33 or data[0] != 1 or (len(data) - 17) % 16:
    plpy.error("adaptive.rnd_decrypt: not an RND ciphertext", sqlstate="22000")
plain = AES.new(bytes(key), AES.MODE_CBC, iv=data[1:17]).decrypt(data[17:])
pad = plain[-1]
if pad < 1 or pad > 16 or plain[-pad:] != bytes([pad]) * pad:
    plpy.error("adaptive.rnd_decrypt: bad padding (wrong key?)", sqlstate="22000")
return plain[:-pad]
$$;
