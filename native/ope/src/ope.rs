//! pyope's `OPE.encrypt_recursive` / `OPE.decrypt_recursive`, as loops.
//!
//! Ranges are held as offsets from the start of the caller's range (`u128`), so that no
//! intermediate overflows even for ranges touching the ends of the signed 128-bit
//! integers; the absolute value of a node (the tape seed) is rebuilt when needed.
//! Range sizes are limited to 2**127 values, which keeps pyope's sums such as
//! `popsize + 2` inside 128 bits.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

use crate::hgd::{ceil_pos, fu, rhyper, sample_uniform, to_u128};
use crate::tape::{keyed_mac, HmacSha256, Tape};

/// The largest supported range size.
pub const MAX_SIZE: u128 = 1 << 127;

/// Nodes with fewer input values than this are not memoized.  Every inner node is: for
/// nearby values (keys, dates, amounts inserted in order) even the nodes just above the
/// leaves are shared by the next values, and scattered values only make the cache start
/// over sooner (the top levels are sampled again once per fill).
pub const CACHE_MIN_IN_SIZE: u128 = 2;

/// The most nodes a [`SplitCache`] holds (about 1 MB); when it is full it starts over.
pub const CACHE_MAX_NODES: usize = 1 << 14;

/// Memoized splits of one key and pair of ranges: node (output offsets) -> input split.
///
/// Every encryption walks the tree from the root, and plaintexts that are close share
/// their path down to where they part: the top levels are the same for all of them.  A
/// split depends only on the key, the ranges and the node, so a node sampled once never
/// needs its HMAC, AES key schedule and hypergeometric draw again.  The output range
/// alone names a node (the output halves are fixed; the input half is what is sampled).
#[derive(Default)]
pub struct SplitCache {
    nodes: Mutex<HashMap<(u128, u128), u128>>,
}

impl SplitCache {
    pub fn new() -> SplitCache {
        SplitCache::default()
    }

