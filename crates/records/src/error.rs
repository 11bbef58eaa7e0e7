//! What can go wrong reading or writing a job's outputs.

use std::fmt;
use std::path::{Path, PathBuf};

/// An output file that cannot be read or written, or is not what it should be.
#[derive(Debug)]
#[non_exhaustive]
pub enum RecordsError {
    /// A file or directory could not be read or written.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line of `records.jsonl` cannot be read.
    Line {
        /// The file.
        path: PathBuf,
        /// Its line number, from 1.
        line: usize,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// A directory named as a crawl's output is not one, or not the kind asked for.
    NotACrawl {
        /// The directory.
        dir: PathBuf,
        /// What it lacks.
        reason: &'static str,
    },
}

impl RecordsError {
    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> RecordsError {
        RecordsError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

impl fmt::Display for RecordsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecordsError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            RecordsError::Line { path, line, source } => {
                write!(f, "{}:{line}: {source}", path.display())
            }
            RecordsError::NotACrawl { dir, reason } => write!(f, "{}: {reason}", dir.display()),
        }
    }
}

impl std::error::Error for RecordsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RecordsError::Io { source, .. } => Some(source),
            RecordsError::Line { source, .. } => Some(source),
            RecordsError::NotACrawl { .. } => None,
        }
    }
}
