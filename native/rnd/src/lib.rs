//! AES-256-CTR (RustCrypto `aes` + `ctr`) for the RND layer of `adaptive_client`, and
//! AES-256-CBC with PKCS#7 padding (`cbc`) for the previous format's migration, as the
//! Python module `adaptive_rnd_native`.
//!
//! ```python
//! ctr = Ctr(key)                   # 32-byte key
//! out = ctr.apply(nonce, data)     # 12-byte nonce, counter block nonce || 0u32 (big-endian)
//! cts = ctr.seal_many(tag, nonces, plaintexts)  # [tag || nonce_i || apply(nonce_i, p_i)]
//! pts = ctr.open_many(tag, stored)  # [apply of each, or None where it is too short]
//! cts = seal_each(tag, nonces, ctrs, plaintexts)  # [tag || nonce_i || ctrs[i].apply(nonce_i, p_i)]
//!
//! cbc = Cbc(key)                   # 32-byte key; the key schedule is computed once
//! ct = cbc.encrypt(iv, plaintext)  # 16-byte IV; PKCS#7-padded ciphertext
//! pt = cbc.decrypt(iv, ct)         # ValueError on a bad length or padding
//! cts = cbc.seal_many(tag, ivs, plaintexts)  # [tag || iv_i || encrypt(iv_i, p_i), ...]
//! pts = cbc.open_many(tag, stored)  # [decrypt of each, or None where it does not decrypt]
//! ```
//!
//! Why: the RND layer encrypts and decrypts a short value per (row, onion).  Through
//! Python libraries each call costs several microseconds of object set-up, many times the
//! AES work itself; here a call is a fraction of a microsecond.  The mode and the padding
//! are RustCrypto's, not this crate's.

use aes::cipher::{
    block_padding::Pkcs7, BlockDecryptMut, BlockEncryptMut, InnerIvInit, KeyInit, StreamCipher,
};
use aes::Aes256;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::PyBytes;

mod open;
mod seal;

type Encryptor = cbc::Encryptor<Aes256>;
type Decryptor = cbc::Decryptor<Aes256>;
type Counter = ctr::Ctr32BE<Aes256>;

const NONCE: usize = 12;

/// AES-256-CTR under one key, a 96-bit nonce and a 32-bit block counter from 0.
#[pyclass(frozen)]
pub struct Ctr {
    pub(crate) cipher: Aes256,
}

impl Ctr {
    pub fn from_key(key: &[u8]) -> PyResult<Self> {
        let cipher = Aes256::new_from_slice(key)
            .map_err(|_| PyValueError::new_err("AES-256 needs a 32-byte key"))?;
        Ok(Ctr { cipher })
    }

    pub fn apply_vec(&self, nonce: &[u8; NONCE], data: &[u8]) -> Vec<u8> {
        let mut block = [0u8; 16];
        block[..NONCE].copy_from_slice(nonce);
        let mut out = data.to_vec();
        let core = ctr::CtrCore::<Aes256, ctr::flavors::Ctr32BE>::inner_iv_init(self.cipher.clone(), (&block).into());
        Counter::from_core(core).apply_keystream(&mut out);
        out
    }
}

fn nonce_array(nonce: &[u8]) -> PyResult<[u8; NONCE]> {
    nonce.try_into().map_err(|_| PyValueError::new_err("the CTR nonce is 12 bytes"))
}

#[pymethods]
impl Ctr {
    #[new]
    fn new(key: &[u8]) -> PyResult<Self> {
        Ctr::from_key(key)
    }

