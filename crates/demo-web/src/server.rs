//! The HTTP server: a [`Site`] is a table of paths to [`Reply`]s plus an optional generator
//! for endless paths; each site listens on its own 127.0.0.1 port and counts its requests.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// What the server does for one path.
#[derive(Debug, Clone)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body as sent.
    pub body: Vec<u8>,
    /// Wait this long before answering.
    pub delay: Duration,
    /// Close the connection without answering (a reset, as the client sees it).
    pub reset: bool,
}

impl Reply {
    /// A 200 response with this content type.
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply {
            status: 200,
            headers: vec![("content-type".into(), content_type.into())],
            body: body.into(),
            delay: Duration::ZERO,
            reset: false,
        }
    }

    /// A UTF-8 HTML page.
    pub fn html(body: impl Into<String>) -> Reply {
        Reply::ok("text/html; charset=utf-8", body.into().into_bytes())
    }

    /// A response with only a status.
    pub fn status(status: u16) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            delay: Duration::ZERO,
            reset: false,
        }
    }

    /// A redirect to `location`.
    pub fn redirect(status: u16, location: &str) -> Reply {
        Reply::status(status).header("location", location)
    }

    /// The connection is dropped without a response.
    pub fn reset() -> Reply {
        Reply {
            reset: true,
            ..Reply::status(500)
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Answers after `delay`.
    pub fn delayed(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// Sends the body gzip-compressed with `Content-Encoding: gzip`.
    pub fn gzipped(mut self) -> Reply {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        // Writing to a Vec cannot fail.
        let _ = gz.write_all(&self.body);
        self.body = gz.finish().unwrap_or_default();
        self.header("content-encoding", "gzip")
    }
}

/// One request as the server saw it: from its head's arrival to its answer's being handed
/// to the connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    /// The `Host` header.
    pub host: String,
    /// The method.
    pub method: String,
    /// Path and query.
    pub path: String,
    /// When the request arrived.
    pub began: Instant,
    /// When its answer was ready.
    pub ended: Instant,
}

/// Generates replies for paths not in the table (traps, endless calendars).
pub type Generator = Arc<dyn Fn(&str) -> Option<Reply> + Send + Sync>;

/// One site: its pages, and logs of the requests it received (GETs, and HEADs and GETs of
/// byte ranges apart).
#[derive(Clone, Default)]
pub struct Site {
    pages: HashMap<String, Reply>,
    generator: Option<Generator>,
    log: Arc<Mutex<Vec<(String, Instant)>>>,
    exchanges: Arc<Mutex<Vec<Exchange>>>,
    connections: Arc<Mutex<Vec<(Instant, Instant)>>>,
    /// Send `ETag` and `Last-Modified` and answer conditional requests (as nginx does).
    validators: bool,
    heads: Arc<Mutex<Vec<String>>>,
    ranged: Arc<Mutex<Vec<String>>>,
}

impl std::fmt::Debug for Site {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Site")
            .field("pages", &self.pages.len())
            .finish_non_exhaustive()
    }
}

impl Site {
    /// An empty site (every path 404, `/robots.txt` included).
    pub fn new() -> Site {
        Site::default()
    }

    /// Serves `reply` at `path` (path and query, e.g. `/a?b=1`).
    pub fn page(mut self, path: &str, reply: Reply) -> Site {
        self.pages.insert(path.to_string(), reply);
        self
    }

    /// Adds a page in place.
    pub fn insert(&mut self, path: &str, reply: Reply) {
        self.pages.insert(path.to_string(), reply);
    }

    /// Answers paths not in the table with `generator`.
    pub fn generated(mut self, generator: Generator) -> Site {
        self.generator = Some(generator);
        self
    }

