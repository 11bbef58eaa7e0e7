//! Session parameters learned from duplicates ("do not crawl in the DUST": different URLs,
//! similar text, Bar-Yossef et al. 2007). Canonicalisation strips the session parameters it
//! knows by name (`PHPSESSID`, `jsessionid`, ...); a site that hands every visitor a fresh
//! id under another name makes every link a new URL, so each of its pages would be fetched
//! once per page linking to it. When duplicate pages of a host differ from their originals
//! only in the value of one query parameter, and that value looks like a token (letters and
//! digits mixed, at least 8 long: not a page number or an item id), the parameter is learned
//! for the host after [`EVIDENCE`] such pairs, and stripped from its URLs from then on.
//!
//! ```
//! use nearcrawl_frontier::{CanonicalUrl, SessionParams};
//!
//! let url = |u: &str| CanonicalUrl::parse(u).unwrap();
//! let mut learned = SessionParams::default();
//! let original = url("http://a.org/p?v=0a1b2c3d4e&lang=en");
//! assert_eq!(learned.observe(&url("http://a.org/p?v=9f8e7d6c5b&lang=en"), &original), None);
//! assert_eq!(
//!     learned.observe(&url("http://a.org/q?v=77aa88bb99&lang=en"), &url("http://a.org/q?v=1c2d3e4f5a&lang=en")),
//!     Some("v".to_string())
//! );
//! let stripped = learned.strip(&url("http://a.org/r?lang=en&v=5e5e5e5e5e1")).unwrap();
//! assert_eq!(stripped.url.as_str(), "http://a.org/r?lang=en");
//! ```

use std::collections::{BTreeSet, HashMap, VecDeque};

use crate::canonical::CanonicalUrl;

/// Duplicate pairs differing only in one parameter before it is learned for the host.
pub const EVIDENCE: u32 = 2;

/// URLs fetched with a token in their query remembered at most (see
/// [`SessionParams::fetched`]): the most recent.
pub const REMEMBERED: usize = 16_384;

/// Hosts' learned session parameters and the evidence gathered so far.
#[derive(Debug, Default)]
pub struct SessionParams {
    hosts: HashMap<String, HostEvidence>,
    /// URLs fetched with a token in their query (a session parameter not learned yet,
    /// perhaps), the most recent [`REMEMBERED`].
    fetched: VecDeque<CanonicalUrl>,
    /// Those of them a parameter learned since strips: the URLs without it, to be taken as
    /// seen ([`SessionParams::take_stripped`]).
    stripped: Vec<CanonicalUrl>,
}

#[derive(Debug, Default)]
struct HostEvidence {
    pairs: HashMap<String, u32>,
    learned: BTreeSet<String>,
}

/// A URL with its learned session parameters taken out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stripped {
    /// The URL without them.
    pub url: CanonicalUrl,
    /// The parameters taken out.
    pub params: Vec<String>,
}

impl SessionParams {
    /// A duplicate page at `duplicate` of the page at `original`: if the two URLs differ
    /// only in the token value of one query parameter, one more piece of evidence that it
    /// is a session parameter. Returns its name when this makes it learned.
    pub fn observe(&mut self, duplicate: &CanonicalUrl, original: &CanonicalUrl) -> Option<String> {
        let (a, b) = (duplicate.as_url(), original.as_url());
        if a.host_str() != b.host_str() || a.port() != b.port() || a.path() != b.path() {
            return None;
        }
        let (pa, pb) = (pairs(a.query()), pairs(b.query()));
        if pa.len() != pb.len() {
            return None;
        }
        let mut differing = pa.iter().zip(&pb).filter(|(x, y)| x != y);
        let ((name, value), (other_name, other_value)) = differing.next()?;
        if differing.next().is_some()
            || name != other_name
            || !is_token(value)
            || !is_token(other_value)
        {
            return None;
        }
        let host = self.hosts.entry(duplicate.authority()).or_default();
        if host.learned.contains(*name) {
            return None;
        }
        let seen = host.pairs.entry((*name).to_string()).or_insert(0);
        *seen += 1;
        if *seen < EVIDENCE {
            return None;
        }
        host.learned.insert((*name).to_string());
        self.strip_fetched(&duplicate.authority(), name);
        Some((*name).to_string())
    }

    /// The page at `url` was fetched: remembered when a value of its query looks like a
    /// token and no parameter learned strips it, so that once one is learned the URL
    /// without it counts as fetched ([`SessionParams::take_stripped`]). A site's first
    /// visits come before the duplicates that teach its session parameter; without this,
    /// each of their pages would be fetched once more under the URL without it.
    pub fn fetched(&mut self, url: &str) {
        let Some((_, query)) = url.split_once('?') else {
            return;
        };
        if !pairs(Some(query)).iter().any(|(_, value)| is_token(value)) {
            return;
        }
        let Ok(url) = CanonicalUrl::parse(url) else {
            return;
        };
        if self.strip(&url).is_some() {
            return;
        }
        if self.fetched.len() >= REMEMBERED {
            self.fetched.pop_front();
        }
        self.fetched.push_back(url);
    }

