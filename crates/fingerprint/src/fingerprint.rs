use std::fmt;
use std::str::FromStr;

use crate::FingerprintError;

/// A 64-bit document fingerprint (simhash). Similar documents have fingerprints at a small
/// Hamming distance.
///
/// Printed and parsed as 16 lower-case hexadecimal digits.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Fingerprint(u64);

impl Fingerprint {
    /// The number of bits in a fingerprint (Manku et al.'s f).
    pub const BITS: u32 = 64;

    /// Wraps raw fingerprint bits.
    pub const fn new(bits: u64) -> Self {
        Self(bits)
    }

    /// The raw bits.
    pub const fn bits(self) -> u64 {
        self.0
    }

    /// The number of bit positions in which `self` and `other` differ.
    #[inline]
    pub const fn distance(self, other: Fingerprint) -> u32 {
        (self.0 ^ other.0).count_ones()
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({:016x})", self.0)
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl FromStr for Fingerprint {
    type Err = FingerprintError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let digits = s.strip_prefix("0x").unwrap_or(s);
        let valid = !digits.is_empty()
            && digits.len() <= 16
            && digits.bytes().all(|b| b.is_ascii_hexdigit());
        let parsed = if valid {
            u64::from_str_radix(digits, 16).ok()
        } else {
            None
        };
        parsed
            .map(Fingerprint)
            .ok_or_else(|| FingerprintError::ParseFingerprint {
                input: s.to_owned(),
            })
    }
}

impl From<u64> for Fingerprint {
    fn from(bits: u64) -> Self {
        Self(bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_differing_bits() {
        let a = Fingerprint::new(0b1011_0000);
        let b = Fingerprint::new(0b0011_0001);
        assert_eq!(a.distance(b), 2);
        assert_eq!(a.distance(a), 0);
        assert_eq!(Fingerprint::new(0).distance(Fingerprint::new(u64::MAX)), 64);
    }

    #[test]
    fn hex_round_trip_and_errors() {
        let fp = Fingerprint::new(0x00ab_cdef_0123_4567);
        assert_eq!(fp.to_string(), "00abcdef01234567");
        assert_eq!("00abcdef01234567".parse::<Fingerprint>(), Ok(fp));
        assert_eq!("0xabcdef01234567".parse::<Fingerprint>(), Ok(fp));
        for bad in ["", "0x", "xyz", "12345678901234567", "-1", "+1"] {
            let err = bad.parse::<Fingerprint>().unwrap_err();
            assert!(err.to_string().contains(&format!("{bad:?}")), "{err}");
        }
    }
}
