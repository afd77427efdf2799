//! Lewi–Wu block ORE over 8-bit blocks: the encryption of `adaptive_client/schemes/ore.py`
//! (the module docstring there is the specification), byte for byte.  The Python side
//! derives the two AES-256 PRF keys and the key id and draws the nonces; this computes the
//! stored form `0x04 || key id (8) || left || nonce || right`.

use aes::cipher::{generic_array::GenericArray, BlockEncrypt, KeyInit, KeyIvInit, StreamCipher};
use aes::{Aes128, Aes256};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use sha2::{Digest, Sha256};

type Ctr = ctr::Ctr128BE<Aes128>;

const MAX_BLOCKS: usize = 12;
const NONCE: usize = 16;
const KEY_ID: usize = 8;
const PERM: u8 = 1;
const HASH: u8 = 2;

fn prf_input(domain: u8, i: usize, digits: &[u8], j: u8) -> [u8; 16] {
    let mut block = [0u8; 16];
    block[0] = domain;
    block[1] = i as u8;
    block[2..2 + i].copy_from_slice(&digits[..i]);
    block[14] = j;
    block
}

fn prf(cipher: &Aes256, input: [u8; 16]) -> [u8; 16] {
    let mut block = GenericArray::from(input);
    cipher.encrypt_block(&mut block);
    block.into()
}

/// `(pi, pi^-1)`: `pi[v]` is the rank of draw `v` (AES-128-CTR under `seed`, zero IV,
/// big-endian 64-bit words), ties ranked by `v`.
fn permutation(seed: [u8; 16]) -> ([u8; 256], [u8; 256]) {
    let mut stream = [0u8; 2048];
    let mut ctr = Ctr::new(&GenericArray::from(seed), &GenericArray::from([0u8; 16]));
    ctr.apply_keystream(&mut stream);
    let mut order: Vec<(u64, u8)> = (0..256)
        .map(|v| (u64::from_be_bytes(stream[8 * v..8 * v + 8].try_into().unwrap()), v as u8))
        .collect();
    order.sort_unstable();
    let mut forward = [0u8; 256];
    let mut inverse = [0u8; 256];
    for (rank, &(_, v)) in order.iter().enumerate() {
        inverse[rank] = v;
        forward[v as usize] = rank as u8;
    }
    (forward, inverse)
}

struct Keys {
    perm: Aes256,
    hash: Aes256,
    id: [u8; KEY_ID],
}

fn encrypt_one(keys: &Keys, blocks: usize, x: u128, nonce: &[u8]) -> Vec<u8> {
    let bytes = x.to_be_bytes();
    let digits = &bytes[16 - blocks..];
    let mut out = Vec::with_capacity(1 + KEY_ID + NONCE + 49 * blocks);
    out.push(4u8);
    out.extend_from_slice(&keys.id);
    let mut right = vec![0u8; 32 * blocks];
    let mut hasher_input = [0u8; 32];
    hasher_input[16..].copy_from_slice(nonce);
    for i in 0..blocks {
        let (forward, inverse) = permutation(prf(&keys.perm, prf_input(PERM, i, digits, 0)));
        let h = forward[digits[i] as usize];
        out.extend_from_slice(&prf(&keys.hash, prf_input(HASH, i, digits, h)));
        out.push(h);
        // the 256 hash keys of this block in batches of 8 AES blocks
        let mut j = 0usize;
        while j < 256 {
            let mut batch: [GenericArray<u8, _>; 8] =
                core::array::from_fn(|k| GenericArray::from(prf_input(HASH, i, digits, (j + k) as u8)));
            keys.hash.encrypt_blocks(&mut batch);
            for (k, key) in batch.iter().enumerate() {
                let jj = j + k;
                hasher_input[..16].copy_from_slice(key);
                let mask = Sha256::digest(hasher_input)[0] & 1;
                let above = (inverse[jj] > digits[i]) as u8;
                if mask ^ above == 1 {
                    right[32 * i + (jj >> 3)] |= 1 << (jj & 7);
                }
            }
            j += 8;
        }
    }
    out.extend_from_slice(nonce);
    out.extend_from_slice(&right);
    out
}

fn keys(perm_key: &[u8], hash_key: &[u8], key_id: &[u8]) -> PyResult<Keys> {
    let bad = |_| PyValueError::new_err("ORE keys are 32 bytes");
    Ok(Keys {
        perm: Aes256::new_from_slice(perm_key).map_err(bad)?,
        hash: Aes256::new_from_slice(hash_key).map_err(bad)?,
        id: key_id.try_into().map_err(|_| PyValueError::new_err("an ORE key id has 8 bytes"))?,
    })
}

fn check(blocks: usize, x: u128) -> PyResult<()> {
    if blocks == 0 || blocks > MAX_BLOCKS || (blocks < 16 && x >> (8 * blocks) != 0) {
        return Err(PyValueError::new_err("ORE plaintext outside its domain"));
    }
    Ok(())
}

/// The stored form of `x` in a domain of `blocks` bytes under the nonce `nonce`.
#[pyfunction]
fn encrypt<'py>(
    py: Python<'py>,
    perm_key: &[u8],
    hash_key: &[u8],
    key_id: &[u8],
    blocks: usize,
    x: u128,
    nonce: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let keys = keys(perm_key, hash_key, key_id)?;
    check(blocks, x)?;
    if nonce.len() != NONCE {
        return Err(PyValueError::new_err("an ORE nonce has 16 bytes"));
    }
    let out = py.allow_threads(|| encrypt_one(&keys, blocks, x, nonce));
    Ok(PyBytes::new(py, &out))
}

/// `encrypt` of each of `xs`, value `k` under `nonces[16 k .. 16 k + 16]`.
#[pyfunction]
fn encrypt_many<'py>(
    py: Python<'py>,
    perm_key: &[u8],
    hash_key: &[u8],
    key_id: &[u8],
    blocks: usize,
    xs: Vec<u128>,
    nonces: &[u8],
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let keys = keys(perm_key, hash_key, key_id)?;
    for &x in &xs {
        check(blocks, x)?;
    }
    if nonces.len() != NONCE * xs.len() {
        return Err(PyValueError::new_err("one 16-byte nonce per value"));
    }
    let outs: Vec<Vec<u8>> = py.allow_threads(|| {
        xs.iter()
            .enumerate()
            .map(|(k, &x)| encrypt_one(&keys, blocks, x, &nonces[NONCE * k..NONCE * (k + 1)]))
            .collect()
    });
    Ok(outs.iter().map(|o| PyBytes::new(py, o)).collect())
}

#[pymodule]
fn adaptive_ore_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(encrypt, m)?)?;
    m.add_function(wrap_pyfunction!(encrypt_many, m)?)?;
    Ok(())
}
