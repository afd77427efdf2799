//! A single-row INSERT's stored values made in one call: the inverse of ``RowOpener``
//! for the onions whose innermost layer is DET (an Eq onion), from the application's
//! own parameters.
//!
//! ```python
//! sealer = RowSealer([(param_index, opener, chars, onion), ...])   # one per stored column
//! # (param_index None: a NULL the statement writes)
//! stored, left, det, rnd = sealer.seal(params, nonces)   # nonces: 12 random bytes a slot
//! ```
//!
//! Slot ``j`` takes ``params[param_index]``, checks it as the column's encoding checks
//! it, encodes it to the bytes the encoding's ``to_bytes`` gives (the opener's decoder
//! names the form: integers, text, booleans, scaled numerics, dates), encrypts them
//! under the opener's DET key (one AES block, ISO/IEC 7816-4 padding) and, where the
//! onion is at RND now (its ``layer`` read on each call: a peel may move it), under its
//! RND key with the slot's nonce.  NULL stays NULL (``None``).
//!
//! It decides only the plain cases: a parameter of exactly the Python type the form
//! names (``int``, ``str``, ``bool``; ``Decimal``, ``int`` or ``float`` for a numeric;
//! ``date`` or its ISO text for a date) whose value the column holds as it is or rounds
//! as PostgreSQL rounds (numeric's scale), whose bytes fit one block.  Every other slot -- a slot without an opener, another type, a value out of
//! range, too long, a layer other than RND or DET -- is listed in ``left`` with
//! ``None`` in its place: the caller makes it (and raises the precise error where there
//! is one).  ``det`` and ``rnd`` count the DET values made and those sealed under RND.
//!
//! The encoders are the Python encodings' ``coerce`` and ``to_bytes``, written again for
//! their plain cases only; the differential tests compare both on every value.

use aes::cipher::BlockEncrypt;
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::open::{
    keystream_xor, Opener, BOOL, DATE, DATE_TYPE, DECIMAL, DET_TAG, INT, NONCE, NUMERIC,
    RND_TAG, SHORT_LEN, TEXT,
};

const SHORT_MAX: usize = 15; // the longest DET plaintext of one block
const PY_ORDINAL_TO_STORED: i64 = 1_721_426; // date.toordinal() to the Julian day + 1
const MAX_DIGITS: usize = 38; // numeric digits held in an i128 without overflow

struct Slot {
    index: Option<usize>, // (None: a NULL written in the statement)
    opener: Option<Py<Opener>>,
    // varchar(n) / char(n): n (a longer string is the caller's: PostgreSQL's rules for
    // the excess), 0 for text
    chars: usize,
    onion: PyObject,
}

/// One INSERT's row sealed in one call (see the module's doc).
#[pyclass(frozen)]
pub struct RowSealer {
    slots: Vec<Slot>,
}

