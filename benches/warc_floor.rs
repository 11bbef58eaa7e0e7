//! The least a WARC record costs per page, whoever writes it: the page deflated at the
//! fastest level (flate2's `Compression::fast()`, zlib-rs, as nearcrawl's WARC writer uses)
//! and its two SHA-1 digests (`WARC-Payload-Digest`, and `WARC-Block-Digest` over the HTTP
//! head and the page: counted here as the page twice). Each page in memory, warm in the
//! cache, the best of 7 passes: a floor under what archiving costs in a crawl, to set beside
//! a crawler that archives nothing (docs/BENCHMARKS.md, "What the floors ask").
//!
//! `cargo bench --bench warc_floor -- DIR...` (every `.html` file directly in each DIR;
//! default: the PostgreSQL 15 manual of Debian's `postgresql-doc-15`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use flate2::{Compress, Compression, FlushCompress};
use sha1::{Digest, Sha1};

fn pages(dir: &Path) -> std::io::Result<Vec<Vec<u8>>> {
    let mut pages = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "html") {
            pages.push(std::fs::read(&path)?);
        }
    }
    Ok(pages)
}

/// Microseconds per page, best of `passes`.
fn best_us(pages: &[Vec<u8>], passes: usize, mut each: impl FnMut(&[u8])) -> f64 {
    (0..passes)
        .map(|_| {
            let clock = Instant::now();
            for page in pages {
                each(page);
            }
            clock.elapsed().as_secs_f64() * 1e6 / pages.len().max(1) as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let dirs: Vec<PathBuf> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .collect();
    let dirs = if dirs.is_empty() {
        vec![PathBuf::from("/usr/share/doc/postgresql-doc-15/html")]
    } else {
        dirs
    };
    println!(
        "| pages | mean bytes | deflate (fastest) us/page | two SHA-1 us/page | floor us/page |"
    );
    println!("|---|---|---|---|---|");
    for dir in dirs {
        let pages = match pages(&dir) {
            Ok(pages) if !pages.is_empty() => pages,
            Ok(_) => {
                eprintln!("{}: no .html files", dir.display());
                continue;
            }
            Err(e) => {
                eprintln!("{}: {e}", dir.display());
                continue;
            }
        };
        let mean = pages.iter().map(Vec::len).sum::<usize>() / pages.len();
        let mut deflate = Compress::new(Compression::fast(), false);
        let mut out = Vec::with_capacity(1 << 22);
        let deflated = best_us(&pages, 7, |page| {
            deflate.reset();
            out.clear();
            let _ = deflate.compress_vec(page, &mut out, FlushCompress::Finish);
        });
        let mut sink = 0u8;
        let digested = best_us(&pages, 7, |page| {
            sink ^= Sha1::digest(page)[0] ^ Sha1::digest(page)[1];
        });
        std::hint::black_box(sink);
        println!(
            "| {} ({}) | {mean} | {deflated:.1} | {digested:.1} | {:.1} |",
            pages.len(),
            dir.display(),
            deflated + digested
        );
    }
}
