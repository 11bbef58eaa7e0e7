//! `records.jsonl`, kept in step with the store: the store is written first, so after a crash
//! the file is completed from it (and a torn last line cut off).

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use nearcrawl_store::CrawlStore;

use crate::error::EngineError;

/// Bytes of records held before they are written to the file (unless flushed sooner, as
/// the archive does every 20 ms): a record is about a kilobyte, and with the default 8 KiB a
/// write to the file every eight records was 1.8 % of the coordinator's time (a kill loses
/// nothing by it: the file is made whole from the store on resuming).
const RECORDS_BUFFER: usize = 128 << 10;

/// The append-only records file.
pub struct RecordsFile {
    path: PathBuf,
    out: BufWriter<File>,
}

impl RecordsFile {
    /// Opens `path` for appending, first making it hold exactly the store's records
    /// `0..decided`: a torn last line (a crash mid-write) is cut, lines the store committed
    /// but the file missed are written from the store. A file with more complete lines than
    /// the store holds is never cut: that is [`EngineError::RecordsAhead`], file untouched.
    pub fn open(
        path: &Path,
        store: &dyn CrawlStore,
        decided: u64,
    ) -> Result<RecordsFile, EngineError> {
        let io = |e| EngineError::io(path, e);
        let mut file = File::options()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .map_err(io)?;
        // Count whole lines; remember where line `decided` would start.
        let mut lines = 0u64;
        let mut keep = 0u64;
        {
            let mut reader = BufReader::new(&mut file);
            let mut line = Vec::new();
            loop {
                line.clear();
                let n = reader.read_until(b'\n', &mut line).map_err(io)?;
                if n == 0 || line.last() != Some(&b'\n') {
                    break;
                }
                if lines == decided {
                    // A complete line past what the store holds: the store lost state.
                    let mut ahead = lines + 1;
                    loop {
                        line.clear();
                        let n = reader.read_until(b'\n', &mut line).map_err(io)?;
                        if n == 0 || line.last() != Some(&b'\n') {
                            break;
                        }
                        ahead += 1;
                    }
                    return Err(EngineError::RecordsAhead {
                        path: path.to_path_buf(),
                        lines: ahead,
                        decided,
                    });
                }
                lines += 1;
                keep += n as u64;
            }
        }
        file.set_len(keep).map_err(io)?;
        file.seek(SeekFrom::End(0)).map_err(io)?;
        let mut out = BufWriter::with_capacity(RECORDS_BUFFER, file);
        if lines < decided {
            let mut failed = None;
            store.for_each_record(lines, &mut |seq, bytes| {
                if seq < decided
                    && failed.is_none()
                    && let Err(e) = out.write_all(bytes).and_then(|()| out.write_all(b"\n"))
                {
                    failed = Some(e);
                }
            })?;
            if let Some(e) = failed {
                return Err(io(e));
            }
        }
        out.flush().map_err(io)?;
        Ok(RecordsFile {
            path: path.to_path_buf(),
            out,
        })
    }

    /// Appends one record, already serialised (one JSON object, no newline).
    pub fn append(&mut self, line: &[u8]) -> Result<(), EngineError> {
        self.out
            .write_all(line)
            .and_then(|()| self.out.write_all(b"\n"))
            .map_err(|e| EngineError::io(&self.path, e))
    }

    /// Flushes to the operating system.
    pub fn flush(&mut self) -> Result<(), EngineError> {
        self.out.flush().map_err(|e| EngineError::io(&self.path, e))
    }
}
