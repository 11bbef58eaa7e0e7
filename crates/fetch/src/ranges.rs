//! Byte ranges of a page (RFC 9110 §14): the `Range` header a crawl's probe asks with, and the
//! parts of a `206 Partial Content` answer, one range in its body or several in a
//! `multipart/byteranges` one.

use crate::fetched::Fetched;

/// Why a `206` answer's parts could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RangeError {
    /// Not a `206` answer.
    NotPartial(u16),
    /// A part without a readable `Content-Range`.
    ContentRange(String),
    /// A multipart body without its boundary, or cut short.
    Multipart(&'static str),
}

impl std::fmt::Display for RangeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RangeError::NotPartial(status) => write!(f, "HTTP {status}, not 206 Partial Content"),
            RangeError::ContentRange(value) => {
                write!(f, "a part without a readable Content-Range: {value:?}")
            }
            RangeError::Multipart(why) => write!(f, "multipart/byteranges body unreadable: {why}"),
        }
    }
}

impl std::error::Error for RangeError {}

/// The parts of a `206` answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parts {
    /// The whole page's length, when the server gave it (`Content-Range: bytes a-b/LENGTH`).
    pub length: Option<u64>,
    /// Each part's first offset and bytes, in the answer's order.
    pub parts: Vec<(u64, Vec<u8>)>,
}

/// The `Range` header's value for these inclusive ranges: `bytes=0-99,500-599`.
pub(crate) fn range_header(ranges: &[(u64, u64)]) -> String {
    let ranges: Vec<String> = ranges.iter().map(|(a, b)| format!("{a}-{b}")).collect();
    format!("bytes={}", ranges.join(","))
}

/// The parts of `page`, a `206` answer to a request with ranges.
pub fn byte_ranges(page: &Fetched) -> Result<Parts, RangeError> {
    if page.status != 206 {
        return Err(RangeError::NotPartial(page.status));
    }
    let content_type = page.content_type().unwrap_or_default();
    match boundary(content_type) {
        Some(boundary) => multipart(&page.body, boundary),
        None => {
            let header = page.header("content-range").unwrap_or_default();
            let (start, length) = content_range(header)?;
            Ok(Parts {
                length,
                parts: vec![(start, page.body.clone())],
            })
        }
    }
}

/// The boundary of a `multipart/byteranges` content type.
fn boundary(content_type: &str) -> Option<&str> {
    let (kind, params) = content_type.split_once(';')?;
    if !kind.trim().eq_ignore_ascii_case("multipart/byteranges") {
        return None;
    }
    params.split(';').find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("boundary")
            .then(|| value.trim().trim_matches('"'))
    })
}

/// A `Content-Range` value's first offset and the whole length (`*` when unknown).
fn content_range(value: &str) -> Result<(u64, Option<u64>), RangeError> {
    let bad = || RangeError::ContentRange(value.to_string());
    let rest = value.trim().strip_prefix("bytes ").ok_or_else(bad)?;
    let (span, length) = rest.split_once('/').ok_or_else(bad)?;
    let (start, end) = span.split_once('-').ok_or_else(bad)?;
    let start: u64 = start.trim().parse().map_err(|_| bad())?;
    let end: u64 = end.trim().parse().map_err(|_| bad())?;
    if end < start {
        return Err(bad());
    }
    let length = match length.trim() {
        "*" => None,
        n => Some(n.parse().map_err(|_| bad())?),
    };
    Ok((start, length))
}

/// The parts of a `multipart/byteranges` body: `--BOUNDARY`, headers, a blank line, the bytes,
/// and `--BOUNDARY--` at the end.
fn multipart(body: &[u8], boundary: &str) -> Result<Parts, RangeError> {
    let delimiter = format!("--{boundary}");
    let delimiter = delimiter.as_bytes();
    let mut parts = Vec::new();
    let mut length = None;
    let mut at = find(body, delimiter, 0).ok_or(RangeError::Multipart("no boundary"))?;
    loop {
        at += delimiter.len();
        if body[at..].starts_with(b"--") {
            break;
        }
        let head_end =
            find(body, b"\r\n\r\n", at).ok_or(RangeError::Multipart("a part's headers"))?;
        let head = String::from_utf8_lossy(&body[at..head_end]);
        let range = head
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.trim()
                    .eq_ignore_ascii_case("content-range")
                    .then_some(value)
            })
            .ok_or(RangeError::Multipart("a part without Content-Range"))?;
        let (start, whole) = content_range(range)?;
        length = length.or(whole);
        let data = head_end + 4;
        let next = find(body, delimiter, data).ok_or(RangeError::Multipart("cut short"))?;
        // The CRLF before the next delimiter belongs to it.
        let end = if body[..next].ends_with(b"\r\n") {
            next - 2
        } else {
            next
        };
        parts.push((start, body[data..end.max(data)].to_vec()));
        at = next;
    }
    Ok(Parts { length, parts })
}

