//! WARC/1.1 output: one gzip member per record (libdeflate, at the job's [`Level`]), files
//! rotated by size. Each fetch becomes a
//! `request` and a `response` record (or a `revisit` when the payload is byte-identical to an
//! earlier one), followed by a `metadata` record with the dedup stage's decision.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha1::{Digest, Sha1};

use nearcrawl_records::rfc3339;

mod gzip;

use gzip::Gzip;
pub use gzip::Level;

/// The WARC files of one run of a job.
pub struct WarcWriter {
    dir: PathBuf,
    run: u64,
    file_no: u32,
    max_bytes: u64,
    out: Option<(BufWriter<File>, u64)>,
    gzip: Gzip,
}

/// A fetch to archive.
pub struct WarcFetch<'a> {
    /// The URL.
    pub url: &'a str,
    /// When it was fetched.
    pub date: SystemTime,
    /// The server's IP address.
    pub ip: Option<String>,
    /// Request line and headers.
    pub request_head: &'a [u8],
    /// Status line and headers.
    pub response_head: &'a [u8],
    /// Body as received.
    pub payload: &'a [u8],
    /// Its digest ([`WarcWriter::digest`]) when the caller computed it already.
    pub payload_digest: Option<&'a str>,
}

/// What writing a fetch wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The payload's digest ([`WarcWriter::digest`]).
    pub payload_digest: String,
    /// The `WARC-Record-ID` of the response (or revisit) record.
    pub record_id: String,
}

/// An earlier capture a revisit record refers to.
pub struct Original<'a> {
    /// Its URL.
    pub url: &'a str,
    /// Its WARC-Date.
    pub date: &'a str,
    /// Why the payload is not repeated: the same bytes (an exact duplicate, a page unchanged
    /// since the previous crawl) or a 304 to a conditional request.
    pub not_modified: bool,
    /// The `WARC-Record-ID` of its record holding the payload, when known.
    pub record_id: Option<&'a str>,
}

impl<'a> Original<'a> {
    /// A capture whose payload this response repeats byte for byte.
    pub fn identical(url: &'a str, date: &'a str) -> Original<'a> {
        Original {
            url,
            date,
            not_modified: false,
            record_id: None,
        }
    }

    /// The previous capture of a page the server answered 304 for.
    pub fn not_modified(url: &'a str, date: &'a str) -> Original<'a> {
        Original {
            url,
            date,
            not_modified: true,
            record_id: None,
        }
    }

    /// The same, naming the record that holds its payload (`WARC-Refers-To`).
    pub fn in_record(self, record_id: Option<&'a str>) -> Original<'a> {
        Original { record_id, ..self }
    }
}

/// A fetch's response and request records, compressed, ready to be written: made on the
/// thread that analyses the page, so the one that decides only copies bytes.
#[derive(Debug)]
pub struct PreparedFetch {
    /// The payload's digest ([`WarcWriter::digest`]).
    pub payload_digest: String,
    response_id: String,
    date: String,
    /// The `response` record's gzip member.
    response: Vec<u8>,
    /// The `request` record's gzip member.
    request: Vec<u8>,
    /// The page as a browser rendered it, a `conversion` record's gzip member
    /// ([`PreparedFetch::convert`]).
    conversion: Option<Vec<u8>>,
    /// The response and request records of other fetches written with this one: a rendered
    /// page's requests ([`PreparedFetch::add_fetch`]).
    also: Vec<Vec<u8>>,
}

thread_local! {
    /// Each thread's compressor, reused from fetch to fetch (made again for another level).
    static GZIP: std::cell::RefCell<Option<Gzip>> = const { std::cell::RefCell::new(None) };
}

impl PreparedFetch {
    /// Prepares `fetch`'s records on this thread, compressed at `level`.
    pub fn new(fetch: &WarcFetch<'_>, level: Level) -> PreparedFetch {
        GZIP.with_borrow_mut(|gzip| {
            let gzip = match gzip {
                Some(gzip) if gzip.level == level => gzip,
                _ => gzip.insert(Gzip::new(level)),
            };
            PreparedFetch::with(gzip, fetch)
        })
    }

