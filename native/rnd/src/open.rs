//! A fetched result column of an Eq onion opened in one call: each stored value's RND
//! layer (AES-256-CTR) and DET layer (one AES-256 block, ISO/IEC 7816-4 padding; a
//! value over one block: AES-SIV, RustCrypto's) removed, and the plaintext decoded into the Python value the column's encoding
//! gives, for the encodings whose bytes are plain machine forms (integers, booleans,
//! text, scaled numerics, dates, timestamps without time zone).
//!
//! ```python
//! opener = Opener(rnd_key, det_block_key, kind, width, scale, limit, det_siv_key)
//! values, redo, outer = opener.open(stored)   # stored: a list of bytes or None
//! ```
//!
//! ``values[i]`` is the value of ``stored[i]`` (``None`` for NULL), except at the
//! positions listed in ``redo``, which hold ``stored[i]`` unchanged: a value this opener
//! does not decide (a long DET value under AES-SIV without the SIV key, one that does not
//! authenticate, a wrong tag or length, bad padding, an encoding's special value such as
//! NaN or a date outside Python's years).  The caller opens those through its general
//! path, which raises the precise error where there is one.  ``outer`` counts the values that had an RND layer.
//!
//! The decoders are the Python encodings' ``from_bytes``, written again for their plain
//! cases only; the differential tests compare both on every value they produce.

use aes::cipher::{BlockDecrypt, BlockEncrypt, KeyInit};
use aes_siv::siv::Aes256Siv;
use rustc_hash::FxHashMap as HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::sync::Mutex;

use aes::Aes256;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBool, PyBytes, PyList, PyString, PyTuple};

use crate::Ctr;

pub(crate) const RND_TAG: u8 = 0x01;
pub(crate) const DET_TAG: u8 = 0x02;
pub(crate) const NONCE: usize = 12;
const SEEN_LIMIT: usize = 65_536; // distinct decoded values kept per column and result
pub(crate) const SHORT_LEN: usize = 17; // DET: tag + one block
const OUTER_LEN: usize = 1 + NONCE + SHORT_LEN; // a one-block DET value under RND

// the decoders, by the code the Python side passes (encoding_base.NATIVE_FORMS)
const BYTES: u8 = 0; // the DET plaintext itself (the caller decodes)
pub(crate) const INT: u8 = 1; // a big-endian two's-complement integer of `width` bytes
pub(crate) const TEXT: u8 = 2; // UTF-8
pub(crate) const BOOL: u8 = 3; // one byte, 0 or 1
pub(crate) const NUMERIC: u8 = 4; // an integer of `width` bytes, scaled by 10**-scale
pub(crate) const DATE: u8 = 5; // a 4-byte Julian day + 1 (0 and 2**32-1: the infinities)
// a timestamp without time zone: 8 bytes, microseconds from PostgreSQL's first timestamp
// plus ``limit`` (0 and 2**64-1: the infinities)
pub(crate) const TIMESTAMP: u8 = 6;

// the Julian days Python's `date` holds: 0001-01-01 and 9999-12-31
const PY_FIRST_JULIAN: i64 = 1_721_426;
const PY_LAST_JULIAN: i64 = 5_373_484;
const PG_EPOCH_JULIAN: i64 = 2_451_545; // 2000-01-01, PostgreSQL's epoch
const US_PER_DAY: i128 = 86_400_000_000;

// (the limited API has no constructors for these: the classes, called)
pub(crate) static DECIMAL: GILOnceCell<PyObject> = GILOnceCell::new();
pub(crate) static DATE_TYPE: GILOnceCell<PyObject> = GILOnceCell::new();
pub(crate) static DATETIME_TYPE: GILOnceCell<PyObject> = GILOnceCell::new();

/// A stored value's plaintext: ``block[..len]``, or ``long`` where it is over a block.
struct Plain {
    block: [u8; 16],
    len: usize,
    long: Option<Vec<u8>>,
    outer: bool,
}

