//! Boldyreva–Chenette–Lee–O'Neill order-preserving encryption, bit-identical to pyope 0.2.2
//! (`pyope.ope.OPE`), as the Python module `adaptive_ope_native`.
//!
//! ```python
//! encrypt(key, in_start, in_end, out_start, out_end, plaintext) -> int
//! decrypt(key, in_start, in_end, out_start, out_end, ciphertext) -> int
//! encrypt_many(key, in_start, in_end, out_start, out_end, plaintexts) -> list[int]
//! decrypt_many(key, in_start, in_end, out_start, out_end, ciphertexts) -> list[int]
//!
//! c = Cipher(key, in_start, in_end, out_start, out_end)  # keyed once, splits memoized
//! c.encrypt(plaintext); c.decrypt(ciphertext); c.encrypt_many(...); c.decrypt_many(...)
//! ```
//!
//! A `Cipher` gives the same results as the functions; it keeps the HMAC key schedule and
//! the tree nodes it has sampled (up to `CACHE_MAX_NODES`, about 1 MB), so that values
//! sharing the upper part of their path (the top levels are shared by all) skip it.
//!
//! Ranges are inclusive, their limits signed 128-bit integers, and their sizes at most
//! 2**127.  `ValueError` is raised for an invalid range, a value outside its range and a
//! ciphertext that is not an encryption of anything.  Where pyope itself fails on a
//! valid input (a sampler coin draw of exactly zero, probability 2**-32 per draw, makes it
//! divide by zero) this module raises the same `ZeroDivisionError`.

mod hgd;
mod ope;
mod tape;

pub use ope::{Ope, OpeError, SplitCache, CACHE_MAX_NODES, CACHE_MIN_IN_SIZE, MAX_SIZE};

use pyo3::exceptions::{PyTypeError, PyValueError, PyZeroDivisionError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt};

fn to_py_err(e: OpeError) -> PyErr {
    match e {
        OpeError::ZeroDivision => PyZeroDivisionError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// A range limit: a Python int (not a bool, as pyope's `ValueRange`) that fits 128 bits.
fn limit(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<i128> {
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(PyValueError::new_err(format!("invalid range {what}: must be an integer")));
    }
    obj.extract::<i128>().map_err(|_| {
        PyValueError::new_err(format!("invalid range {what}: outside the signed 128-bit integers"))
    })
}

/// A plaintext or ciphertext.  Integers beyond 128 bits are outside every range.
fn value(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<i128> {
    if !obj.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!("{what} must be an integer")));
    }
    obj.extract::<i128>()
        .map_err(|_| PyValueError::new_err(format!("{what} is not within the range")))
}

fn make(
    key: &[u8],
    in_start: &Bound<'_, PyAny>,
    in_end: &Bound<'_, PyAny>,
    out_start: &Bound<'_, PyAny>,
    out_end: &Bound<'_, PyAny>,
) -> PyResult<Ope> {
    Ope::new(
        key,
        limit(in_start, "start")?,
        limit(in_end, "end")?,
        limit(out_start, "start")?,
        limit(out_end, "end")?,
    )
    .map_err(to_py_err)
}

fn values(seq: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<i128>> {
    let mut out = Vec::with_capacity(seq.len().unwrap_or(0));
    for item in seq.try_iter()? {
        out.push(value(&item?, what)?);
    }
    Ok(out)
}

/// Encrypt one integer: pyope's `OPE(key, ValueRange(in_start, in_end),
/// ValueRange(out_start, out_end)).encrypt(plaintext)`.
#[pyfunction]
fn encrypt(
    key: &[u8],
    in_start: &Bound<'_, PyAny>,
    in_end: &Bound<'_, PyAny>,
    out_start: &Bound<'_, PyAny>,
    out_end: &Bound<'_, PyAny>,
    plaintext: &Bound<'_, PyAny>,
) -> PyResult<i128> {
    let ope = make(key, in_start, in_end, out_start, out_end)?;
    ope.encrypt(value(plaintext, "plaintext")?).map_err(to_py_err)
}

/// Decrypt one integer: pyope's `OPE(...).decrypt(ciphertext)`.
#[pyfunction]
fn decrypt(
    key: &[u8],
    in_start: &Bound<'_, PyAny>,
    in_end: &Bound<'_, PyAny>,
    out_start: &Bound<'_, PyAny>,
    out_end: &Bound<'_, PyAny>,
    ciphertext: &Bound<'_, PyAny>,
) -> PyResult<i128> {
    let ope = make(key, in_start, in_end, out_start, out_end)?;
    ope.decrypt(value(ciphertext, "ciphertext")?).map_err(to_py_err)
}

/// A batch is split over the machine's cores once it holds this many tree levels of work
/// (values times the bits of the input domain: about 0.5 ms, far above the cost of a
/// thread).  Each part walks the tree on its own, so the nodes the parts share near the
/// root are sampled once per part.  The GIL is released meanwhile, and a client waiting
/// for its own encryptions leaves the cores idle otherwise: a loader's 200-row batch of
/// 64-bit string prefixes runs on both cores of a 2-core machine.
const PARALLEL_MIN_WORK: u128 = 2048;

fn in_parallel<F>(ope: &Ope, items: &[i128], work: F) -> Result<Vec<i128>, OpeError>
where
    F: Fn(&[i128]) -> Result<Vec<i128>, OpeError> + Sync,
{
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores < 2 || (items.len() as u128) * ope.levels() < PARALLEL_MIN_WORK {
        return work(items);
    }
    let size = items.len().div_ceil(cores);
    let parts: Vec<Result<Vec<i128>, OpeError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .chunks(size)
            .map(|chunk| scope.spawn(|| work(chunk)))
            .collect();
        handles.into_iter().map(|h| h.join().expect("OPE worker panicked")).collect()
    });
    let mut out = Vec::with_capacity(items.len());
    for part in parts {
        out.extend(part?);
    }
    Ok(out)
}

