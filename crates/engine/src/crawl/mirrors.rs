//! A mirror's copies, sampled: whether a site that copies another under its own URL scheme
//! adds pages of its own in its copies.
//!
//! A duplicate's links are matched with its original's by anchor text when the two sites'
//! URL schemes differ (a mirror, `nearcrawl_link_policy::LinkMatch::Anchor`), and a link whose text
//! the original has is not followed: it presumably leads to the mirror's copy of a page
//! already kept. A mirror that adds a link to a page of its own in some of its copies (a
//! "readers' notes" page) hides that page behind copies never fetched. So the first
//! `dedup.mirror_samples` such links of a mirror (per pair of sites) are followed as samples;
//! once a sample turns out to add a page (a copy with a link the original lacks, or not a
//! copy at all), the mirror's copies are followed from then on, and the links that waited
//! for the samples (parked on the pair) are released; when every sample added nothing, they
//! are dropped, and so are the mirror's further such links.
//!
//! The mirrors sampled (a few entries each) are kept in the store as a blob, so that a resumed
//! crawl goes on where it stopped; how each pair of sites copies (at the same paths or not) is
//! counted in memory.

use std::collections::HashMap;

use nearcrawl_store::{UrlKey, url_key};
use serde::{Deserialize, Serialize};
use url::Url;

/// The store's name for the mirrors' state.
pub(super) const MIRRORS: &str = "mirrors";

/// What happens to a mirror's copy's link whose anchor text the original has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MirrorLink {
    /// The mirror's copies add pages: followed.
    Follow,
    /// Followed as one of the mirror's samples (of this pair: [`Mirrors::sampled`] once it is
    /// queued).
    Sample(usize),
    /// The samples are not all decided: parked on this key until they are.
    Park(UrlKey),
    /// The samples added nothing (or the site copies the other path for path, as a release
    /// does: no mirror): not followed.
    Drop,
}

/// The mirrors sampled, the samples not decided yet, and how each pair of sites copies.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Mirrors {
    pairs: Vec<MirrorPair>,
    /// The samples not decided yet (a few per mirror: looked through in turn).
    pending: Vec<Pending>,
    /// [`Mirrors::pairs`] by (copying origin, copied origin).
    #[serde(skip)]
    index: HashMap<(String, String), usize>,
    /// Per pair of sites (copying origin, copied origin): its pages judged copies of the other
    /// site's page at the same path and query (a release) and at another (a mirror's URL
    /// scheme). Not kept in the store: a resumed crawl counts afresh.
    #[serde(skip)]
    copies: HashMap<(String, String), (u32, u32)>,
    /// Changed since last kept in the store.
    #[serde(skip)]
    dirty: bool,
}

/// A sample not decided yet.
#[derive(Debug, Serialize, Deserialize)]
struct Pending {
    key: UrlKey,
    /// Its pair, in [`Mirrors::pairs`].
    pair: usize,
    /// Its page added a page (told when its links are followed, before it is decided).
    adds: bool,
}

/// One mirror and the site it copies.
#[derive(Debug, Serialize, Deserialize)]
struct MirrorPair {
    /// The mirror's origin.
    copy: String,
    /// The copied site's origin.
    original: String,
    /// The samples' URL keys, in the order they were followed.
    samples: Vec<UrlKey>,
    /// Those decided.
    decided: u32,
    /// Those that added a page.
    adding: u32,
    /// Whether its copies add pages, once known.
    adds: Option<bool>,
}

impl MirrorPair {
    /// The key its waiting links are parked on.
    fn key(&self) -> UrlKey {
        url_key(&format!("mirror {} of {}", self.copy, self.original))
    }
}

impl Mirrors {
    /// The state as kept in the store (see [`Mirrors::take_changed`]).
    pub(super) fn from_bytes(bytes: &[u8]) -> Result<Mirrors, String> {
        let mut mirrors: Mirrors = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if mirrors
            .pending
            .iter()
            .any(|p| p.pair >= mirrors.pairs.len())
        {
            return Err("a sample of a pair of sites it does not list".into());
        }
        mirrors.index = (mirrors.pairs.iter().enumerate())
            .map(|(at, p)| ((p.copy.clone(), p.original.clone()), at))
            .collect();
        Ok(mirrors)
    }

