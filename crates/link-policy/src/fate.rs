//! A link's fate ([`Fate`]): the one answer the policy gives about a link, whenever it is
//! asked: when the link is found on a page ([`crate::found_link`]), when what it waited for is
//! decided ([`crate::released_link`], [`crate::parking_answered`]), when the URL rules are
//! asked about it ([`crate::LinkPolicy::fate`]), and when a cheap check found its page to
//! have its counterpart's text ([`crate::unchanged_page`]). Each fate names what decided it
//! ([`By`]: a mechanism, or a URL rule with its [`Evidence`]).

use serde::{Deserialize, Serialize};
use url::Url;

use crate::evidence::Evidence;
use crate::keys::Key;

/// A link's fate. `U` is a URL as the asker holds it (the crawler's canonical form, a
/// journal's text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "fate", rename_all = "kebab-case")]
pub enum Fate<U = Url> {
    /// Fetched whole.
    Fetch {
        /// See [`By`].
        by: By,
    },
    /// Checked cheaply against the page `against` first (`how`), fetched whole only when the
    /// check says it differs.
    Check {
        /// The page it is checked against: its counterpart.
        against: U,
        /// See [`How`].
        how: How,
        /// See [`By`].
        by: By,
    },
    /// Parked until what it waits for (`until`) is decided, then decided again.
    Wait {
        /// See [`Until`].
        until: Until<U>,
        /// The page it is checked against by length once released, if it is.
        probe: Option<U>,
        /// Followed whatever it waited for turns out to be (a copying site's link, waiting
        /// only so that its counterpart is judged first).
        always: bool,
    },
    /// Not requested: recorded as a duplicate of the page its rule names, or decided by its
    /// check to have its counterpart's text.
    Skip {
        /// See [`By`].
        by: By,
    },
    /// Not followed: counted with the page that named it, no record of its own.
    Drop {
        /// See [`By`].
        by: By,
    },
}

/// What decided a fate: a mechanism, or a URL rule with its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum By {
    /// The link leads somewhere new (or every link is followed), and no rule names a
    /// counterpart the crawl holds.
    New,
    /// The link leads where its page's original's link leads (its counterpart): nothing new,
    /// unless the counterpart turns out a hub.
    Original,
    /// Its counterpart is a hub (a release's table of contents): fetched for the new pages
    /// it may list, a new chain of duplicates starting there (`hub_min_links`).
    Hub,
    /// What it would lead to weighs less than itself (`hub_min_yield`): a hub that led
    /// to less than itself (or whose worth a shared job's worker cannot know), or a page a
    /// check found unchanged whose links name little the crawl does not know.
    LedToLess,
    /// A mirror's link, followed or dropped as the mirror's samples say
    /// (`mirror_samples`).
    Mirror,
    /// A link of a site found to copy another path for path, its counterpart judged first.
    CopiedSite,
    /// Nothing is left to crawl: what it waited for can never be decided, so it is followed
    /// rather than lost.
    CrawlEnd,
    /// A page a check found to have its counterpart's text, which may be alone in naming
    /// pages the crawl does not know: fetched whole for its links.
    NamesNew,
    /// A page a check found to have its counterpart's text, naming nothing new.
    Unchanged,
    /// A trap rule (the chain of duplicates, a duplicate's links' budget, a URL pattern's
    /// rule or budget), named in the page's record.
    Trap,
    /// A redirect named it: its target.
    Redirect,
    /// A sitemap named it.
    Sitemap,
    /// A URL rule's prediction, with its evidence (`dedup.predict`).
    Rule(Box<Evidence>),
}

/// How a link is checked cheaply against its counterpart ([`Fate::Check`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum How {
    /// A duplicate's link matched with its original's: its HEAD's length against its
    /// counterpart's (and, for a large page where the crawl samples, parts of it asked with
    /// `Range`) (`probe_links`).
    Length,
    /// A trusted rule's prediction verified by length: its HEAD, then `Range` for a large
    /// page.
    Verify,
    /// A rule's prediction sampled: its HEAD first, and when the length is one the rule's
    /// copies have had, a few parts asked with `Range` and compared with the counterpart's.
    Sample,
}