    /// XOR ``data`` with the keystream of ``nonce`` (encryption and decryption alike).
    fn apply<'py>(&self, py: Python<'py>, nonce: &[u8], data: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.apply_vec(&nonce_array(nonce)?, data)))
    }

    /// The stored RND form of many values at once: ``tag || nonce_i || apply(nonce_i, p_i)``,
    /// the nonces read 12 bytes at a time from ``nonces`` (one per plaintext).
    fn seal_many<'py>(
        &self,
        py: Python<'py>,
        tag: u8,
        nonces: &[u8],
        plaintexts: Vec<PyBackedBytes>,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        if nonces.len() != NONCE * plaintexts.len() {
            return Err(PyValueError::new_err("seal_many needs one 12-byte nonce per plaintext"));
        }
        let mut out = Vec::with_capacity(plaintexts.len());
        for (p, nonce) in plaintexts.iter().zip(nonces.chunks_exact(NONCE)) {
            let ct = self.apply_vec(&nonce_array(nonce)?, p);
            let mut stored = Vec::with_capacity(1 + NONCE + ct.len());
            stored.push(tag);
            stored.extend_from_slice(nonce);
            stored.extend_from_slice(&ct);
            out.push(PyBytes::new(py, &stored));
        }
        Ok(out)
    }

    /// The inverse of ``seal_many`` for a whole fetched column: each stored value
    /// ``tag || nonce || ciphertext`` decrypted, or ``None`` where the tag or the length
    /// is wrong (the caller raises the precise error for that value).
    fn open_many<'py>(
        &self,
        py: Python<'py>,
        tag: u8,
        stored: Vec<PyBackedBytes>,
    ) -> Vec<Option<Bound<'py, PyBytes>>> {
        stored
            .iter()
            .map(|s| {
                if s.len() < 1 + NONCE || s[0] != tag {
                    return None;
                }
                let nonce: [u8; NONCE] = s[1..1 + NONCE].try_into().ok()?;
                Some(PyBytes::new(py, &self.apply_vec(&nonce, &s[1 + NONCE..])))
            })
            .collect()
    }

    fn __repr__(&self) -> &'static str {
        "Ctr(<key hidden>)"
    }
}

/// The stored RND form of values under different keys in one call (the onions of one
/// row, each with its own key): ``tag || nonce_i || ctrs[i].apply(nonce_i, p_i)``, the
/// nonces read 12 bytes at a time from ``nonces``.
#[pyfunction]
fn seal_each<'py>(
    py: Python<'py>,
    tag: u8,
    nonces: &[u8],
    ctrs: Vec<PyRef<'py, Ctr>>,
    plaintexts: Vec<PyBackedBytes>,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    if ctrs.len() != plaintexts.len() || nonces.len() != NONCE * plaintexts.len() {
        return Err(PyValueError::new_err(
            "seal_each needs one key and one 12-byte nonce per plaintext",
        ));
    }
    let mut out = Vec::with_capacity(plaintexts.len());
    for ((ctr, p), nonce) in ctrs.iter().zip(plaintexts.iter()).zip(nonces.chunks_exact(NONCE)) {
        let ct = ctr.apply_vec(&nonce_array(nonce)?, p);
        let mut stored = Vec::with_capacity(1 + NONCE + ct.len());
        stored.push(tag);
        stored.extend_from_slice(nonce);
        stored.extend_from_slice(&ct);
        out.push(PyBytes::new(py, &stored));
    }
    Ok(out)
}

/// AES-256-CBC under one key.
#[pyclass(frozen)]
pub struct Cbc {
    cipher: Aes256,
}

fn iv_array(iv: &[u8]) -> PyResult<[u8; 16]> {
    iv.try_into().map_err(|_| PyValueError::new_err("the CBC IV is 16 bytes"))
}

impl Cbc {
    pub fn encrypt_vec(&self, iv: &[u8; 16], plaintext: &[u8]) -> Vec<u8> {
        Encryptor::inner_iv_init(self.cipher.clone(), iv.into())
            .encrypt_padded_vec_mut::<Pkcs7>(plaintext)
    }

    pub fn decrypt_vec(&self, iv: &[u8; 16], ciphertext: &[u8]) -> Option<Vec<u8>> {
        if ciphertext.is_empty() || ciphertext.len() % 16 != 0 {
            return None;
        }
        Decryptor::inner_iv_init(self.cipher.clone(), iv.into())
            .decrypt_padded_vec_mut::<Pkcs7>(ciphertext)
            .ok()
    }
}

#[pymethods]
impl Cbc {
    #[new]
    fn new(key: &[u8]) -> PyResult<Self> {
        let cipher = Aes256::new_from_slice(key)
            .map_err(|_| PyValueError::new_err("AES-256 needs a 32-byte key"))?;
        Ok(Cbc { cipher })
    }

