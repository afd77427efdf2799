//! pyope's coin tape (`OPE.tape_gen`).
//!
//! For a node value `v` the tape is the keystream of AES-256-CTR (all-zero initial counter
//! block, full 128-bit big-endian counter) under the key `HMAC-SHA256(key, str(v))`, read
//! most significant bit first.  `str(v)` is Python's decimal form, with a leading `-` for
//! negative values.

use aes::cipher::{KeyIvInit, StreamCipher};
use hmac::{Hmac, Mac};
use sha2::Sha256;

// Encryption-only AES: CTR mode never needs the decryption key schedule.
type Aes256Ctr = ctr::Ctr128BE<aes::Aes256Enc>;
pub type HmacSha256 = Hmac<Sha256>;

/// HMAC-SHA256 keyed once; every tape starts from a copy of this state.
pub fn keyed_mac(key: &[u8]) -> HmacSha256 {
    // HMAC accepts keys of any length (longer than a block: hashed first; empty: zeros).
    <HmacSha256 as Mac>::new_from_slice(key).expect("HMAC takes keys of any length")
}

/// Python's `str(v).encode()` of a signed 128-bit integer, written into `buf`.
pub fn decimal(v: i128, buf: &mut [u8; 40]) -> &[u8] {
    let mut pos = buf.len();
    let mut mag = v.unsigned_abs();
    // Split off 19 digits at a time with 128-bit divisions while the value needs them.
    const E19: u128 = 10_000_000_000_000_000_000;
    while mag > u64::MAX as u128 {
        let q = mag / E19;
        let mut low = (mag - q * E19) as u64;
        mag = q;
        for _ in 0..19 {
            pos -= 1;
            buf[pos] = b'0' + (low % 10) as u8;
            low /= 10;
        }
    }
    let mut rest = mag as u64;
    loop {
        pos -= 1;
        buf[pos] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if v < 0 {
        pos -= 1;
        buf[pos] = b'-';
    }
    &buf[pos..]
}

/// The bit stream of one node.
pub struct Tape {
    cipher: Aes256Ctr,
    /// Unread bits, left-aligned (the next bit is bit 127).
    bits: u128,
    avail: u32,
}

impl Tape {
    #[inline]
    pub fn new(mac: &HmacSha256, data: i128) -> Tape {
        let mut buf = [0u8; 40];
        let mut m = mac.clone();
        m.update(decimal(data, &mut buf));
        let digest = m.finalize().into_bytes();
        let cipher = Aes256Ctr::new(&digest, &[0u8; 16].into());
        Tape { cipher, bits: 0, avail: 0 }
    }

    fn refill(&mut self) -> u128 {
        let mut block = [0u8; 16];
        self.cipher.apply_keystream(&mut block);
        u128::from_be_bytes(block)
    }

    /// The next bit (0 or 1).
    #[inline]
    pub fn bit(&mut self) -> u32 {
        if self.avail == 0 {
            self.bits = self.refill();
            self.avail = 128;
        }
        let b = (self.bits >> 127) as u32;
        self.bits <<= 1;
        self.avail -= 1;
        b
    }

    /// The next 32 bits as a big-endian integer.
    #[inline]
    pub fn bits32(&mut self) -> u32 {
        if self.avail == 0 {
            self.bits = self.refill();
            self.avail = 128;
        }
        if self.avail >= 32 {
            let v = (self.bits >> 96) as u32;
            self.bits <<= 32;
            self.avail -= 32;
            v
        } else {
            let mut v = 0u32;
            for _ in 0..32 {
                v = (v << 1) | self.bit();
            }
            v
        }
    }

    /// pyope's `PRNG.draw`: 32 coins as an integer, divided by 2**32 - 1.
    #[inline]
    pub fn draw(&mut self) -> f64 {
        self.bits32() as f64 / 4294967295.0
    }
}
