//! The index file: versioned, checksummed, loaded at disk speed.
//!
//! Layout (all integers little-endian):
//!
//! ```text
//! magic    8 bytes  "NCHAMIDX"
//! version  u32      FORMAT_VERSION
//! k        u32
//! levels   u32      then (blocks u32, chosen u32) per level
//! n        u64      number of entries
//! tables   t × n × u64   each table's permuted keys, sorted
//! payloads n × u64       in table 0's order
//! checksum u64      xxh3-64 of every byte before it
//! ```
//!
//! The tables are stored as they are held in memory, so loading is reading plus a checksum and
//! an order check, no sorting. Saving writes a temporary file and renames it over the target,
//! so a crash mid-save leaves the previous file intact.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::Xxh3;

use crate::run::Run;
use crate::{HammingIndex, IndexError, IndexParams, Level};

const MAGIC: &[u8; 8] = b"NCHAMIDX";
/// The format version this build writes and reads.
pub(crate) const FORMAT_VERSION: u32 = 1;
const MAX_LEVELS: u32 = 64;

impl HammingIndex {
    /// Writes the index to `path` (atomically: a temporary file renamed over the target).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), IndexError> {
        let path = path.as_ref();
        let io = |source| IndexError::Io {
            path: path.to_owned(),
            source,
        };
        let run = self.as_one_run();
        let tmp = temporary_path(path);
        let file = File::create(&tmp).map_err(io)?;
        let mut out = HashingWriter {
            inner: BufWriter::with_capacity(1 << 20, file),
            hash: Xxh3::new(),
        };
        let params = self.params();
        out.write_all(MAGIC).map_err(io)?;
        out.write_all(&FORMAT_VERSION.to_le_bytes()).map_err(io)?;
        out.write_all(&params.k().to_le_bytes()).map_err(io)?;
        out.write_all(&(params.levels().len() as u32).to_le_bytes())
            .map_err(io)?;
        for level in params.levels() {
            out.write_all(&level.blocks.to_le_bytes()).map_err(io)?;
            out.write_all(&level.chosen.to_le_bytes()).map_err(io)?;
        }
        out.write_all(&(run.len() as u64).to_le_bytes())
            .map_err(io)?;
        for table in &run.tables {
            write_u64s(&mut out, &table.keys).map_err(io)?;
        }
        write_u64s(&mut out, &run.payloads).map_err(io)?;
        let checksum = out.hash.digest();
        let mut inner = out.inner;
        inner.write_all(&checksum.to_le_bytes()).map_err(io)?;
        let file = inner.into_inner().map_err(|e| io(e.into_error()))?;
        file.sync_all().map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    /// Reads an index written by [`HammingIndex::save`]. A file that is not an index, of another
    /// version, truncated, extended or damaged is an error naming the file; nothing is loaded
    /// partially.
    pub fn load(path: impl AsRef<Path>) -> Result<HammingIndex, IndexError> {
        let path = path.as_ref();
        let io = |source| IndexError::Io {
            path: path.to_owned(),
            source,
        };
        let corrupt = |detail: String| IndexError::Corrupt {
            path: path.to_owned(),
            detail,
        };
        let mut file = File::open(path).map_err(io)?;
        let actual = file.metadata().map_err(io)?.len();
        let mut hash = Xxh3::new();
        let mut header = [0u8; 20];
        read_or_truncated(&mut file, &mut header, path, 20, actual)?;
        hash.update(&header);
        if &header[..8] != MAGIC {
            return Err(IndexError::NotAnIndex {
                path: path.to_owned(),
            });
        }
        let word =
            |i: usize| u32::from_le_bytes([header[i], header[i + 1], header[i + 2], header[i + 3]]);
        let (version, k, level_count) = (word(8), word(12), word(16));
        if version != FORMAT_VERSION {
            return Err(IndexError::UnsupportedVersion {
                path: path.to_owned(),
                version,
                supported: FORMAT_VERSION,
            });
        }
        if level_count > MAX_LEVELS {
            return Err(corrupt(format!("{level_count} levels")));
        }
        let mut rest = vec![0u8; level_count as usize * 8 + 8];
        let header_len = 20 + rest.len() as u64;
        read_or_truncated(&mut file, &mut rest, path, header_len, actual)?;
        hash.update(&rest);
        let levels: Vec<Level> = rest[..rest.len() - 8]
            .chunks_exact(8)
            .map(|c| Level {
                blocks: u32::from_le_bytes([c[0], c[1], c[2], c[3]]),
                chosen: u32::from_le_bytes([c[4], c[5], c[6], c[7]]),
            })
            .collect();
        let params = IndexParams::new(k, &levels).map_err(|e| corrupt(e.to_string()))?;
        let mut n_bytes = [0u8; 8];
        n_bytes.copy_from_slice(&rest[rest.len() - 8..]);
        let n = u64::from_le_bytes(n_bytes);
        let tables = params.table_count() as u64;
        let expected = n
            .checked_mul(8 * (tables + 1))
            .and_then(|body| body.checked_add(header_len + 8))
            .unwrap_or(u64::MAX);
        if expected != actual {
            return Err(IndexError::Truncated {
                path: path.to_owned(),
                expected,
                actual,
            });
        }
        let n = n as usize;
        let mut keys = Vec::with_capacity(tables as usize);
        for _ in 0..tables {
            keys.push(read_u64s(&mut file, n, &mut hash).map_err(io)?);
        }
        let payloads = read_u64s(&mut file, n, &mut hash).map_err(io)?;
        let mut checksum = [0u8; 8];
        file.read_exact(&mut checksum).map_err(io)?;
        if u64::from_le_bytes(checksum) != hash.digest() {
            return Err(corrupt("checksum mismatch".into()));
        }
        let index = HammingIndex::new(params.clone());
        let layouts = index.layouts();
        // The checksum guards against damage; these guard the invariants queries rely on.
        let mut reference = None;
        for (i, (table, layout)) in keys.iter().zip(layouts).enumerate() {
            if !table.is_sorted() {
                return Err(corrupt(format!("table {i} is not sorted")));
            }
            let digest = table.iter().fold((0u64, 0u64), |(sum, xor), &key| {
                let fp = layout.invert(key);
                (sum.wrapping_add(fp), xor ^ fp.rotate_left(17))
            });
            if *reference.get_or_insert(digest) != digest {
                return Err(corrupt(format!(
                    "table {i} holds other fingerprints than table 0"
                )));
            }
        }
        let run = Run::from_parts(layouts, keys, payloads);
        Ok(HammingIndex::from_run(params, run))
    }
}

