//! Boldyreva–Chenette–Lee–O'Neill order-preserving encryption, bit-identical to pyope 0.2.2.
//!
//! pyope mixes exact Python integers with IEEE doubles; every conversion here mirrors
//! Python's (integers are converted to the nearest double, ties to even; the one product
//! that can exceed 128 bits is formed exactly as a big integer first).  The coin tape is
//! HMAC-SHA256(key, decimal string of the node) used as an AES-256-CTR key over zero
//! blocks with a zero initial counter, read most significant bit first.

use aes::cipher::{KeyIvInit, StreamCipher};
use hmac::{Hmac, Mac};
use num_bigint::BigInt;
use num_traits::ToPrimitive;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use sha2::Sha256;

type Aes256Ctr = ctr::Ctr128BE<aes::Aes256>;

/// Bits from the keystream of one node, MSB first.
struct Tape {
    cipher: Aes256Ctr,
    block: [u8; 16],
    pos: usize,
}

impl Tape {
    fn new(key: &[u8], data: i128) -> Tape {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("any key length");
        mac.update(data.to_string().as_bytes());
        let digest = mac.finalize().into_bytes();
        let cipher = Aes256Ctr::new(digest.as_slice().into(), &[0u8; 16].into());
        Tape { cipher, block: [0u8; 16], pos: 128 }
    }

    fn bit(&mut self) -> u32 {
        if self.pos == 128 {
            self.block = [0u8; 16];
            self.cipher.apply_keystream(&mut self.block);
            self.pos = 0;
        }
        let byte = self.block[self.pos / 8];
        let b = (byte >> (7 - (self.pos % 8))) & 1;
        self.pos += 1;
        b as u32
    }

    /// pyope's PRNG.draw: 32 bits as an integer, divided by 2**32 - 1.
    fn draw(&mut self) -> f64 {
        let mut out: u64 = 0;
        for _ in 0..32 {
            out = (out << 1) | self.bit() as u64;
        }
        out as f64 / 4294967295.0
    }
}

#[inline]
fn f(x: i128) -> f64 {
    x as f64 // Rust rounds integer-to-float casts to nearest, ties to even, like Python
}

fn loggam(x_int: i128) -> f64 {
    const A: [f64; 10] = [
        8.333333333333333e-02,
        -2.777777777777778e-03,
        7.936507936507937e-04,
        -5.952380952380952e-04,
        8.417508417508418e-04,
        -1.917526917526918e-03,
        6.410256410256410e-03,
        -2.955065359477124e-02,
        1.796443723688307e-01,
        -1.39243221690590e+00,
    ];
    let x = f(x_int);
    let mut x0 = x;
    let mut n: i64 = 0;
    if x == 1.0 || x == 2.0 {
        return 0.0;
    } else if x <= 7.0 {
        n = (7.0 - x) as i64;
        x0 = x + n as f64;
    }
    let x2 = 1.0 / (x0 * x0);
    let xp = 2.0 * std::f64::consts::PI;
    let mut gl0 = A[9];
    for k in (0..=8).rev() {
        gl0 *= x2;
        gl0 += A[k];
    }
    let mut gl = gl0 / x0 + 0.5 * xp.ln() + (x0 - 0.5) * x0.ln() - x0;
    if x <= 7.0 {
        for _ in 1..=n {
            gl -= (x0 - 1.0).ln();
            x0 -= 1.0;
        }
    }
    gl
}

fn hypergeometric_hyp(tape: &mut Tape, good: i128, bad: i128, sample: i128) -> i128 {
    let d1 = bad + good - sample;
    let d2 = f(good.min(bad));
    let mut y = d2;
    let mut k = sample;
    while y > 0.0 {
        let u = tape.draw();
        y -= f((u + y / f(d1 + k)).floor() as i128);
        k -= 1;
        if k == 0 {
            break;
        }
    }
    let mut z = (d2 - y) as i128;
    if good > bad {
        z = sample - z;
    }
    z
}

