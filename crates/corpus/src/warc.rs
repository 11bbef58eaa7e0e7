//! Reading WARC files (WARC/1.0 and 1.1, ISO 28500) from any crawler: plain, or gzipped one
//! record per member (the usual `.warc.gz`, as GNU wget, Heritrix, Common Crawl and nearcrawl
//! write them) or a whole file in one gzip stream of modest size.
//!
//! A record is found by its offset: in a gzipped file, the offset of its gzip member (what
//! CDX indexes give) and its number within that member; in a plain file, its first byte. A
//! damaged record is reported with that offset and skipped: the reader looks for the next
//! gzip member, or the next line starting `WARC/1.`, and goes on.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// A record's block larger than this is skipped (reported), not read into memory.
pub const MAX_BLOCK_BYTES: u64 = 64 << 20;

/// Where a record starts: the byte offset of its gzip member (or of the record, in a plain
/// file) and how many records of the same member come before it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RecordOffset {
    /// Byte offset in the file.
    pub offset: u64,
    /// Records before this one in the same gzip member (0 in plain files and in files of
    /// one record per member).
    pub within: u32,
}

impl std::fmt::Display for RecordOffset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.within == 0 {
            write!(f, "offset {}", self.offset)
        } else {
            write!(
                f,
                "offset {} (record {} of its gzip member)",
                self.offset,
                self.within + 1
            )
        }
    }
}

/// One WARC record: its named fields and its block.
#[derive(Clone, Debug, PartialEq)]
pub struct WarcRecord {
    /// Where it starts.
    pub at: RecordOffset,
    /// The version line, such as `WARC/1.1`.
    pub version: String,
    /// Named fields in order, names as written.
    pub headers: Vec<(String, String)>,
    /// The block: `Content-Length` bytes.
    pub block: Vec<u8>,
}

impl WarcRecord {
    /// The first field called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// `WARC-Type`, lower-cased.
    pub fn kind(&self) -> String {
        self.header("WARC-Type")
            .unwrap_or_default()
            .to_ascii_lowercase()
    }
}

/// A record that could not be read, where, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct BadRecord {
    /// Where it starts.
    pub at: RecordOffset,
    /// What is wrong with it.
    pub message: String,
}

/// What the reader found next.
#[derive(Debug)]
pub enum WarcItem {
    /// A record.
    Record(WarcRecord),
    /// A damaged record, skipped.
    Bad(BadRecord),
}

/// A file that knows where it is, so that reading on from where the last record ended needs
/// neither a seek (which would empty the buffer) nor a system call to ask.
struct Tracked {
    file: File,
    /// The file's position: bytes read or sought to.
    at: u64,
}

impl Read for Tracked {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buf)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// Where the reader is (what it has handed out, not what it has buffered).
fn position(file: &BufReader<Tracked>) -> u64 {
    file.get_ref().at - file.buffer().len() as u64
}

/// Moves the reader to `offset`, keeping its buffer when it is there already.
fn go_to(file: &mut BufReader<Tracked>, offset: u64) -> io::Result<()> {
    if position(file) != offset {
        // Emptying the buffer: discard what is left, then seek the file itself.
        let left = file.buffer().len();
        file.consume(left);
        let tracked = file.get_mut();
        tracked.at = tracked.file.seek(SeekFrom::Start(offset))?;
    }
    Ok(())
}

/// Reads the records of one WARC file in order.
pub struct WarcReader {
    path: PathBuf,
    file: BufReader<Tracked>,
    gzip: bool,
    /// The gzip member being read (gzipped files).
    member: Option<Member>,
    /// Where the next record (plain) or member (gzip) starts.
    next: u64,
    /// The file's length.
    len: u64,
    /// The rest of the file is unreadable or was read.
    done: bool,
}

struct Member {
    offset: u64,
    data: io::Cursor<Vec<u8>>,
    index: u32,
}

impl WarcReader {
    /// Opens `path`; gzip is recognised by its magic bytes, not by the name. Reading starts at
    /// `from` (the first record at `RecordOffset::default()`): resuming, a record offset
    /// given by an earlier read.
    pub fn open(path: &Path, from: RecordOffset) -> io::Result<WarcReader> {
        let mut file = BufReader::with_capacity(
            256 << 10,
            Tracked {
                file: File::open(path)?,
                at: 0,
            },
        );
        let len = file.get_ref().file.metadata()?.len();
        let gzip = file.fill_buf()?.starts_with(&[0x1f, 0x8b]);
        let mut reader = WarcReader {
            path: path.to_path_buf(),
            file,
            gzip,
            member: None,
            next: from.offset,
            len,
            done: false,
        };
        go_to(&mut reader.file, from.offset)?;
        if gzip && from.within > 0 {
            // Skip the member's records read before.
            reader.load_member()?;
            for _ in 0..from.within {
                if let Some(member) = reader.member.as_mut() {
                    if read_record(&mut member.data, RecordOffset::default()).is_err() {
                        reader.member = None;
                        break;
                    }
                    member.index += 1;
                }
            }
        }
        Ok(reader)
    }