    fn with(gzip: &mut Gzip, fetch: &WarcFetch<'_>) -> PreparedFetch {
        let payload_digest = match fetch.payload_digest {
            Some(digest) => digest.to_string(),
            None => WarcWriter::digest(fetch.payload),
        };
        let mut prepared = PreparedFetch {
            payload_digest,
            response_id: record_id(fetch.url),
            date: rfc3339(fetch.date),
            response: Vec::new(),
            request: Vec::new(),
            conversion: None,
            also: Vec::new(),
        };
        let headers = response_headers(fetch, &prepared);
        let block = [fetch.response_head, fetch.payload];
        prepared.response = record_member(gzip, "response", &headers, &block);
        let mut headers = vec![
            ("WARC-Record-ID", record_id(fetch.url)),
            ("WARC-Date", prepared.date.clone()),
            ("WARC-Target-URI", fetch.url.to_string()),
            ("WARC-Concurrent-To", prepared.response_id.clone()),
            (
                "Content-Type",
                "application/http;msgtype=request".to_string(),
            ),
        ];
        headers.extend(fetch.ip.as_ref().map(|ip| ("WARC-IP-Address", ip.clone())));
        prepared.request = record_member(gzip, "request", &headers, &[fetch.request_head]);
        prepared
    }
}

impl PreparedFetch {
    /// Adds the page at `url` as a browser rendered it (`dom`, its serialised DOM): a
    /// `conversion` record that refers to the response, compressed at `level` on this thread.
    pub fn convert(&mut self, url: &str, dom: &[u8], level: Level) {
        GZIP.with_borrow_mut(|gzip| {
            let gzip = match gzip {
                Some(gzip) if gzip.level == level => gzip,
                _ => gzip.insert(Gzip::new(level)),
            };
            let headers = [
                ("WARC-Record-ID", record_id(url)),
                ("WARC-Date", self.date.clone()),
                ("WARC-Target-URI", url.to_string()),
                ("WARC-Refers-To", self.response_id.clone()),
                ("Content-Type", "text/html; charset=utf-8".to_string()),
            ];
            self.conversion = Some(record_member(gzip, "conversion", &headers, &[dom]));
        });
    }

    /// Adds another fetch's response and request records, written with this one: a request
    /// a rendered page made, answered by the crawler.
    pub fn add_fetch(&mut self, fetch: &WarcFetch<'_>, level: Level) {
        let other = PreparedFetch::new(fetch, level);
        self.also.push(other.response);
        self.also.push(other.request);
    }
}

/// The headers a fetch's response (or revisit) record starts with.
fn response_headers(
    fetch: &WarcFetch<'_>,
    prepared: &PreparedFetch,
) -> Vec<(&'static str, String)> {
    let mut headers = vec![
        ("WARC-Record-ID", prepared.response_id.clone()),
        ("WARC-Date", prepared.date.clone()),
        ("WARC-Target-URI", fetch.url.to_string()),
        (
            "Content-Type",
            "application/http;msgtype=response".to_string(),
        ),
        ("WARC-Payload-Digest", prepared.payload_digest.clone()),
    ];
    headers.extend(fetch.ip.as_ref().map(|ip| ("WARC-IP-Address", ip.clone())));
    headers
}

/// [`WarcWriter::digest`] of `parts` joined, without joining them.
fn digest_of(parts: &[&[u8]]) -> String {
    let mut sha1 = Sha1::new();
    parts.iter().for_each(|part| sha1.update(part));
    format!("sha1:{}", base32(&sha1.finalize()))
}

