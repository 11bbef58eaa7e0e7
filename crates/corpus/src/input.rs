//! A corpus's inputs as documents: WARC files (`response` and `resource` records holding
//! pages; `revisit` records as the exact copies their crawler found) and JSON lines with a
//! text field. The format is recognised from the file's first bytes.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use url::Url;

use crate::http::{is_page_type, parse_response};
use crate::warc::{RecordOffset, WarcItem, WarcReader, WarcRecord};

/// What an input file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// WARC/1.0 or 1.1, plain or gzipped.
    Warc,
    /// One JSON object per line, plain or gzipped.
    Jsonl,
}

/// Which fields of a JSON line hold what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonlFields {
    /// The document's text (required in every line).
    pub text: String,
    /// Its id (a string or a number); without it, `FILE:LINE`.
    pub id: String,
    /// Its URL, if any (gives the site, for the sentence index's site counts).
    pub url: String,
}

impl Default for JsonlFields {
    fn default() -> JsonlFields {
        JsonlFields {
            text: "text".into(),
            id: "id".into(),
            url: "url".into(),
        }
    }
}

/// Where an item is in its file: a WARC record's offset, or a JSON line's number and offset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    /// Byte offset (WARC: of the record's gzip member or the record; JSON lines: of the line
    /// in the uncompressed text).
    pub offset: u64,
    /// Records before it in its gzip member (WARC).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub within: u32,
    /// Line number from 1 (JSON lines; 0 for WARC).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub line: u64,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

impl std::fmt::Display for Cursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line > 0 {
            write!(f, "line {}", self.line)
        } else {
            RecordOffset {
                offset: self.offset,
                within: self.within,
            }
            .fmt(f)
        }
    }
}

/// A page to judge.
#[derive(Clone, Debug)]
pub struct Document {
    /// Its id: the WARC record's `WARC-Record-ID`, or the JSON line's id field.
    pub id: String,
    /// Its URL (`WARC-Target-URI`, or the JSON line's url field).
    pub url: Option<Url>,
    /// What to analyse.
    pub content: Content,
    /// Its size in the corpus: the WARC record's block (HTTP headers and body as stored), or
    /// the text's bytes.
    pub bytes: u64,
    /// Where it is.
    pub at: Cursor,
    /// `WARC-Payload-Digest`, when given.
    pub payload_digest: Option<String>,
    /// `WARC-Date`, when given.
    pub date: Option<String>,
}

/// A document's content.
#[derive(Clone, Debug)]
pub enum Content {
    /// An HTTP body (HTML, XHTML or text) and its declared type.
    Body {
        /// The body, decoded.
        bytes: Vec<u8>,
        /// `Content-Type`.
        content_type: Option<String>,
    },
    /// Plain text.
    Text(String),
}

/// A `revisit` record: its crawler found the payload identical to an earlier one.
#[derive(Clone, Debug)]
pub struct Revisit {
    /// Its `WARC-Record-ID`.
    pub id: String,
    /// Its `WARC-Target-URI`.
    pub url: Option<Url>,
    /// The payload's digest (the original has the same).
    pub payload_digest: Option<String>,
    /// `WARC-Refers-To-Target-URI`.
    pub refers_to: Option<String>,
    /// The record's block size.
    pub bytes: u64,
    /// Where it is.
    pub at: Cursor,
}

/// What an input yields next.
#[derive(Debug)]
pub enum Item {
    /// A page.
    Document(Box<Document>),
    /// A WARC revisit.
    Revisit(Box<Revisit>),
    /// A record that is no page (a request, metadata, an image, an error status).
    Skipped,
    /// A record or line that could not be read, skipped.
    Bad {
        /// Where.
        at: Cursor,
        /// Why.
        message: String,
    },
}

