use std::fmt;

/// Everything that can be wrong with the input of this crate's constructors.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FingerprintError {
    /// A feature weight was negative, NaN, infinite or above [`crate::Weight::MAX`].
    InvalidWeight {
        /// The rejected weight.
        weight: f32,
    },
    /// A shingle width of zero was requested.
    ZeroShingleWidth,
    /// A sketch parameter (MIN_s size, MOD_m modulus, super-shingle window) was zero.
    ZeroSketchParameter {
        /// Which parameter: `"s"`, `"m"` or `"window"`.
        name: &'static str,
    },
    /// Two sketches built with different parameters were compared.
    SketchMismatch {
        /// The parameter of the left sketch.
        left: usize,
        /// The parameter of the right sketch.
        right: usize,
    },
    /// A string was not a 16-digit hexadecimal fingerprint.
    ParseFingerprint {
        /// The rejected input.
        input: String,
    },
}

impl fmt::Display for FingerprintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidWeight { weight } => write!(
                f,
                "invalid feature weight {weight}: weights must be finite, non-negative and at most {}",
                crate::Weight::MAX.get()
            ),
            Self::ZeroShingleWidth => write!(f, "shingle width must be at least 1"),
            Self::ZeroSketchParameter { name } => {
                write!(f, "sketch parameter {name} must be at least 1")
            }
            Self::SketchMismatch { left, right } => write!(
                f,
                "cannot compare sketches built with different parameters ({left} vs {right})"
            ),
            Self::ParseFingerprint { input } => write!(
                f,
                "{input:?} is not a fingerprint: expected 1 to 16 hexadecimal digits"
            ),
        }
    }
}

impl std::error::Error for FingerprintError {}