/// `encrypt` over an iterable of integers, computed without holding the GIL.
#[pyfunction]
fn encrypt_many(
    py: Python<'_>,
    key: &[u8],
    in_start: &Bound<'_, PyAny>,
    in_end: &Bound<'_, PyAny>,
    out_start: &Bound<'_, PyAny>,
    out_end: &Bound<'_, PyAny>,
    plaintexts: &Bound<'_, PyAny>,
) -> PyResult<Vec<i128>> {
    let ope = make(key, in_start, in_end, out_start, out_end)?;
    let xs = values(plaintexts, "plaintext")?;
    py.allow_threads(|| in_parallel(&ope, &xs, |chunk| ope.encrypt_many(chunk)))
        .map_err(to_py_err)
}

/// `decrypt` over an iterable of integers, computed without holding the GIL.
#[pyfunction]
fn decrypt_many(
    py: Python<'_>,
    key: &[u8],
    in_start: &Bound<'_, PyAny>,
    in_end: &Bound<'_, PyAny>,
    out_start: &Bound<'_, PyAny>,
    out_end: &Bound<'_, PyAny>,
    ciphertexts: &Bound<'_, PyAny>,
) -> PyResult<Vec<i128>> {
    let ope = make(key, in_start, in_end, out_start, out_end)?;
    let cs = values(ciphertexts, "ciphertext")?;
    py.allow_threads(|| in_parallel(&ope, &cs, |chunk| ope.decrypt_many(chunk)))
        .map_err(to_py_err)
}

/// One key and pair of ranges, keyed once, its sampled splits memoized (see `SplitCache`):
/// the functions' results, for a caller that encrypts many values under one key.
#[pyclass(frozen)]
struct Cipher {
    ope: Ope,
}

#[pymethods]
impl Cipher {
    #[new]
    fn new(
        key: &[u8],
        in_start: &Bound<'_, PyAny>,
        in_end: &Bound<'_, PyAny>,
        out_start: &Bound<'_, PyAny>,
        out_end: &Bound<'_, PyAny>,
    ) -> PyResult<Self> {
        let ope = Ope::cached(
            key,
            limit(in_start, "start")?,
            limit(in_end, "end")?,
            limit(out_start, "start")?,
            limit(out_end, "end")?,
        )
        .map_err(to_py_err)?;
        Ok(Cipher { ope })
    }

    fn encrypt(&self, plaintext: &Bound<'_, PyAny>) -> PyResult<i128> {
        self.ope.encrypt(value(plaintext, "plaintext")?).map_err(to_py_err)
    }

    fn decrypt(&self, ciphertext: &Bound<'_, PyAny>) -> PyResult<i128> {
        self.ope.decrypt(value(ciphertext, "ciphertext")?).map_err(to_py_err)
    }

    fn encrypt_many(&self, py: Python<'_>, plaintexts: &Bound<'_, PyAny>) -> PyResult<Vec<i128>> {
        let xs = values(plaintexts, "plaintext")?;
        let ope = &self.ope;
        py.allow_threads(|| in_parallel(ope, &xs, |chunk| ope.encrypt_many(chunk)))
            .map_err(to_py_err)
    }

    fn decrypt_many(&self, py: Python<'_>, ciphertexts: &Bound<'_, PyAny>) -> PyResult<Vec<i128>> {
        let cs = values(ciphertexts, "ciphertext")?;
        let ope = &self.ope;
        py.allow_threads(|| in_parallel(ope, &cs, |chunk| ope.decrypt_many(chunk)))
            .map_err(to_py_err)
    }

    /// How many tree nodes are memoized.
    #[getter]
    fn cached_nodes(&self) -> usize {
        self.ope.cached_nodes()
    }

    fn __repr__(&self) -> String {
        "Cipher(<key hidden>)".to_string()
    }
}

#[pymodule]
fn adaptive_ope_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Cipher>()?;
    m.add_function(wrap_pyfunction!(encrypt, m)?)?;
    m.add_function(wrap_pyfunction!(decrypt, m)?)?;
    m.add_function(wrap_pyfunction!(encrypt_many, m)?)?;
    m.add_function(wrap_pyfunction!(decrypt_many, m)?)?;
    m.add("MAX_RANGE_SIZE", MAX_SIZE)?;
    m.add("CACHE_MAX_NODES", CACHE_MAX_NODES)?;
    Ok(())
}
