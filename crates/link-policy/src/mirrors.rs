//! A mirror's copies, sampled: whether a site that copies another under its own URL scheme
//! adds pages of its own in its copies.
//!
//! A duplicate's links are matched with its original's by anchor text when the two sites'
//! URL schemes differ (a mirror, [`crate::LinkMatch::Anchor`]), and a link whose text
//! the original has is not followed: it presumably leads to the mirror's copy of a page
//! already kept. A mirror that adds a link to a page of its own in some of its copies (a
//! "readers' notes" page) hides that page behind copies never fetched. So such links are
//! parked on their pair of sites as candidates, and a few are drawn as samples, fetched whole:
//! once a sample turns out to add a page (a copy with a link the original lacks, or not a
//! copy at all), the mirror's copies are followed from then on and the parked links
//! released; when every sample added nothing, they are dropped, and so are the mirror's
//! further such links.
//!
//! A sample is exploration, paid at the least cost for what it tells ([`draw`]): drawn once
//! every candidate's counterpart on the original's site (a URL rule's prediction) is decided,
//! the shortest counterpart first, a share of the pair's candidates ([`Budget`]: a quarter,
//! at most 8, by default). Drawn in the order the links were found,
//! sixteen requests at once took a language's preface and largest chapters (1.2 MB) to
//! sample a pair of fourteen links (docs/QUALITY.md, item 30).
//!
//! The mirrors sampled (a few entries each) are kept in the store as a blob, so that a resumed
//! crawl goes on where it stopped, its candidates read back from the links parked on each
//! pair; how each pair of sites copies (at the same paths or not) is held in memory.

use std::collections::HashMap;

use crate::fate::{By, Fate, Until};
use crate::keys::Key;
use serde::{Deserialize, Serialize};
use url::Url;

/// The store's name for the mirrors' state.
pub const MIRRORS: &str = "mirrors";

/// What a candidate's sample would cost: its counterpart's length, once it is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cost {
    /// Its counterpart was fetched, and declared this length.
    Known(u64),
    /// Its counterpart is decided without a length (not fetched, no `Content-Length`), or
    /// none is predicted.
    Unknown,
    /// Its counterpart is queued or being fetched.
    Waiting,
}

/// How many samples a pair of sites takes: `share` of its candidates, rounded up, at most
/// `cap` (`mirror_sample_share`, `mirror_samples`). A mirror of a few links is
/// sampled once or twice (each sample is a large part of what the pair could save); one of
/// many, `cap` times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// The most samples a pair takes.
    pub cap: u32,
    /// The share of a pair's candidates it samples.
    pub share: f64,
}

impl Budget {
    /// The samples a pair of sites with `candidates` candidates takes.
    pub fn of(self, candidates: u32) -> u32 {
        // A share outside [0, 1] (or none) is taken at its nearest bound (0).
        let share = self.share.clamp(0.0, 1.0);
        ((f64::from(candidates) * share).ceil() as u32).min(self.cap)
    }
}

/// Which of a pair's candidates (their costs, in the order found) to draw as `needed`
/// samples: none while a counterpart is still [`Cost::Waiting`], unless `now` (nothing else
/// is left to crawl: each counts as [`Cost::Unknown`]); otherwise the cheapest, known lengths
/// shortest first, then unknown ones, each in the order found.
pub fn draw(costs: &[Cost], needed: usize, now: bool) -> Vec<usize> {
    if needed == 0 || (!now && costs.contains(&Cost::Waiting)) {
        return Vec::new();
    }
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by_key(|&at| (costs[at].min(Cost::Unknown), at));
    order.truncate(needed);
    order
}

/// A sample drawn: the candidate `link`, parked on `on`, of the pair `pair`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drawn {
    /// The key it is parked on, its pair's.
    pub on: Key,
    /// Its URL's key.
    pub link: Key,
    /// Its pair.
    pub pair: usize,
    /// What sampling it costs, as far as known.
    pub cost: Cost,
}

/// The mirrors sampled, the samples not decided yet, and how each pair of sites copies.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Mirrors {
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
    /// The candidates of pairs not settled, not drawn yet. Not kept in the store as such: a
    /// resumed crawl finds them again among the links parked on their pair's key
    /// ([`Mirrors::resume_candidates`]).
    #[serde(skip)]
    candidates: Vec<Candidate>,
    /// Changed since last kept in the store.
    #[serde(skip)]
    dirty: bool,
}