/// A stored value as a row opener reads it: NULL, its bytes, or something else (left
/// to the caller).
#[derive(Clone, Copy)]
enum Stored<'a> {
    Null,
    Bytes(&'a [u8]),
    Other,
}

impl<'a> Stored<'a> {
    fn bytes(&self) -> Option<&'a [u8]> {
        match self {
            Stored::Bytes(b) => Some(b),
            _ => None,
        }
    }

    fn of(item: &'a Bound<'_, PyAny>) -> Self {
        if item.is_none() {
            Stored::Null
        } else if let Ok(b) = item.downcast::<PyBytes>() {
            Stored::Bytes(b.as_bytes())
        } else {
            Stored::Other
        }
    }
}

/// An opened value: NULL, the value (and whether it had an RND layer), or left to the
/// caller.
enum Cell {
    Null,
    Value(PyObject, bool),
    Left,
}

/// The values of a column decoded before in a result (see ``open_plain``), given up on
/// where they do not repeat: the memo of a column of distinct prices costs more than
/// it saves.
#[derive(Default)]
struct Seen {
    values: HashMap<[u8; 17], PyObject>,
    hits: usize,
    misses: usize,
}

impl Seen {
    fn off(&self) -> bool {
        self.misses >= 1024 && self.hits * 8 < self.misses
    }
}

/// A one-block DET value's plaintext, its ISO/IEC 7816-4 padding removed (None: bad
/// padding).
fn unpadded(block: &aes::Block, outer: bool) -> Option<Plain> {
    let end = block.iter().rposition(|&b| b != 0)?;
    if block[end] != 0x80 {
        return None;
    }
    Some(Plain { block: (*block).into(), len: end, long: None, outer })
}

/// ``out = data XOR`` AES-CTR's keystream for ``nonce`` (counter blocks ``nonce || i``,
/// big-endian, from 0): the RND layer, its blocks encrypted in one call.
pub(crate) fn keystream_xor(rnd: &Ctr, nonce: &[u8; NONCE], data: &[u8], out: &mut [u8]) {
    let blocks = data.len().div_ceil(16);
    let mut small = [aes::Block::default(); 4];
    let mut large;
    let stream: &mut [aes::Block] = if blocks <= small.len() {
        &mut small[..blocks]
    } else {
        large = vec![aes::Block::default(); blocks];
        &mut large
    };
    for (i, block) in stream.iter_mut().enumerate() {
        block[..NONCE].copy_from_slice(nonce);
        block[NONCE..].copy_from_slice(&(i as u32).to_be_bytes());
    }
    rnd.cipher.encrypt_blocks(stream);
    for (k, (o, d)) in out.iter_mut().zip(data).enumerate() {
        *o = d ^ stream[k / 16][k % 16];
    }
}

/// Opens one onion's stored values (see the module's doc).
#[pyclass(frozen)]
pub struct Opener {
    pub(crate) rnd: Option<Ctr>, // (None: an onion without an RND layer)
    pub(crate) det: Option<Aes256>, // (None: a Single onion, the value under RND alone)
    // the DET layer's AES-SIV (values over one block); None: those are the caller's
    pub(crate) siv: Option<Mutex<Aes256Siv>>,
    kind: u8,
    width: usize,
    scale: u32,
    // NUMERIC: the magnitude the encoding reserves for NaN (10**precision); at and
    // above it the value is the caller's
    limit: u128,
}

