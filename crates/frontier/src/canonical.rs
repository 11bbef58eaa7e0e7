//! URL canonicalisation: one spelling per resource, so the seen-set and politeness see one URL.

use std::fmt;

use url::Url;

/// Query parameters that only track where a visitor came from; they never change the page.
const TRACKING_PREFIXES: &[&str] = &["utm_", "pk_", "mtm_"];
const TRACKING_PARAMS: &[&str] = &[
    "gclid", "gclsrc", "dclid", "fbclid", "msclkid", "yclid", "twclid", "igshid", "mc_cid",
    "mc_eid", "_ga", "_gl", "_hsenc", "_hsmi", "mkt_tok", "wickedid", "ttclid", "srsltid",
];
/// Session identifiers: a new one per visitor, so every visit would look like a new URL.
const SESSION_PARAMS: &[&str] = &[
    "jsessionid",
    "phpsessid",
    "aspsessionid",
    "asp.net_sessionid",
    "sessionid",
    "session_id",
    "sid",
    "cfid",
    "cftoken",
    "zenid",
    "oscsid",
    "s_id",
];

/// Why a string is not a crawlable URL.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlError {
    /// The text does not parse as a URL.
    Parse {
        /// The text as given.
        input: String,
        /// What the parser said.
        reason: String,
    },
    /// Only `http` and `https` are crawled.
    Scheme {
        /// The URL as given.
        input: String,
    },
    /// The URL has no host.
    NoHost {
        /// The URL as given.
        input: String,
    },
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UrlError::Parse { input, reason } => write!(f, "{input:?} is not a URL: {reason}"),
            UrlError::Scheme { input } => {
                write!(f, "{input:?}: only http and https URLs are crawled")
            }
            UrlError::NoHost { input } => write!(f, "{input:?} has no host"),
        }
    }
}

impl std::error::Error for UrlError {}

/// An http(s) URL in canonical form: the frontier's key for "the same page".
///
/// Built only by [`CanonicalUrl::parse`] / [`CanonicalUrl::from_url`], which apply, on top of
/// the WHATWG parsing of the `url` crate (lower-case scheme and host, IDNA to punycode, default
/// ports dropped, dot segments resolved):
/// - the fragment, user name and password are dropped, and a trailing dot on the host;
/// - percent-encoding is normalised: unreserved characters are decoded, other escapes
///   upper-cased, and a `%` that starts no escape is written `%25`;
/// - tracking parameters (`utm_*`, `gclid`, `fbclid`, ...) and session ids (`jsessionid`,
///   `phpsessid`, ..., also as `;jsessionid=` path parameters) are removed;
/// - the remaining query parameters are sorted (stably, by name) and an empty query dropped.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CanonicalUrl(Url);

impl CanonicalUrl {
    /// Parses and canonicalises `input`.
    pub fn parse(input: &str) -> Result<CanonicalUrl, UrlError> {
        let url = Url::parse(input.trim()).map_err(|e| UrlError::Parse {
            input: input.to_string(),
            reason: e.to_string(),
        })?;
        CanonicalUrl::from_url(url)
    }

    /// Resolves `href` against `base` and canonicalises it.
    pub fn join(base: &Url, href: &str) -> Result<CanonicalUrl, UrlError> {
        let url = base.join(href.trim()).map_err(|e| UrlError::Parse {
            input: href.to_string(),
            reason: e.to_string(),
        })?;
        CanonicalUrl::from_url(url)
    }

    /// Canonicalises a parsed URL.
    pub fn from_url(mut url: Url) -> Result<CanonicalUrl, UrlError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(UrlError::Scheme {
                input: url.to_string(),
            });
        }
        let Some(host) = url.host_str() else {
            return Err(UrlError::NoHost {
                input: url.to_string(),
            });
        };
        if host.is_empty() {
            return Err(UrlError::NoHost {
                input: url.to_string(),
            });
        }
        // Every trailing dot: `a..` once canonical must not canonicalise again to `a.`, and a
        // host of dots only is no host (a fuzzing find: `http://../` gave `http://./`).
        let stripped = host.trim_end_matches('.');
        if stripped.len() != host.len() {
            let stripped = stripped.to_string();
            // Cannot fail: a prefix of a valid domain that is itself non-empty stays valid.
            if stripped.is_empty() || url.set_host(Some(&stripped)).is_err() {
                return Err(UrlError::NoHost {
                    input: url.to_string(),
                });
            }
        }
        url.set_fragment(None);
        // Both only fail for URLs that cannot have credentials (no host), excluded above.
        let _ = url.set_username("");
        let _ = url.set_password(None);

        let path = canonical_path(url.path());
        if path != url.path() {
            url.set_path(&path);
        }
        let query = url.query().map(canonical_query);
        match query {
            Some(q) if !q.is_empty() => url.set_query(Some(&q)),
            _ => url.set_query(None),
        }
        Ok(CanonicalUrl(url))
    }

    /// The URL.
    pub fn as_url(&self) -> &Url {
        &self.0
    }

    /// The URL as text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// `host[:port]`: the unit of politeness (one queue, one robots.txt per authority).
    pub fn authority(&self) -> String {
        authority(&self.0)
    }

    /// The URL.
    pub fn into_url(self) -> Url {
        self.0
    }
}