/// One record as a gzip member: its head (type, headers, block digest, length), its block
/// (the parts given, joined once, by the member).
fn record_member(
    gzip: &mut Gzip,
    kind: &str,
    headers: &[(&str, String)],
    block: &[&[u8]],
) -> Vec<u8> {
    use std::fmt::Write as _;
    let room: usize = headers.iter().map(|(n, v)| n.len() + v.len() + 4).sum();
    let mut head = String::with_capacity(room + 128);
    // Writing to a String does not fail.
    let _ = write!(head, "WARC/1.1\r\nWARC-Type: {kind}\r\n");
    for (name, value) in headers {
        let _ = write!(head, "{name}: {value}\r\n");
    }
    let digest = digest_of(block);
    let length: usize = block.iter().map(|part| part.len()).sum();
    let _ = write!(head, "WARC-Block-Digest: {digest}\r\n");
    let _ = write!(head, "Content-Length: {length}\r\n\r\n");
    let mut parts = Vec::with_capacity(block.len() + 2);
    parts.push(head.as_bytes());
    parts.extend_from_slice(block);
    parts.push(b"\r\n\r\n");
    gzip.member(&parts)
}

/// A record id: a version-4-shaped UUID from the hash of a process-wide counter, the time and
/// `salt` (unique per record, whichever thread makes it).
fn record_id(salt: &str) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    // The process id, read once: `getpid` is a system call each time (three per page).
    static PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    let pid = *PID.get_or_init(std::process::id);
    let seed = format!("{pid}:{n}:{}:{salt}", now.as_nanos());
    let h = Sha1::digest(seed.as_bytes());
    format!(
        "<urn:uuid:{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}>",
        u32::from_be_bytes([h[0], h[1], h[2], h[3]]),
        u16::from_be_bytes([h[4], h[5]]),
        u16::from_be_bytes([h[6], h[7]]) & 0x0fff,
        (u16::from_be_bytes([h[8], h[9]]) & 0x3fff) | 0x8000,
        u64::from_be_bytes([0, 0, h[10], h[11], h[12], h[13], h[14], h[15]]),
    )
}

impl WarcWriter {
    /// A writer for files `DIR/nearcrawl-RUN-NNNNN.warc.gz`, of about `max_bytes` each, the
    /// records it compresses itself (a revisit, metadata) at `level`.
    pub fn new(dir: &Path, run: u64, max_bytes: u64, level: Level) -> io::Result<WarcWriter> {
        std::fs::create_dir_all(dir)?;
        Ok(WarcWriter {
            dir: dir.to_path_buf(),
            run,
            file_no: 0,
            max_bytes,
            out: None,
            gzip: Gzip::new(level),
        })
    }

    /// SHA-1 of a payload in the WARC's `sha1:BASE32` form.
    pub fn digest(bytes: &[u8]) -> String {
        digest_of(&[bytes])
    }

    /// Writes request, response (or revisit) and metadata records for one fetch, whose
    /// response and request records were [prepared](PreparedFetch::new) already (on another
    /// thread): only a revisit record, when there is one, and the metadata record are
    /// compressed here. Returns the payload digest and the response's record id.
    pub fn write_prepared(
        &mut self,
        fetch: &WarcFetch<'_>,
        prepared: PreparedFetch,
        revisit_of: Option<Original<'_>>,
        metadata: &[(&str, String)],
    ) -> io::Result<Written> {
        let response_id = prepared.response_id.clone();
        match revisit_of {
            Some(original) => {
                let mut headers = response_headers(fetch, &prepared);
                let profile = match original.not_modified {
                    true => "http://netpreserve.org/warc/1.1/revisit/server-not-modified",
                    false => "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest",
                };
                headers.push(("WARC-Profile", profile.into()));
                headers.push(("WARC-Refers-To-Target-URI", original.url.to_string()));
                headers.push(("WARC-Refers-To-Date", original.date.to_string()));
                if let Some(id) = original.record_id {
                    headers.push(("WARC-Refers-To", id.to_string()));
                }
                if !original.not_modified {
                    headers.push(("WARC-Truncated", "length".into()));
                }
                self.write_record("revisit", headers, fetch.response_head)?;
            }
            None => self.write_member(&prepared.response)?,
        }
        self.write_member(&prepared.request)?;
        if let Some(conversion) = &prepared.conversion {
            self.write_member(conversion)?;
        }
        for member in &prepared.also {
            self.write_member(member)?;
        }
        if !metadata.is_empty() {
            let mut block = Vec::new();
            for (name, value) in metadata {
                block.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
            }
            let headers = vec![
                ("WARC-Record-ID", record_id(fetch.url)),
                ("WARC-Date", prepared.date),
                ("WARC-Target-URI", fetch.url.to_string()),
                ("WARC-Refers-To", prepared.response_id),
                ("Content-Type", "application/warc-fields".to_string()),
            ];
            self.write_record("metadata", headers, &block)?;
        }
        Ok(Written {
            payload_digest: prepared.payload_digest,
            record_id: response_id,
        })
    }