impl Opener {
    /// The plaintext of a stored value (its first ``len`` bytes of ``block``, or
    /// ``long`` where it is longer than a block), or None where it is not one this
    /// opener decides; the bool: whether it had an RND layer over a DET one.
    fn plaintext(&self, stored: &[u8]) -> Option<Plain> {
        let Some(det_key) = &self.det else {
            // a Single onion: RND over the value's bytes, of any length
            let rnd = self.rnd.as_ref()?;
            if stored.len() < 1 + NONCE || stored[0] != RND_TAG {
                return None;
            }
            let nonce: [u8; NONCE] = stored[1..1 + NONCE].try_into().ok()?;
            let body = &stored[1 + NONCE..];
            if body.len() <= 16 {
                let mut block = [0u8; 16];
                keystream_xor(rnd, &nonce, body, &mut block[..body.len()]);
                return Some(Plain { block, len: body.len(), long: None, outer: false });
            }
            let mut out = vec![0u8; body.len()];
            keystream_xor(rnd, &nonce, body, &mut out);
            return Some(Plain { block: [0u8; 16], len: out.len(), long: Some(out), outer: false });
        };
        let mut det = [0u8; SHORT_LEN];
        let outer = match stored.first()? {
            &RND_TAG if stored.len() > 1 + NONCE + SHORT_LEN => {
                // a long DET value (AES-SIV) under RND
                let rnd = self.rnd.as_ref()?;
                let nonce: [u8; NONCE] = stored[1..1 + NONCE].try_into().ok()?;
                let mut long = vec![0u8; stored.len() - 1 - NONCE];
                keystream_xor(rnd, &nonce, &stored[1 + NONCE..], &mut long);
                return self.siv_plaintext(&long, true);
            }
            &DET_TAG if stored.len() > SHORT_LEN => return self.siv_plaintext(stored, false),
            &RND_TAG => {
                let rnd = self.rnd.as_ref()?;
                if stored.len() != 1 + NONCE + SHORT_LEN {
                    return None;
                }
                let nonce: [u8; NONCE] = stored[1..1 + NONCE].try_into().ok()?;
                keystream_xor(rnd, &nonce, &stored[1 + NONCE..], &mut det);
                true
            }
            &DET_TAG if stored.len() == SHORT_LEN => {
                det.copy_from_slice(stored);
                false
            }
            _ => return None,
        };
        if det[0] != DET_TAG {
            return None;
        }
        let mut block = aes::Block::clone_from_slice(&det[1..]);
        det_key.decrypt_block(&mut block);
        unpadded(&block, outer)
    }

    /// The plaintexts of a result column's stored values (None: not one this opener
    /// decides, or NULL).  The common forms -- a one-block DET value, alone or under RND
    /// -- have their AES blocks processed together, a few thousand a call, which AES-NI
    /// pipelines (one block at a time, each waits for the last); the others one by one
    /// (``plaintext``).  The same plaintexts as ``plaintext`` of each.
    fn plaintexts(&self, stored: &[Stored<'_>]) -> Vec<Option<Plain>> {
        let Some(det_key) = &self.det else {
            return stored.iter().map(|s| s.bytes().and_then(|b| self.plaintext(b))).collect();
        };
        let under_rnd = |b: &[u8]| self.rnd.is_some() && b.len() == OUTER_LEN && b[0] == RND_TAG;
        // the RND layer's counter blocks (nonce || 0, nonce || 1) of each short value
        let mut stream: Vec<aes::Block> = Vec::new();
        if let Some(rnd) = &self.rnd {
            for b in stored.iter().filter_map(Stored::bytes).filter(|b| under_rnd(b)) {
                for counter in 0..2u32 {
                    let mut block = aes::Block::default();
                    block[..NONCE].copy_from_slice(&b[1..1 + NONCE]);
                    block[NONCE..].copy_from_slice(&counter.to_be_bytes());
                    stream.push(block);
                }
            }
            rnd.cipher.encrypt_blocks(&mut stream);
        }
        // the DET blocks (RND removed), and where each goes
        let mut out: Vec<Option<Plain>> = Vec::with_capacity(stored.len());
        let mut blocks: Vec<aes::Block> = Vec::with_capacity(stored.len());
        let mut at: Vec<(usize, bool)> = Vec::with_capacity(stored.len());
        let mut keystream = stream.chunks_exact(2);
        for (k, s) in stored.iter().enumerate() {
            out.push(None);
            let Some(b) = s.bytes() else { continue };
            if under_rnd(b) {
                let Some(ks) = keystream.next() else { continue };
                let body = &b[1 + NONCE..];
                let key_byte = |i: usize| ks[i / 16][i % 16];
                if body[0] ^ key_byte(0) != DET_TAG {
                    continue;
                }
                let mut block = aes::Block::default();
                for (i, byte) in block.iter_mut().enumerate() {
                    *byte = body[i + 1] ^ key_byte(i + 1);
                }
                blocks.push(block);
                at.push((k, true));
            } else if b.len() == SHORT_LEN && b[0] == DET_TAG {
                blocks.push(aes::Block::clone_from_slice(&b[1..]));
                at.push((k, false));
            } else {
                out[k] = self.plaintext(b);
            }
        }
        det_key.decrypt_blocks(&mut blocks);
        for (block, (k, outer)) in blocks.iter().zip(at) {
            out[k] = unpadded(block, outer);
        }
        out
    }

    /// A column's values opened (see the module's doc): ``Left`` where this opener does
    /// not decide one.
    fn open_column(&self, py: Python<'_>, stored: &[Stored<'_>], seen: &mut Seen) -> PyResult<Vec<Cell>> {
        let mut cells = Vec::with_capacity(stored.len());
        for (s, plain) in stored.iter().zip(self.plaintexts(stored)) {
            cells.push(match (s, plain) {
                (Stored::Null, _) => Cell::Null,
                (_, None) => Cell::Left,
                (_, Some(plain)) => match self.open_plain(py, plain, seen)? {
                    Some((v, rnd)) => Cell::Value(v, rnd),
                    None => Cell::Left,
                },
            });
        }
        Ok(cells)
    }