fn hypergeometric_hrua(tape: &mut Tape, good: i128, bad: i128, sample: i128) -> i128 {
    const D1: f64 = 1.7155277699214135;
    const D2: f64 = 0.8989161620588988;
    let mingoodbad = good.min(bad);
    let popsize = good + bad;
    let maxgoodbad = good.max(bad);
    let m = sample.min(popsize - sample);
    let d4 = f(mingoodbad) / f(popsize);
    let d5 = 1.0 - d4;
    let d6 = f(m) * d4 + 0.5;
    // (popsize - m) * sample is an exact (possibly > 128-bit) integer in Python
    let big = (BigInt::from(popsize - m) * BigInt::from(sample)).to_f64().unwrap_or(f64::INFINITY);
    let d7 = (big * d4 * d5 / f(popsize - 1) + 0.5).sqrt();
    let d8 = D1 * d7 + D2;
    let d9 = (f(m + 1) * f(mingoodbad + 1) / f(popsize + 2)).floor() as i128;
    let d10 = loggam(d9 + 1) + loggam(mingoodbad - d9 + 1) + loggam(m - d9 + 1)
        + loggam(maxgoodbad - m + d9 + 1);
    let d11 = (f(m.min(mingoodbad)) + 1.0).min((d6 + 16.0 * d7).floor());
    let mut z: i128;
    loop {
        let x = tape.draw();
        let y = tape.draw();
        let w = d6 + d8 * (y - 0.5) / x;
        if w < 0.0 || w >= d11 {
            continue;
        }
        z = w.floor() as i128;
        let t = d10
            - (loggam(z + 1) + loggam(mingoodbad - z + 1) + loggam(m - z + 1)
                + loggam(maxgoodbad - m + z + 1));
        if x * (4.0 - x) - 3.0 <= t {
            break;
        }
        if x * (x - t) >= 1.0 {
            continue;
        }
        if 2.0 * x.ln() <= t {
            break;
        }
    }
    if good > bad {
        z = m - z;
    }
    if m < sample {
        z = good - z;
    }
    z
}

fn rhyper(tape: &mut Tape, kk: i128, nn1: i128, nn2: i128) -> i128 {
    if kk > 10 {
        hypergeometric_hrua(tape, nn1, nn2, kk)
    } else {
        hypergeometric_hyp(tape, nn1, nn2, kk)
    }
}

#[derive(Clone, Copy)]
struct Range {
    start: i128,
    end: i128,
}

impl Range {
    fn size(&self) -> i128 {
        self.end - self.start + 1
    }
    fn contains(&self, x: i128) -> bool {
        self.start <= x && x <= self.end
    }
}

fn sample_hgd(in_r: Range, out_r: Range, nsample: i128, tape: &mut Tape) -> i128 {
    let in_size = in_r.size();
    let out_size = out_r.size();
    let nsample_index = nsample - out_r.start + 1;
    if in_size == out_size {
        return in_r.start + nsample_index - 1;
    }
    let num = rhyper(tape, nsample_index, in_size, out_size - in_size);
    if num == 0 {
        in_r.start
    } else {
        in_r.start + num - 1
    }
}

fn sample_uniform(r: Range, tape: &mut Tape) -> i128 {
    let (mut start, mut end) = (r.start, r.end);
    while end - start + 1 > 1 {
        let mid = (start + end).div_euclid(2);
        if tape.bit() == 0 {
            end = mid;
        } else {
            start = mid + 1;
        }
    }
    start
}

/// The node's split point: pyope computes ceil(out_size / 2.0) in floating point.
fn midpoint(out_r: Range) -> i128 {
    let out_edge = out_r.start - 1;
    out_edge + (f(out_r.size()) / 2.0).ceil() as i128
}

fn check(in_r: Range, out_r: Range) -> Result<(), String> {
    if in_r.start > in_r.end || out_r.start > out_r.end {
        return Err("invalid range: start is greater than end".into());
    }
    if in_r.size() > out_r.size() {
        return Err("invalid range: the input range is larger than the output range".into());
    }
    Ok(())
}