    /// `page` was judged a copy of `original`: on another site, its pair of sites counts
    /// whether the copy is at the original's path (a site copying another path for path, a
    /// release, is no mirror: its links are matched by where they lead).
    pub(super) fn note_copy(&mut self, page: &Url, original: &Url) {
        if nearcrawl_dedup::same_site(page, original) {
            return;
        }
        let (same, other) = self.copies.entry(origins(page, original)).or_default();
        match page.path() == original.path() && page.query() == original.query() {
            true => *same += 1,
            false => *other += 1,
        }
    }

    /// The stored form, when it changed since last asked.
    pub(super) fn take_changed(&mut self) -> Option<Vec<u8>> {
        if !std::mem::take(&mut self.dirty) {
            return None;
        }
        // Strings and integers only: serialising cannot fail.
        Some(serde_json::to_vec(self).unwrap_or_default())
    }

    /// What happens to a link of `page`, a copy of `original` on another site, to a page of
    /// `page`'s own site, whose anchor text the original has, with `samples` samples per
    /// mirror.
    pub(super) fn link(&mut self, page: &Url, original: &Url, samples: u32) -> MirrorLink {
        let sites = origins(page, original);
        let at = match self.index.get(&sites) {
            // Sampled already: a mirror.
            Some(at) => *at,
            None => {
                let (same, other) = self.copies.get(&sites).copied().unwrap_or_default();
                if same >= other {
                    // Mostly copies at the same paths: a release, not a mirror.
                    return MirrorLink::Drop;
                }
                self.pairs.push(MirrorPair {
                    copy: sites.0.clone(),
                    original: sites.1.clone(),
                    samples: Vec::new(),
                    decided: 0,
                    adding: 0,
                    adds: None,
                });
                self.index.insert(sites, self.pairs.len() - 1);
                self.pairs.len() - 1
            }
        };
        let pair = &self.pairs[at];
        match pair.adds {
            Some(true) => MirrorLink::Follow,
            Some(false) => MirrorLink::Drop,
            None if pair.samples.len() < samples as usize => MirrorLink::Sample(at),
            None => MirrorLink::Park(pair.key()),
        }
    }

    /// The link with key `link` was queued as a sample of the pair [`Mirrors::link`] named.
    pub(super) fn sampled(&mut self, pair: usize, link: UrlKey) {
        if let Some(p) = self.pairs.get_mut(pair) {
            p.samples.push(link);
            self.pending.push(Pending {
                key: link,
                pair,
                adds: false,
            });
            self.dirty = true;
        }
    }

    /// Whether any sample is not decided yet.
    pub(super) fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Whether the URL with this key is a sample not decided yet.
    pub(super) fn is_pending(&self, key: &UrlKey) -> bool {
        self.pending.iter().any(|p| p.key == *key)
    }

    /// The sample at `key` added a page (its links are being followed).
    pub(super) fn added(&mut self, key: &UrlKey) {
        if let Some(pending) = self.pending.iter_mut().find(|p| p.key == *key) {
            pending.adds = true;
            self.dirty = true;
        }
    }

    /// The sample at `from` redirected to a URL queued with it, at `to`: that URL's page is
    /// the sample now. False when `from` is no sample waiting.
    pub(super) fn moved(&mut self, from: &UrlKey, to: UrlKey) -> bool {
        match self.pending.iter_mut().find(|p| p.key == *from) {
            Some(pending) => {
                pending.key = to;
                self.dirty = true;
                true
            }
            None => false,
        }
    }

    /// The URL at `key` is decided. When it was the sample that settles its pair, with
    /// `samples` samples per mirror: the key the pair's links wait on, and whether the
    /// mirror's copies add pages.
    pub(super) fn decided(&mut self, key: &UrlKey, samples: u32) -> Option<(UrlKey, bool)> {
        let index = self.pending.iter().position(|p| p.key == *key)?;
        let Pending { pair: at, adds, .. } = self.pending.swap_remove(index);
        self.dirty = true;
        let pair = &mut self.pairs[at];
        pair.decided += 1;
        pair.adding += u32::from(adds);
        if pair.adds.is_some() {
            return None;
        }
        let settled = if pair.adding > 0 {
            true
        } else if pair.decided as usize >= pair.samples.len()
            && pair.samples.len() >= samples as usize
        {
            false
        } else {
            return None;
        };
        pair.adds = Some(settled);
        Some((pair.key(), settled))
    }
}

