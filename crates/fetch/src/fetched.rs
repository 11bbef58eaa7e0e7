//! A response as the crawler keeps it ([`Fetched`]): status, headers in order, the body as
//! received and decoded, and what the crawl reads off them. Its own module, so that the
//! request ([`crate::fetcher`]) and the reading of ranges ([`crate::ranges`]) both use it
//! without importing each other.

use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

use nearcrawl_extract::is_page_type;
use url::Url;

/// A response, as received and as decoded.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The URL requested.
    pub url: Url,
    /// HTTP status code.
    pub status: u16,
    /// `HTTP/1.1`, `HTTP/2.0`, ...
    pub version: String,
    /// Response headers in the order received.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body as it came over the wire (still content-encoded), up to the cap.
    pub wire_body: Vec<u8>,
    /// The body after content decoding, up to the cap.
    pub body: Vec<u8>,
    /// Bytes received: status line, headers and body as sent (compressed size).
    pub wire_bytes: u64,
    /// The body was cut at `max_body_bytes` (on the wire or after decoding).
    pub truncated: bool,
    /// The request as sent (request line and headers), for WARC request records.
    pub request_head: Vec<u8>,
    /// When the request started.
    pub started: SystemTime,
    /// How long it took.
    pub elapsed: Duration,
    /// The server's address.
    pub remote_addr: Option<SocketAddr>,
    /// A large body's place among the `max_large_bodies` in flight, held until the
    /// response is dropped (after its analysis and decision).
    pub large: Option<LargeBody>,
}

/// A large body's place in flight: released when the last clone of its response is dropped.
#[derive(Debug, Clone)]
pub struct LargeBody(
    #[allow(dead_code)] pub(crate) std::sync::Arc<tokio::sync::OwnedSemaphorePermit>,
);

impl Fetched {
    /// The first header named `name` (case-insensitive), as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| std::str::from_utf8(v).ok())
    }

    /// The `Content-Type` header.
    pub fn content_type(&self) -> Option<&str> {
        self.header("content-type")
    }

    /// The `Content-Length` header: the body's length on the wire, as the server declared
    /// it (for a HEAD, the length a GET's body would have).
    pub fn content_length(&self) -> Option<u64> {
        self.header("content-length")?.trim().parse().ok()
    }

    /// Whether the body is something the crawler parses (HTML or plain text; a missing type
    /// is sniffed as HTML when the body starts like markup).
    pub fn is_html_or_text(&self) -> bool {
        match self.content_type() {
            Some(ct) => is_page_type(ct),
            None => {
                let start = self
                    .body
                    .iter()
                    .position(|b| !b.is_ascii_whitespace())
                    .unwrap_or(0);
                self.body.get(start) == Some(&b'<')
            }
        }
    }

    /// The `Location` header resolved against the request URL.
    pub fn location(&self) -> Option<Result<Url, String>> {
        let raw = self.header("location")?;
        Some(
            self.url
                .join(raw)
                .map_err(|e| format!("Location {raw:?}: {e}")),
        )
    }

    /// `Retry-After` in seconds or as an HTTP date.
    pub fn retry_after(&self) -> Option<Duration> {
        let raw = self.header("retry-after")?.trim();
        if let Ok(secs) = raw.parse::<u64>() {
            return Some(Duration::from_secs(secs));
        }
        let when = httpdate::parse_http_date(raw).ok()?;
        Some(when.duration_since(SystemTime::now()).unwrap_or_default())
    }

    /// `X-Robots-Tag` directives that apply to every agent or to ours: (noindex, nofollow).
    pub fn x_robots_tag(&self, agent: &str) -> (bool, bool) {
        let (mut noindex, mut nofollow) = (false, false);
        for (name, value) in &self.headers {
            if !name.eq_ignore_ascii_case("x-robots-tag") {
                continue;
            }
            let value = String::from_utf8_lossy(value).to_ascii_lowercase();
            // `googlebot: noindex` applies to one agent; a bare list applies to all.
            let directives = match value.split_once(':') {
                Some((who, rest)) if !who.contains(',') && !is_directive(who.trim()) => {
                    if !who.trim().eq_ignore_ascii_case(agent) {
                        continue;
                    }
                    rest.to_string()
                }
                _ => value.clone(),
            };
            for d in directives.split(',').map(str::trim) {
                match d {
                    "noindex" => noindex = true,
                    "nofollow" => nofollow = true,
                    "none" => (noindex, nofollow) = (true, true),
                    _ => {}
                }
            }
        }
        (noindex, nofollow)
    }

    /// The response head as received (status line and headers), for WARC response records.
    pub fn response_head(&self) -> Vec<u8> {
        response_head(&self.version, self.status, &self.headers)
    }
}

/// Status line and headers, as an HTTP/1.1 server sends them.
pub(crate) fn response_head(version: &str, status: u16, headers: &[(String, Vec<u8>)]) -> Vec<u8> {
    let reason = reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let mut head = format!("{version} {status} {reason}\r\n").into_bytes();
    for (name, value) in headers {
        head.extend_from_slice(name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value);
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");
    head
}

fn is_directive(word: &str) -> bool {
    matches!(
        word,
        "unavailable_after" | "max-snippet" | "max-image-preview" | "max-video-preview"
    )
}