    /// The paths of the table's pages, in no particular order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.pages.keys().map(String::as_str)
    }

    /// Number of pages in the table.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// The reply the site gives for `path` (path and query): a page of the table, a
    /// generated page, or a 404.
    pub fn reply(&self, path: &str) -> Reply {
        self.pages
            .get(path)
            .cloned()
            .or_else(|| self.generator.as_ref().and_then(|g| g(path)))
            .unwrap_or_else(|| {
                Reply::html("<html><body><h1>Not found</h1></body></html>").with_status(404)
            })
    }

    /// Paths asked for with HEAD so far, in order (answered as a GET would be, without the
    /// body; not in [`Site::requests`]).
    pub fn head_requests(&self) -> Vec<String> {
        self.heads.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Paths asked for with GET and a `Range` header so far, in order (answered with those
    /// ranges of the page, `206`; not in [`Site::requests`]).
    pub fn range_requests(&self) -> Vec<String> {
        self.ranged.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Paths requested (GET) so far, in order, with when.
    pub fn requests(&self) -> Vec<(String, Instant)> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// The same site sending an `ETag` (its body's hash) and a `Last-Modified` (a fixed date,
    /// a later one for a body that changed) with each 200, and answering `304 Not Modified`
    /// when a request's `If-None-Match` names that tag or, without it, its
    /// `If-Modified-Since` is that date, as nginx serving files does.
    pub fn with_validators(mut self) -> Site {
        self.validators = true;
        self
    }

    /// Every request so far (any method, robots.txt included), in order of arrival, with
    /// when it arrived and when it was answered: the server's own log, for politeness.
    pub fn exchanges(&self) -> Vec<Exchange> {
        let mut log = self.exchanges.lock().map(|l| l.clone()).unwrap_or_default();
        log.sort_by_key(|e| e.began);
        log
    }

    /// Every connection closed so far: when it was accepted and when it closed (for the
    /// connections a crawler keeps open to a server).
    pub fn connections(&self) -> Vec<(Instant, Instant)> {
        self.connections
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default()
    }

    /// How many times `path` was requested (GET).
    pub fn hits(&self, path: &str) -> usize {
        self.requests().iter().filter(|(p, _)| p == path).count()
    }
}

impl Reply {
    /// The same reply with another status.
    pub fn with_status(mut self, status: u16) -> Reply {
        self.status = status;
        self
    }
}

/// A site being served; dropping it stops the server.
#[derive(Debug)]
pub struct RunningSite {
    /// Where it listens.
    pub addr: SocketAddr,
    /// The site, for its request log.
    pub site: Site,
    stop: watch::Sender<bool>,
}

impl RunningSite {
    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for RunningSite {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// Serves `site` on 127.0.0.1 at a free port.
pub async fn serve(site: Site) -> std::io::Result<RunningSite> {
    serve_on(site, "127.0.0.1:0".parse().map_err(std::io::Error::other)?).await
}

/// Serves `site` at `addr` (port 0 for any free port).
pub async fn serve_on(site: Site, addr: SocketAddr) -> std::io::Result<RunningSite> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let (stop, mut stopped) = watch::channel(false);
    let served = site.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    let opened = Instant::now();
                    let site = served.clone();
                    let mut stopped = stopped.clone();
                    tokio::spawn(async move {
                        let connections = Arc::clone(&site.connections);
                        let service = service_fn(move |req| answer(site.clone(), req));
                        let conn = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
                        tokio::select! {
                            _ = conn => {}
                            _ = stopped.changed() => {}
                        }
                        if let Ok(mut log) = connections.lock() {
                            log.push((opened, Instant::now()));
                        }
                    });
                }
                _ = stopped.changed() => break,
            }
        }
    });
    Ok(RunningSite { addr, site, stop })
}