    /// PKCS#7-pad and encrypt ``plaintext`` under ``iv``.
    fn encrypt<'py>(&self, py: Python<'py>, iv: &[u8], plaintext: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.encrypt_vec(&iv_array(iv)?, plaintext)))
    }

    /// Decrypt and unpad; ``ValueError`` if the length or the padding is wrong.
    fn decrypt<'py>(&self, py: Python<'py>, iv: &[u8], ciphertext: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        match self.decrypt_vec(&iv_array(iv)?, ciphertext) {
            Some(p) => Ok(PyBytes::new(py, &p)),
            None => Err(PyValueError::new_err("bad CBC ciphertext length or padding")),
        }
    }

    /// The stored RND form of many values at once: ``tag || iv_i || encrypt(iv_i, p_i)``,
    /// the IVs read 16 bytes at a time from ``ivs`` (one per plaintext).  One call for a
    /// whole column of a multi-row INSERT, instead of a Python loop around `encrypt`.
    fn seal_many<'py>(
        &self,
        py: Python<'py>,
        tag: u8,
        ivs: &[u8],
        plaintexts: Vec<PyBackedBytes>,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        if ivs.len() != 16 * plaintexts.len() {
            return Err(PyValueError::new_err("seal_many needs one 16-byte IV per plaintext"));
        }
        let mut out = Vec::with_capacity(plaintexts.len());
        for (p, iv) in plaintexts.iter().zip(ivs.chunks_exact(16)) {
            let ct = self.encrypt_vec(&iv_array(iv)?, p);
            let mut stored = Vec::with_capacity(17 + ct.len());
            stored.push(tag);
            stored.extend_from_slice(iv);
            stored.extend_from_slice(&ct);
            out.push(PyBytes::new(py, &stored));
        }
        Ok(out)
    }

    /// The inverse of ``seal_many`` for a whole fetched column: each stored value
    /// ``tag || iv || ciphertext`` decrypted, or ``None`` where the tag, the length or
    /// the padding is wrong (the caller raises the precise error for that value).
    fn open_many<'py>(
        &self,
        py: Python<'py>,
        tag: u8,
        stored: Vec<PyBackedBytes>,
    ) -> Vec<Option<Bound<'py, PyBytes>>> {
        stored
            .iter()
            .map(|s| {
                if s.len() < 33 || s[0] != tag || (s.len() - 1) % 16 != 0 {
                    return None;
                }
                let iv: [u8; 16] = s[1..17].try_into().ok()?;
                self.decrypt_vec(&iv, &s[17..]).map(|p| PyBytes::new(py, &p))
            })
            .collect()
    }

    fn __repr__(&self) -> &'static str {
        "Cbc(<key hidden>)"
    }
}

#[pymodule]
fn adaptive_rnd_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Cbc>()?;
    m.add_class::<Ctr>()?;
    m.add_class::<open::Opener>()?;
    m.add_class::<open::RowOpener>()?;
    m.add_class::<seal::RowSealer>()?;
    m.add_function(wrap_pyfunction!(seal_each, m)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // NIST SP 800-38A F.2.5 (CBC-AES256.Encrypt), first two blocks, plus the PKCS#7
    // block the padded mode appends to a block-aligned message.
    fn hex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    #[test]
    fn nist_vector() {
        let key = hex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
        let iv: [u8; 16] = hex("000102030405060708090a0b0c0d0e0f").try_into().unwrap();
        let pt = hex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51");
        let cbc = Cbc { cipher: Aes256::new_from_slice(&key).unwrap() };
        let ct = cbc.encrypt_vec(&iv, &pt);
        assert_eq!(&ct[..32], &hex("f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d")[..]);
        assert_eq!(ct.len(), 48);
        assert_eq!(cbc.decrypt_vec(&iv, &ct).unwrap(), pt);
        assert!(cbc.decrypt_vec(&iv, &ct[..47]).is_none());
    }

    // NIST SP 800-38A F.5.5 (CTR-AES256.Encrypt), first block, with its counter block's
    // last 32 bits moved to 0 (the vector's counter is f0f1..fcfdfeff: the 32-bit counter
    // would wrap) -- checked instead against the same keystream for nonce || 0.
    #[test]
    fn ctr_is_aes_of_the_counter_blocks() {
        let key = hex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
        let ctr = Ctr { cipher: Aes256::new_from_slice(&key).unwrap() };
        let nonce: [u8; NONCE] = hex("f0f1f2f3f4f5f6f7f8f9fafb").try_into().unwrap();
        let zeros = [0u8; 33];
        let ks = ctr.apply_vec(&nonce, &zeros);
        let aes = Aes256::new_from_slice(&key).unwrap();
        for (i, chunk) in ks.chunks(16).enumerate() {
            let mut block = [0u8; 16];
            block[..NONCE].copy_from_slice(&nonce);
            block[12..].copy_from_slice(&(i as u32).to_be_bytes());
            let mut b = block.into();
            aes::cipher::BlockEncrypt::encrypt_block(&aes, &mut b);
            assert_eq!(chunk, &b[..chunk.len()]);
        }
    }
}