/// What a waiting link waits for ([`Fate::Wait`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "until", rename_all = "kebab-case")]
pub enum Until<U> {
    /// The page `page` to be decided (or a hub's links, when it is one), parked on the key
    /// `on`.
    Page {
        /// The page waited for.
        page: U,
        /// The key the link is parked on.
        on: Key,
    },
    /// A hub's links all to be decided, parked on their key `on`.
    HubLinks {
        /// See [`Until::HubLinks`].
        on: Key,
    },
    /// The samples of the pair of sites `pair` to settle, parked on the pair's key `on`.
    Samples {
        /// The pair, in the order the mirrors were found.
        pair: usize,
        /// See [`Until::Samples`].
        on: Key,
    },
    /// The crawl to have nothing else to do.
    End,
}

impl<U> Until<U> {
    /// The key the link is parked on (none until the crawl's end).
    pub fn on(&self) -> Option<Key> {
        match self {
            Until::Page { on, .. } | Until::HubLinks { on } | Until::Samples { on, .. } => {
                Some(*on)
            }
            Until::End => None,
        }
    }
}

impl<U> Fate<U> {
    /// What decided it, but for a wait.
    pub fn by(&self) -> Option<&By> {
        match self {
            Fate::Fetch { by } | Fate::Check { by, .. } | Fate::Skip { by } | Fate::Drop { by } => {
                Some(by)
            }
            Fate::Wait { .. } => None,
        }
    }

    /// The evidence of the URL rule that decided it, if one did.
    pub fn rule(&self) -> Option<&Evidence> {
        match self.by() {
            Some(By::Rule(evidence)) => Some(evidence),
            _ => None,
        }
    }

    /// See [`Fate::rule`].
    pub fn rule_mut(&mut self) -> Option<&mut Evidence> {
        match self {
            Fate::Fetch { by } | Fate::Check { by, .. } | Fate::Skip { by } | Fate::Drop { by } => {
                by.rule_mut()
            }
            Fate::Wait { .. } => None,
        }
    }

    /// Whether a duplicate's link queued with this fate may lead to a page its original
    /// does not link to, as far as its fate tells (what its original links to is asked
    /// besides: [`crate::Learned::leads_as_original`]): not a mirror's link (a mirror's pages
    /// are judged by its samples), nor one a URL rule says copies a page the crawl holds (a
    /// mirror's "related" links to its own copies of pages the crawl has).
    pub fn may_add_page(&self) -> bool {
        match self {
            Fate::Fetch { by: By::Mirror } => false,
            _ => self.rule().is_none(),
        }
    }

    /// A URL rule's prediction as a record names it (`check`: fetched whole to check the
    /// rule; `verify`, `sample`: checked cheaply; `skip`), with its evidence.
    pub fn prediction(&self) -> Option<(&'static str, &Evidence)> {
        let evidence = self.rule()?;
        let name = match self {
            Fate::Fetch { .. } => "check",
            Fate::Check {
                how: How::Verify, ..
            } => "verify",
            Fate::Check { .. } => "sample",
            Fate::Skip { .. } => "skip",
            Fate::Drop { .. } | Fate::Wait { .. } => return None,
        };
        Some((name, evidence))
    }

    /// The same fate, its URLs mapped by `f`.
    pub fn map<V>(self, mut f: impl FnMut(U) -> V) -> Fate<V> {
        match self {
            Fate::Fetch { by } => Fate::Fetch { by },
            Fate::Check { against, how, by } => Fate::Check {
                against: f(against),
                how,
                by,
            },
            Fate::Wait {
                until,
                probe,
                always,
            } => Fate::Wait {
                until: match until {
                    Until::Page { page, on } => Until::Page { page: f(page), on },
                    Until::HubLinks { on } => Until::HubLinks { on },
                    Until::Samples { pair, on } => Until::Samples { pair, on },
                    Until::End => Until::End,
                },
                probe: probe.map(f),
                always,
            },
            Fate::Skip { by } => Fate::Skip { by },
            Fate::Drop { by } => Fate::Drop { by },
        }
    }
}