pub fn encrypt_one(key: &[u8], mut in_r: Range, mut out_r: Range, pt: i128) -> Result<i128, String> {
    check(in_r, out_r)?;
    if !in_r.contains(pt) {
        return Err("plaintext is not within the input range".into());
    }
    loop {
        let in_size = in_r.size();
        let in_edge = in_r.start - 1;
        let out_size = out_r.size();
        let out_edge = out_r.start - 1;
        let mid = midpoint(out_r);
        if in_size == 1 {
            let mut tape = Tape::new(key, pt);
            return Ok(sample_uniform(out_r, &mut tape));
        }
        let mut tape = Tape::new(key, mid);
        let x = sample_hgd(in_r, out_r, mid, &mut tape);
        if pt <= x {
            in_r = Range { start: in_edge + 1, end: x };
            out_r = Range { start: out_edge + 1, end: mid };
        } else {
            in_r = Range { start: x + 1, end: in_edge + in_size };
            out_r = Range { start: mid + 1, end: out_edge + out_size };
        }
    }
}

pub fn decrypt_one(key: &[u8], mut in_r: Range, mut out_r: Range, ct: i128) -> Result<i128, String> {
    check(in_r, out_r)?;
    if !out_r.contains(ct) {
        return Err("ciphertext is not within the output range".into());
    }
    loop {
        let in_size = in_r.size();
        let in_edge = in_r.start - 1;
        let out_size = out_r.size();
        let out_edge = out_r.start - 1;
        let mid = midpoint(out_r);
        if in_size == 1 {
            let mut tape = Tape::new(key, in_r.start);
            return if sample_uniform(out_r, &mut tape) == ct {
                Ok(in_r.start)
            } else {
                Err("invalid ciphertext".into())
            };
        }
        let mut tape = Tape::new(key, mid);
        let x = sample_hgd(in_r, out_r, mid, &mut tape);
        if ct <= mid {
            in_r = Range { start: in_edge + 1, end: x };
            out_r = Range { start: out_edge + 1, end: mid };
        } else {
            in_r = Range { start: x + 1, end: in_edge + in_size };
            out_r = Range { start: mid + 1, end: out_edge + out_size };
        }
    }
}

fn ranges(a: i128, b: i128, c: i128, d: i128) -> (Range, Range) {
    (Range { start: a, end: b }, Range { start: c, end: d })
}

#[pyfunction]
fn encrypt(key: &[u8], in_start: i128, in_end: i128, out_start: i128, out_end: i128, plaintext: i128) -> PyResult<i128> {
    let (i, o) = ranges(in_start, in_end, out_start, out_end);
    encrypt_one(key, i, o, plaintext).map_err(PyValueError::new_err)
}

#[pyfunction]
fn decrypt(key: &[u8], in_start: i128, in_end: i128, out_start: i128, out_end: i128, ciphertext: i128) -> PyResult<i128> {
    let (i, o) = ranges(in_start, in_end, out_start, out_end);
    decrypt_one(key, i, o, ciphertext).map_err(PyValueError::new_err)
}

#[pyfunction]
fn encrypt_many(
    py: Python<'_>, key: Vec<u8>, in_start: i128, in_end: i128, out_start: i128, out_end: i128,
    plaintexts: Vec<i128>,
) -> PyResult<Vec<i128>> {
    let (i, o) = ranges(in_start, in_end, out_start, out_end);
    py.allow_threads(|| plaintexts.iter().map(|&p| encrypt_one(&key, i, o, p)).collect::<Result<Vec<_>, _>>())
        .map_err(PyValueError::new_err)
}

#[pyfunction]
fn decrypt_many(
    py: Python<'_>, key: Vec<u8>, in_start: i128, in_end: i128, out_start: i128, out_end: i128,
    ciphertexts: Vec<i128>,
) -> PyResult<Vec<i128>> {
    let (i, o) = ranges(in_start, in_end, out_start, out_end);
    py.allow_threads(|| ciphertexts.iter().map(|&c| decrypt_one(&key, i, o, c)).collect::<Result<Vec<_>, _>>())
        .map_err(PyValueError::new_err)
}

#[pymodule]
fn adaptive_ope_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(encrypt, m)?)?;
    m.add_function(wrap_pyfunction!(decrypt, m)?)?;
    m.add_function(wrap_pyfunction!(encrypt_many, m)?)?;
    m.add_function(wrap_pyfunction!(decrypt_many, m)?)?;
    Ok(())
}
