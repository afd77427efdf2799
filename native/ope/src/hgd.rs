//! pyope's samplers (`pyope.stat`, `pyope.hgd`), reproducing its arithmetic exactly.
//!
//! pyope mixes exact Python integers with IEEE doubles.  The rules followed here:
//!
//! * an integer meeting a float (`int * float`, `float / int`, `float(int)`) is first
//!   rounded to the nearest double, ties to even — which is what Rust's `as f64` does for
//!   128-bit integers;
//! * integer-only expressions are exact: the one that can exceed 128 bits,
//!   `(popsize - m) * sample`, is formed as a 256-bit product and then rounded;
//! * float operations are evaluated in Python's order, one rounding each (no fused
//!   multiply-add), and `log`/`sqrt`/`floor` are the C library's, as in Python's `math`;
//! * a mixed `min(float, int)` or `float >= int` compares exactly; the integers involved
//!   are floors of doubles, hence exact doubles, so float comparisons agree.

use crate::tape::Tape;
use crate::OpeError;

/// The exact product of two 128-bit integers, rounded to the nearest double (ties to even).
pub fn mul_to_f64(a: u128, b: u128) -> f64 {
    const M: u128 = u64::MAX as u128;
    let (a0, a1) = (a & M, a >> 64);
    let (b0, b1) = (b & M, b >> 64);
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    let mid = (p00 >> 64) + (p01 & M) + (p10 & M);
    let lo = (mid << 64) | (p00 & M);
    let hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
    u256_to_f64(hi, lo)
}

/// `hi * 2**128 + lo`, rounded to the nearest double (ties to even), as Python's `float()`.
pub fn u256_to_f64(hi: u128, lo: u128) -> f64 {
    if hi == 0 {
        return lo as f64;
    }
    // Keep the top 128 bits; everything shifted out only matters as a "sticky" bit, which
    // sits far below the 53-bit rounding position and so breaks exact ties correctly.
    let lz = hi.leading_zeros(); // 0..=127
    let shift = 128 - lz; // 1..=128
    let (top, lost) = if lz == 0 {
        (hi, lo)
    } else {
        ((hi << lz) | (lo >> shift), lo << lz)
    };
    let top = top | (lost != 0) as u128;
    // Scaling by a power of two is exact (the value stays far below the double range).
    top as f64 * f64::from_bits(((1023 + shift) as u64) << 52)
}

/// `float(x)` for an exact non-negative integer: the nearest double, ties to even.
///
/// Same result as `x as f64`, without the slow generic 128-bit conversion: values below
/// 2**63 use the hardware conversion; larger ones are normalised to 63 significant bits
/// plus a sticky bit (which lies far below the 53-bit rounding position, so ties still
/// break correctly) and scaled back by an exact power of two.
#[inline]
pub fn fu(x: u128) -> f64 {
    if x >> 63 == 0 {
        return x as i64 as f64;
    }
    let lz = x.leading_zeros(); // 0..=64
    let norm = x << lz; // top bit set
    let top = (norm >> 65) as u64 | ((norm << 63) != 0) as u64; // 63 bits + sticky
    top as i64 as f64 * f64::from_bits(((1023 + 65 - lz) as u64) << 52)
}

/// `float(x)` for an exact integer.
#[inline]
pub fn fi(x: i128) -> f64 {
    let m = fu(x.unsigned_abs());
    if x < 0 {
        -m
    } else {
        m
    }
}

/// `math.floor(v)` for `v >= 0` (not -0.0), without a libm call.
#[inline]
pub fn floor_pos(v: f64) -> f64 {
    if v < 4503599627370496.0 {
        // below 2**52: truncation is the floor
        v as i64 as f64
    } else {
        v // already integral (or not finite)
    }
}

/// `math.ceil(v)` for `v >= 0`, without a libm call.
#[inline]
pub fn ceil_pos(v: f64) -> f64 {
    if v < 4503599627370496.0 {
        let t = v as i64 as f64;
        if t < v {
            t + 1.0
        } else {
            t
        }
    } else {
        v
    }
}