async fn answer(
    site: Site,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, std::io::Error> {
    let began = Instant::now();
    let path = req
        .uri()
        .path_and_query()
        .map_or("/".to_string(), |p| p.as_str().to_string());
    let exchange = |ended| Exchange {
        host: req
            .headers()
            .get(hyper::header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or_default()
            .to_string(),
        method: req.method().to_string(),
        path: path.clone(),
        began,
        ended,
    };
    let response = reply_to(&site, &req, &path).await;
    if let Ok(mut exchanges) = site.exchanges.lock() {
        exchanges.push(exchange(Instant::now()));
    }
    response
}

/// `reply` with its validators, or the `304` that replaces it when the request's match.
fn with_validators(reply: Reply, request: &hyper::HeaderMap) -> Reply {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    reply.body.hash(&mut hasher);
    let hash = hasher.finish();
    let etag = format!("\"{hash:016x}\"");
    // A date per body: the same body, the same date.
    let day = 1 + hash % 28;
    let modified = format!("Mon, {day:02} Sep 2025 10:00:00 GMT");
    let asked = |name: hyper::header::HeaderName| {
        request
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let unchanged = match asked(hyper::header::IF_NONE_MATCH) {
        Some(tags) => tags.split(',').any(|t| t.trim() == etag || t.trim() == "*"),
        None => asked(hyper::header::IF_MODIFIED_SINCE).is_some_and(|since| since == modified),
    };
    let reply = match unchanged {
        true => Reply {
            status: 304,
            headers: Vec::new(),
            body: Vec::new(),
            ..reply
        },
        false => reply,
    };
    reply
        .header("etag", &etag)
        .header("last-modified", &modified)
}

/// The answer to `req`, for `path`, logged in `site`'s request logs.
async fn reply_to(
    site: &Site,
    req: &Request<Incoming>,
    path: &str,
) -> Result<Response<Full<Bytes>>, std::io::Error> {
    let path = path.to_string();
    if req.method() == hyper::Method::HEAD {
        if let Ok(mut heads) = site.heads.lock() {
            heads.push(path.clone());
        }
    } else if req.headers().contains_key(hyper::header::RANGE) {
        if let Ok(mut ranged) = site.ranged.lock() {
            ranged.push(path.clone());
        }
    } else if let Ok(mut log) = site.log.lock() {
        log.push((path.clone(), Instant::now()));
    }
    let mut reply = site.reply(&path);
    if site.validators && reply.status == 200 {
        reply = with_validators(reply, req.headers());
    }
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    if reply.reset {
        return Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionReset,
            "scripted reset",
        ));
    }
    let range = req
        .headers()
        .get(hyper::header::RANGE)
        .and_then(|v| v.to_str().ok())
        .filter(|_| reply.status == 200 && req.method() == hyper::Method::GET)
        .and_then(|v| ranges(v, reply.body.len() as u64));
    let mut response = Response::builder();
    let Some(ranges) = range else {
        for (name, value) in &reply.headers {
            response = response.header(name, value);
        }
        return response
            .status(reply.status)
            .body(Full::new(Bytes::from(reply.body)))
            .map_err(std::io::Error::other);
    };
    let content_type = reply
        .headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-type"))
        .map_or("text/html", |(_, value)| value.as_str());
    let (headers, body) = partial(&reply.body, &ranges, content_type);
    // The reply's own headers but its length (and, for several parts, its type).
    for (name, value) in &reply.headers {
        let replaced = name.eq_ignore_ascii_case("content-length")
            || headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(name));
        if !replaced {
            response = response.header(name, value);
        }
    }
    for (name, value) in headers {
        response = response.header(name, value);
    }
    response
        .status(206)
        .body(Full::new(Bytes::from(body)))
        .map_err(std::io::Error::other)
}

/// A `206` answer's headers and body for these ranges of `body` (of type `content_type`): one
/// range as it is, several as `multipart/byteranges`.
fn partial(
    body: &[u8],
    ranges: &[(u64, u64)],
    content_type: &str,
) -> (Vec<(&'static str, String)>, Vec<u8>) {
    let total = body.len();
    let part = |&(a, b): &(u64, u64)| &body[a as usize..=b as usize];
    if let [only] = ranges {
        let value = format!("bytes {}-{}/{total}", only.0, only.1);
        return (vec![("content-range", value)], part(only).to_vec());
    }
    const BOUNDARY: &str = "nearcrawl-demo-ranges";
    let mut out = Vec::new();
    for range in ranges {
        let head = format!(
            "\r\n--{BOUNDARY}\r\ncontent-type: {content_type}\r\ncontent-range: bytes {}-{}/{total}\r\n\r\n",
            range.0, range.1
        );
        out.extend_from_slice(head.as_bytes());
        out.extend_from_slice(part(range));
    }
    out.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    let kind = format!("multipart/byteranges; boundary={BOUNDARY}");
    (vec![("content-type", kind)], out)
}

/// The inclusive byte ranges of a `Range: bytes=a-b,c-d` header within a body of `length`
/// bytes (ends past it are cut to it); `None` when the header is not that, or a range starts
/// past the end (the whole body is sent then, as a server may).
fn ranges(header: &str, length: u64) -> Option<Vec<(u64, u64)>> {
    let spec = header.trim().strip_prefix("bytes=")?;
    let mut ranges = Vec::new();
    for range in spec.split(',') {
        let (a, b) = range.trim().split_once('-')?;
        let a: u64 = a.trim().parse().ok()?;
        let b: u64 = b.trim().parse().ok()?;
        if a > b || a >= length {
            return None;
        }
        ranges.push((a, b.min(length - 1)));
    }
    (!ranges.is_empty()).then_some(ranges)
}