impl<U> Fate<U> {
    /// Its name as a record writes it: `fetch`, `check`, `wait`, `skip` or `drop`.
    pub fn name(&self) -> &'static str {
        match self {
            Fate::Fetch { .. } => "fetch",
            Fate::Check { .. } => "check",
            Fate::Wait { .. } => "wait",
            Fate::Skip { .. } => "skip",
            Fate::Drop { .. } => "drop",
        }
    }

    /// What decided it, as a record writes it ([`By::name`]); for a wait, what it waits for
    /// ([`Until::name`]).
    pub fn by_name(&self) -> &'static str {
        match self {
            Fate::Wait { until, always, .. } => until.name(*always),
            Fate::Fetch { by } | Fate::Check { by, .. } | Fate::Skip { by } | Fate::Drop { by } => {
                by.name()
            }
        }
    }
}

impl By {
    /// The evidence of the URL rule, when a rule decided.
    fn rule_mut(&mut self) -> Option<&mut Evidence> {
        match self {
            By::Rule(evidence) => Some(evidence),
            _ => None,
        }
    }

    /// Its name as a record writes it (as serialised, a rule's evidence aside).
    pub fn name(&self) -> &'static str {
        match self {
            By::New => "new",
            By::Original => "original",
            By::Hub => "hub",
            By::LedToLess => "led-to-less",
            By::Mirror => "mirror",
            By::CopiedSite => "copied-site",
            By::CrawlEnd => "crawl-end",
            By::NamesNew => "names-new",
            By::Unchanged => "unchanged",
            By::Trap => "trap",
            By::Redirect => "redirect",
            By::Sitemap => "sitemap",
            By::Rule(_) => "rule",
        }
    }
}

impl How {
    /// Its name as a record writes it.
    pub fn name(self) -> &'static str {
        match self {
            How::Length => "length",
            How::Verify => "verify",
            How::Sample => "sample",
        }
    }
}

impl<U> Until<U> {
    /// What a waiting link waits for, as a record writes it: its `counterpart` (a duplicate's
    /// link), a `copied-site`'s counterpart (`always`), a hub's links (`hub-links`), a
    /// mirror's samples (`mirror`), or the crawl's end (`crawl-end`).
    pub fn name(&self, always: bool) -> &'static str {
        match self {
            Until::Page { .. } if always => "copied-site",
            Until::Page { .. } => "counterpart",
            Until::HubLinks { .. } => "hub-links",
            Until::Samples { .. } => "mirror",
            Until::End => "crawl-end",
        }
    }
}

#[cfg(test)]
mod tests {
    use nearcrawl_url_rules::{RuleId, RuleStats};
    use url::Url;

    use super::*;
    use crate::evidence::{Evidence, Held};

    #[test]
    fn a_duplicate_s_link_adds_a_page_unless_its_fate_says_where_it_leads() {
        let url = Url::parse("http://a/x.html").unwrap();
        let rule = || {
            By::Rule(Box::new(Evidence {
                rule: RuleId::from_number(0),
                rule_text: "http://m/story/{1}/ -> http://a/{1}.html".into(),
                counterpart: url.clone(),
                held: Held::default(),
                stats: RuleStats::default(),
            }))
        };
        // (what it protects, the fate) -> may add a page
        let cases: [(&str, Fate<Url>, bool); 6] = [
            ("a new link", Fate::Fetch { by: By::New }, true),
            ("a hub's link", Fate::Fetch { by: By::Hub }, true),
            (
                "a mirror's link, judged by samples",
                Fate::Fetch { by: By::Mirror },
                false,
            ),
            (
                "a link a rule says copies a held page, fetched to check the rule",
                Fate::Fetch { by: rule() },
                false,
            ),
            (
                "a link a rule says copies a held page, checked cheaply",
                Fate::Check {
                    against: url.clone(),
                    how: How::Sample,
                    by: rule(),
                },
                false,
            ),
            (
                "a link checked against its original's counterpart",
                Fate::Check {
                    against: url.clone(),
                    how: How::Length,
                    by: By::Original,
                },
                true,
            ),
        ];
        for (what, fate, adds) in cases {
            assert_eq!(fate.may_add_page(), adds, "{what}");
        }
    }
}
