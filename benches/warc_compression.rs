//! What each compression level costs a crawl's WARC: every page of the directories given
//! becomes the three records a crawl writes for it (request, response, metadata, with
//! headers of a crawl's lengths), each its own gzip member, as `[output] warc_compression`
//! makes them (libdeflate), beside zlib-rs's levels through flate2. Prints per level the
//! bytes a page and the microseconds a page (the median of 5 passes, one core), for
//! docs/BENCHMARKS.md's "WARC compression".
//!
//! `cargo bench --bench warc_compression -- DIR...` (every `.html` file under each DIR;
//! default: the LLVM 16 manual of Debian's `llvm-16-doc`). Run as a test (`cargo test
//! --benches`), it compresses a small generated text once at each level and checks it reads
//! back.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn pages(dir: &Path, into: &mut Vec<Vec<u8>>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            pages(&path, into)?;
        } else if path.extension().is_some_and(|e| e == "html") {
            into.push(std::fs::read(&path)?);
        }
    }
    Ok(())
}

/// The request, response and metadata records of the `n`th page, `body`.
fn records(body: &[u8], n: usize) -> [Vec<u8>; 3] {
    let uri = format!("http://127.0.0.1:8080/page/{n}.html");
    let id = |k: u8| format!("<urn:uuid:{n:08x}-1111-4222-8333-4444555566{k:02x}>");
    let head = |kind: &str, length: usize, more: &str| {
        format!(
            "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Record-ID: {}\r\nWARC-Date: \
             2026-12-07T04:50:00Z\r\nWARC-Target-URI: {uri}\r\n{more}WARC-Block-Digest: \
             sha1:ABCDEFGHIJKLMNOPQRSTUVWXYZ234567\r\nContent-Length: {length}\r\n\r\n",
            id(kind.len() as u8)
        )
    };
    let request = format!(
        "GET /page/{n}.html HTTP/1.1\r\nhost: 127.0.0.1:8080\r\nuser-agent: nearcrawl/0.1\r\n\
         accept: text/html,*/*;q=0.5\r\naccept-encoding: gzip, br, zstd\r\n\r\n"
    );
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\ndate: Mon, 07 \
         Dec 2026 04:50:00 GMT\r\n\r\n",
        body.len()
    );
    let metadata = format!(
        "nearcrawl-verdict: unique\r\nnearcrawl-simhash: 0123456789abcdef\r\n\
         nearcrawl-cluster: {n}\r\n"
    );
    let warc = |kind: &str, block: &[u8], more: &str| {
        let mut record = head(kind, block.len(), more).into_bytes();
        record.extend_from_slice(block);
        record.extend_from_slice(b"\r\n\r\n");
        record
    };
    let mut block = response.into_bytes();
    block.extend_from_slice(body);
    let more = "Content-Type: application/http;msgtype=response\r\nWARC-Payload-Digest: \
                sha1:ABCDEFGHIJKLMNOPQRSTUVWXYZ234568\r\nWARC-IP-Address: 127.0.0.1\r\n";
    [
        warc(
            "request",
            request.as_bytes(),
            "Content-Type: application/http;msgtype=request\r\n",
        ),
        warc("response", &block, more),
        warc(
            "metadata",
            metadata.as_bytes(),
            "Content-Type: application/warc-fields\r\n",
        ),
    ]
}

/// A way to write one gzip member.
type Deflate = Box<dyn FnMut(&[u8], &mut Vec<u8>)>;

fn libdeflate(level: i32) -> Deflate {
    let lvl = libdeflater::CompressionLvl::new(level).expect("libdeflate's levels are 0 to 12");
    let mut compressor = libdeflater::Compressor::new(lvl);
    let mut buffer = Vec::new();
    Box::new(move |record, out| {
        buffer.resize(compressor.gzip_compress_bound(record.len()), 0);
        let n = compressor
            .gzip_compress(record, &mut buffer)
            .expect("within the bound");
        out.extend_from_slice(&buffer[..n]);
    })
}

fn zlib_rs(level: u32) -> Deflate {
    Box::new(move |record, out| {
        let mut encoder = flate2::write::GzEncoder::new(out, flate2::Compression::new(level));
        encoder.write_all(record).expect("into memory");
        encoder.finish().expect("into memory");
    })
}

fn ways() -> Vec<(String, Deflate)> {
    let mut ways: Vec<(String, Deflate)> = [0, 1, 2, 4, 6, 9, 12]
        .into_iter()
        .map(|level| (format!("libdeflate {level}"), libdeflate(level)))
        .collect();
    ways.extend([1, 2, 6].map(|level| (format!("zlib-rs {level}"), zlib_rs(level))));
    ways
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    if !bench {
        // A test run: each way writes members that read back.
        let text = "a record's text, and another sentence. ".repeat(300);
        let records = records(text.as_bytes(), 7);
        for (name, mut deflate) in ways() {
            let mut file = Vec::new();
            records.iter().for_each(|r| deflate(r, &mut file));
            let mut back = Vec::new();
            flate2::read::MultiGzDecoder::new(&file[..])
                .read_to_end(&mut back)
                .expect("members that read back");
            assert_eq!(back, records.concat(), "{name}");
        }
        return;
    }
    let mut dirs: Vec<PathBuf> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .map(PathBuf::from)
        .collect();
    if dirs.is_empty() {
        dirs.push(PathBuf::from("/usr/share/doc/llvm-16-doc/html"));
    }
    for dir in dirs {
        let mut bodies = Vec::new();
        if let Err(e) = pages(&dir, &mut bodies) {
            eprintln!("{}: {e}", dir.display());
            continue;
        }
        let all: Vec<[Vec<u8>; 3]> = (bodies.iter().enumerate())
            .map(|(n, body)| records(body, n))
            .collect();
        let raw: usize = all.iter().flatten().map(Vec::len).sum();
        let per_page = |n: usize| n as f64 / all.len().max(1) as f64;
        println!(
            "{}: {} pages, {:.0} bytes of records a page",
            dir.display(),
            all.len(),
            per_page(raw)
        );
        println!("| way | bytes a page | of the records | us a page |");
        println!("|---|---|---|---|");
        for (name, mut deflate) in ways() {
            let mut times = Vec::new();
            let mut size = 0;
            for _ in 0..5 {
                let mut out = Vec::with_capacity(raw);
                let clock = Instant::now();
                all.iter().flatten().for_each(|r| deflate(r, &mut out));
                times.push(clock.elapsed().as_secs_f64());
                size = out.len();
            }
            times.sort_by(f64::total_cmp);
            println!(
                "| {name} | {:.0} | {:.3} | {:.1} |",
                per_page(size),
                size as f64 / raw.max(1) as f64,
                per_page(1) * times[2] * 1e6
            );
        }
    }
}
