//! A single-row INSERT's stored values made in one call, from the application's own
//! parameters: the inverse of ``RowOpener`` for the Eq onions (DET), and the Ord onions
//! (OPE or ORE) through their scheme's ``encrypt``.
//!
//! ```python
//! sealer = RowSealer([(param_index, form, eq_opener, ord_parts, onion), ...])
//! stored, left, (det, ord, rnd) = sealer.seal(params, nonces)  # 12 random bytes a slot
//! ```
//!
//! One slot per stored column.  Slot ``j`` takes ``params[param_index]`` (``None``: a
//! NULL the statement writes), checks it as the column's encoding checks it and encodes
//! it as the encoding does -- ``form`` names how: the decoder's code (integers, text,
//! booleans, scaled numerics, dates), width, scale and limit, the characters a string
//! may have, whether it is a char(n).  An Eq onion (``eq_opener``: the compiled opener,
//! which holds its keys) gets the ``to_bytes`` plaintext under DET (one AES block,
//! ISO/IEC 7816-4 padding; over one block, AES-SIV), a Single onion (an opener with the RND key alone) the
//! plaintext under RND alone; an Ord onion (``ord_parts``: its RND ``Ctr``, its memo, its
//! scheme's ``encrypt``, the name of its inner layer) gets the ``to_ope`` integer
//! encrypted by the scheme, memoized in the onion's memo as the Python path memoizes it.
//! Where the onion is at RND now (its ``layer`` read on each call: a peel may move it),
//! the value is sealed under its RND key with the slot's nonce.  NULL stays NULL.
//!
//! It decides only the plain cases: a parameter of exactly the Python type the form
//! names (``int``, ``str``, ``bool``; ``Decimal``, ``int`` or ``float`` for a numeric;
//! ``date`` or its ISO text for a date; a naive ``datetime`` for a timestamp) whose value the column holds as it is or rounds
//! as PostgreSQL rounds (numeric's scale).  Every other slot -- another onion, another
//! type, a value out of range or too long for its column, a layer
//! other than RND or the inner one -- is listed in ``left`` with ``None`` in its place:
//! the caller makes it (and raises the precise error where there is one).  The counts:
//! DET and Ord values made, and those sealed under RND.
//!
//! The encoders are the Python encodings' ``coerce``, ``to_bytes`` and ``to_ope``, written
//! again for their plain cases only; the differential tests compare both on every value.

use aes::cipher::BlockEncrypt;
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::Ctr;
use crate::open::{
    keystream_xor, Opener, BOOL, DATE, DATE_TYPE, DATETIME_TYPE, DECIMAL, DET_TAG, INT, NONCE, NUMERIC,
    RND_TAG, SHORT_LEN, TEXT, TIMESTAMP,
};

const SHORT_MAX: usize = 15; // the longest DET plaintext of one block
const PY_ORDINAL_TO_STORED: i64 = 1_721_426; // date.toordinal() to the Julian day + 1
const MAX_DIGITS: usize = 38; // numeric digits held in an i128 without overflow
const MEMO_LIMIT: usize = 100_000; // an Ord onion's memo, cleared when full (recipes._MEMO_LIMIT)
const DAYS_1970_TO_2000: i64 = 10_957;
const US_PER_DAY: i64 = 86_400_000_000;

/// What a slot's onion is made of below its RND layer.
enum Inner {
    /// an Eq onion: DET under the opener's key (its RND key too); a Single onion (an
    /// opener without a DET key): the value's bytes under RND alone
    Det(Py<Opener>),
    /// an Ord onion: the scheme's ``encrypt`` of the integer (OPE or ORE), memoized in
    /// the onion's memo as the Python path memoizes it; the onion's RND key (a ``Ctr``)
    Ord { rnd: Option<Py<Ctr>>, memo: Py<PyDict>, encrypt: PyObject, layer: Py<PyString> },
}

struct Slot {
    index: Option<usize>, // (None: a NULL written in the statement)
    form: Form,
    inner: Option<Inner>, // (None: the caller's)
    onion: PyObject,
}

/// One INSERT's row sealed in one call (see the module's doc).
#[pyclass(frozen)]
pub struct RowSealer {
    slots: Vec<Slot>,
}

/// How a slot's parameters are read: the decoder's code of the column's encoding and
/// its width, scale and limit (as the opener has them), the characters a string may
/// have (varchar(n), char(n): n; 0: any) and whether it is a char(n).
struct Form {
    kind: u8,
    width: usize,
    scale: u32,
    limit: u128,
    chars: usize,
    padded: bool,
}

