//! What can stop a crawl job. A failed page is never one of these: it is a record.

use std::fmt;
use std::path::{Path, PathBuf};

use nearcrawl_fetch::BuildError;
use nearcrawl_frontier::ScopeError;
use nearcrawl_hamming_index::IndexError;
use nearcrawl_records::RecordsError;
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
    /// A scope pattern is invalid.
    Scope(ScopeError),
    /// The HTTP client could not be built.
    HttpClient(BuildError),
    /// No index design supports `dedup.max_distance`.
    IndexDesign {
        /// The configured distance.
        max_distance: u32,
        /// Why no design fits.
        source: IndexError,
    },
    /// The shared index (`--index DIR`) cannot be read or written.
    SharedIndex {
        /// The index file or directory.
        path: PathBuf,
        /// The index error.
        source: IndexError,
    },
    /// The shared index's entries and URL list do not match.
    SharedIndexUrls {
        /// The directory.
        dir: PathBuf,
        /// The entry without a URL.
        entry: u64,
        /// Lines in the URL list.
        urls: usize,
    },
    /// The job shared through Redis (`--redis`) failed: the server, the job's settings or
    /// what it holds.
    Shared(String),
    /// The browser that renders pages (`render.mode`) did not start: what is missing.
    Render(String),
    /// A directory named as a crawl's output is not one, or not the kind asked for.
    NotACrawl {
        /// The directory.
        dir: PathBuf,
        /// What it lacks.
        reason: &'static str,
    },
    /// `records.jsonl` holds decisions the crawl's state cannot account for: the state was
    /// deleted, replaced, rolled back or damaged (a cut journal). Nothing was changed.
    RecordsAhead {
        /// The records file.
        path: PathBuf,
        /// Complete lines in it.
        lines: u64,
        /// Decisions the state holds.
        decided: u64,
    },
    /// A focused crawl's topic cannot be built (an example cannot be had, or says nothing).
    Topic(String),
    /// The dedup stage's judge, on a thread of its own, stopped: why (its first error's
    /// message, when an error stopped it).
    Judge(String),
    /// An output file (records, report, a previous job's outputs) cannot be read or written.
    Records(RecordsError),
    /// The job configuration file cannot be read, or says something it may not.
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong (the TOML error names the line and key).
        reason: String,
    },
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
            EngineError::Scope(e) => e.fmt(f),
            EngineError::HttpClient(e) => e.fmt(f),
            EngineError::Topic(reason) => f.write_str(reason),
            EngineError::Render(why) => write!(f, "render.mode: {why}"),
            EngineError::Judge(why) => write!(f, "the dedup stage's judge stopped: {why}"),
            EngineError::Shared(reason) => write!(f, "shared job: {reason}"),
            EngineError::IndexDesign {
                max_distance,
                source,
            } => write!(f, "dedup.max_distance = {max_distance}: {source}"),
            EngineError::SharedIndex { path, source } => {
                write!(f, "shared index {}: {source}", path.display())
            }
            EngineError::SharedIndexUrls { dir, entry, urls } => write!(
                f,
                "shared index {}: entry {entry} has no URL ({urls} lines in its URL list)",
                dir.display()
            ),
            EngineError::NotACrawl { dir, reason } => {
                write!(f, "{}: {reason}", dir.display())
            }
            EngineError::RecordsAhead {
                path,
                lines,
                decided,
            } => write!(
                f,
                "{}: holds {lines} decisions but the crawl state beside it accounts for {decided} \
                 (state/ was deleted, replaced, rolled back or damaged); nothing was changed. Restore \
                 state/, or run again with --restart to start over (the old outputs are moved \
                 into a previous-* directory, not deleted)",
                path.display()
            ),
            EngineError::Records(e) => e.fmt(f),
            EngineError::Config { path, reason } => {
                write!(f, "config {}: {reason}", path.display())
            }
        }
    }
}

impl std::error::Error for EngineError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // Transparent: their message is this error's, so the chain goes on from theirs.
            EngineError::Store(e) => e.source(),
            EngineError::Scope(e) => e.source(),
            EngineError::HttpClient(e) => e.source(),
            EngineError::Io { source, .. } => Some(source),
            EngineError::IndexDesign { source, .. } | EngineError::SharedIndex { source, .. } => {
                Some(source)
            }
            EngineError::Records(e) => e.source(),
            EngineError::SharedIndexUrls { .. }
            | EngineError::Topic(_)
            | EngineError::Judge(_)
            | EngineError::Shared(_)
            | EngineError::Render(_)
            | EngineError::NotACrawl { .. }
            | EngineError::Config { .. }
            | EngineError::RecordsAhead { .. } => None,
        }
    }
}

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

impl From<RecordsError> for EngineError {
    fn from(e: RecordsError) -> Self {
        EngineError::Records(e)
    }
}