/// A link parked on its pair of sites, which may be drawn as a sample.
#[derive(Debug)]
struct Candidate {
    pair: usize,
    link: Key,
    /// Its URL, whose counterpart on the original's site a URL rule predicts (the rule may be
    /// learned after the link was found: from the very pair that made it a candidate).
    url: String,
    /// Its cost once known (a decided page stays decided); [`Cost::Waiting`] until then.
    cost: Cost,
}

/// A sample not decided yet.
#[derive(Debug, Serialize, Deserialize)]
struct Pending {
    key: Key,
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
    samples: Vec<Key>,
    /// Those decided.
    decided: u32,
    /// Those that added a page.
    adding: u32,
    /// Whether its copies add pages, once known.
    adds: Option<bool>,
    /// Its links parked as candidates so far (drawn or not): what its [`Budget`] is of.
    #[serde(default)]
    candidates: u32,
}

impl MirrorPair {
    /// The key its waiting links are parked on.
    fn key(&self) -> Key {
        crate::key(&format!("mirror {} of {}", self.copy, self.original))
    }

    /// Samples it still takes.
    fn wanted(&self, budget: Budget) -> usize {
        match self.adds {
            Some(_) => 0,
            None => (budget.of(self.candidates) as usize).saturating_sub(self.samples.len()),
        }
    }
}

impl Mirrors {
    /// The state as kept in the store (see [`Mirrors::take_changed`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Mirrors, String> {
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
    pub fn note_copy(&mut self, page: &Url, original: &Url) {
        if crate::same_site(page, original) {
            return;
        }
        let (same, other) = self.copies.entry(origins(page, original)).or_default();
        match page.path() == original.path() && page.query() == original.query() {
            true => *same += 1,
            false => *other += 1,
        }
    }