    /// The plaintext of a long DET value (``tag || SIV || ciphertext``), None where it is
    /// not one or does not authenticate (the caller raises the precise error).
    fn siv_plaintext(&self, det: &[u8], outer: bool) -> Option<Plain> {
        if det.first() != Some(&DET_TAG) {
            return None;
        }
        let mut siv = self.siv.as_ref()?.lock().ok()?;
        let long = siv.decrypt::<&[&[u8]], &&[u8]>(&[], &det[1..]).ok()?;
        Some(Plain { block: [0u8; 16], len: long.len(), long: Some(long), outer })
    }

    /// The value of a plaintext (``None``: the caller's, see the module's doc) and
    /// whether it had an RND layer.
    ///
    /// ``seen``: the values decoded before in this result, by padded plaintext (kinds
    /// whose decoding calls into Python: a result's dates and prices repeat).
    fn open_plain(&self, py: Python<'_>, plain: Plain, seen: &mut Seen) -> PyResult<Option<(PyObject, bool)>> {
        let rnd = plain.outer;
        if let Some(long) = &plain.long {
            return Ok(self.decode(py, long)?.map(|v| (v, rnd)));
        }
        let (block, len) = (plain.block, plain.len);
        if !matches!(self.kind, NUMERIC | DATE | TIMESTAMP) || seen.off() {
            return Ok(self.decode(py, &block[..len])?.map(|v| (v, rnd)));
        }
        // (the key: the block and the length, for a Single onion's unpadded values)
        let mut key = [0u8; 17];
        key[..16].copy_from_slice(&block);
        key[16] = len as u8;
        if let Some(v) = seen.values.get(&key) {
            seen.hits += 1;
            return Ok(Some((v.clone_ref(py), rnd)));
        }
        seen.misses += 1;
        let value = self.decode(py, &block[..len])?;
        if let Some(v) = &value {
            if seen.values.len() < SEEN_LIMIT {
                seen.values.insert(key, v.clone_ref(py));
            }
        }
        Ok(value.map(|v| (v, rnd)))
    }

