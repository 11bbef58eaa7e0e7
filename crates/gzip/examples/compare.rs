//! Compares [`nearcrawl_gzip::Members`] with flate2's fastest level (zlib-rs, reset per
//! member) on every `.html` file under the directories given: bytes out and microseconds a
//! page, each page a member of its own, the best of 7 passes.
//!
//! `cargo run --release -p nearcrawl-gzip --example compare -- DIR...`

use std::path::Path;
use std::time::Instant;

use flate2::{Compress, Compression, FlushCompress};

fn pages(dir: &Path, out: &mut Vec<Vec<u8>>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            pages(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "html") {
            out.push(std::fs::read(&path)?);
        }
    }
    Ok(())
}

fn best(pages: &[Vec<u8>], mut each: impl FnMut(&[u8]) -> usize) -> (f64, usize) {
    let mut bytes = 0;
    let us = (0..7)
        .map(|_| {
            bytes = 0;
            let clock = Instant::now();
            for page in pages {
                bytes += each(page);
            }
            clock.elapsed().as_secs_f64() * 1e6 / pages.len().max(1) as f64
        })
        .fold(f64::INFINITY, f64::min);
    (us, bytes)
}

fn main() -> std::io::Result<()> {
    println!(
        "| pages | bytes in | zlib-rs fast: bytes out, us/page | Members: bytes out, us/page |"
    );
    println!("|---|---|---|---|");
    for dir in std::env::args().skip(1) {
        let mut all = Vec::new();
        // DIR:N: the first N bytes of each page (a request or metadata record's size).
        let (dir, cut) = match dir.split_once(':') {
            Some((dir, n)) => (dir.to_string(), n.parse().ok()),
            None => (dir, None),
        };
        pages(Path::new(&dir), &mut all)?;
        if let Some(cut) = cut {
            all.iter_mut().for_each(|p| p.truncate(cut));
        }
        let input: usize = all.iter().map(Vec::len).sum();
        let mut zlib = Compress::new(Compression::fast(), false);
        let mut buffer = Vec::new();
        let (zlib_us, zlib_bytes) = best(&all, |page| {
            zlib.reset();
            buffer.clear();
            buffer.reserve(page.len() + 1024);
            let _ = zlib.compress_vec(page, &mut buffer, FlushCompress::Finish);
            buffer.len() + 18
        });
        let mut members = nearcrawl_gzip::Members::new();
        let mut out = Vec::new();
        let (ours_us, ours_bytes) = best(&all, |page| {
            out.clear();
            members.append(&[page], &mut out);
            out.len()
        });
        println!(
            "| {} | {input} | {zlib_bytes}, {zlib_us:.2} | {ours_bytes}, {ours_us:.2} |",
            all.len()
        );
    }
    Ok(())
}
