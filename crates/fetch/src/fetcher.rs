//! One HTTP request per call, with what the crawler needs to account for it.

use std::fmt;
use std::time::{Duration, Instant, SystemTime};

use nearcrawl_frontier::AddressPolicy;
use reqwest::header::{ACCEPT, ACCEPT_ENCODING, HeaderMap};
use url::Url;

use crate::config::FetchConfig;
use crate::fetched::{Fetched, LargeBody, response_head};
use crate::resolve::PolicyResolver;
use nearcrawl_extract::decode_content;

/// What we send as `Accept-Encoding`: every encoding [`decode_content`] reads.
const ACCEPT_ENCODINGS: &str = "gzip, br, zstd, deflate";
const ACCEPT_TYPES: &str = "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5";

/// An earlier capture's validators, sent back to ask whether the page changed since.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    /// Its `ETag`, sent as `If-None-Match`.
    pub etag: Option<String>,
    /// Its `Last-Modified`, sent as `If-Modified-Since`.
    pub last_modified: Option<String>,
}

impl Validators {
    /// The validators a response carries.
    pub fn of(page: &Fetched) -> Validators {
        let header = |name: &str| {
            page.headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .and_then(|(_, v)| std::str::from_utf8(v).ok())
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        Validators {
            etag: header("etag"),
            last_modified: header("last-modified"),
        }
    }

    /// Whether there is any to send.
    pub fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }

    /// The request's header lines for them.
    fn headers(&self) -> Vec<(&'static str, &str)> {
        let mut headers = Vec::new();
        if let Some(etag) = &self.etag {
            headers.push(("if-none-match", etag.as_str()));
        }
        if let Some(date) = &self.last_modified {
            headers.push(("if-modified-since", date.as_str()));
        }
        headers
    }
}

/// A name's addresses, the first first, and how long they hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The addresses its requests connect to.
    pub addresses: Vec<std::net::IpAddr>,
    /// How long they may be used before the name is resolved again.
    pub ttl: Duration,
}

/// Why a request produced no response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The connect or total timeout expired.
    Timeout,
    /// The connection could not be opened (refused, DNS, disallowed address).
    Connect,
    /// The connection broke during the exchange (reset, closed early).
    Broken,
    /// The response could not be decoded (bad Content-Encoding data).
    Decode,
    /// The request was never sent: the URL's scheme is not http(s), or its host is an
    /// address the job's [`AddressPolicy`] refuses (loopback, private, link-local) given
    /// literally or as `localhost`. Names that resolve there are refused by the resolver and
    /// reported as [`FailureKind::Connect`].
    Refused,
    /// The request cannot be sent as given (a URL too long or malformed for HTTP): trying
    /// again cannot help.
    Unsendable,
}

impl FailureKind {
    /// Whether trying again later may succeed.
    pub fn is_transient(self) -> bool {
        !matches!(
            self,
            FailureKind::Decode | FailureKind::Refused | FailureKind::Unsendable
        )
    }
}

/// A request that produced no usable response.
#[derive(Debug, Clone)]
pub struct FetchFailure {
    /// The URL.
    pub url: Url,
    /// What went wrong.
    pub kind: FailureKind,
    /// The error in words.
    pub message: String,
    /// Bytes received before the failure.
    pub wire_bytes: u64,
}

impl fmt::Display for FetchFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.url, self.message)
    }
}

impl std::error::Error for FetchFailure {}

/// The fetcher could not be built.
#[derive(Debug)]
pub struct BuildError(String);

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot build the HTTP client: {}", self.0)
    }
}

impl std::error::Error for BuildError {}

/// An HTTP client for one job: no automatic redirects (each hop goes through the frontier),
/// no automatic decompression (so the bytes on the wire are counted), and a resolver applying
/// the job's address policy.
#[derive(Debug, Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    /// The client's resolver, asked ahead of requests too (its answers are kept).
    resolver: PolicyResolver,
    config: FetchConfig,
    /// Checked against every URL before it is sent: the resolver sees only names, never a
    /// literal address, so this is what keeps `http://127.0.0.1/` or `http://[::ffff:7f00:1]/`
    /// out when no seed is there, whoever asked for it (a page, a redirect, robots.txt).
    addresses: std::sync::Arc<AddressPolicy>,
    /// Places for large bodies in flight (`max_large_bodies`), none when unlimited.
    large: Option<std::sync::Arc<tokio::sync::Semaphore>>,
    /// Ask servers shared by several names to close each connection after its answer.
    close_shared: bool,
}