    fn decode(&self, py: Python<'_>, p: &[u8]) -> PyResult<Option<PyObject>> {
        Ok(Some(match self.kind {
            BYTES => PyBytes::new(py, p).into_any().unbind(),
            INT => match signed(p, self.width) {
                Some(i) => i.into_pyobject(py)?.into_any().unbind(),
                None => return Ok(None),
            },
            TEXT => match std::str::from_utf8(p) {
                // (width: char(n)'s length, its value padded with spaces to n characters)
                Ok(s) if self.width > 0 => {
                    let n = s.chars().count();
                    let padded = format!("{s}{}", " ".repeat(self.width.saturating_sub(n)));
                    PyString::new(py, &padded).into_any().unbind()
                }
                Ok(s) => PyString::new(py, s).into_any().unbind(),
                Err(_) => return Ok(None),
            },
            BOOL => match p {
                [0] => PyBool::new(py, false).to_owned().into_any().unbind(),
                [1] => PyBool::new(py, true).to_owned().into_any().unbind(),
                _ => return Ok(None),
            },
            NUMERIC => match signed(p, self.width) {
                Some(i) => match self.decimal(py, i)? {
                    Some(d) => d,
                    None => return Ok(None),
                },
                None => return Ok(None),
            },
            DATE => match date(py, p)? {
                Some(d) => d,
                None => return Ok(None),
            },
            TIMESTAMP => match timestamp(py, p, self.limit)? {
                Some(t) => t,
                None => return Ok(None),
            },
            _ => return Ok(None),
        }))
    }

    /// ``Decimal(i).scaleb(-scale)`` as its digits: the same value and exponent.  NaN
    /// (the limit itself) and what lies beyond it are the caller's.
    fn decimal(&self, py: Python<'_>, i: i128) -> PyResult<Option<PyObject>> {
        if i.unsigned_abs() >= self.limit {
            return Ok(None);
        }
        // the digits written from the end of a buffer: "-", "0." and zeros where the
        // scale is longer than the digits, the point before the last ``scale`` digits
        let scale = self.scale as usize;
        let mut buf = [0u8; 96];
        let mut at = buf.len();
        let mut m = i.unsigned_abs();
        let mut written = 0usize;
        while m > 0 || written <= scale {
            if written == scale && scale > 0 {
                at -= 1;
                buf[at] = b'.';
            }
            at -= 1;
            buf[at] = b'0' + (m % 10) as u8;
            m /= 10;
            written += 1;
        }
        if i < 0 {
            at -= 1;
            buf[at] = b'-';
        }
        // (ASCII digits, '.', '-': valid UTF-8)
        let text = PyString::new(py, std::str::from_utf8(&buf[at..]).unwrap_or("NaN"));
        let decimal = DECIMAL.get_or_try_init(py, || -> PyResult<PyObject> {
            Ok(py.import("decimal")?.getattr("Decimal")?.unbind())
        })?;
        Ok(Some(decimal.call1(py, (text,))?))
    }
}

fn signed(p: &[u8], width: usize) -> Option<i128> {
    if p.len() != width || width == 0 || width > 15 {
        return None;
    }
    let mut v: i128 = if p[0] & 0x80 != 0 { -1 } else { 0 };
    for &b in p {
        v = (v << 8) | b as i128;
    }
    Some(v)
}

/// A Julian day's proleptic Gregorian (year, month, day): H. Hinnant's inverse of
/// days_from_civil, over the days since 1970-01-01.
fn civil(julian: i64) -> (i32, u8, u8) {
    let z = julian - 2_440_588 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    ((yoe + era * 400 + i64::from(m <= 2)) as i32, m, d)
}

/// A Julian day as Python's date (proleptic Gregorian), None outside Python's years.
fn date(py: Python<'_>, p: &[u8]) -> PyResult<Option<PyObject>> {
    let raw: [u8; 4] = match p.try_into() {
        Ok(r) => r,
        Err(_) => return Ok(None),
    };
    let julian = u32::from_be_bytes(raw) as i64 - 1;
    if !(PY_FIRST_JULIAN..=PY_LAST_JULIAN).contains(&julian) {
        return Ok(None); // the infinities, BC dates, years past 9999
    }
    let (y, m, d) = civil(julian);
    let date = DATE_TYPE.get_or_try_init(py, || -> PyResult<PyObject> {
        Ok(py.import("datetime")?.getattr("date")?.unbind())
    })?;
    Ok(Some(date.call1(py, (y, m, d))?))
}