fn temporary_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".tmp");
    path.with_file_name(name)
}

fn read_or_truncated(
    file: &mut File,
    buf: &mut [u8],
    path: &Path,
    needed: u64,
    actual: u64,
) -> Result<(), IndexError> {
    if actual < needed {
        return Err(IndexError::Truncated {
            path: path.to_owned(),
            expected: needed,
            actual,
        });
    }
    file.read_exact(buf).map_err(|source| IndexError::Io {
        path: path.to_owned(),
        source,
    })
}

struct HashingWriter<W> {
    inner: W,
    hash: Xxh3,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let written = self.inner.write(buf)?;
        self.hash.update(&buf[..written]);
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn write_u64s(out: &mut impl Write, values: &[u64]) -> std::io::Result<()> {
    if cfg!(target_endian = "little") {
        out.write_all(bytemuck::cast_slice(values))
    } else {
        values
            .iter()
            .try_for_each(|v| out.write_all(&v.to_le_bytes()))
    }
}

fn read_u64s(file: &mut File, n: usize, hash: &mut Xxh3) -> std::io::Result<Vec<u64>> {
    let mut values = crate::memory::huge_filled(n, 0u64);
    let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut values);
    for chunk in bytes.chunks_mut(1 << 24) {
        file.read_exact(chunk)?;
        hash.update(chunk);
    }
    if cfg!(target_endian = "big") {
        values.iter_mut().for_each(|v| *v = u64::from_le(*v));
    }
    Ok(values)
}