/// Recognises an input's format from its first bytes.
pub fn sniff(path: &Path) -> Result<Format, String> {
    let mut file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut head = [0u8; 64];
    let n = read_up_to(&mut file, &mut head).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut head = head[..n].to_vec();
    if head.starts_with(&[0x1f, 0x8b]) {
        let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut decoded = [0u8; 64];
        let n = read_up_to(&mut flate2::read::MultiGzDecoder::new(file), &mut decoded)
            .map_err(|e| format!("{}: bad gzip data: {e}", path.display()))?;
        head = decoded[..n].to_vec();
    }
    let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&head);
    let start = text
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(text.len());
    if text.starts_with(b"WARC/") {
        Ok(Format::Warc)
    } else if text[start..].starts_with(b"{") {
        Ok(Format::Jsonl)
    } else if text.is_empty() {
        Err(format!("{}: empty file", path.display()))
    } else {
        let shown = String::from_utf8_lossy(&text[..text.len().min(20)]).into_owned();
        Err(format!(
            "{}: neither WARC (`WARC/1.x`) nor JSON lines (`{{`); it starts {shown:?}",
            path.display()
        ))
    }
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..])? {
            0 => break,
            n => filled += n,
        }
    }
    Ok(filled)
}

/// Reads one input's items in order, from a cursor.
pub enum InputReader {
    /// A WARC file.
    Warc(WarcReader),
    /// A JSON lines file.
    Jsonl(JsonlReader),
}

impl InputReader {
    /// Opens `path` as `format`, reading from `from` (resuming) or its start.
    pub fn open(
        path: &Path,
        format: Format,
        fields: &JsonlFields,
        from: Cursor,
    ) -> io::Result<InputReader> {
        Ok(match format {
            Format::Warc => InputReader::Warc(WarcReader::open(
                path,
                RecordOffset {
                    offset: from.offset,
                    within: from.within,
                },
            )?),
            Format::Jsonl => InputReader::Jsonl(JsonlReader::open(path, fields.clone(), from)?),
        })
    }

    /// The next item, `None` at the end.
    pub fn next_item(&mut self) -> io::Result<Option<Item>> {
        match self {
            InputReader::Warc(reader) => Ok(reader.next_item()?.map(|item| match item {
                WarcItem::Record(record) => from_record(record),
                WarcItem::Bad(bad) => Item::Bad {
                    at: Cursor {
                        offset: bad.at.offset,
                        within: bad.at.within,
                        line: 0,
                    },
                    message: bad.message,
                },
            })),
            InputReader::Jsonl(reader) => reader.next_item(),
        }
    }

    /// Where to resume after the items returned so far.
    pub fn resume_point(&self) -> Cursor {
        match self {
            InputReader::Warc(reader) => {
                let at = reader.resume_point();
                Cursor {
                    offset: at.offset,
                    within: at.within,
                    line: 0,
                }
            }
            InputReader::Jsonl(reader) => reader.resume_point(),
        }
    }
}

/// A WARC record as an item.
fn from_record(record: WarcRecord) -> Item {
    let at = Cursor {
        offset: record.at.offset,
        within: record.at.within,
        line: 0,
    };
    let kind = record.kind();
    let url = record
        .header("WARC-Target-URI")
        .map(|u| u.trim_matches(['<', '>']))
        .and_then(|u| Url::parse(u).ok());
    let id = record
        .header("WARC-Record-ID")
        .map(str::to_owned)
        .unwrap_or_else(|| format!("{at}"));
    let payload_digest = record.header("WARC-Payload-Digest").map(str::to_owned);
    let date = record.header("WARC-Date").map(str::to_owned);
    let bytes = record.block.len() as u64;
    if url.as_ref().is_some_and(|u| u.path() == "/robots.txt") {
        // A crawler's own fetch, not content.
        return Item::Skipped;
    }
    // A body of a page type, as a document; anything else passed over.
    let page = |body: Vec<u8>, content_type: Option<String>| {
        if body.is_empty() || !is_page_type(content_type.as_deref()) {
            return Item::Skipped;
        }
        Item::Document(Box::new(Document {
            id: id.clone(),
            url: url.clone(),
            content: Content::Body {
                bytes: body,
                content_type,
            },
            bytes,
            at,
            payload_digest: payload_digest.clone(),
            date: date.clone(),
        }))
    };
    match kind.as_str() {
        "response" => {
            let http = record
                .header("Content-Type")
                .is_none_or(|ct| ct.to_ascii_lowercase().starts_with("application/http"));
            if !http {
                return Item::Skipped;
            }
            let response = match parse_response(&record.block) {
                Ok(response) => response,
                Err(message) => return Item::Bad { at, message },
            };
            if !(200..300).contains(&response.status) {
                return Item::Skipped;
            }
            page(response.body, response.content_type)
        }
        "resource" => {
            let content_type = record.header("Content-Type").map(str::to_owned);
            page(record.block, content_type)
        }
        "revisit" => Item::Revisit(Box::new(Revisit {
            id,
            url,
            payload_digest,
            refers_to: record
                .header("WARC-Refers-To-Target-URI")
                .map(|u| u.trim_matches(['<', '>']).to_owned()),
            bytes,
            at,
        })),
        _ => Item::Skipped,
    }
}

