//! A job's output directory: what it holds, and setting a finished job's outputs aside so the
//! job can start over without deleting anything.

use std::path::{Path, PathBuf};

use crate::error::RecordsError;

/// The file in a recrawl's output directory that names the job it crawls again, so that the
/// recrawl resumed after a crash (without `--previous`) still compares with it.
pub const PREVIOUS_FILE: &str = "recrawl-of";

/// The job an unfinished recrawl in `out_dir` crawls again: one that started (its note is
/// there) and has not written its report yet (it was killed), to be resumed, not restarted.
pub fn unfinished_recrawl(out_dir: &Path) -> Option<PathBuf> {
    if out_dir.join("report.json").exists() {
        return None;
    }
    let text = std::fs::read_to_string(out_dir.join(PREVIOUS_FILE)).ok()?;
    Some(PathBuf::from(text.trim_end()))
}

/// What a job writes in its output directory, besides what others put there.
const OUTPUTS: [&str; 6] = [
    "records.jsonl",
    "report.json",
    "warc",
    "state",
    "what-if.json",
    PREVIOUS_FILE,
];

/// Moves a job's outputs in `out_dir` (records, report, WARC files, state) into a new
/// `out_dir/previous-N/` so the job can start over; returns that directory, or `None` when
/// there was nothing to move. Nothing is deleted.
pub fn set_aside(out_dir: &Path) -> Result<Option<PathBuf>, RecordsError> {
    set_aside_named(out_dir, &OUTPUTS)
}

/// [`set_aside`] for the outputs called `names` (another command's outputs).
pub fn set_aside_named(out_dir: &Path, names: &[&str]) -> Result<Option<PathBuf>, RecordsError> {
    let present: Vec<&str> = names
        .iter()
        .copied()
        .filter(|name| out_dir.join(name).exists())
        .collect();
    if present.is_empty() {
        return Ok(None);
    }
    let aside = (1u32..)
        .map(|n| out_dir.join(format!("previous-{n}")))
        .find(|dir| !dir.exists())
        .unwrap_or_else(|| out_dir.join("previous"));
    std::fs::create_dir(&aside).map_err(|e| RecordsError::io(&aside, e))?;
    for name in present {
        let to = aside.join(name);
        std::fs::rename(out_dir.join(name), &to).map_err(|e| RecordsError::io(&to, e))?;
    }
    Ok(Some(aside))
}