/// The DET plaintext of ``value`` in ``opener``'s form, or None where it is the caller's.
fn plaintext(
    py: Python<'_>,
    opener: &Opener,
    chars: usize,
    value: &Bound<'_, PyAny>,
    out: &mut [u8; SHORT_MAX],
) -> PyResult<Option<usize>> {
    Ok(match opener.kind {
        INT => {
            let Ok(i) = value.downcast_exact::<PyInt>() else { return Ok(None) };
            let Ok(v) = i.extract::<i64>() else { return Ok(None) };
            let width = opener.width;
            if !(1..=8).contains(&width) {
                return Ok(None);
            }
            let bits = 8 * width as u32;
            if bits < 64 && (v < -(1i64 << (bits - 1)) || v >= 1i64 << (bits - 1)) {
                return Ok(None); // out of range: the caller raises
            }
            out[..width].copy_from_slice(&v.to_be_bytes()[8 - width..]);
            Some(width)
        }
        BOOL => {
            let Ok(b) = value.downcast_exact::<PyBool>() else { return Ok(None) };
            out[0] = u8::from(b.is_true());
            Some(1)
        }
        TEXT => {
            let Ok(s) = value.downcast_exact::<PyString>() else { return Ok(None) };
            let Ok(s) = s.to_str() else { return Ok(None) }; // (lone surrogates)
            if s.contains('\0') || (chars > 0 && s.chars().count() > chars) {
                return Ok(None);
            }
            // char(n) (the opener's width): stored without its trailing spaces
            let s = if opener.width > 0 { s.trim_end_matches(' ') } else { s };
            if s.len() > SHORT_MAX {
                return Ok(None); // (AES-SIV: the caller's)
            }
            out[..s.len()].copy_from_slice(s.as_bytes());
            Some(s.len())
        }
        NUMERIC => {
            let Some(x) = scaled(py, opener, value)? else { return Ok(None) };
            let width = opener.width;
            if width == 0 || width > 15 || x.unsigned_abs() >= opener.limit {
                return Ok(None); // (NaN's place and beyond: the caller's overflow error)
            }
            out[..width].copy_from_slice(&x.to_be_bytes()[16 - width..]);
            Some(width)
        }
        DATE => {
            let date = DATE_TYPE.get_or_try_init(py, || -> PyResult<PyObject> {
                Ok(py.import("datetime")?.getattr("date")?.unbind())
            })?;
            let ordinal: i64 = if value.get_type().is(date.bind(py)) {
                value.call_method0(intern!(py, "toordinal"))?.extract()?
            } else if let Ok(s) = value.downcast_exact::<PyString>() {
                // (the ISO form ``date.fromisoformat`` reads; any other is the caller's)
                let Some(ordinal) = s.to_str().ok().and_then(iso_ordinal) else {
                    return Ok(None);
                };
                ordinal
            } else {
                return Ok(None); // (a datetime, a PgDate, an infinity: the caller's)
            };
            let stored = u32::try_from(ordinal + PY_ORDINAL_TO_STORED).ok();
            let Some(stored) = stored else { return Ok(None) };
            out[..4].copy_from_slice(&stored.to_be_bytes());
            Some(4)
        }
        _ => None,
    })
}

/// An int or a Decimal as numeric(p, s) stores it: the integer value·10**s, rounded half
/// away from zero at the scale (PostgreSQL's numeric rounding); None where it is the
/// caller's (another type, NaN, an infinity, more digits than an i128 holds).
fn scaled(py: Python<'_>, opener: &Opener, value: &Bound<'_, PyAny>) -> PyResult<Option<i128>> {
    let scale = opener.scale as i32;
    if let Ok(i) = value.downcast_exact::<PyInt>() {
        let Ok(v) = i.extract::<i128>() else { return Ok(None) };
        return Ok(pow10(scale).and_then(|p| v.checked_mul(p)));
    }
    if let Ok(f) = value.downcast_exact::<PyFloat>() {
        return Ok(float_scaled(f.value(), scale));
    }
    let decimal = DECIMAL.get_or_try_init(py, || -> PyResult<PyObject> {
        Ok(py.import("decimal")?.getattr("Decimal")?.unbind())
    })?;
    if !value.get_type().is(decimal.bind(py)) {
        return Ok(None);
    }
    let text = value.str()?;
    Ok(parse_scaled(text.to_str()?, scale))
}

/// A float as numeric stores it: through its 15 significant digits, as PostgreSQL
/// converts float8 to numeric (the Python path: ``Decimal(format(v, ".15g"))``).
fn float_scaled(v: f64, scale: i32) -> Option<i128> {
    if !v.is_finite() {
        return None;
    }
    parse_scaled(&format!("{v:.14e}"), scale)
}

/// ``YYYY-MM-DD`` (ASCII digits) as ``date.fromisoformat(...).toordinal()``; None for
/// any other text or a day the calendar does not have.
fn iso_ordinal(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let number = |r: std::ops::Range<usize>| -> Option<i64> {
        b[r].iter().try_fold(0i64, |n, &c| c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0')))
    };
    let (y, m, d) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if y < 1 || !(1..=12).contains(&m) || d < 1 || d > days[(m - 1) as usize] {
        return None;
    }
    // days since 1970-01-01 (H. Hinnant's days_from_civil), then Python's ordinal
    let yy = if m <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468 + 719_163)
}

