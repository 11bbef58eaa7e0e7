//! What can stop a crawl job. A failed page is never one of these: it is a record.

use std::fmt;
use std::path::{Path, PathBuf};

use nearcrawl_frontier::ScopeError;
use nearcrawl_store::StoreError;

/// An error that stops the job (after what was decided so far is stored).
#[derive(Debug)]
#[non_exhaustive]
pub enum EngineError {
    /// The crawl store failed.
    Store(StoreError),
    /// An output file could not be written.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The job cannot start with this configuration.
    Setup(String),
    /// A scope pattern is invalid.
    Scope(ScopeError),
}

impl EngineError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> EngineError {
        EngineError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Store(e) => e.fmt(f),
            EngineError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            EngineError::Setup(message) => f.write_str(message),
            EngineError::Scope(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for EngineError {}

impl From<StoreError> for EngineError {
    fn from(e: StoreError) -> Self {
        EngineError::Store(e)
    }
}

impl From<ScopeError> for EngineError {
    fn from(e: ScopeError) -> Self {
        EngineError::Scope(e)
    }
}