    /// The URLs remembered as fetched ([`SessionParams::fetched`]) that a parameter learned
    /// since strips, without it: pages the crawl holds under another URL.
    pub fn take_stripped(&mut self) -> Vec<CanonicalUrl> {
        std::mem::take(&mut self.stripped)
    }

    /// Moves the remembered URLs of `host` that carry `name` to [`SessionParams::stripped`],
    /// without it.
    fn strip_fetched(&mut self, host: &str, name: &str) {
        let (mut kept, mut stripped) = (VecDeque::new(), Vec::new());
        for url in std::mem::take(&mut self.fetched) {
            let carries = url.authority() == host
                && pairs(url.as_url().query()).iter().any(|(n, _)| *n == name);
            match carries.then(|| self.strip(&url)).flatten() {
                Some(without) => stripped.push(without.url),
                None => kept.push_back(url),
            }
        }
        self.fetched = kept;
        self.stripped.extend(stripped);
    }

    /// `url` without the session parameters learned for its host, if it has any.
    pub fn strip(&self, url: &CanonicalUrl) -> Option<Stripped> {
        if self.hosts.is_empty() {
            return None;
        }
        let learned = &self.hosts.get(&url.authority())?.learned;
        let query = url.as_url().query()?;
        let all = pairs(Some(query));
        if !all.iter().any(|(name, _)| learned.contains(*name)) {
            return None;
        }
        let (params, kept): (Vec<_>, Vec<_>) = all
            .into_iter()
            .partition(|(name, _)| learned.contains(*name));
        let mut stripped = url.as_url().clone();
        let kept: Vec<String> = kept
            .iter()
            .map(|(name, value)| match value {
                Some(value) => format!("{name}={value}"),
                None => (*name).to_string(),
            })
            .collect();
        stripped.set_query((!kept.is_empty()).then(|| kept.join("&")).as_deref());
        let url = CanonicalUrl::from_url(stripped).ok()?;
        let params = params
            .into_iter()
            .map(|(name, _)| name.to_string())
            .collect();
        Some(Stripped { url, params })
    }

    /// [`SessionParams::strip`] for a URL stored as text (a canonical URL's string); `None`
    /// at once while nothing is learned.
    pub fn strip_str(&self, url: &str) -> Option<Stripped> {
        if self.is_empty() {
            return None;
        }
        self.strip(&CanonicalUrl::parse(url).ok()?)
    }

    /// Takes `name` as learned for `host` (an authority, as [`CanonicalUrl::authority`]
    /// gives it), as learned elsewhere: another worker of a shared job, or a run of this
    /// job before it was resumed. Returns whether it was new here.
    pub fn adopt(&mut self, host: &str, name: &str) -> bool {
        let learned = &mut self.hosts.entry(host.to_string()).or_default().learned;
        let new = learned.insert(name.to_string());
        if new {
            self.strip_fetched(host, name);
        }
        new
    }

    /// Every (host, parameter) learned, in order.
    pub fn learned(&self) -> Vec<(String, String)> {
        let mut all: Vec<(String, String)> = self
            .hosts
            .iter()
            .flat_map(|(host, h)| h.learned.iter().map(|name| (host.clone(), name.clone())))
            .collect();
        all.sort();
        all
    }

    /// Whether the host of `url` has learned parameters.
    pub fn learned_on(&self, url: &CanonicalUrl) -> bool {
        !self.is_empty()
            && self
                .hosts
                .get(&url.authority())
                .is_some_and(|h| !h.learned.is_empty())
    }

    /// Whether any host has learned parameters.
    pub fn is_empty(&self) -> bool {
        self.hosts.values().all(|h| h.learned.is_empty())
    }
}

/// A canonical query's (name, value) pairs, in order (canonical queries are sorted by name).
fn pairs(query: Option<&str>) -> Vec<(&str, Option<&str>)> {
    query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (p, None),
        })
        .collect()
}

