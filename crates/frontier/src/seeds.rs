//! Seed lists: one URL per line, `#` comments and blank lines ignored.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::canonical::{CanonicalUrl, UrlError};

/// One seed URL and the line it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seed {
    /// The canonical URL.
    pub url: CanonicalUrl,
    /// 1-based line number in the seed file.
    pub line: usize,
}

/// A seed list that cannot be used.
#[derive(Debug)]
#[non_exhaustive]
pub enum SeedError {
    /// The file could not be read.
    Io {
        /// The seed file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A line is not a crawlable URL.
    BadLine {
        /// The seed file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// Why the URL was rejected.
        source: UrlError,
    },
    /// The list has no URL at all.
    Empty {
        /// The seed file.
        path: PathBuf,
    },
}

impl fmt::Display for SeedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SeedError::Io { path, source } => {
                write!(f, "cannot read seed list {}: {source}", path.display())
            }
            SeedError::BadLine { path, line, source } => {
                write!(f, "{}:{line}: {source}", path.display())
            }
            SeedError::Empty { path } => write!(f, "{}: no seed URL in the list", path.display()),
        }
    }
}

impl std::error::Error for SeedError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SeedError::Io { source, .. } => Some(source),
            SeedError::BadLine { source, .. } => Some(source),
            SeedError::Empty { .. } => None,
        }
    }
}

/// Reads a seed list file.
pub fn read_seeds(path: &Path) -> Result<Vec<Seed>, SeedError> {
    let text = std::fs::read_to_string(path).map_err(|source| SeedError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_seeds(&text, path)
}

/// Parses seed list text; `path` names the source in errors. Duplicate seeds are kept once.
pub fn parse_seeds(text: &str, path: &Path) -> Result<Vec<Seed>, SeedError> {
    let mut seeds: Vec<Seed> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        // Whole-line comments start with `#`; a trailing comment needs a space before its `#`,
        // so a URL's own fragment (`page#part`) is not mistaken for one.
        let line = raw.trim();
        let line = if line.starts_with('#') {
            ""
        } else {
            match line.find(" #").or_else(|| line.find("\t#")) {
                Some(at) => line[..at].trim_end(),
                None => line,
            }
        };
        if line.is_empty() {
            continue;
        }
        let url = CanonicalUrl::parse(line).map_err(|source| SeedError::BadLine {
            path: path.to_path_buf(),
            line: i + 1,
            source,
        })?;
        if !seeds.iter().any(|s| s.url == url) {
            seeds.push(Seed { url, line: i + 1 });
        }
    }
    if seeds.is_empty() {
        return Err(SeedError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(seeds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_blanks_and_duplicates() {
        let text = "# seeds\n\nhttp://a.example/\n  https://b.example/x  # trailing\nhttp://A.example/#frag\n";
        let seeds = parse_seeds(text, Path::new("s.txt")).unwrap();
        let urls: Vec<_> = seeds.iter().map(|s| (s.url.as_str(), s.line)).collect();
        assert_eq!(urls, [("http://a.example/", 3), ("https://b.example/x", 4)]);
    }

    #[test]
    fn bad_line_names_file_and_line() {
        let err = parse_seeds(
            "http://ok.example/\nftp://bad.example/\n",
            Path::new("jobs/s.txt"),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("jobs/s.txt:2: "), "{msg}");
        assert!(msg.contains("only http and https"), "{msg}");
    }

    #[test]
    fn empty_list_is_an_error() {
        let err = parse_seeds("# nothing\n\n", Path::new("e.txt")).unwrap_err();
        assert_eq!(err.to_string(), "e.txt: no seed URL in the list");
    }

    #[test]
    fn missing_file_names_it() {
        let err = read_seeds(Path::new("/nonexistent/seeds.txt")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/seeds.txt"));
    }
}