    /// How many nodes it holds.
    pub fn len(&self) -> usize {
        self.nodes.lock().map_or(0, |m| m.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn get(&self, key: (u128, u128)) -> Option<u128> {
        self.nodes.lock().ok()?.get(&key).copied()
    }

    fn put(&self, key: (u128, u128), x: u128) {
        if let Ok(mut m) = self.nodes.lock() {
            if m.len() >= CACHE_MAX_NODES {
                m.clear();
            }
            m.insert(key, x);
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpeError {
    /// A range with start > end, too large, or an input range larger than the output range.
    InvalidRange(&'static str),
    /// A plaintext or ciphertext outside its range.
    OutOfRange(&'static str),
    /// A ciphertext that no plaintext encrypts to.
    InvalidCiphertext,
    /// The sampler divided by a zero coin draw (probability 2**-32 per draw); pyope raises
    /// ZeroDivisionError for the same input.
    ZeroDivision,
    /// A state where pyope would fail an assertion or a math-domain check.
    Internal(&'static str),
}

impl fmt::Display for OpeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpeError::InvalidRange(m) | OpeError::OutOfRange(m) => f.write_str(m),
            OpeError::InvalidCiphertext => f.write_str("invalid ciphertext"),
            OpeError::ZeroDivision => f.write_str("float division by zero (as in pyope)"),
            OpeError::Internal(m) => write!(f, "OPE sampler failure (pyope fails too): {m}"),
        }
    }
}

impl std::error::Error for OpeError {}

/// Size of `[start, end]`, if it is a valid, supported range.
fn range_size(start: i128, end: i128) -> Result<u128, OpeError> {
    if start > end {
        return Err(OpeError::InvalidRange(
            "invalid range: the start of the range is greater than the end",
        ));
    }
    let diff = end.wrapping_sub(start) as u128; // exact: 0 <= end - start < 2**128
    if diff >= MAX_SIZE {
        return Err(OpeError::InvalidRange("invalid range: more than 2**127 values"));
    }
    Ok(diff + 1)
}

/// One key and pair of ranges (pyope's `OPE(key, in_range, out_range)`), with its
/// memoized splits when made by [`Ope::cached`].
pub struct Ope {
    mac: HmacSha256,
    in_start: i128,
    in_size: u128,
    out_start: i128,
    out_size: u128,
    cache: Option<SplitCache>,
}

/// pyope's split point of an output range of `size` values: `ceil(size / 2.0)`, computed
/// in floating point (so rounded for sizes above 2**53).  Between 1 and `size`.
#[inline]
fn half(size: u128) -> u128 {
    to_u128(ceil_pos(fu(size) / 2.0))
}

/// A node of the recursion: offsets `[in_lo, in_hi]` and `[out_lo, out_hi]`.
#[derive(Clone, Copy)]
struct Node {
    in_lo: u128,
    in_hi: u128,
    out_lo: u128,
    out_hi: u128,
}

/// Where a node splits: output offsets `[out_lo, mid]` go with input `[in_lo, x]`.
struct Split {
    mid: u128,
    x: u128,
}

impl Node {
    #[inline]
    fn lower(&self, s: &Split) -> Node {
        Node { in_lo: self.in_lo, in_hi: s.x, out_lo: self.out_lo, out_hi: s.mid }
    }

    /// Only when `s.x < in_hi`.
    #[inline]
    fn upper(&self, s: &Split) -> Node {
        Node { in_lo: s.x + 1, in_hi: self.in_hi, out_lo: s.mid + 1, out_hi: self.out_hi }
    }
}

impl Ope {
    pub fn new(key: &[u8], in_start: i128, in_end: i128, out_start: i128, out_end: i128) -> Result<Ope, OpeError> {
        let in_size = range_size(in_start, in_end)?;
        let out_size = range_size(out_start, out_end)?;
        if in_size > out_size {
            return Err(OpeError::InvalidRange(
                "invalid range: the input range is larger than the output range",
            ));
        }
        Ok(Ope { mac: keyed_mac(key), in_start, in_size, out_start, out_size, cache: None })
    }

    /// [`Ope::new`] keeping the splits it samples (see [`SplitCache`]): for an object that
    /// encrypts many values under one key.  The results are the same.
    pub fn cached(key: &[u8], in_start: i128, in_end: i128, out_start: i128, out_end: i128) -> Result<Ope, OpeError> {
        let mut ope = Ope::new(key, in_start, in_end, out_start, out_end)?;
        ope.cache = Some(SplitCache::new());
        Ok(ope)
    }

    /// How many splits are memoized (0 without a cache).
    pub fn cached_nodes(&self) -> usize {
        self.cache.as_ref().map_or(0, SplitCache::len)
    }

    #[inline]
    fn in_abs(&self, off: u128) -> i128 {
        self.in_start.wrapping_add(off as i128) // off < 2**127 and the sum is in range
    }

    #[inline]
    fn out_abs(&self, off: u128) -> i128 {
        self.out_start.wrapping_add(off as i128)
    }

    /// Depth of the tree, about one level per bit of the input domain: the work of
    /// encrypting or decrypting one value.
    pub fn levels(&self) -> u128 {
        u128::from(128 - (self.in_size - 1).leading_zeros()).max(1)
    }

    fn root(&self) -> Node {
        Node { in_lo: 0, in_hi: self.in_size - 1, out_lo: 0, out_hi: self.out_size - 1 }
    }

    /// `sample_hgd` at an inner node (at least two input values).
    fn split(&self, n: &Node) -> Result<Split, OpeError> {
        let in_size = n.in_hi - n.in_lo + 1;
        let out_size = n.out_hi - n.out_lo + 1;
        if in_size > out_size {
            return Err(OpeError::Internal("input range larger than output range"));
        }
        let k = half(out_size); // 1-based index of mid in the output range
        let mid = n.out_lo + k - 1;
        if in_size == out_size {
            return Ok(Split { mid, x: n.in_lo + k - 1 });
        }
        match &self.cache {
            Some(cache) if in_size >= CACHE_MIN_IN_SIZE => {
                let key = (n.out_lo, n.out_hi);
                if let Some(x) = cache.get(key) {
                    return Ok(Split { mid, x });
                }
                let s = self.sample(n, k, mid, in_size, out_size)?;
                cache.put(key, s.x);
                Ok(s)
            }
            _ => self.sample(n, k, mid, in_size, out_size),
        }
    }

    /// The split of node `n` drawn from its coin tape.
    fn sample(&self, n: &Node, k: u128, mid: u128, in_size: u128, out_size: u128) -> Result<Split, OpeError> {
        let mut tape = Tape::new(&self.mac, self.out_abs(mid));
        let white = rhyper(&mut tape, k, in_size, out_size - in_size)?;
        if white < 0 || white as u128 > in_size {
            return Err(OpeError::Internal("hypergeometric sample outside the input range"));
        }
        let x = if white == 0 { n.in_lo } else { n.in_lo + white as u128 - 1 };
        Ok(Split { mid, x })
    }

    /// The leaf: the ciphertext of input offset `p` drawn uniformly from `[out_lo, out_hi]`.
    fn leaf(&self, p: u128, n: &Node) -> u128 {
        if n.out_lo == n.out_hi {
            return n.out_lo;
        }
        let mut tape = Tape::new(&self.mac, self.in_abs(p));
        sample_uniform(n.out_lo, n.out_hi, &mut tape)
    }

    /// Offset of a plaintext in the input range.
    fn in_offset(&self, plaintext: i128) -> Result<u128, OpeError> {
        if plaintext < self.in_start || plaintext > self.in_abs(self.in_size - 1) {
            return Err(OpeError::OutOfRange("plaintext is not within the input range"));
        }
        Ok(plaintext.wrapping_sub(self.in_start) as u128)
    }

    /// Offset of a ciphertext in the output range.
    fn out_offset(&self, ciphertext: i128) -> Result<u128, OpeError> {
        if ciphertext < self.out_start || ciphertext > self.out_abs(self.out_size - 1) {
            return Err(OpeError::OutOfRange("ciphertext is not within the output range"));
        }
        Ok(ciphertext.wrapping_sub(self.out_start) as u128)
    }

    pub fn encrypt(&self, plaintext: i128) -> Result<i128, OpeError> {
        let p = self.in_offset(plaintext)?;
        self.encrypt_from(self.root(), p)
    }

    pub fn decrypt(&self, ciphertext: i128) -> Result<i128, OpeError> {
        let c = self.out_offset(ciphertext)?;
        self.decrypt_from(self.root(), c)
    }

    /// Encrypt many plaintexts (results in the same order).  The values are sorted and
    /// walk down the tree together, so each node shared by several of them is sampled once.
    pub fn encrypt_many(&self, plaintexts: &[i128]) -> Result<Vec<i128>, OpeError> {
        let mut items = Vec::with_capacity(plaintexts.len());
        for (i, &x) in plaintexts.iter().enumerate() {
            items.push((self.in_offset(x)?, i));
        }
        items.sort_unstable();
        let mut out = vec![0i128; plaintexts.len()];
        self.encrypt_group(self.root(), &items, &mut out)?;
        Ok(out)
    }

    /// Decrypt many ciphertexts (results in the same order), sharing nodes as
    /// `encrypt_many` does.
    pub fn decrypt_many(&self, ciphertexts: &[i128]) -> Result<Vec<i128>, OpeError> {
        let mut items = Vec::with_capacity(ciphertexts.len());
        for (i, &x) in ciphertexts.iter().enumerate() {
            items.push((self.out_offset(x)?, i));
        }
        items.sort_unstable();
        let mut out = vec![0i128; ciphertexts.len()];
        self.decrypt_group(self.root(), &items, &mut out)?;
        Ok(out)
    }

    /// `items`: sorted (input offset, position) pairs, all inside node `n`.
    fn encrypt_group(&self, n: Node, items: &[(u128, usize)], out: &mut [i128]) -> Result<(), OpeError> {
        match items {
            [] => Ok(()),
            [(p, i)] => {
                out[*i] = self.encrypt_from(n, *p)?;
                Ok(())
            }
            _ if n.in_lo == n.in_hi => {
                let c = self.out_abs(self.leaf(n.in_lo, &n));
                items.iter().for_each(|&(_, i)| out[i] = c);
                Ok(())
            }
            _ => {
                let s = self.split(&n)?;
                let k = items.partition_point(|&(p, _)| p <= s.x);
                self.encrypt_group(n.lower(&s), &items[..k], out)?;
                self.encrypt_group(n.upper(&s), &items[k..], out)
            }
        }
    }

    /// `items`: sorted (output offset, position) pairs, all inside node `n`.
    fn decrypt_group(&self, n: Node, items: &[(u128, usize)], out: &mut [i128]) -> Result<(), OpeError> {
        match items {
            [] => Ok(()),
            [(c, i)] => {
                out[*i] = self.decrypt_from(n, *c)?;
                Ok(())
            }
            _ if n.in_lo == n.in_hi => {
                let c = self.leaf(n.in_lo, &n);
                if items.iter().any(|&(x, _)| x != c) {
                    return Err(OpeError::InvalidCiphertext);
                }
                let p = self.in_abs(n.in_lo);
                items.iter().for_each(|&(_, i)| out[i] = p);
                Ok(())
            }
            _ => {
                let s = self.split(&n)?;
                let k = items.partition_point(|&(c, _)| c <= s.mid);
                if k < items.len() && s.x == n.in_hi {
                    return Err(OpeError::InvalidCiphertext);
                }
                self.decrypt_group(n.lower(&s), &items[..k], out)?;
                self.decrypt_group(n.upper(&s), &items[k..], out)
            }
        }
    }

    /// Encrypt input offset `p` from node `n` down.
    fn encrypt_from(&self, mut n: Node, p: u128) -> Result<i128, OpeError> {
        while n.in_lo != n.in_hi {
            let s = self.split(&n)?;
            n = if p <= s.x { n.lower(&s) } else { n.upper(&s) };
        }
        Ok(self.out_abs(self.leaf(p, &n)))
    }

    /// Decrypt output offset `c` from node `n` down.
    fn decrypt_from(&self, mut n: Node, c: u128) -> Result<i128, OpeError> {
        while n.in_lo != n.in_hi {
            let s = self.split(&n)?;
            if c <= s.mid {
                n = n.lower(&s);
            } else if s.x == n.in_hi {
                // No input value is left above the split; pyope fails building the range.
                return Err(OpeError::InvalidCiphertext);
            } else {
                n = n.upper(&s);
            }
        }
        if self.leaf(n.in_lo, &n) == c {
            Ok(self.in_abs(n.in_lo))
        } else {
            Err(OpeError::InvalidCiphertext)
        }
    }
}