/// Where `needle` first occurs in `haystack` from `from`.
fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Fetched {
        Fetched {
            url: url::Url::parse("http://a.example/p").unwrap(),
            status,
            version: "HTTP/1.1".into(),
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
                .collect(),
            wire_body: body.to_vec(),
            body: body.to_vec(),
            wire_bytes: body.len() as u64,
            truncated: false,
            request_head: Vec::new(),
            started: std::time::SystemTime::UNIX_EPOCH,
            elapsed: std::time::Duration::ZERO,
            remote_addr: None,
            large: None,
        }
    }

    #[test]
    fn a_single_range_is_the_body() {
        let page = answer(206, &[("content-range", "bytes 10-14/100")], b"hello");
        let parts = byte_ranges(&page).unwrap();
        assert_eq!(parts.length, Some(100));
        assert_eq!(parts.parts, vec![(10, b"hello".to_vec())]);
    }

    #[test]
    fn several_ranges_are_the_parts_of_a_multipart_body() {
        let body = b"\r\n--XYZ\r\nContent-Type: text/html\r\nContent-Range: bytes 0-4/50\r\n\r\nhello\r\n--XYZ\r\nContent-Type: text/html\r\nContent-Range: bytes 20-24/50\r\n\r\nwor\r\nd\r\n--XYZ--\r\n";
        let page = answer(
            206,
            &[("content-type", "multipart/byteranges; boundary=XYZ")],
            body,
        );
        let parts = byte_ranges(&page).unwrap();
        assert_eq!(parts.length, Some(50));
        assert_eq!(
            parts.parts,
            vec![(0, b"hello".to_vec()), (20, b"wor\r\nd".to_vec())]
        );
    }

    proptest::proptest! {
        /// A multipart body of any bytes is read or refused, never a panic; a well-formed one
        /// gives back its parts.
        #[test]
        fn multipart_bodies_are_read_or_refused(
            noise in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
            parts in proptest::collection::vec(("[a-z<>\r\n-]{0,40}", 0u64..1000), 0..5),
        ) {
            let header = [("content-type", "multipart/byteranges; boundary=B")];
            let _ = byte_ranges(&answer(206, &header, &noise));
            let mut body = Vec::new();
            for (text, start) in &parts {
                body.extend_from_slice(
                    format!("\r\n--B\r\nContent-Range: bytes {start}-{}/2000\r\n\r\n{text}", start + text.len() as u64)
                        .as_bytes(),
                );
            }
            body.extend_from_slice(b"\r\n--B--\r\n");
            match byte_ranges(&answer(206, &header, &body)) {
                Ok(read) if !parts.is_empty() => {
                    // A part's text may hold the delimiter itself: then it is cut there.
                    if !parts.iter().any(|(t, _)| t.contains("--B")) {
                        let want: Vec<(u64, Vec<u8>)> = parts
                            .iter()
                            .map(|(t, s)| (*s, t.as_bytes().to_vec()))
                            .collect();
                        proptest::prop_assert_eq!(read.parts, want);
                    }
                }
                Ok(_) => proptest::prop_assert!(parts.is_empty()),
                Err(e) => proptest::prop_assert!(parts.is_empty() || parts.iter().any(|(t, _)| t.contains("--B") || t.contains("\r\n\r\n")), "{e}"),
            }
        }
    }

    #[test]
    fn unreadable_answers_say_why() {
        assert_eq!(
            byte_ranges(&answer(200, &[], b"whole")),
            Err(RangeError::NotPartial(200))
        );
        assert!(matches!(
            byte_ranges(&answer(206, &[("content-range", "bytes x-1/2")], b"")),
            Err(RangeError::ContentRange(_))
        ));
        let cut = answer(
            206,
            &[("content-type", "multipart/byteranges; boundary=B")],
            b"--B\r\nContent-Range: bytes 0-4/9\r\n\r\nhel",
        );
        assert_eq!(byte_ranges(&cut), Err(RangeError::Multipart("cut short")));
        assert_eq!(range_header(&[(0, 9), (20, 29)]), "bytes=0-9,20-29");
    }
}