/// A timestamp without time zone (8 bytes: microseconds since 2000-01-01 plus
/// ``offset``) as Python's naive datetime, None for the infinities and outside Python's
/// years (``far_datetime.timestamp_of`` of the same microseconds, zone None).
fn timestamp(py: Python<'_>, p: &[u8], offset: u128) -> PyResult<Option<PyObject>> {
    let raw: [u8; 8] = match p.try_into() {
        Ok(r) => r,
        Err(_) => return Ok(None),
    };
    let i = u64::from_be_bytes(raw);
    if i == 0 || i == u64::MAX {
        return Ok(None); // -infinity, infinity
    }
    let micros = i as i128 - offset as i128;
    let julian = micros.div_euclid(US_PER_DAY) as i64 + PG_EPOCH_JULIAN;
    if !(PY_FIRST_JULIAN..=PY_LAST_JULIAN).contains(&julian) {
        return Ok(None);
    }
    let (y, m, d) = civil(julian);
    let us = micros.rem_euclid(US_PER_DAY) as i64;
    let (hour, minute) = ((us / 3_600_000_000) as u8, (us / 60_000_000 % 60) as u8);
    let (second, micro) = ((us / 1_000_000 % 60) as u8, (us % 1_000_000) as u32);
    let datetime = DATETIME_TYPE.get_or_try_init(py, || -> PyResult<PyObject> {
        Ok(py.import("datetime")?.getattr("datetime")?.unbind())
    })?;
    Ok(Some(datetime.call1(py, (y, m, d, hour, minute, second, micro))?))
}

#[pymethods]
impl Opener {
    #[new]
    #[pyo3(signature = (rnd_key, det_block_key, kind, width, scale, limit, det_siv_key=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        rnd_key: Option<&[u8]>,
        det_block_key: Option<&[u8]>,
        kind: u8,
        width: usize,
        scale: u32,
        limit: u128,
        det_siv_key: Option<&[u8]>,
    ) -> PyResult<Self> {
        let det = det_block_key
            .map(|k| {
                Aes256::new_from_slice(k)
                    .map_err(|_| PyValueError::new_err("AES-256 needs a 32-byte key"))
            })
            .transpose()?;
        if det.is_none() && rnd_key.is_none() {
            return Err(PyValueError::new_err("an opener needs a layer"));
        }
        if kind > TIMESTAMP {
            return Err(PyValueError::new_err("unknown decoder"));
        }
        let rnd = rnd_key.map(Ctr::from_key).transpose()?;
        let siv = det_siv_key
            .map(|k| {
                <Aes256Siv as aes_siv::KeyInit>::new_from_slice(k)
                    .map(Mutex::new)
                    .map_err(|_| PyValueError::new_err("AES-SIV-256 needs a 64-byte key"))
            })
            .transpose()?;
        Ok(Opener { rnd, det, siv, kind, width, scale, limit })
    }

    /// (values, positions left to the caller, values that had an RND layer): see the
    /// module's doc.
    fn open(&self, py: Python<'_>, stored: &Bound<'_, PyList>) -> PyResult<(Py<PyList>, Vec<usize>, usize)> {
        let items: Vec<Bound<'_, PyAny>> = stored.iter().collect();
        let views: Vec<Stored<'_>> = items.iter().map(Stored::of).collect();
        let cells = self.open_column(py, &views, &mut Seen::default())?;
        let mut values: Vec<PyObject> = Vec::with_capacity(items.len());
        let mut redo = Vec::new();
        let mut outer = 0usize;
        for (i, (cell, item)) in cells.into_iter().zip(items).enumerate() {
            values.push(match cell {
                Cell::Value(v, rnd) => {
                    outer += usize::from(rnd);
                    v
                }
                Cell::Null => item.unbind(),
                Cell::Left => {
                    redo.push(i);
                    item.unbind()
                }
            });
        }
        Ok((PyList::new(py, values)?.unbind(), redo, outer))
    }

    fn __repr__(&self) -> &'static str {
        "Opener(<keys hidden>)"
    }
}