/// A value that looks like a session token: at least 8 characters, letters and digits mixed.
fn is_token(value: &Option<&str>) -> bool {
    let Some(value) = value else {
        return false;
    };
    value.len() >= 8
        && value.bytes().any(|b| b.is_ascii_digit())
        && value.bytes().any(|b| b.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(u: &str) -> CanonicalUrl {
        CanonicalUrl::parse(u).unwrap()
    }

    #[test]
    fn page_numbers_ids_and_two_differences_teach_nothing() {
        let mut learned = SessionParams::default();
        let pairs = [
            ("http://a.org/l?page=2", "http://a.org/l?page=3"),
            ("http://a.org/i?id=12345678", "http://a.org/i?id=12345679"),
            (
                "http://a.org/p?s=0a1b2c3d4e&t=0a1b2c3d4e",
                "http://a.org/p?s=9f9f9f9f9f&t=9f9f9f9f9f",
            ),
            ("http://a.org/p?s=0a1b2c3d4e", "http://a.org/q?s=9f9f9f9f9f"),
            ("http://a.org/p?s=0a1b2c3d4e", "http://b.org/p?s=9f9f9f9f9f"),
        ];
        for _ in 0..5 {
            for (a, b) in pairs {
                assert_eq!(learned.observe(&url(a), &url(b)), None, "{a} {b}");
            }
        }
        assert!(learned.is_empty());
    }

    #[test]
    fn pages_fetched_before_their_session_parameter_was_learned_are_held_without_it() {
        let mut learned = SessionParams::default();
        for fetched in [
            "http://a.org/p/1?visit=1a2b3c4d5e",
            "http://a.org/p/2?visit=6f7a8b9c0d&colour=red",
            "http://a.org/p/3?page=2",
            "http://a.org/p/4",
            "http://b.org/p/5?visit=1a2b3c4d5e",
            "http://a.org/p/6?other=1a2b3c4d5e",
        ] {
            learned.fetched(fetched);
        }
        assert!(learned.take_stripped().is_empty(), "nothing learned yet");
        let (a, b) = (
            url("http://a.org/x?visit=1a2b3c4d5e"),
            url("http://a.org/x?visit=6f7a8b9c0d"),
        );
        assert_eq!(learned.observe(&a, &b), None);
        assert_eq!(learned.observe(&a, &b), Some("visit".into()));
        let held: Vec<String> = learned
            .take_stripped()
            .iter()
            .map(|u| u.to_string())
            .collect();
        assert_eq!(held, ["http://a.org/p/1", "http://a.org/p/2?colour=red"]);
        assert!(learned.take_stripped().is_empty(), "taken once");
        // Once learned, a URL it strips is not remembered (its stripped form was taken when
        // it was fetched); another host's learns on its own, here adopted.
        learned.fetched("http://a.org/p/7?visit=0a0b0c0d0e1");
        assert!(learned.adopt("b.org", "visit"));
        let held: Vec<String> = learned
            .take_stripped()
            .iter()
            .map(|u| u.to_string())
            .collect();
        assert_eq!(held, ["http://b.org/p/5"]);
        assert!(learned.learned_on(&url("http://b.org/other")));
        assert!(!learned.learned_on(&url("http://c.org/p/5?visit=1a2b3c4d5e")));
    }

    #[test]
    fn a_parameter_learned_elsewhere_is_adopted_without_evidence() {
        let mut learned = SessionParams::default();
        assert!(learned.adopt("a.org", "k"));
        assert!(!learned.adopt("a.org", "k"), "adopted once");
        assert_eq!(learned.learned(), [("a.org".to_string(), "k".to_string())]);
        let stripped = learned.strip(&url("http://a.org/y?k=1a2b3c4d5e&page=2"));
        assert_eq!(stripped.unwrap().url, url("http://a.org/y?page=2"));
        // Learned here, as one it was told of: not learned again.
        let (a, b) = (
            url("http://a.org/x?k=1a2b3c4d5e"),
            url("http://a.org/x?k=6f7a8b9c0d"),
        );
        assert_eq!(learned.observe(&a, &b), None);
        assert_eq!(learned.observe(&a, &b), None);
        assert_eq!(learned.strip(&url("http://b.org/y?k=1a2b3c4d5e")), None);
    }

    #[test]
    fn a_learned_parameter_is_stripped_on_its_host_only() {
        let mut learned = SessionParams::default();
        let (a, b) = (
            url("http://a.org/x?k=1a2b3c4d5e"),
            url("http://a.org/x?k=6f7a8b9c0d"),
        );
        assert_eq!(learned.observe(&a, &b), None);
        assert_eq!(learned.observe(&a, &b), Some("k".into()));
        assert_eq!(learned.observe(&a, &b), None, "learned once");
        let stripped = learned.strip(&url("http://a.org/y?k=zz&page=2")).unwrap();
        assert_eq!(stripped.url, url("http://a.org/y?page=2"));
        assert_eq!(stripped.params, vec!["k".to_string()]);
        assert_eq!(learned.strip(&url("http://a.org/y")), None);
        assert_eq!(learned.strip(&url("http://b.org/y?k=1a2b3c4d5e")), None);
        assert_eq!(
            learned.strip(&url("http://a.org/y?k=1")).unwrap().url,
            url("http://a.org/y")
        );
    }
}