/// `host[:port]` of a URL (the port only when it is not the scheme's default).
pub fn authority(url: &Url) -> String {
    // As the URL writes them: its host and, when not the scheme's default, its port.
    url[url::Position::BeforeHost..url::Position::AfterPort].to_string()
}

impl fmt::Display for CanonicalUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.as_str())
    }
}

fn canonical_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for (i, segment) in path.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        // Path parameters that carry a session: `/cart;jsessionid=ABC`.
        let segment = match segment.find(';') {
            Some(at) if is_session_path_param(&segment[at + 1..]) => &segment[..at],
            _ => segment,
        };
        normalize_percent(segment, &mut out);
    }
    out
}

fn is_session_path_param(params: &str) -> bool {
    let name = params
        .split('=')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    SESSION_PARAMS.contains(&name.as_str())
}

fn canonical_query(query: &str) -> String {
    let mut pairs: Vec<String> = Vec::new();
    for pair in query.split('&') {
        if pair.is_empty() {
            continue;
        }
        let mut normalized = String::with_capacity(pair.len());
        normalize_percent(pair, &mut normalized);
        // Judged by its name as written out (`p%6B_x` is `pk_x`), so a second pass drops
        // nothing the first kept.
        if is_dropped_param(&param_name(&normalized).to_ascii_lowercase()) {
            continue;
        }
        pairs.push(normalized);
    }
    // Sort by the normalised parameter name only, so repeated names keep their order
    // (`a=2&a=1` is a different list from `a=1&a=2`).
    pairs.sort_by(|a, b| param_name(a).cmp(param_name(b)));
    let mut out = String::with_capacity(query.len());
    for (i, pair) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        out.push_str(pair);
    }
    out
}

fn param_name(pair: &str) -> &str {
    pair.split('=').next().unwrap_or_default()
}

fn is_dropped_param(lower_name: &str) -> bool {
    TRACKING_PREFIXES.iter().any(|p| lower_name.starts_with(p))
        || TRACKING_PARAMS.contains(&lower_name)
        || SESSION_PARAMS.contains(&lower_name)
}