impl Fetcher {
    /// A fetcher with this configuration and address policy.
    pub fn new(config: FetchConfig, addresses: AddressPolicy) -> Result<Fetcher, BuildError> {
        let mut headers = HeaderMap::new();
        headers.insert(
            ACCEPT,
            ACCEPT_TYPES
                .parse()
                .map_err(|_| BuildError("Accept".into()))?,
        );
        headers.insert(
            ACCEPT_ENCODING,
            ACCEPT_ENCODINGS
                .parse()
                .map_err(|_| BuildError("Accept-Encoding".into()))?,
        );
        let resolver = PolicyResolver::for_config(addresses.clone(), &config);
        let client = reqwest::Client::builder()
            .user_agent(config.user_agent.clone())
            .default_headers(headers)
            .connect_timeout(Duration::from_millis(config.connect_timeout_ms))
            .timeout(Duration::from_millis(config.total_timeout_ms))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .dns_resolver(std::sync::Arc::new(resolver.clone()))
            .build()
            .map_err(|e| BuildError(e.to_string()))?;
        let large = (config.max_large_bodies > 0).then(|| {
            std::sync::Arc::new(tokio::sync::Semaphore::new(
                config.max_large_bodies as usize,
            ))
        });
        Ok(Fetcher {
            client,
            resolver,
            config,
            addresses: std::sync::Arc::new(addresses),
            large,
            close_shared: false,
        })
    }

    /// With `close`, a request to a name found on the same server address as another name
    /// asks the server to close the connection after its answer (`Connection: close`):
    /// kept open, each name's idle connection would count against a server whose budget is
    /// the requests in flight to it, all its names together (politeness per address).
    pub fn closing_shared(mut self, close: bool) -> Fetcher {
        self.close_shared = close;
        self
    }

    /// Why `url` may not be requested at all, if it may not: a scheme other than http(s), no
    /// host, or a host the address policy refuses before any name is resolved.
    pub fn refusal(&self, url: &Url) -> Option<String> {
        if !matches!(url.scheme(), "http" | "https") {
            return Some(format!("scheme {:?} is not fetched", url.scheme()));
        }
        match url.host() {
            None => Some("URL has no host".into()),
            Some(host) if !self.addresses.allows_host(&host) => Some(format!(
                "{host} is a private or loopback address no seed is on"
            )),
            Some(_) => None,
        }
    }

    /// The addresses requests to the name `host` connect to (the first first), as its
    /// connections will see them, and how long they hold: resolved once per TTL,
    /// `[fetch.hosts]` first, the job's address policy applied.
    pub async fn resolve(&self, host: &str) -> Result<Resolved, String> {
        let (addresses, ttl) = self
            .resolver
            .resolve_name(host)
            .await
            .map_err(|e| e.to_string())?;
        Ok(Resolved { addresses, ttl })
    }

    /// The configuration.
    pub fn config(&self) -> &FetchConfig {
        &self.config
    }

    /// GETs `url` once, reading at most `max_body_bytes` of body.
    pub async fn fetch(&self, url: &Url) -> Result<Fetched, FetchFailure> {
        self.fetch_capped(url, self.config.max_body_bytes).await
    }

    /// GETs `url` once, reading at most `cap` bytes of body.
    pub async fn fetch_capped(&self, url: &Url, cap: u64) -> Result<Fetched, FetchFailure> {
        self.request(reqwest::Method::GET, url, cap, None, &Validators::default())
            .await
    }

    /// GETs `url` once, conditionally on an earlier capture's `validators`: a `304` (no body)
    /// when the server holds the page unchanged.
    pub async fn fetch_revisit(
        &self,
        url: &Url,
        validators: &Validators,
    ) -> Result<Fetched, FetchFailure> {
        let cap = self.config.max_body_bytes;
        self.request(reqwest::Method::GET, url, cap, None, validators)
            .await
    }

    /// GETs these byte ranges of `url` (inclusive offsets) in one request, unencoded so that
    /// the offsets are the page's: a `206` answer holds them ([`crate::byte_ranges`] reads
    /// them), a `200` the whole page (a server that does not serve ranges).
    pub async fn fetch_ranges(
        &self,
        url: &Url,
        ranges: &[(u64, u64)],
    ) -> Result<Fetched, FetchFailure> {
        let header = crate::ranges::range_header(ranges);
        self.request(
            reqwest::Method::GET,
            url,
            self.config.max_body_bytes,
            Some(&header),
            &Validators::default(),
        )
        .await
    }

    /// Asks for `url` with HEAD once: the status and headers a GET would have, no body (the
    /// crawl's probes read the `Content-Length`, see [`Fetched::content_length`]).
    pub async fn head(&self, url: &Url) -> Result<Fetched, FetchFailure> {
        self.request(reqwest::Method::HEAD, url, 0, None, &Validators::default())
            .await
    }

