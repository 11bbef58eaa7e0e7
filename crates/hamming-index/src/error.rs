use std::fmt;
use std::path::PathBuf;

/// Everything that can go wrong building, saving or loading an index.
#[derive(Debug)]
#[non_exhaustive]
pub enum IndexError {
    /// The parameters do not describe a valid permuted-table design.
    InvalidParams {
        /// Why they were rejected.
        reason: String,
    },
    /// No design fits the memory budget given to [`crate::IndexParams::auto`].
    NoDesignFits {
        /// The expected number of fingerprints.
        expected_len: u64,
        /// The memory budget in bytes.
        budget: u64,
    },
    /// Reading or writing an index file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file is not an index file (wrong magic bytes).
    NotAnIndex {
        /// The file.
        path: PathBuf,
    },
    /// The file was written by an unknown format version.
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The version it declares.
        version: u32,
        /// The version this build reads.
        supported: u32,
    },
    /// The file ends early or has trailing bytes: its length does not match its header.
    Truncated {
        /// The file.
        path: PathBuf,
        /// Bytes the header implies.
        expected: u64,
        /// Bytes present.
        actual: u64,
    },
    /// The stored checksum does not match the contents, or the contents break an invariant.
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
}

impl fmt::Display for IndexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidParams { reason } => write!(f, "invalid index parameters: {reason}"),
            Self::NoDesignFits {
                expected_len,
                budget,
            } => write!(
                f,
                "no permuted-table design for {expected_len} fingerprints fits in {budget} bytes"
            ),
            Self::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Self::NotAnIndex { path } => {
                write!(
                    f,
                    "{}: not a nearcrawl index file (bad magic bytes)",
                    path.display()
                )
            }
            Self::UnsupportedVersion {
                path,
                version,
                supported,
            } => write!(
                f,
                "{}: index format version {version} is not supported (this build reads version {supported})",
                path.display(),
            ),
            Self::Truncated {
                path,
                expected,
                actual,
            } => write!(
                f,
                "{}: index file is {actual} bytes but its header says {expected}: truncated or damaged",
                path.display()
            ),
            Self::Corrupt { path, detail } => {
                write!(f, "{}: index file is corrupt: {detail}", path.display())
            }
        }
    }
}

impl std::error::Error for IndexError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