    /// Writes a [`WarcJob`]: as [`WarcWriter::write_prepared`].
    pub fn write_job(&mut self, job: WarcJob) -> io::Result<Written> {
        let fetch = WarcFetch {
            url: &job.url,
            // Read by the records prepared already, not by what is written here.
            date: SystemTime::UNIX_EPOCH,
            ip: job.ip,
            request_head: &[],
            response_head: &job.response_head,
            payload: &[],
            payload_digest: None,
        };
        let revisit_of = job
            .revisit_of
            .as_ref()
            .map(|(url, date, not_modified, record_id)| Original {
                url,
                date,
                not_modified: *not_modified,
                record_id: record_id.as_deref(),
            });
        let metadata: Vec<(&str, String)> = job.metadata;
        self.write_prepared(&fetch, job.prepared, revisit_of, &metadata)
    }

    /// Flushes the current file.
    pub fn flush(&mut self) -> io::Result<()> {
        match &mut self.out {
            Some((out, _)) => out.flush(),
            None => Ok(()),
        }
    }

    fn write_record(
        &mut self,
        kind: &str,
        headers: Vec<(&str, String)>,
        block: &[u8],
    ) -> io::Result<()> {
        let member = record_member(&mut self.gzip, kind, &headers, &[block]);
        self.write_member(&member)
    }

    /// Writes one record's gzip member, opening the next file first when this one is full.
    fn write_member(&mut self, member: &[u8]) -> io::Result<()> {
        if self
            .out
            .as_ref()
            .is_none_or(|(_, written)| *written >= self.max_bytes)
        {
            self.open_next()?;
        }
        if let Some((out, written)) = &mut self.out {
            out.write_all(member)?;
            *written += member.len() as u64;
        }
        Ok(())
    }

    fn open_next(&mut self) -> io::Result<()> {
        if let Some((mut out, _)) = self.out.take() {
            out.flush()?;
        }
        let name = format!("nearcrawl-{:03}-{:05}.warc.gz", self.run, self.file_no);
        self.file_no += 1;
        let path = self.dir.join(&name);
        let file = File::options().create_new(true).write(true).open(&path)?;
        self.out = Some((BufWriter::new(file), 0));
        let info = format!(
            "software: nearcrawl/{}\r\nformat: WARC File Format 1.1\r\nconformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\nrobots: obey\r\n",
            env!("CARGO_PKG_VERSION")
        );
        let headers = vec![
            ("WARC-Record-ID", record_id(&name)),
            ("WARC-Date", rfc3339(SystemTime::now())),
            ("WARC-Filename", name),
            ("Content-Type", "application/warc-fields".to_string()),
        ];
        self.write_record("warcinfo", headers, info.as_bytes())
    }
}