fn pow10(k: i32) -> Option<i128> {
    if !(0..=MAX_DIGITS as i32).contains(&k) {
        return None;
    }
    10i128.checked_pow(k as u32)
}

/// ``str(Decimal)`` (``-12.345``, ``1.2E+3``, ``5E-7``) as the integer value·10**scale,
/// rounded half away from zero; None for NaN, infinities and what overflows.
fn parse_scaled(text: &str, scale: i32) -> Option<i128> {
    let (negative, rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['E', 'e']) {
        Some(at) => (&rest[..at], rest[at + 1..].parse::<i32>().ok()?),
        None => (rest, 0),
    };
    let (whole, fraction) = match mantissa.find('.') {
        Some(at) => (&mantissa[..at], &mantissa[at + 1..]),
        None => (mantissa, ""),
    };
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let mut digits: i128 = 0;
    let mut count = 0usize;
    for c in whole.bytes().chain(fraction.bytes()) {
        if !c.is_ascii_digit() {
            return None; // NaN, Infinity
        }
        if digits == 0 && c == b'0' {
            continue; // (leading zeros do not count against the digits an i128 holds)
        }
        count += 1;
        if count > MAX_DIGITS {
            return None;
        }
        digits = digits * 10 + i128::from(c - b'0');
    }
    // value = digits · 10**(exponent - len(fraction)); wanted: value · 10**scale
    let shift = exponent.checked_sub(fraction.len() as i32)?.checked_add(scale)?;
    let magnitude = if shift >= 0 {
        if digits == 0 {
            0
        } else {
            digits.checked_mul(pow10(shift)?)?
        }
    } else if -shift > MAX_DIGITS as i32 {
        0 // below half a unit of the scale: rounds to zero
    } else {
        let unit = pow10(-shift)?;
        let (q, r) = (digits / unit, digits % unit);
        if 2 * r >= unit {
            q + 1
        } else {
            q
        }
    };
    Some(if negative { -magnitude } else { magnitude })
}

#[pymethods]
impl RowSealer {
    #[new]
    fn new(slots: Vec<(Option<usize>, Option<Py<Opener>>, usize, PyObject)>) -> Self {
        RowSealer {
            slots: slots
                .into_iter()
                .map(|(index, opener, chars, onion)| Slot { index, opener, chars, onion })
                .collect(),
        }
    }

