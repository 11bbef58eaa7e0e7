//! The HTTP response inside a WARC `response` record: status, headers and the body as the
//! server meant it (chunked transfer coding removed, content coding decoded), since crawlers
//! store the bytes as they came over the wire.

/// The body decoded is cut here (a page is judged on its first 16 MiB at most anyway).
const MAX_BODY_BYTES: u64 = 16 << 20;

/// An HTTP response read from a record's block.
#[derive(Clone, Debug, PartialEq)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// `Content-Type`, if any.
    pub content_type: Option<String>,
    /// The body, transfer and content codings removed.
    pub body: Vec<u8>,
}

/// Parses `block` (`application/http; msgtype=response`).
pub fn parse_response(block: &[u8]) -> Result<HttpResponse, String> {
    let mut headers = [httparse::EMPTY_HEADER; 128];
    let mut response = httparse::Response::new(&mut headers);
    let head = match response.parse(block) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Err("HTTP header cut short".into()),
        Err(e) => return Err(format!("HTTP header: {e}")),
    };
    let status = response.code.ok_or("HTTP status missing")?;
    let header = |name: &str| -> Option<String> {
        response
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).trim().to_owned())
    };
    let content_type = header("Content-Type");
    let mut body = &block[head..];
    let dechunked;
    if header("Transfer-Encoding").is_some_and(|t| t.to_ascii_lowercase().contains("chunked")) {
        // Some crawlers store the body de-chunked but keep the header: use it as it is then.
        if let Some(bytes) = dechunk(body) {
            dechunked = bytes;
            body = &dechunked;
        }
    }
    let encoding = header("Content-Encoding");
    let body = match nearcrawl_extract::decode_content(encoding.as_deref(), body, MAX_BODY_BYTES) {
        Ok((bytes, _cut)) => bytes,
        // Stored decoded although the header says otherwise (wget does this with
        // --compression=auto): the bytes as they are.
        Err(_) if looks_like_text(body) => body.to_vec(),
        Err(e) => return Err(format!("body: {e}")),
    };
    Ok(HttpResponse {
        status,
        content_type,
        body,
    })
}

/// The body of a chunked message, or `None` when it is not well-formed chunks.
fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len());
    loop {
        let line_end = memchr::memchr(b'\n', data)?;
        let line = std::str::from_utf8(&data[..line_end]).ok()?.trim();
        let size = line.split(';').next()?.trim();
        let size = usize::from_str_radix(size, 16).ok()?;
        data = &data[line_end + 1..];
        if size == 0 {
            return Some(out);
        }
        if data.len() < size {
            // Cut short: what there is.
            out.extend_from_slice(data);
            return Some(out);
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size..];
        data = data
            .strip_prefix(b"\r\n")
            .or(data.strip_prefix(b"\n"))
            .unwrap_or(data);
    }
}

/// Whether bytes begin like markup or text rather than compressed data.
fn looks_like_text(body: &[u8]) -> bool {
    let head = &body[..body.len().min(512)];
    !head.is_empty() && head.iter().all(|&b| b >= 0x20 || b"\t\r\n".contains(&b))
}

/// Whether a content type is a page the dedup stage reads (HTML, XHTML or plain text); a
/// record without one is judged by its bytes (the extractor sniffs).
pub fn is_page_type(content_type: Option<&str>) -> bool {
    content_type.is_none_or(nearcrawl_extract::is_page_type)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn plain_chunked_and_gzipped_bodies() {
        let plain = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>hi</p>";
        let r = parse_response(plain).unwrap();
        assert_eq!((r.status, r.body.as_slice()), (200, &b"<p>hi</p>"[..]));
        assert_eq!(r.content_type.as_deref(), Some("text/html"));

        let chunked =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n<p>h\r\n5;x=y\r\ni</p>\r\n0\r\n\r\n";
        assert_eq!(parse_response(chunked).unwrap().body, b"<p>hi</p>");

        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"<p>zipped</p>").unwrap();
        let mut block = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n".to_vec();
        block.extend(gz.finish().unwrap());
        assert_eq!(parse_response(&block).unwrap().body, b"<p>zipped</p>");

        // Stored decoded, header kept.
        let decoded = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n<p>plain</p>";
        assert_eq!(parse_response(decoded).unwrap().body, b"<p>plain</p>");

        assert!(parse_response(b"not http at all").is_err());
        assert!(parse_response(b"HTTP/1.1 200 OK\r\nContent-Type: te").is_err());
    }

    #[test]
    fn page_types() {
        assert!(is_page_type(Some("text/html; charset=utf-8")));
        assert!(is_page_type(Some("TEXT/PLAIN")));
        assert!(is_page_type(None));
        assert!(!is_page_type(Some("image/png")));
        assert!(!is_page_type(Some("text/css")));
    }
}
