//! The link policy's input events written to `OUT/policy-events.jsonl` (`links.policy_events`),
//! one JSON line each, as each decision is applied: `nearcrawl policy-replay` feeds them to
//! the policy alone and checks that it decides every link as the crawl did.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use nearcrawl_link_policy::Decider;

use crate::error::EngineError;

/// The file name under the output directory.
const POLICY_EVENTS: &str = "policy-events.jsonl";

/// The journal file, appended to (a resumed crawl goes on after what it wrote before).
pub(super) struct Journal {
    path: PathBuf,
    file: BufWriter<File>,
}

impl Journal {
    /// Opens `OUT/policy-events.jsonl` for appending.
    pub(super) fn open(out_dir: &Path) -> Result<Journal, EngineError> {
        let path = out_dir.join(POLICY_EVENTS);
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|source| EngineError::Io {
                path: path.clone(),
                source,
            })?;
        Ok(Journal {
            path,
            file: BufWriter::new(file),
        })
    }

    /// Writes the events the link policy journaled since last asked, one line each.
    pub(super) fn write(&mut self, links: &mut Decider) -> Result<(), EngineError> {
        for event in links.take_events() {
            // Strings, numbers and keys only: serialising cannot fail.
            let line = serde_json::to_string(&event).unwrap_or_default();
            writeln!(self.file, "{line}").map_err(|source| self.error(source))?;
        }
        Ok(())
    }

    /// Everything written reaches the file.
    pub(super) fn flush(&mut self) -> Result<(), EngineError> {
        self.file.flush().map_err(|source| self.error(source))
    }

    fn error(&self, source: std::io::Error) -> EngineError {
        EngineError::Io {
            path: self.path.clone(),
            source,
        }
    }
}