    /// One request; `range`, a `Range` header's value (asked without content coding);
    /// `validators`, an earlier capture's (a conditional request).
    async fn request(
        &self,
        method: reqwest::Method,
        url: &Url,
        cap: u64,
        range: Option<&str>,
        validators: &Validators,
    ) -> Result<Fetched, FetchFailure> {
        let started = SystemTime::now();
        let clock = Instant::now();
        let fail = |kind, message: String, wire_bytes| FetchFailure {
            url: url.clone(),
            kind,
            message,
            wire_bytes,
        };
        if let Some(reason) = self.refusal(url) {
            return Err(fail(
                FailureKind::Refused,
                format!("not requested: {reason}"),
                0,
            ));
        }
        let mut request = self.client.request(method.clone(), url.clone());
        let close = self.closes(url);
        if close {
            request = request.header(reqwest::header::CONNECTION, "close");
        }
        let conditions = validators.headers();
        for (name, value) in &conditions {
            request = request.header(*name, *value);
        }
        if let Some(range) = range {
            request = request
                .header(reqwest::header::RANGE, range)
                .header(reqwest::header::ACCEPT_ENCODING, "identity");
        }
        let mut response = request
            .send()
            .await
            .map_err(|e| fail(classify(&e), error_chain(&e.without_url()), 0))?;
        let status = response.status().as_u16();
        let version = format!("{:?}", response.version());
        let remote_addr = response.remote_addr();
        let headers: Vec<(String, Vec<u8>)> = response
            .headers()
            .iter()
            .map(|(n, v)| (n.as_str().to_string(), v.as_bytes().to_vec()))
            .collect();
        let head_bytes = response_head(&version, status, &headers).len() as u64;
        let mut wire_body = Vec::new();
        let mut truncated = false;
        let mut large = None;
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if large.is_none()
                        && (wire_body.len() + chunk.len()) as u64 > self.config.large_body_bytes
                        && let Some(places) = &self.large
                    {
                        // Wait for a place before holding more (the semaphore is never
                        // closed, so this only waits).
                        if let Ok(permit) = std::sync::Arc::clone(places).acquire_owned().await {
                            large = Some(LargeBody(std::sync::Arc::new(permit)));
                        }
                    }
                    let room = cap.saturating_sub(wire_body.len() as u64) as usize;
                    if chunk.len() > room {
                        wire_body.extend_from_slice(&chunk[..room]);
                        truncated = true;
                        break;
                    }
                    wire_body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(e) => {
                    // The body stopped coming (reset, closed early): a network failure, worth
                    // another attempt. Content decoding is ours, after the loop.
                    let kind = if e.is_timeout() {
                        FailureKind::Timeout
                    } else {
                        FailureKind::Broken
                    };
                    let received = head_bytes + wire_body.len() as u64;
                    return Err(fail(kind, error_chain(&e.without_url()), received));
                }
            }
        }
        let wire_bytes = head_bytes + wire_body.len() as u64;
        let encoding = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-encoding"))
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned());
        // A body cut on the wire cannot always be decompressed to its end; keep what decodes.
        let (body, cut) = match decode_content(encoding.as_deref(), &wire_body, cap) {
            Ok(decoded) => decoded,
            Err(_) if truncated => (Vec::new(), true),
            Err(message) => return Err(fail(FailureKind::Decode, message, wire_bytes)),
        };
        Ok(Fetched {
            url: url.clone(),
            status,
            version,
            headers,
            wire_body,
            body,
            wire_bytes,
            truncated: truncated || cut,
            request_head: self.request_head(&method, url, range, close, &conditions),
            started,
            elapsed: clock.elapsed(),
            remote_addr,
            large,
        })
    }

    /// Whether a request to `url` asks for its connection to be closed after the answer.
    fn closes(&self, url: &Url) -> bool {
        self.close_shared
            && matches!(url.host(), Some(url::Host::Domain(name)) if self.resolver.shares_address(name))
    }

    fn request_head(
        &self,
        method: &reqwest::Method,
        url: &Url,
        range: Option<&str>,
        close: bool,
        conditions: &[(&str, &str)],
    ) -> Vec<u8> {
        let mut target = url.path().to_string();
        if let Some(q) = url.query() {
            target.push('?');
            target.push_str(q);
        }
        let mut coding = match range {
            Some(range) => format!("identity\r\nrange: {range}"),
            None => ACCEPT_ENCODINGS.to_string(),
        };
        if close {
            coding.push_str("\r\nconnection: close");
        }
        for (name, value) in conditions {
            coding.push_str(&format!("\r\n{name}: {value}"));
        }
        format!(
            "{method} {target} HTTP/1.1\r\nhost: {}\r\nuser-agent: {}\r\naccept: {ACCEPT_TYPES}\r\naccept-encoding: {coding}\r\n\r\n",
            nearcrawl_frontier::authority(url),
            self.config.user_agent
        )
        .into_bytes()
    }
}

fn classify(e: &reqwest::Error) -> FailureKind {
    if e.is_builder() {
        FailureKind::Unsendable
    } else if e.is_timeout() {
        FailureKind::Timeout
    } else if e.is_connect() {
        FailureKind::Connect
    } else if e.is_decode() {
        FailureKind::Decode
    } else {
        FailureKind::Broken
    }
}

/// The error and its causes in one line ("error sending request: connection refused").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = cause.source();
    }
    message
}