    /// The stored form, as it stands.
    pub fn to_bytes(&self) -> Vec<u8> {
        // Strings and integers only: serialising cannot fail.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Whether no mirror was found yet.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The stored form, when it changed since last asked.
    pub fn take_changed(&mut self) -> Option<Vec<u8>> {
        std::mem::take(&mut self.dirty).then(|| self.to_bytes())
    }

    /// What happens to a link of `page`, a copy of `original` on another site, to a page of
    /// `page`'s own site, whose anchor text the original has: followed when the mirror's
    /// copies add pages; parked on the pair's key, a candidate for its samples
    /// ([`Mirrors::candidate`] once it is parked), while that is not known; dropped when the
    /// samples added nothing, or when the site copies the other path for path, as a release
    /// does (no mirror).
    pub fn link<U>(&mut self, page: &Url, original: &Url) -> Fate<U> {
        let sites = origins(page, original);
        let at = match self.index.get(&sites) {
            // Sampled already: a mirror.
            Some(at) => *at,
            None => {
                let (same, other) = self.copies.get(&sites).copied().unwrap_or_default();
                if same >= other {
                    // Mostly copies at the same paths: a release, not a mirror.
                    return Fate::Drop { by: By::Mirror };
                }
                self.pairs.push(MirrorPair {
                    copy: sites.0.clone(),
                    original: sites.1.clone(),
                    samples: Vec::new(),
                    decided: 0,
                    adding: 0,
                    adds: None,
                    candidates: 0,
                });
                self.index.insert(sites, self.pairs.len() - 1);
                self.dirty = true;
                self.pairs.len() - 1
            }
        };
        let pair = &self.pairs[at];
        match pair.adds {
            Some(true) => Fate::Fetch { by: By::Mirror },
            Some(false) => Fate::Drop { by: By::Mirror },
            None => Fate::Wait {
                until: Until::Samples {
                    pair: at,
                    on: pair.key(),
                },
                probe: None,
                always: false,
            },
        }
    }

    /// The link to `url` (key `link`) was parked on the pair [`Mirrors::link`] named: a
    /// candidate for its samples.
    pub fn candidate(&mut self, pair: usize, link: Key, url: &str) {
        let Some(p) = self.pairs.get_mut(pair) else {
            return;
        };
        p.candidates += 1;
        self.dirty = true;
        if p.adds.is_none() && !self.candidates.iter().any(|c| c.link == link) {
            self.candidates.push(Candidate {
                pair,
                link,
                url: url.to_owned(),
                cost: Cost::Waiting,
            });
        }
    }

    /// A resumed crawl's candidates: the links still parked on each pair of sites not
    /// settled, as `parked_on` (the store) lists them by the pair's key, with their URLs.
    /// They were counted when first parked.
    pub fn resume_candidates<E>(
        &mut self,
        mut parked_on: impl FnMut(&Key) -> Result<Vec<(Key, String)>, E>,
    ) -> Result<(), E> {
        for (at, pair) in self.pairs.iter().enumerate() {
            if pair.adds.is_some() {
                continue;
            }
            for (link, url) in parked_on(&pair.key())? {
                if !self.candidates.iter().any(|c| c.link == link) {
                    self.candidates.push(Candidate {
                        pair: at,
                        link,
                        url,
                        cost: Cost::Waiting,
                    });
                }
            }
        }
        Ok(())
    }

    /// Whether a pair of sites has candidates to draw and takes more samples.
    pub fn wants_samples(&self, budget: Budget) -> bool {
        !self.candidates.is_empty() && self.pairs.iter().any(|p| p.wanted(budget) > 0)
    }

    /// The samples to draw now ([`draw`]), as `budget` allows; `now`, nothing else
    /// is left to crawl. `cost` tells what sampling a candidate (by URL) costs now, as far as
    /// is known: asked until a length is. The drawn are candidates no more; each is
    /// [`Mirrors::sampled`] once queued.
    pub fn draws<E>(
        &mut self,
        budget: Budget,
        now: bool,
        mut cost: impl FnMut(&str) -> Result<Cost, E>,
    ) -> Result<Vec<Drawn>, E> {
        let mut drawn = Vec::new();
        for (at, pair) in self.pairs.iter().enumerate() {
            let needed = pair.wanted(budget);
            if needed == 0 {
                continue;
            }
            let mut of_pair = Vec::new();
            for (index, candidate) in self.candidates.iter_mut().enumerate() {
                if candidate.pair != at {
                    continue;
                }
                let costs = match candidate.cost {
                    known @ Cost::Known(_) => known,
                    _ => cost(&candidate.url)?,
                };
                candidate.cost = costs;
                of_pair.push((index, costs));
            }
            let costs: Vec<Cost> = of_pair.iter().map(|(_, c)| *c).collect();
            for chosen in draw(&costs, needed, now) {
                let (index, cost) = of_pair[chosen];
                drawn.push((
                    index,
                    Drawn {
                        on: pair.key(),
                        link: self.candidates[index].link,
                        pair: at,
                        cost,
                    },
                ));
            }
        }
        // Taken out from the last, so that the indices before stay; drawn cheapest first.
        let mut taken: Vec<usize> = drawn.iter().map(|(index, _)| *index).collect();
        taken.sort_unstable_by(|a, b| b.cmp(a));
        for index in taken {
            self.candidates.remove(index);
        }
        Ok(drawn.into_iter().map(|(_, drawn)| drawn).collect())
    }

    /// The link with key `link` was queued as a sample of the pair `pair`.
    pub fn sampled(&mut self, pair: usize, link: Key) {
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
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Whether the URL with this key is a sample not decided yet.
    pub fn is_pending(&self, key: &Key) -> bool {
        self.pending.iter().any(|p| p.key == *key)
    }

    /// The sample at `key` added a page (its links are being followed).
    pub fn added(&mut self, key: &Key) {
        if let Some(pending) = self.pending.iter_mut().find(|p| p.key == *key) {
            pending.adds = true;
            self.dirty = true;
        }
    }

    /// The sample at `from` redirected to a URL queued with it, at `to`: that URL's page is
    /// the sample now. False when `from` is no sample waiting.
    pub fn moved(&mut self, from: &Key, to: Key) -> bool {
        match self.pending.iter_mut().find(|p| p.key == *from) {
            Some(pending) => {
                pending.key = to;
                self.dirty = true;
                true
            }
            None => false,
        }
    }

    /// The URL at `key` is decided. When it was the sample that settles its pair (as
    /// `budget` has it): the key the pair's links wait on, and whether the mirror's copies add
    /// pages.
    pub fn decided(&mut self, key: &Key, budget: Budget) -> Option<(Key, bool)> {
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
        } else if pair.decided as usize >= pair.samples.len() && pair.wanted(budget) == 0 {
            false
        } else {
            return None;
        };
        pair.adds = Some(settled);
        let on = pair.key();
        self.candidates.retain(|c| c.pair != at);
        Some((on, settled))
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
mod tests;