/// The origins of a copy's site and its original's.
fn origins(page: &Url, original: &Url) -> (String, String) {
    (
        page.origin().ascii_serialization(),
        original.origin().ascii_serialization(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn samples_then_waits_then_follows_once_a_sample_adds_a_page() {
        let (mirror, origin) = (url("http://m.test/a"), url("http://o.test/a"));
        let mut mirrors = Mirrors::default();
        mirrors.note_copy(&mirror, &url("http://o.test/b"));
        let keys: Vec<UrlKey> = (0..4).map(|i| url_key(&format!("k{i}"))).collect();
        for key in &keys[..2] {
            let MirrorLink::Sample(pair) = mirrors.link(&mirror, &origin, 2) else {
                panic!("a sample");
            };
            mirrors.sampled(pair, *key);
        }
        let MirrorLink::Park(on) = mirrors.link(&mirror, &origin, 2) else {
            panic!("parked once the samples are taken");
        };
        assert!(mirrors.is_pending(&keys[0]));
        assert_eq!(
            mirrors.decided(&keys[0], 2),
            None,
            "one of two, nothing added"
        );
        mirrors.added(&keys[1]);
        assert_eq!(mirrors.decided(&keys[1], 2), Some((on, true)));
        assert_eq!(mirrors.link(&mirror, &origin, 2), MirrorLink::Follow);
        assert_eq!(mirrors.decided(&keys[3], 2), None, "not a sample");
    }

    #[test]
    fn samples_that_add_nothing_drop_the_mirrors_links_and_the_state_reads_back() {
        let (mirror, origin) = (url("http://m.test/"), url("http://o.test/"));
        let mut mirrors = Mirrors::default();
        // A copy at the same path, then two at others: a mirror after all.
        mirrors.note_copy(&url("http://m.test/x"), &url("http://o.test/x"));
        assert_eq!(
            mirrors.link(&mirror, &origin, 2),
            MirrorLink::Drop,
            "a release"
        );
        mirrors.note_copy(&url("http://m.test/y"), &url("http://o.test/z"));
        mirrors.note_copy(&url("http://m.test/y?2"), &url("http://o.test/z"));
        let (a, b) = (url_key("a"), url_key("b"));
        assert_eq!(mirrors.link(&mirror, &origin, 2), MirrorLink::Sample(0));
        assert_eq!(
            mirrors.link(&mirror, &origin, 2),
            MirrorLink::Sample(0),
            "not queued yet"
        );
        mirrors.sampled(0, a);
        mirrors.sampled(0, b);
        assert!(mirrors.take_changed().is_some());
        assert!(mirrors.take_changed().is_none(), "unchanged since");
        assert_eq!(mirrors.decided(&a, 2), None);
        // Kept and read back with one sample undecided: the crawl goes on from there.
        let bytes = mirrors.take_changed().unwrap();
        let mut resumed = Mirrors::from_bytes(&bytes).unwrap();
        assert!(resumed.is_pending(&b) && !resumed.is_pending(&a));
        let on = match resumed.link(&mirror, &origin, 2) {
            MirrorLink::Park(on) => on,
            other => panic!("{other:?}"),
        };
        assert_eq!(resumed.decided(&b, 2), Some((on, false)));
        assert_eq!(resumed.link(&mirror, &origin, 2), MirrorLink::Drop);
        // Another pair of sites starts over.
        let elsewhere = url("http://n.test/");
        resumed.note_copy(&elsewhere, &url("http://o.test/other"));
        assert_eq!(resumed.link(&elsewhere, &origin, 2), MirrorLink::Sample(1));
        assert!(Mirrors::from_bytes(b"{").is_err());
    }
}