/// One fetch's records to write, owned, so that they can be written on another thread than
/// the one that decided them ([`WarcWriter::write_job`]): the records prepared already, and
/// what the revisit and metadata records take of the fetch.
pub struct WarcJob {
    /// The fetch's URL.
    pub url: String,
    /// The server's IP address.
    pub ip: Option<String>,
    /// Status line and headers: a revisit record's block (empty when it is none).
    pub response_head: Vec<u8>,
    /// Its request and response records.
    pub prepared: PreparedFetch,
    /// The earlier capture it revisits: URL, date, whether a 304, its record's id.
    pub revisit_of: Option<(String, String, bool, Option<String>)>,
    /// The metadata record's fields (none: no metadata record).
    pub metadata: Vec<(&'static str, String)>,
}

impl WarcJob {
    /// The response (or revisit) record's id, known before the job is written.
    pub fn record_id(&self) -> &str {
        &self.prepared.response_id
    }
}

/// RFC 4648 base32 (upper case, with padding), as WARC digests use it.
fn base32(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::with_capacity(bytes.len().div_ceil(5) * 8);
    for chunk in bytes.chunks(5) {
        let mut buf = [0u8; 5];
        buf[..chunk.len()].copy_from_slice(chunk);
        let bits = u64::from_be_bytes([0, 0, 0, buf[0], buf[1], buf[2], buf[3], buf[4]]);
        let chars = (chunk.len() * 8).div_ceil(5);
        for i in 0..8 {
            if i < chars {
                out.push(ALPHABET[((bits >> (35 - i * 5)) & 31) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn base32_matches_rfc4648_vectors() {
        for (input, want) in [
            ("", ""),
            ("f", "MY======"),
            ("fo", "MZXQ===="),
            ("foo", "MZXW6==="),
            ("foob", "MZXW6YQ="),
            ("fooba", "MZXW6YTB"),
            ("foobar", "MZXW6YTBOI======"),
        ] {
            assert_eq!(base32(input.as_bytes()), want, "{input}");
        }
        // The SHA-1 of the empty payload, as every WARC tool writes it.
        assert_eq!(
            WarcWriter::digest(b""),
            "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
        );
    }

    #[test]
    fn gzip_members_decode_to_their_parts_at_every_level() {
        let big: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let text = "a record's text, ".repeat(400);
        let mut sizes = Vec::new();
        for level in [0, 1, 6, 12] {
            let mut gzip = Gzip::new(Level::new(level).unwrap());
            for parts in [
                vec![&b""[..]],
                vec![&b"head "[..], &big[..], &b"\r\n"[..]],
                vec![&b"small"[..]],
                vec![text.as_bytes()],
            ] {
                let member = gzip.member(&parts);
                let mut back = Vec::new();
                flate2::read::GzDecoder::new(&member[..])
                    .read_to_end(&mut back)
                    .unwrap();
                assert_eq!(back, parts.concat(), "level {level}");
            }
            sizes.push(gzip.member(&[text.as_bytes()]).len());
        }
        // Stored at 0; smaller at each level up.
        assert!(sizes[0] > text.len(), "{sizes:?}");
        assert!(sizes.windows(2).all(|w| w[1] <= w[0]), "{sizes:?}");
        assert!(Level::new(13).is_none());
    }

    #[test]
    fn records_are_gzip_members_with_lengths() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = WarcWriter::new(dir.path(), 0, 1 << 20, Level::default()).unwrap();
        let fetch = WarcFetch {
            url: "http://127.0.0.1/a",
            date: SystemTime::now(),
            ip: Some("127.0.0.1".into()),
            request_head: b"GET /a HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n",
            response_head: b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n\r\n",
            payload: b"<p>hi</p>",
            payload_digest: None,
        };
        let job = WarcJob {
            url: fetch.url.into(),
            ip: fetch.ip.clone(),
            response_head: fetch.response_head.to_vec(),
            prepared: PreparedFetch::new(&fetch, Level::default()),
            revisit_of: None,
            metadata: vec![("simhash", "00ff".into())],
        };
        let id = job.record_id().to_string();
        assert_eq!(w.write_job(job).unwrap().record_id, id);
        w.flush().unwrap();
        let path = dir.path().join("nearcrawl-000-00000.warc.gz");
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(File::open(path).unwrap())
            .read_to_string(&mut text)
            .unwrap();
        let kinds: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("WARC-Type: "))
            .collect();
        assert_eq!(kinds, ["warcinfo", "response", "request", "metadata"]);
        assert!(text.contains("<p>hi</p>\r\n\r\n"));
    }
}