    /// The file read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where reading would go on after the records returned so far: what to pass to
    /// [`WarcReader::open`] to resume.
    pub fn resume_point(&self) -> RecordOffset {
        match &self.member {
            Some(member) => RecordOffset {
                offset: member.offset,
                within: member.index,
            },
            None => RecordOffset {
                offset: self.next,
                within: 0,
            },
        }
    }

    /// Bytes of the file read so far (progress).
    pub fn position(&self) -> u64 {
        self.next
    }

    /// The file's length.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The next record, a damaged one reported, or `None` at the end of the file. An I/O
    /// error reading the file itself ends it.
    pub fn next_item(&mut self) -> io::Result<Option<WarcItem>> {
        if self.gzip {
            self.next_gzip()
        } else {
            self.next_plain()
        }
    }

    fn next_gzip(&mut self) -> io::Result<Option<WarcItem>> {
        loop {
            if let Some(member) = self.member.as_mut() {
                let remaining = member.data.get_ref().len() as u64 - member.data.position();
                if remaining > 0 && !only_line_ends(&member.data) {
                    let at = RecordOffset {
                        offset: member.offset,
                        within: member.index,
                    };
                    member.index += 1;
                    match read_record(&mut member.data, at) {
                        Ok(record) => return Ok(Some(WarcItem::Record(record))),
                        Err(message) => {
                            // The rest of this member cannot be trusted.
                            self.member = None;
                            return Ok(Some(WarcItem::Bad(BadRecord { at, message })));
                        }
                    }
                }
                self.member = None;
            }
            if self.done || self.next >= self.len {
                return Ok(None);
            }
            let offset = self.next;
            match self.load_member() {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Other => {
                    // Read to its end, skipped.
                    return Ok(Some(WarcItem::Bad(BadRecord {
                        at: RecordOffset { offset, within: 0 },
                        message: e.to_string(),
                    })));
                }
                Err(e) if is_data_error(&e) => {
                    let message = format!("bad gzip member: {e}");
                    self.resync_gzip(offset + 1)?;
                    return Ok(Some(WarcItem::Bad(BadRecord {
                        at: RecordOffset { offset, within: 0 },
                        message,
                    })));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Decompresses the gzip member at `self.next` into `self.member`.
    fn load_member(&mut self) -> io::Result<()> {
        let offset = self.next;
        go_to(&mut self.file, offset)?;
        // Room for a typical page's record, so that reading it does not grow the buffer
        // from nothing a step at a time.
        let mut data = Vec::with_capacity(64 << 10);
        let mut decoder = flate2::bufread::GzDecoder::new(&mut self.file);
        let read = (&mut decoder)
            .take(MAX_BLOCK_BYTES + 1)
            .read_to_end(&mut data);
        let too_large = data.len() as u64 > MAX_BLOCK_BYTES;
        let read = match read {
            // Too large to hold (one huge record, or a whole file in one stream): decoded to
            // its end without keeping it, to find where the next member starts.
            Ok(_) if too_large => io::copy(&mut decoder, &mut io::sink()).map(|_| ()),
            other => other.map(|_| ()),
        };
        drop(decoder);
        if let Err(e) = read {
            return Err(io::Error::new(io::ErrorKind::InvalidData, e.to_string()));
        }
        self.next = position(&self.file);
        if too_large {
            return Err(io::Error::other(format!(
                "gzip member decompresses to more than {} MiB, skipped (a record that large, or \
                 a whole file gzipped as one stream: recompress it one record per member)",
                MAX_BLOCK_BYTES >> 20
            )));
        }
        if self.next <= offset {
            // Nothing consumed: not gzip data.
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "no gzip member here",
            ));
        }
        self.member = Some(Member {
            offset,
            data: io::Cursor::new(data),
            index: 0,
        });
        Ok(())
    }

    /// Moves `self.next` to the next gzip member header at or after `from`.
    fn resync_gzip(&mut self, from: u64) -> io::Result<()> {
        self.member = None;
        match self.find(from, |window| {
            window.windows(3).position(|w| w == [0x1f, 0x8b, 0x08])
        })? {
            Some(at) => self.next = at,
            None => {
                self.next = self.len;
                self.done = true;
            }
        }
        Ok(())
    }

    fn next_plain(&mut self) -> io::Result<Option<WarcItem>> {
        if self.done {
            return Ok(None);
        }
        go_to(&mut self.file, self.next)?;
        // Blank lines between records.
        loop {
            let buf = self.file.fill_buf()?;
            if buf.is_empty() {
                self.done = true;
                return Ok(None);
            }
            let blank = buf
                .iter()
                .take_while(|&&b| b == b'\r' || b == b'\n')
                .count();
            if blank == 0 {
                break;
            }
            self.file.consume(blank);
        }
        let offset = position(&self.file);
        let at = RecordOffset { offset, within: 0 };
        match read_record(&mut self.file, at) {
            Ok(record) => {
                self.next = position(&self.file);
                Ok(Some(WarcItem::Record(record)))
            }
            Err(message) => {
                let from = offset + 1;
                match self.find(from, find_version_line)? {
                    Some(next) => self.next = next,
                    None => {
                        self.next = self.len;
                        self.done = true;
                    }
                }
                Ok(Some(WarcItem::Bad(BadRecord { at, message })))
            }
        }
    }

    /// The first offset at or after `from` where `find` matches in the file's bytes (read in
    /// overlapping windows).
    fn find(
        &mut self,
        from: u64,
        find: impl Fn(&[u8]) -> Option<usize>,
    ) -> io::Result<Option<u64>> {
        const WINDOW: usize = 1 << 20;
        const OVERLAP: usize = 16;
        let mut start = from;
        let mut buf = vec![0u8; WINDOW];
        loop {
            if start >= self.len {
                return Ok(None);
            }
            go_to(&mut self.file, start)?;
            let mut filled = 0;
            while filled < WINDOW {
                let n = self.file.read(&mut buf[filled..])?;
                if n == 0 {
                    break;
                }
                filled += n;
            }
            if let Some(at) = find(&buf[..filled]) {
                return Ok(Some(start + at as u64));
            }
            if filled < WINDOW {
                return Ok(None);
            }
            start += (WINDOW - OVERLAP) as u64;
        }
    }
}

/// Where a line starting `WARC/1.` begins in `bytes` (at 0 or after a line feed).
fn find_version_line(bytes: &[u8]) -> Option<usize> {
    if bytes.starts_with(b"WARC/1.") {
        return Some(0);
    }
    memchr::memmem::find_iter(bytes, b"\nWARC/1.")
        .next()
        .map(|i| i + 1)
}

fn is_data_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput | io::ErrorKind::UnexpectedEof
    )
}