/// `int(v)` of a non-negative integral double below 2**128.
#[inline]
pub fn to_u128(v: f64) -> u128 {
    if v < 9_223_372_036_854_775_808u64 as f64 {
        v as i64 as u128
    } else {
        v as u128
    }
}

/// `0.5 * math.log(2 * math.pi)`, as pyope computes it on every call.
pub const HALF_LOG_2PI: f64 = 0.9189385332046727;

/// 2**42: see `loggam_f`.
const LOGGAM_SERIES_EXACT: f64 = 4398046511104.0;

/// pyope's log-gamma series coefficients, written as in its source.
#[allow(clippy::excessive_precision)]
const LOGGAM_COEFFICIENTS: [f64; 10] = [
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

/// `HGD.loggam(x)` for a double `x` (SPECFUN's log-gamma).
#[inline(always)]
fn loggam_f(x: f64) -> f64 {
    const A: [f64; 10] = LOGGAM_COEFFICIENTS;
    let mut x0 = x;
    let mut n: u32 = 0;
    if x == 1.0 || x == 2.0 {
        return 0.0;
    } else if x <= 7.0 {
        n = (7.0 - x) as u32; // int(7 - x): truncation, 0..=6 for the x >= 1 used here
        x0 = x + n as f64;
    }
    // The series in 1/x0**2.  Every partial sum stays below 1.4 in magnitude, so from
    // x0 >= 2**42 on each `gl0 * x2` is below 2**-83, far under half an ulp of any
    // coefficient (the smallest, ~5.95e-4, has ulp 2**-63): every addition then rounds
    // back to the coefficient and the series is exactly A[0].  Skipping it there gives the
    // same double.
    let gl0 = if x0 >= LOGGAM_SERIES_EXACT {
        A[0]
    } else {
        let x2 = 1.0 / (x0 * x0);
        let mut gl0 = A[9];
        for k in (0..=8).rev() {
            gl0 *= x2;
            gl0 += A[k];
        }
        gl0
    };
    let mut gl = gl0 / x0 + HALF_LOG_2PI + (x0 - 0.5) * x0.ln() - x0;
    if x <= 7.0 {
        for _ in 0..n {
            gl -= (x0 - 1.0).ln();
            x0 -= 1.0;
        }
    }
    gl
}

/// `HGD.loggam` of a Python integer.  For integers below 1 pyope ends in `math.log(0)`,
/// a "math domain error".
#[inline]
fn loggam_i(x: i128) -> Result<f64, OpeError> {
    if x < 1 {
        return Err(OpeError::Internal("log-gamma of an integer below 1"));
    }
    Ok(loggam_f(fi(x)))
}

#[inline]
fn loggam_u(x: u128) -> Result<f64, OpeError> {
    if x < 1 {
        return Err(OpeError::Internal("log-gamma of an integer below 1"));
    }
    Ok(loggam_f(fu(x)))
}

const OVERFLOW: OpeError = OpeError::Internal("sampler arithmetic out of range");

/// `HGD.hypergeometric_hyp` (samples of at most 10 balls, so every number is small).
fn hypergeometric_hyp(tape: &mut Tape, good: u128, bad: u128, sample: u128) -> Result<i128, OpeError> {
    let (good, bad, sample) = (good as i128, bad as i128, sample as i128);
    let d1 = bad + good - sample;
    let d2 = fi(good.min(bad));
    let mut y = d2;
    let mut k = sample;
    while y > 0.0 {
        let u = tape.draw();
        y -= floor_pos(u + y / fi(d1 + k));
        k -= 1;
        if k == 0 {
            break;
        }
    }
    let mut z = (d2 - y).trunc() as i128;
    if good > bad {
        z = sample - z;
    }
    Ok(z)
}

/// `HGD.hypergeometric_hrua`: ratio-of-uniforms rejection.
fn hypergeometric_hrua(tape: &mut Tape, good: u128, bad: u128, sample: u128) -> Result<i128, OpeError> {
    const D1: f64 = 1.7155277699214135;
    const D2: f64 = 0.8989161620588988;
    // Sizes are at most 2**127 (checked when the ranges are made), so every integer below
    // fits; the few that could leave their type only through pyope's own rounding slack
    // are checked.
    let mingoodbad = good.min(bad); // <= popsize / 2
    let popsize = good + bad;
    let maxgoodbad = good.max(bad);
    let m = sample.min(popsize - sample); // <= popsize / 2
    let d4 = fu(mingoodbad) / fu(popsize);
    let d5 = 1.0 - d4;
    let d6 = fu(m) * d4 + 0.5;
    let d7 = (mul_to_f64(popsize - m, sample) * d4 * d5 / fu(popsize - 1) + 0.5).sqrt();
    let d8 = D1 * d7 + D2;
    let d9f = floor_pos(fu(m + 1) * fu(mingoodbad + 1) / fu(popsize + 2));
    if !(0.0..1.0e38).contains(&d9f) {
        return Err(OVERFLOW);
    }
    let d9 = to_u128(d9f) as i128;
    let (mg, mi) = (mingoodbad as i128, m as i128);
    let d10 = loggam_i(d9 + 1)?
        + loggam_i(mg - d9 + 1)?
        + loggam_i(mi - d9 + 1)?
        + loggam_u((maxgoodbad - m) + d9 as u128 + 1)?;
    let d11 = (fu(m.min(mingoodbad)) + 1.0).min(floor_pos(d6 + 16.0 * d7));

    let mut z: i128;
    loop {
        let x = tape.draw();
        let y = tape.draw();
        if x == 0.0 {
            // Python: `d8 * (Y - 0.5) / X` raises ZeroDivisionError.
            return Err(OpeError::ZeroDivision);
        }
        let w = d6 + d8 * (y - 0.5) / x;
        if w < 0.0 || w >= d11 {
            continue;
        }
        // 0 <= w < d11 <= min(m, mingoodbad) + 1 < 2**127
        z = to_u128(floor_pos(w)) as i128;
        let t = d10
            - (loggam_i(z + 1)?
                + loggam_i(mg - z + 1)?
                + loggam_i(mi - z + 1)?
                + loggam_u((maxgoodbad - m) + z as u128 + 1)?);
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
        z = mi.checked_sub(z).ok_or(OVERFLOW)?;
    }
    if m < sample {
        z = (good as i128).checked_sub(z).ok_or(OVERFLOW)?;
    }
    Ok(z)
}

/// `HGD.rhyper(kk, nn1, nn2, coins)`: white balls among `kk` drawn from `nn1` white and
/// `nn2` black.
pub fn rhyper(tape: &mut Tape, kk: u128, nn1: u128, nn2: u128) -> Result<i128, OpeError> {
    if kk > 10 {
        hypergeometric_hrua(tape, nn1, nn2, kk)
    } else {
        hypergeometric_hyp(tape, nn1, nn2, kk)
    }
}

/// `stat.sample_uniform` over the offsets `[lo, hi]`: a binary search steered by the coins.
/// (`(start + end) // 2` of the absolute values is `start + (end - start) // 2`, so working
/// on offsets from any integer base gives the same choices.)
pub fn sample_uniform(mut lo: u128, mut hi: u128, tape: &mut Tape) -> u128 {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if tape.bit() == 0 {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_round_like_python() {
        // float((2**64 + 1) * (2**64 + 1)) == 2**128 + 2**65 rounded: 3.402823669209385e38
        assert_eq!(mul_to_f64((1 << 64) + 1, (1 << 64) + 1), 3.402823669209385e38);
        assert_eq!(mul_to_f64(u128::MAX, u128::MAX), 1.157920892373162e77);
        assert_eq!(mul_to_f64(3, 5), 15.0);
        // 2**53 + 1 is a tie between 2**53 and 2**53 + 2: even wins, unless bits below break it
        assert_eq!(u256_to_f64(0, (1 << 53) + 1), 9007199254740992.0);
        assert_eq!(u256_to_f64(1 << 53, 0) , 2f64.powi(181));
        assert_eq!(u256_to_f64((1 << 53) + 1, 0), 2f64.powi(181));
        assert_eq!(u256_to_f64((1 << 53) + 1, 1), 2f64.powi(181) + 2f64.powi(129));
    }

    #[test]
    fn half_log_2pi_is_what_python_computes() {
        let xp = std::hint::black_box(2.0 * std::f64::consts::PI);
        assert_eq!(HALF_LOG_2PI, 0.5 * xp.ln());
    }

    #[test]
    fn fast_conversions() {
        let mut xs = vec![0u128, 1, (1 << 53) + 1, (1 << 63) - 1, 1 << 63, u128::MAX, (1 << 64) + 3];
        // ties and near-ties at every magnitude
        for shift in 0..=127u32 {
            for low in [0u128, 1, 2, 3, 0x3ff, 0x400, 0x401, 0x7ff, 0x800, 0x801, 0xfff] {
                xs.push((1u128 << shift).wrapping_add(low << shift.saturating_sub(64)));
                xs.push((1u128 << shift) | low);
                xs.push(u128::MAX >> (127 - shift));
            }
        }
        let mut seed = 0x9e3779b97f4a7c15u128;
        for _ in 0..100_000 {
            seed = seed.wrapping_mul(0x2360ed051fc65da44385df649fccf645).wrapping_add(1);
            xs.push(seed >> (seed % 128));
        }
        for x in xs {
            assert_eq!(fu(x), x as f64, "{x}");
            if x <= i128::MAX as u128 {
                assert_eq!(fi(x as i128), x as i128 as f64);
                assert_eq!(fi(-(x as i128)), -(x as i128) as f64);
            }
        }
        assert_eq!(fi(i128::MIN), i128::MIN as f64);
        for v in [0.0, 0.25, 1.0, 1.5, 2.5, 1e10 + 0.5, 4503599627370495.5, 4503599627370496.0, 1e300] {
            assert_eq!(floor_pos(v), v.floor());
            assert_eq!(ceil_pos(v), v.ceil());
        }
        for v in [0.0, 1.0, 9.223372036854775e18, (1u64 << 63) as f64, 1.7e38] {
            assert_eq!(to_u128(v), v as u128);
        }
    }

    /// pyope's loggam, literally.
    fn loggam_reference(x: f64) -> f64 {
        const A: [f64; 10] = LOGGAM_COEFFICIENTS;
        let mut x0 = x;
        let mut n = 0;
        if x == 1.0 || x == 2.0 {
            return 0.0;
        } else if x <= 7.0 {
            n = (7.0 - x) as i64;
            x0 = x + n as f64;
        }
        let x2 = 1.0 / (x0 * x0);
        let xp = std::hint::black_box(2.0 * std::f64::consts::PI);
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

    #[test]
    fn loggam_matches_the_literal_version() {
        let mut xs: Vec<f64> = (1..2000).map(|i| i as f64).collect();
        for e in 3..127 {
            let p = 2f64.powi(e);
            xs.extend([p - 1.0, p, p + 1.0, p * 1.5, p * 1.999]);
        }
        let mut seed = 0x9e3779b97f4a7c15u128;
        for _ in 0..200_000 {
            seed = seed.wrapping_mul(0x2360ed051fc65da44385df649fccf645).wrapping_add(1);
            xs.push(fu(1 + (seed >> (seed % 128))));
        }
        for x in xs {
            assert_eq!(loggam_f(x).to_bits(), loggam_reference(x).to_bits(), "{x}");
        }
    }

    #[test]
    fn loggam_small() {
        assert_eq!(loggam_f(1.0), 0.0);
        assert!((loggam_f(5.0) - 24f64.ln()).abs() < 1e-12);
    }
}