/// A server result's rows opened in one call: output ``j`` of each row is column
/// ``positions[j]`` of the fetched row opened by ``openers[j]`` (NULL stays NULL); the
/// outputs without an opener (the client computes them otherwise) are taken in order
/// from ``filled``, one list of values per such output.  Where an opener leaves a value
/// to the caller, the output holds ``None`` and its (row, output) is listed.
///
/// ```python
/// rows_opener = RowOpener(openers, positions)
/// rows, redo, counts = rows_opener.open(raw_rows, filled)
/// ```
///
/// ``counts[j]``: (values output ``j``'s opener opened, those of them that had an RND
/// layer over a DET one).
#[pyclass(frozen)]
pub struct RowOpener {
    openers: Vec<Option<Py<Opener>>>,
    positions: Vec<usize>,
}

#[pymethods]
impl RowOpener {
    #[new]
    fn new(openers: Vec<Option<Py<Opener>>>, positions: Vec<usize>) -> PyResult<Self> {
        if openers.len() != positions.len() {
            return Err(PyValueError::new_err("one position per opener"));
        }
        Ok(RowOpener { openers, positions })
    }

    #[allow(clippy::type_complexity)]
    fn open(
        &self,
        py: Python<'_>,
        raw: &Bound<'_, PyList>,
        filled: Vec<Bound<'_, PyList>>,
    ) -> PyResult<(Py<PyList>, Vec<(usize, usize)>, Vec<(usize, usize)>)> {
        let missing = self.openers.iter().filter(|o| o.is_none()).count();
        if filled.len() != missing || filled.iter().any(|f| f.len() != raw.len()) {
            return Err(PyValueError::new_err("one filled column per output without an opener"));
        }
        let rows: Vec<Bound<'_, PyTuple>> =
            raw.iter().map(|r| r.downcast_into::<PyTuple>()).collect::<Result<_, _>>()?;
        // each opened output's column, opened as a whole (its AES blocks together)
        let mut columns: Vec<Option<std::vec::IntoIter<Cell>>> = Vec::with_capacity(self.openers.len());
        for (opener, &at) in self.openers.iter().zip(&self.positions) {
            let Some(opener) = opener else {
                columns.push(None);
                continue;
            };
            let items: Vec<Bound<'_, PyAny>> = rows.iter().map(|r| r.get_item(at)).collect::<Result<_, _>>()?;
            let views: Vec<Stored<'_>> = items.iter().map(Stored::of).collect();
            let mut seen = Seen::default();
            columns.push(Some(opener.get().open_column(py, &views, &mut seen)?.into_iter()));
        }
        let mut out_rows: Vec<Bound<'_, PyTuple>> = Vec::with_capacity(rows.len());
        let mut redo = Vec::new();
        let mut counts = vec![(0usize, 0usize); self.openers.len()];
        let mut out: Vec<PyObject> = Vec::with_capacity(self.openers.len());
        for i in 0..rows.len() {
            out.clear();
            let mut next_filled = 0usize;
            for (j, column) in columns.iter_mut().enumerate() {
                let Some(column) = column else {
                    out.push(filled[next_filled].get_item(i)?.unbind());
                    next_filled += 1;
                    continue;
                };
                out.push(placed(py, column.next(), &mut counts[j], &mut redo, (i, j)));
            }
            out_rows.push(PyTuple::new(py, out.drain(..))?);
        }
        Ok((PyList::new(py, out_rows)?.unbind(), redo, counts))
    }

