//! The ground truth: for every URL of the labelled web, its content group (pages of one group
//! are near-duplicates of each other), the kind of variant it is, and whether it is scored.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// What a page is, by how it was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// An article on the origin site.
    Origin,
    /// The same article on the mirror: other template, URL scheme, ads, counters, dates.
    Mirror,
    /// The same article behind another URL of the origin (exact duplicate).
    UrlVariant,
    /// A syndicated copy with a quarter of its paragraphs deleted.
    DeletedParagraphs,
    /// A syndicated copy with 30 % more paragraphs.
    AddedParagraphs,
    /// A syndicated copy with 6 % of its words changed.
    ChangedWords,
    /// A syndicated copy with its paragraphs reordered.
    Reordered,
    /// A syndicated page holding a whole article and half of another.
    Contains,
    /// A heavy rewrite (half the paragraphs replaced, 15 % of the words changed): borderline,
    /// labelled unknown and not scored.
    Rewrite,
    /// A Chinese article (UTF-8).
    ZhOrigin,
    /// The Chinese article on a mirror served in GBK.
    GbkMirror,
    /// A product page of a template-heavy shop: most bytes shared, each page distinct.
    TemplateNegative,
    /// A page of an endless calendar, differing only by its date.
    Trap,
    /// A page linked only from mirror pages.
    OnlyViaMirror,
    /// A home or listing page.
    Index,
    /// A page robots.txt disallows: fetching it is a violation.
    Disallowed,
    /// Real webs: a page of the first site (the older release, English).
    RealFirst,
    /// Real webs: a page of a later site with no counterpart on an earlier one (new, renamed).
    RealNew,
    /// Real webs: a page of a later release whose counterpart is near (ratio >= 0.8).
    Unchanged,
    /// Real webs: a page of a translation whose counterpart is near (untranslated).
    Untranslated,
    /// Real webs: a page without counterpart, near a page of an earlier site (renamed).
    Renamed,
    /// Real webs: a page whose nearest counterpart is between near and distinct: not scored.
    Edited,
    /// Real webs: a page of a later site whose counterparts are distinct (rewritten,
    /// translated).
    Rewritten,
    /// Real webs: a page that nearly matches another page of its own site: not scored.
    Ambiguous,
    /// Real webs: a page whose main region has almost no words: not scored.
    Empty,
}

/// The truth about one page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageTruth {
    /// Its content group.
    pub group: u64,
    /// How it was made.
    pub kind: Kind,
    /// Whether verdicts about it are scored (borderline pages are not).
    pub scored: bool,
}

impl PageTruth {
    /// A scored page of `group`.
    pub fn scored(group: u64, kind: Kind) -> PageTruth {
        PageTruth {
            group,
            kind,
            scored: true,
        }
    }

    /// A borderline page: its own group, not scored.
    pub fn unknown(group: u64, kind: Kind) -> PageTruth {
        PageTruth {
            group,
            kind,
            scored: false,
        }
    }

    /// A home or listing page: its own group, not scored (two listings of the same articles
    /// on two sites are borderline: same titles, other order and grouping).
    pub fn index(group: u64) -> PageTruth {
        PageTruth::unknown(group, Kind::Index)
    }

    /// A robots-disallowed page.
    pub fn disallowed(group: u64) -> PageTruth {
        PageTruth::scored(group, Kind::Disallowed)
    }
}

/// Every URL's truth, with prefix rules for generated areas (the trap).
#[derive(Debug, Clone, Default)]
pub struct Truth {
    pages: HashMap<String, PageTruth>,
    prefixes: Vec<(String, PageTruth)>,
}

impl Truth {
    pub(crate) fn insert(&mut self, url: String, truth: PageTruth) {
        self.pages.insert(url, truth);
    }

    pub(crate) fn add_prefix(&mut self, prefix: String, truth: PageTruth) {
        self.prefixes.push((prefix, truth));
    }

    /// The truth about `url` (as the crawler canonicalises it).
    pub fn get(&self, url: &str) -> Option<PageTruth> {
        self.pages.get(url).copied().or_else(|| {
            self.prefixes
                .iter()
                .find(|(p, _)| url.starts_with(p.as_str()))
                .map(|(_, t)| *t)
        })
    }

    /// Writes the truth as JSON lines (`{"url", "group", "kind", "scored"}`; generated areas as
    /// `{"prefix", ...}`), for auditing a run.
    pub fn write(&self, path: &std::path::Path) -> std::io::Result<()> {
        let mut lines: Vec<String> = self
            .pages
            .iter()
            .map(|(url, t)| serde_json::json!({"url": url, "group": t.group, "kind": t.kind, "scored": t.scored}).to_string())
            .collect();
        lines.sort();
        lines.extend(
            self.prefixes
                .iter()
                .map(|(p, t)| serde_json::json!({"prefix": p, "group": t.group, "kind": t.kind, "scored": t.scored}).to_string()),
        );
        std::fs::write(path, lines.join("\n") + "\n")
    }

    /// Every page of the table with its truth.
    pub fn pages(&self) -> impl Iterator<Item = (String, PageTruth)> + '_ {
        self.pages.iter().map(|(u, t)| (u.clone(), *t))
    }

    /// Pages in the table (generated areas not counted).
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }
}