/// An integer parameter in ``width`` bytes' range.
fn int_of(value: &Bound<'_, PyAny>, width: usize) -> Option<i64> {
    let v = value.downcast_exact::<PyInt>().ok()?.extract::<i64>().ok()?;
    if !(1..=8).contains(&width) {
        return None;
    }
    let bits = 8 * width as u32;
    if bits < 64 && (v < -(1i64 << (bits - 1)) || v >= 1i64 << (bits - 1)) {
        return None; // out of range: the caller raises
    }
    Some(v)
}

/// A string parameter as the column stores it (char(n): without its trailing spaces).
fn text_of<'a>(value: &'a Bound<'_, PyAny>, form: &Form) -> Option<std::borrow::Cow<'a, str>> {
    let s = value.downcast_exact::<PyString>().ok()?.to_cow().ok()?; // (lone surrogates)
    if s.contains('\0') || (form.chars > 0 && s.chars().count() > form.chars) {
        return None;
    }
    Some(if form.padded {
        std::borrow::Cow::Owned(s.trim_end_matches(' ').to_owned())
    } else {
        s
    })
}

/// A date parameter (a ``date``, or its ISO text) as its Julian day + 1.
fn date_of(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Option<u32>> {
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
    Ok(u32::try_from(ordinal + PY_ORDINAL_TO_STORED).ok())
}

/// A naive ``datetime`` parameter as microseconds since 2000-01-01 00:00 (None: another
/// type, an aware one, a subclass such as the session's ``now()``).
fn micros_of(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    let datetime = DATETIME_TYPE.get_or_try_init(py, || -> PyResult<PyObject> {
        Ok(py.import("datetime")?.getattr("datetime")?.unbind())
    })?;
    if !value.get_type().is(datetime.bind(py)) || !value.getattr(intern!(py, "tzinfo"))?.is_none() {
        return Ok(None);
    }
    let field = |name: &Bound<'_, PyString>| -> PyResult<i64> { value.getattr(name)?.extract() };
    let (y, m, d) = (field(intern!(py, "year"))?, field(intern!(py, "month"))?, field(intern!(py, "day"))?);
    let clock = (field(intern!(py, "hour"))? * 60 + field(intern!(py, "minute"))?) * 60
        + field(intern!(py, "second"))?;
    let days = days_from_civil(y, m, d) - DAYS_1970_TO_2000;
    Ok(Some(days * US_PER_DAY + clock * 1_000_000 + field(intern!(py, "microsecond"))?))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let yy = if m <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A numeric parameter as its scaled integer, within the column's precision.
fn numeric_of(py: Python<'_>, form: &Form, value: &Bound<'_, PyAny>) -> PyResult<Option<i128>> {
    let Some(x) = scaled(py, form.scale, value)? else { return Ok(None) };
    if form.width == 0 || form.width > 15 || x.unsigned_abs() >= form.limit {
        return Ok(None); // (NaN's place and beyond: the caller's overflow error)
    }
    Ok(Some(x))
}

/// The plaintext of ``value`` (the encoding's ``to_bytes``), or None where it is the
/// caller's.
fn plaintext(py: Python<'_>, form: &Form, value: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
    Ok(match form.kind {
        INT => int_of(value, form.width).map(|v| v.to_be_bytes()[8 - form.width..].to_vec()),
        BOOL => value.downcast_exact::<PyBool>().ok().map(|b| vec![u8::from(b.is_true())]),
        TEXT => text_of(value, form).map(|s| s.as_bytes().to_vec()),
        NUMERIC => numeric_of(py, form, value)?.map(|x| x.to_be_bytes()[16 - form.width..].to_vec()),
        DATE => date_of(py, value)?.map(|d| d.to_be_bytes().to_vec()),
        TIMESTAMP => timestamp_of(py, form, value)?.map(|t| t.to_be_bytes().to_vec()),
        _ => None,
    })
}

/// A timestamp parameter as the encoding's integer (microseconds from PostgreSQL's first
/// timestamp, plus one), within its range.
fn timestamp_of(py: Python<'_>, form: &Form, value: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
    let Some(micros) = micros_of(py, value)? else { return Ok(None) };
    Ok(u64::try_from(i128::from(micros) + form.limit as i128).ok())
}

/// The Ord onion's plaintext of ``value`` (the encoding's ``to_ope``: integers offset by
/// half their domain, numerics by their limit, dates' Julian day + 1, booleans 0 and 1,
/// text's first 8 bytes under the C collation), or None where it is the caller's.
fn ope_plaintext(py: Python<'_>, form: &Form, value: &Bound<'_, PyAny>) -> PyResult<Option<i128>> {
    Ok(match form.kind {
        INT => int_of(value, form.width).map(|v| i128::from(v) + (1i128 << (8 * form.width - 1))),
        BOOL => value.downcast_exact::<PyBool>().ok().map(|b| i128::from(b.is_true())),
        TEXT => text_of(value, form).map(|s| {
            let mut prefix = [0u8; 8];
            let n = s.len().min(8);
            prefix[..n].copy_from_slice(&s.as_bytes()[..n]);
            i128::from(u64::from_be_bytes(prefix))
        }),
        NUMERIC => numeric_of(py, form, value)?.map(|x| x + form.limit as i128),
        DATE => date_of(py, value)?.map(i128::from),
        TIMESTAMP => timestamp_of(py, form, value)?.map(i128::from),
        _ => None,
    })
}

/// An int or a Decimal as numeric(p, s) stores it: the integer value·10**s, rounded half
/// away from zero at the scale (PostgreSQL's numeric rounding); None where it is the
/// caller's (another type, NaN, an infinity, more digits than an i128 holds).
fn scaled(py: Python<'_>, scale: u32, value: &Bound<'_, PyAny>) -> PyResult<Option<i128>> {
    let scale = scale as i32;
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
    Some(days_from_civil(y, m, d) + 719_163) // (1970-01-01 is Python's day 719,163)
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

/// ``tag || nonce || CTR(ct)``: a value sealed under an onion's RND layer.
fn rnd_sealed<'py>(py: Python<'py>, rnd: &Ctr, nonce: &[u8], ct: &[u8]) -> Bound<'py, PyBytes> {
    let nonce: &[u8; NONCE] = nonce.try_into().expect("12-byte nonce");
    let mut stored = vec![0u8; 1 + NONCE + ct.len()];
    stored[0] = RND_TAG;
    stored[1..1 + NONCE].copy_from_slice(nonce);
    keystream_xor(rnd, nonce, ct, &mut stored[1 + NONCE..]);
    PyBytes::new(py, &stored)
}

/// The values a row's sealing made: DET and Ord plaintexts encrypted, values under RND.
#[derive(Default)]
struct Counts {
    det: usize,
    ord: usize,
    rnd: usize,
}

impl RowSealer {
    /// The stored value of ``value`` in ``slot`` (at the onion's layer now), or None
    /// where it is the caller's.
    fn seal_value(
        &self,
        py: Python<'_>,
        slot: &Slot,
        value: &Bound<'_, PyAny>,
        nonce: &[u8],
        counts: &mut Counts,
    ) -> PyResult<Option<PyObject>> {
        let Some(inner) = &slot.inner else { return Ok(None) };
        let layer = slot.onion.bind(py).getattr(intern!(py, "layer"))?;
        let at_rnd = layer.eq(intern!(py, "RND"))?;
        match inner {
            Inner::Det(opener) => {
                let opener = opener.get();
                let Some(det) = &opener.det else {
                    // a Single onion: the value's bytes under RND alone
                    let (Some(rnd), true) = (&opener.rnd, at_rnd) else { return Ok(None) };
                    let Some(plain) = plaintext(py, &slot.form, value)? else { return Ok(None) };
                    counts.rnd += 1;
                    return Ok(Some(rnd_sealed(py, rnd, nonce, &plain).into_any().unbind()));
                };
                if !at_rnd && !layer.eq(intern!(py, "DET"))? || at_rnd && opener.rnd.is_none() {
                    return Ok(None);
                }
                let Some(plain) = plaintext(py, &slot.form, value)? else { return Ok(None) };
                let n = plain.len();
                let ct = if n > SHORT_MAX {
                    // over a block: AES-SIV (without the opener's SIV key, the caller's)
                    let Some(siv) = &opener.siv else { return Ok(None) };
                    let Ok(mut siv) = siv.lock() else { return Ok(None) };
                    let Ok(sealed) = siv.encrypt::<&[&[u8]], &&[u8]>(&[], &plain) else {
                        return Ok(None);
                    };
                    let mut ct = Vec::with_capacity(1 + sealed.len());
                    ct.push(DET_TAG);
                    ct.extend_from_slice(&sealed);
                    ct
                } else {
                    let mut block = [0u8; 16];
                    block[..n].copy_from_slice(&plain);
                    block[n] = 0x80;
                    let mut block = aes::Block::from(block);
                    det.encrypt_block(&mut block);
                    let mut ct = Vec::with_capacity(SHORT_LEN);
                    ct.push(DET_TAG);
                    ct.extend_from_slice(&block);
                    ct
                };
                counts.det += 1;
                Ok(Some(match (&opener.rnd, at_rnd) {
                    (Some(rnd), true) => {
                        counts.rnd += 1;
                        rnd_sealed(py, rnd, nonce, &ct).into_any().unbind()
                    }
                    _ => PyBytes::new(py, &ct).into_any().unbind(),
                }))
            }
            Inner::Ord { rnd, memo, encrypt, layer: inner_layer } => {
                if !at_rnd && !layer.eq(inner_layer.bind(py))? || at_rnd && rnd.is_none() {
                    return Ok(None);
                }
                let Some(x) = ope_plaintext(py, &slot.form, value)? else { return Ok(None) };
                let key = x.into_pyobject(py)?;
                let memo = memo.bind(py);
                let ct = match memo.get_item(&key)? {
                    Some(ct) => ct,
                    None => {
                        if memo.len() >= MEMO_LIMIT {
                            memo.clear();
                        }
                        let ct = encrypt.bind(py).call1((&key,))?;
                        memo.set_item(&key, &ct)?;
                        ct
                    }
                };
                counts.ord += 1;
                Ok(Some(match (rnd, at_rnd) {
                    (Some(rnd), true) => {
                        counts.rnd += 1;
                        let ct = ct.downcast::<PyBytes>()?;
                        rnd_sealed(py, rnd.get(), nonce, ct.as_bytes()).into_any().unbind()
                    }
                    _ => ct.unbind(),
                }))
            }
        }
    }
}

#[pymethods]
impl RowSealer {
    /// ``slots``: per stored column, (parameter index or None, (decoder code, width,
    /// scale, limit, characters, char(n)), the Eq onion's opener or None, the Ord
    /// onion's (RND ``Ctr`` or None, memo, encrypt, inner layer's name) or None, the
    /// onion).
    #[new]
    #[allow(clippy::type_complexity)]
    fn new(
        slots: Vec<(
            Option<usize>,
            (u8, usize, u32, u128, usize, bool),
            Option<Py<Opener>>,
            Option<(Option<Py<Ctr>>, Py<PyDict>, PyObject, Py<PyString>)>,
            PyObject,
        )>,
    ) -> Self {
        let slots = slots
            .into_iter()
            .map(|(index, (kind, width, scale, limit, chars, padded), opener, ord, onion)| {
                let inner = match (opener, ord) {
                    (Some(opener), _) => Some(Inner::Det(opener)),
                    (None, Some((rnd, memo, encrypt, layer))) => {
                        Some(Inner::Ord { rnd, memo, encrypt, layer })
                    }
                    _ => None,
                };
                Slot { index, form: Form { kind, width, scale, limit, chars, padded }, inner, onion }
            })
            .collect();
        RowSealer { slots }
    }

    /// (stored values, the slots left to the caller, (DET, OPE, RND) values made): see
    /// the module's doc.  ``params``: a tuple or a list.
    #[allow(clippy::type_complexity)]
    fn seal(
        &self,
        py: Python<'_>,
        params: &Bound<'_, PyAny>,
        nonces: &[u8],
    ) -> PyResult<(Py<PyList>, Vec<usize>, (usize, usize, usize))> {
        if nonces.len() != NONCE * self.slots.len() {
            return Err(PyValueError::new_err("seal needs one 12-byte nonce per slot"));
        }
        let tuple = params.downcast::<PyTuple>().ok();
        let list = params.downcast::<PyList>().ok();
        if tuple.is_none() && list.is_none() {
            return Err(PyValueError::new_err("the parameters are a tuple or a list"));
        }
        let mut out: Vec<PyObject> = Vec::with_capacity(self.slots.len());
        let mut left = Vec::new();
        let mut counts = Counts::default();
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
            let nonce = &nonces[j * NONCE..(j + 1) * NONCE];
            match self.seal_value(py, slot, &value, nonce, &mut counts)? {
                Some(v) => out.push(v),
                None => {
                    left.push(j);
                    out.push(py.None());
                }
            }
        }
        Ok((PyList::new(py, out)?.unbind(), left, (counts.det, counts.ord, counts.rnd)))
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