    /// ``open`` of rows ``start..stop`` of a server result still in libpq's hands: the
    /// ``PGresult`` at address ``result`` (every column a ``bytea`` in binary format), its
    /// values read through ``libpq``'s ``(PQgetvalue, PQgetlength, PQgetisnull)``
    /// (addresses in the libpq that made it) -- no Python object is made for a stored
    /// value.  Only for a result each output of which has an opener (``filled`` empty);
    /// a value left to the caller is listed in ``redo`` as by ``open``, its row counted
    /// from ``start``.  (The caller opens a large result a range at a time, so that the
    /// GIL this holds is given to other threads in between.)
    ///
    /// # Safety (kept by the caller)
    /// ``result`` is a live ``PGresult`` of at least ``stop`` rows and of every column
    /// of ``positions``, held for the call; the three addresses are those functions.
    #[allow(clippy::type_complexity)]
    fn open_result(
        &self,
        py: Python<'_>,
        result: usize,
        start: usize,
        stop: usize,
        libpq: (usize, usize, usize),
    ) -> PyResult<(Py<PyList>, Vec<(usize, usize)>, Vec<(usize, usize)>)> {
        if self.openers.iter().any(|o| o.is_none()) {
            return Err(PyValueError::new_err("a result opened in libpq needs an opener per output"));
        }
        if result == 0 || libpq.0 == 0 || libpq.1 == 0 || libpq.2 == 0 {
            return Err(PyValueError::new_err("no result or no libpq"));
        }
        let res = result as *const c_void;
        // SAFETY: the addresses are libpq's functions of these signatures (the caller's
        // contract), called on the live result with in-range row and column numbers.
        let (getvalue, getlength, getisnull) = unsafe {
            (
                std::mem::transmute::<usize, PqGetValue>(libpq.0),
                std::mem::transmute::<usize, PqGetInt>(libpq.1),
                std::mem::transmute::<usize, PqGetInt>(libpq.2),
            )
        };
        let n = stop.saturating_sub(start);
        let first = c_int::try_from(start).map_err(|_| PyValueError::new_err("too many rows"))?;
        c_int::try_from(stop).map_err(|_| PyValueError::new_err("too many rows"))?;
        // each output's column, opened as a whole (its AES blocks together)
        let mut columns: Vec<std::vec::IntoIter<Cell>> = Vec::with_capacity(self.openers.len());
        for (opener, &at) in self.openers.iter().flatten().zip(&self.positions) {
            let col = c_int::try_from(at).map_err(|_| PyValueError::new_err("bad column"))?;
            let views: Vec<Stored<'_>> = (first..first + n as c_int)
                .map(|row| {
                    // SAFETY: see above; the bytes live as long as the result.
                    unsafe {
                        if getisnull(res, row, col) != 0 {
                            return Stored::Null;
                        }
                        let len = usize::try_from(getlength(res, row, col)).unwrap_or(0);
                        let ptr = getvalue(res, row, col) as *const u8;
                        Stored::Bytes(if len == 0 || ptr.is_null() { &[][..] } else { std::slice::from_raw_parts(ptr, len) })
                    }
                })
                .collect();
            let mut seen = Seen::default();
            columns.push(opener.get().open_column(py, &views, &mut seen)?.into_iter());
        }
        let mut rows: Vec<Bound<'_, PyTuple>> = Vec::with_capacity(n);
        let mut redo = Vec::new();
        let mut counts = vec![(0usize, 0usize); self.openers.len()];
        let mut out: Vec<PyObject> = Vec::with_capacity(columns.len());
        for i in 0..n {
            out.extend(
                columns
                    .iter_mut()
                    .enumerate()
                    .map(|(j, column)| placed(py, column.next(), &mut counts[j], &mut redo, (i, j))),
            );
            rows.push(PyTuple::new(py, out.drain(..))?);
        }
        Ok((PyList::new(py, rows)?.unbind(), redo, counts))
    }

    fn __repr__(&self) -> &'static str {
        "RowOpener(<keys hidden>)"
    }
}

/// A row opener's output value: the opened value (counted: opened, and had an RND layer),
/// NULL, or ``None`` with its (row, output) listed for the caller.
fn placed(
    py: Python<'_>,
    cell: Option<Cell>,
    count: &mut (usize, usize),
    redo: &mut Vec<(usize, usize)>,
    at: (usize, usize),
) -> PyObject {
    match cell {
        Some(Cell::Value(v, rnd)) => {
            count.0 += 1;
            count.1 += usize::from(rnd);
            v
        }
        Some(Cell::Null) => py.None(),
        Some(Cell::Left) | None => {
            redo.push(at);
            py.None()
        }
    }
}

type PqGetValue = unsafe extern "C" fn(*const c_void, c_int, c_int) -> *const c_char;
type PqGetInt = unsafe extern "C" fn(*const c_void, c_int, c_int) -> c_int;