/// Reads JSON lines: one object per line with a text field.
pub struct JsonlReader {
    path: PathBuf,
    fields: JsonlFields,
    lines: Box<dyn BufRead + Send>,
    /// Offset and number of the next line.
    offset: u64,
    line: u64,
    buf: Vec<u8>,
}

impl JsonlReader {
    /// Opens `path` (gzipped or not) at `from`: a plain file is sought to the offset, a
    /// gzipped one read and skipped up to the line.
    pub fn open(path: &Path, fields: JsonlFields, from: Cursor) -> io::Result<JsonlReader> {
        let mut file = File::open(path)?;
        let mut magic = [0u8; 2];
        let gzip = read_up_to(&mut file, &mut magic)? == 2 && magic == [0x1f, 0x8b];
        file.seek(SeekFrom::Start(0))?;
        let mut reader = JsonlReader {
            path: path.to_path_buf(),
            fields,
            lines: if gzip {
                Box::new(BufReader::with_capacity(
                    256 << 10,
                    flate2::read::MultiGzDecoder::new(file),
                ))
            } else {
                Box::new(BufReader::with_capacity(256 << 10, file))
            },
            offset: 0,
            line: 1,
            buf: Vec::new(),
        };
        if from.line > 1 {
            if gzip {
                while reader.line < from.line {
                    reader.buf.clear();
                    let n = reader.lines.read_until(b'\n', &mut reader.buf)?;
                    if n == 0 {
                        break;
                    }
                    reader.offset += n as u64;
                    reader.line += 1;
                }
            } else {
                let mut file = File::open(path)?;
                file.seek(SeekFrom::Start(from.offset))?;
                reader.lines = Box::new(BufReader::with_capacity(256 << 10, file));
                reader.offset = from.offset;
                reader.line = from.line;
            }
        }
        Ok(reader)
    }