    /// (stored values, the slots left to the caller, DET values made, those sealed under
    /// RND): see the module's doc.  ``params``: a tuple or a list.
    #[allow(clippy::type_complexity)]
    fn seal(
        &self,
        py: Python<'_>,
        params: &Bound<'_, PyAny>,
        nonces: &[u8],
    ) -> PyResult<(Py<PyList>, Vec<usize>, usize, usize)> {
        if nonces.len() != NONCE * self.slots.len() {
            return Err(PyValueError::new_err("seal needs one 12-byte nonce per slot"));
        }
        let tuple = params.downcast::<PyTuple>().ok();
        let list = params.downcast::<PyList>().ok();
        if tuple.is_none() && list.is_none() {
            return Err(PyValueError::new_err("the parameters are a tuple or a list"));
        }
        let rnd_word = intern!(py, "RND");
        let det_word = intern!(py, "DET");
        let mut out: Vec<PyObject> = Vec::with_capacity(self.slots.len());
        let mut left = Vec::new();
        let (mut det_made, mut rnd_made) = (0usize, 0usize);
        for (j, slot) in self.slots.iter().enumerate() {
            let Some(index) = slot.index else {
                out.push(py.None()); // (NULL written in the statement)
                continue;
            };
            let value = match (&tuple, &list) {
                (Some(t), _) => t.get_item(index),
                (_, Some(l)) => l.get_item(index),
                _ => unreachable!(),
            };
            let Ok(value) = value else {
                left.push(j); // (too few parameters: the caller raises)
                out.push(py.None());
                continue;
            };
            if value.is_none() {
                out.push(py.None());
                continue;
            }
            let Some(opener) = &slot.opener else {
                left.push(j);
                out.push(py.None());
                continue;
            };
            let opener = opener.get();
            let layer = slot.onion.bind(py).getattr(intern!(py, "layer"))?;
            let at_rnd = layer.eq(rnd_word)?;
            let sealed = if !at_rnd && !layer.eq(det_word)? {
                None
            } else {
                let mut plain = [0u8; SHORT_MAX];
                match (&opener.det, plaintext(py, opener, slot.chars, &value, &mut plain)?) {
                    (Some(det), Some(n)) if !at_rnd || opener.rnd.is_some() => {
                        let mut block = [0u8; 16];
                        block[..n].copy_from_slice(&plain[..n]);
                        block[n] = 0x80;
                        let mut block = aes::Block::from(block);
                        det.encrypt_block(&mut block);
                        let mut ct = [0u8; SHORT_LEN];
                        ct[0] = DET_TAG;
                        ct[1..].copy_from_slice(&block);
                        det_made += 1;
                        Some(match (&opener.rnd, at_rnd) {
                            (Some(rnd), true) => {
                                let nonce: [u8; NONCE] =
                                    nonces[j * NONCE..(j + 1) * NONCE].try_into().unwrap();
                                let mut stored = [0u8; 1 + NONCE + SHORT_LEN];
                                stored[0] = RND_TAG;
                                stored[1..1 + NONCE].copy_from_slice(&nonce);
                                keystream_xor(rnd, &nonce, &ct, &mut stored[1 + NONCE..]);
                                rnd_made += 1;
                                PyBytes::new(py, &stored).into_any().unbind()
                            }
                            _ => PyBytes::new(py, &ct).into_any().unbind(),
                        })
                    }
                    _ => None,
                }
            };
            match sealed {
                Some(v) => out.push(v),
                None => {
                    left.push(j);
                    out.push(py.None());
                }
            }
        }
        Ok((PyList::new(py, out)?.unbind(), left, det_made, rnd_made))
    }

    fn __repr__(&self) -> &'static str {
        "RowSealer(<keys hidden>)"
    }
}

#[cfg(test)]
mod tests {
    use super::{float_scaled, iso_ordinal, parse_scaled};

    #[test]
    fn iso_dates_as_python_ordinals() {
        assert_eq!(iso_ordinal("0001-01-01"), Some(1));
        assert_eq!(iso_ordinal("1970-01-01"), Some(719_163));
        assert_eq!(iso_ordinal("2024-02-29"), Some(738_945));
        assert_eq!(iso_ordinal("9999-12-31"), Some(3_652_059));
        assert_eq!(iso_ordinal("2023-02-29"), None);
        assert_eq!(iso_ordinal("0000-01-01"), None);
        assert_eq!(iso_ordinal("2024-1-01"), None);
        assert_eq!(iso_ordinal("2024-13-01"), None);
    }

    #[test]
    fn floats_through_fifteen_digits() {
        assert_eq!(float_scaled(0.1, 2), Some(10));
        assert_eq!(float_scaled(1.005, 2), Some(101)); // 1.00500000000000 rounds up
        assert_eq!(float_scaled(-2.675, 2), Some(-268));
        assert_eq!(float_scaled(f64::NAN, 2), None);
    }

    #[test]
    fn decimal_text_scaled_and_rounded_half_away_from_zero() {
        assert_eq!(parse_scaled("12.345", 2), Some(1235));
        assert_eq!(parse_scaled("-12.345", 2), Some(-1235));
        assert_eq!(parse_scaled("12.344", 2), Some(1234));
        assert_eq!(parse_scaled("1.2E+3", 2), Some(120_000));
        assert_eq!(parse_scaled("5E-7", 2), Some(0));
        assert_eq!(parse_scaled("0.005", 2), Some(1));
        assert_eq!(parse_scaled("-0.004", 2), Some(0));
        assert_eq!(parse_scaled("0E-8", 2), Some(0));
        assert_eq!(parse_scaled("7", 0), Some(7));
        assert_eq!(parse_scaled("NaN", 2), None);
        assert_eq!(parse_scaled("-Infinity", 2), None);
        assert_eq!(parse_scaled("1E+40", 2), None);
    }
}
