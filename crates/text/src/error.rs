//! Errors of this crate.

use std::path::PathBuf;

/// An error reading or writing an IDF table.
#[derive(Debug)]
#[non_exhaustive]
pub enum TextError {
    /// The file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A line of the file is not what the format says.
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
}

impl std::fmt::Display for TextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TextError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            TextError::Parse {
                path,
                line,
                message,
            } => write!(f, "{}:{line}: {message}", path.display()),
        }
    }
}

impl std::error::Error for TextError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TextError::Io { source, .. } => Some(source),
            TextError::Parse { .. } => None,
        }
    }
}