    /// The file read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn resume_point(&self) -> Cursor {
        Cursor {
            offset: self.offset,
            within: 0,
            line: self.line,
        }
    }

    fn next_item(&mut self) -> io::Result<Option<Item>> {
        loop {
            self.buf.clear();
            let n = self.lines.read_until(b'\n', &mut self.buf)?;
            if n == 0 {
                return Ok(None);
            }
            let at = Cursor {
                offset: self.offset,
                within: 0,
                line: self.line,
            };
            self.offset += n as u64;
            self.line += 1;
            if self.buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return Ok(Some(self.parse(at)));
        }
    }

    fn parse(&self, at: Cursor) -> Item {
        let value: serde_json::Value = match serde_json::from_slice(&self.buf) {
            Ok(value) => value,
            Err(e) => {
                return Item::Bad {
                    at,
                    message: format!("not JSON: {e}"),
                };
            }
        };
        let Some(object) = value.as_object() else {
            return Item::Bad {
                at,
                message: "not a JSON object".into(),
            };
        };
        let text = match object.get(&self.fields.text) {
            Some(serde_json::Value::String(text)) => text.clone(),
            Some(_) => {
                return Item::Bad {
                    at,
                    message: format!("field {:?} is not a string", self.fields.text),
                };
            }
            None => {
                return Item::Bad {
                    at,
                    message: format!("no field {:?} (see --text-field)", self.fields.text),
                };
            }
        };
        let id = match object.get(&self.fields.id) {
            Some(serde_json::Value::String(id)) => id.clone(),
            Some(serde_json::Value::Number(n)) => n.to_string(),
            _ => format!("{}:{}", self.path.display(), at.line),
        };
        let url = object
            .get(&self.fields.url)
            .and_then(|u| u.as_str())
            .and_then(|u| Url::parse(u).ok());
        Item::Document(Box::new(Document {
            id,
            url,
            bytes: text.len() as u64,
            content: Content::Text(text),
            at,
            payload_digest: None,
            date: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn docs(reader: &mut InputReader) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(item) = reader.next_item().unwrap() {
            out.push(match item {
                Item::Document(d) => d.id,
                Item::Bad { at, .. } => format!("bad {at}"),
                Item::Revisit(r) => format!("revisit {}", r.id),
                Item::Skipped => "skipped".into(),
            });
        }
        out
    }

    #[test]
    fn jsonl_lines_ids_bad_lines_and_resume() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let text = "{\"id\": 7, \"text\": \"a\"}\n\n{\"text\": \"b\"}\nnot json\n{\"id\": \"x\"}\n{\"id\": \"z\", \"text\": \"c\"}\n";
        std::fs::write(&path, text).unwrap();
        assert_eq!(sniff(&path), Ok(Format::Jsonl));
        let fields = JsonlFields::default();
        let mut reader =
            InputReader::open(&path, Format::Jsonl, &fields, Cursor::default()).unwrap();
        let name = format!("{}:3", path.display());
        assert_eq!(
            docs(&mut reader),
            vec!["7", name.as_str(), "bad line 4", "bad line 5", "z"]
        );
        // Resume after the third line.
        let mut reader =
            InputReader::open(&path, Format::Jsonl, &fields, Cursor::default()).unwrap();
        for _ in 0..2 {
            reader.next_item().unwrap();
        }
        let point = reader.resume_point();
        assert_eq!(point.line, 4);
        let mut resumed = InputReader::open(&path, Format::Jsonl, &fields, point).unwrap();
        assert_eq!(docs(&mut resumed), vec!["bad line 4", "bad line 5", "z"]);
        // Gzipped, resumed by line.
        let gz_path = dir.path().join("c.jsonl.gz");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text.as_bytes()).unwrap();
        std::fs::write(&gz_path, gz.finish().unwrap()).unwrap();
        assert_eq!(sniff(&gz_path), Ok(Format::Jsonl));
        let mut resumed = InputReader::open(&gz_path, Format::Jsonl, &fields, point).unwrap();
        assert_eq!(docs(&mut resumed), vec!["bad line 4", "bad line 5", "z"]);
    }

    #[test]
    fn warc_records_become_documents_revisits_or_skips() {
        let dir = tempfile::tempdir().unwrap();
        let record = |kind: &str, extra: &str, block: &[u8]| -> Vec<u8> {
            let mut out = format!(
                "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Record-ID: <urn:{kind}>\r\nWARC-Target-URI: <http://e.org/>\r\n{extra}Content-Length: {}\r\n\r\n",
                block.len()
            )
            .into_bytes();
            out.extend_from_slice(block);
            out.extend_from_slice(b"\r\n\r\n");
            out
        };
        let page = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>page</p>";
        let image = b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n\x89PNG";
        let missing = b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\ngone";
        let file = [
            record("warcinfo", "", b"software: test"),
            record("request", "", b"GET / HTTP/1.1\r\n\r\n"),
            record(
                "response",
                "Content-Type: application/http; msgtype=response\r\n",
                page,
            ),
            record("response", "", image),
            record("response", "", missing),
            record("response", "", b"garbage"),
            record("revisit", "WARC-Payload-Digest: sha1:AB\r\n", b""),
            record("resource", "Content-Type: text/plain\r\n", b"plain text"),
        ]
        .concat();
        let path = dir.path().join("e.warc");
        std::fs::write(&path, file).unwrap();
        assert_eq!(sniff(&path), Ok(Format::Warc));
        let mut reader = InputReader::open(
            &path,
            Format::Warc,
            &JsonlFields::default(),
            Cursor::default(),
        )
        .unwrap();
        let got = docs(&mut reader);
        assert_eq!(
            got[..5],
            ["skipped", "skipped", "<urn:response>", "skipped", "skipped"]
        );
        assert!(got[5].starts_with("bad offset "), "{got:?}");
        assert_eq!(got[6..], ["revisit <urn:revisit>", "<urn:resource>"]);
    }

    #[test]
    fn unknown_formats_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.txt");
        std::fs::write(&path, "hello").unwrap();
        let err = sniff(&path).unwrap_err();
        assert!(err.contains("x.txt") && err.contains("neither"), "{err}");
    }
}