/// Decodes `%XX` escapes of unreserved characters and upper-cases the others' hex digits.
///
/// A `%` that does not start an escape is written as `%25`, the escape of a literal `%`
/// (RFC 3986 §2.4). Left bare, it could join with the output of a decoded escape into a new
/// one: `%5%30` would become `%50`, and a second pass would decode that to `P`, so the
/// canonical form would not be a fixed point.
fn normalize_percent(input: &str, out: &mut String) {
    let bytes = input.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(hi), Some(lo)) = (hex_value(bytes[i + 1]), hex_value(bytes[i + 2]))
        {
            let byte = hi << 4 | lo;
            if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
                out.push(byte as char);
            } else {
                out.push('%');
                out.push(HEX_UPPER[usize::from(hi)] as char);
                out.push(HEX_UPPER[usize::from(lo)] as char);
            }
            i += 3;
            continue;
        }
        if bytes[i] == b'%' {
            out.push_str("%25");
            i += 1;
            continue;
        }
        // Not an escape: copy one whole character.
        let ch_len = utf8_len(bytes[i]);
        out.push_str(&input[i..i + ch_len]);
        i += ch_len;
    }
}

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A URL's authority is its host, and its port when not the scheme's default, as the
    /// host and port say them; no user, no path.
    #[test]
    fn the_authority_is_the_host_and_a_port_of_its_own() {
        for url in [
            "http://h.test/a",
            "http://h.test:8080/a?b",
            "https://h.test:443/",
            "http://user:pw@h.test:81/x",
            "http://[::1]:8080/",
            "http://127.0.0.1/",
            "HTTP://H.TEST:80/",
            "file:///etc/hosts",
        ] {
            let url = Url::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"));
            let host = url.host_str().unwrap_or_default();
            let expected = match url.port() {
                Some(port) => format!("{host}:{port}"),
                None => host.to_string(),
            };
            assert_eq!(authority(&url), expected, "{url}");
        }
    }

    #[test]
    fn canonical_forms() {
        let cases = [
            ("HTTP://Example.COM/a#frag", "http://example.com/a"),
            ("http://example.com", "http://example.com/"),
            ("http://example.com:80/x", "http://example.com/x"),
            ("https://example.com:443/x", "https://example.com/x"),
            ("http://example.com:8080/x", "http://example.com:8080/x"),
            ("http://example.com./x", "http://example.com/x"),
            ("http://user:pw@example.com/x", "http://example.com/x"),
            ("http://example.com/a/./b/../c", "http://example.com/a/c"),
            (
                "http://example.com/%7Euser/%41%62",
                "http://example.com/~user/Ab",
            ),
            ("http://example.com/a%2fb%3F", "http://example.com/a%2Fb%3F"),
            ("http://example.com/?b=2&a=1", "http://example.com/?a=1&b=2"),
            ("http://example.com/?a=2&a=1", "http://example.com/?a=2&a=1"),
            ("http://example.com/?", "http://example.com/"),
            ("http://example.com/?&&", "http://example.com/"),
            (
                "http://example.com/p?utm_source=x&id=3&UTM_Medium=y",
                "http://example.com/p?id=3",
            ),
            (
                "http://example.com/p?gclid=1&fbclid=2",
                "http://example.com/p",
            ),
            // A tracking name written with escapes (`%6B` is `k`) is still one.
            (
                "http://example.com/p?p%6B_campaign=x&id=3",
                "http://example.com/p?id=3",
            ),
            (
                "http://example.com/p?PHPSESSID=abc&q=1",
                "http://example.com/p?q=1",
            ),
            (
                "http://example.com/cart;jsessionid=ABC123?x=1",
                "http://example.com/cart?x=1",
            ),
            ("http://example.com/a;v=1", "http://example.com/a;v=1"),
            ("http://bücher.example/", "http://xn--bcher-kva.example/"),
            (
                "http://example.com/q?k=%e4%b8%ad",
                "http://example.com/q?k=%E4%B8%AD",
            ),
            ("http://example.com/?%5%30", "http://example.com/?%2550"),
            (
                "http://example.com/100%/%zz%4",
                "http://example.com/100%25/%25zz%254",
            ),
            ("  http://example.com/trim  ", "http://example.com/trim"),
            ("http://127.0.0.1:8000/a", "http://127.0.0.1:8000/a"),
        ];
        for (input, want) in cases {
            let got = CanonicalUrl::parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(got.as_str(), want, "input {input}");
            // Canonical form is a fixed point.
            assert_eq!(
                CanonicalUrl::parse(got.as_str()).map(|u| u.to_string()),
                Ok(want.to_string())
            );
        }
    }

    #[test]
    fn rejects() {
        assert!(matches!(
            CanonicalUrl::parse("ftp://example.com/"),
            Err(UrlError::Scheme { .. })
        ));
        assert!(matches!(
            CanonicalUrl::parse("mailto:a@b.c"),
            Err(UrlError::Scheme { .. })
        ));
        assert!(matches!(
            CanonicalUrl::parse("not a url"),
            Err(UrlError::Parse { .. })
        ));
        assert!(matches!(
            CanonicalUrl::parse("javascript:void(0)"),
            Err(UrlError::Scheme { .. })
        ));
    }

    /// Found by `scripts/fuzz.sh` (canonical_url): one trailing dot stripped from a host of
    /// two left `http://./`, which no longer parsed.
    #[test]
    fn hosts_of_trailing_dots_canonicalise_once() {
        let dotted = CanonicalUrl::parse("http://example.com../a").unwrap();
        assert_eq!(dotted.as_str(), "http://example.com/a");
        for input in ["http://../a", "http://./", "HTTP:/x@..://%z"] {
            assert!(
                matches!(CanonicalUrl::parse(input), Err(UrlError::NoHost { .. })),
                "{input}"
            );
        }
        let fuzzed = String::from_utf8_lossy(&[
            0x48, 0x54, 0x54, 0x50, 0x3a, 0x2f, 0x54, 0x54, 0x50, 0xc6, 0xf0, 0xd8, 0x8a, 0x8c,
            0x88, 0xbf, 0x87, 0x6f, 0x27, 0x75, 0x73, 0x77, 0x40, 0x2e, 0x2e, 0x3a, 0x2f, 0x2f,
            0x25, 0x7a, 0xff, 0x6b, 0x7a,
        ])
        .into_owned();
        if let Ok(once) = CanonicalUrl::parse(&fuzzed) {
            let twice = CanonicalUrl::parse(once.as_str()).expect("a canonical URL parses");
            assert_eq!(once.as_str(), twice.as_str());
        }
    }

    #[test]
    fn join_and_authority() {
        let base = Url::parse("http://Example.com:8080/dir/page.html").unwrap();
        let u = CanonicalUrl::join(&base, "../other?utm_campaign=z#top").unwrap();
        assert_eq!(u.as_str(), "http://example.com:8080/other");
        assert_eq!(u.authority(), "example.com:8080");
        let u = CanonicalUrl::parse("https://example.com/").unwrap();
        assert_eq!(u.authority(), "example.com");
    }

    proptest::proptest! {
        #[test]
        fn canonicalisation_is_idempotent(
            path in "([a-zA-Z0-9/._~;=-]|%[0-9a-fA-F]{0,2}){0,30}",
            query in "([a-zA-Z0-9&=_]|%[0-9a-fA-F]{0,2}){0,30}",
        ) {
            let input = format!("http://example.com/{path}?{query}");
            if let Ok(once) = CanonicalUrl::parse(&input) {
                let twice = CanonicalUrl::parse(once.as_str()).expect("canonical URL parses");
                proptest::prop_assert_eq!(once.as_str(), twice.as_str());
            }
        }
    }
}