/// Whether all that is left of a member is line ends (the separator after its last record).
fn only_line_ends(data: &io::Cursor<Vec<u8>>) -> bool {
    data.get_ref()[data.position() as usize..]
        .iter()
        .all(|&b| b == b'\r' || b == b'\n')
}

/// Reads one record starting at the reader's position: the version line, the named fields
/// up to an empty line, `Content-Length` bytes of block, then the two line ends after it.
fn read_record(r: &mut impl BufRead, at: RecordOffset) -> Result<WarcRecord, String> {
    let mut line = Vec::new();
    let read_line = |r: &mut dyn BufRead, line: &mut Vec<u8>| -> Result<usize, String> {
        line.clear();
        // Header lines are short; a line of 64 kB is not a header.
        let n = r
            .take(64 << 10)
            .read_until(b'\n', line)
            .map_err(|e| format!("cannot read: {e}"))?;
        Ok(n)
    };
    if read_line(r, &mut line)? == 0 {
        return Err("unexpected end of file".into());
    }
    let version = String::from_utf8_lossy(trim_line_end(&line)).into_owned();
    if !version.starts_with("WARC/") {
        let shown: String = version.chars().take(40).collect();
        return Err(format!("no WARC version line (found {shown:?})"));
    }
    let mut headers: Vec<(String, String)> = Vec::new();
    loop {
        if read_line(r, &mut line)? == 0 {
            return Err("end of file inside the record's header".into());
        }
        let text = trim_line_end(&line);
        if text.is_empty() {
            break;
        }
        let text = String::from_utf8_lossy(text);
        if text.starts_with([' ', '\t']) {
            // A continuation line (WARC 1.0 allowed folding).
            if let Some((_, value)) = headers.last_mut() {
                value.push(' ');
                value.push_str(text.trim());
            }
            continue;
        }
        let Some((name, value)) = text.split_once(':') else {
            return Err(format!(
                "header line without a colon: {:?}",
                truncate(&text, 60)
            ));
        };
        headers.push((name.trim().to_owned(), value.trim().to_owned()));
        if headers.len() > 1000 {
            return Err("more than 1,000 header lines".into());
        }
    }
    let length = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("Content-Length"))
        .ok_or("no Content-Length")?
        .1
        .parse::<u64>()
        .map_err(|_| "Content-Length is not a number".to_string())?;
    if length > MAX_BLOCK_BYTES {
        // Skip over it without holding it.
        let skipped = io::copy(&mut r.take(length), &mut io::sink())
            .map_err(|e| format!("cannot read: {e}"))?;
        let _ = skipped;
        return Err(format!(
            "block of {length} bytes, more than the {} MiB read",
            MAX_BLOCK_BYTES >> 20
        ));
    }
    let mut block = Vec::with_capacity(length as usize);
    r.take(length)
        .read_to_end(&mut block)
        .map_err(|e| format!("cannot read the block: {e}"))?;
    if (block.len() as u64) < length {
        return Err(format!(
            "truncated: Content-Length {length}, {} bytes left in the file",
            block.len()
        ));
    }
    // The record's end: CRLF CRLF (tolerated: fewer, or bare LFs).
    for _ in 0..4 {
        match r.fill_buf() {
            Ok([b'\r' | b'\n', ..]) => r.consume(1),
            _ => break,
        }
    }
    Ok(WarcRecord {
        at,
        version,
        headers,
        block,
    })
}

fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn truncate(text: &str, chars: usize) -> String {
    text.chars().take(chars).collect()
}

#[cfg(test)]
mod tests;
