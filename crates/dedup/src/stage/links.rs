//! Which of a duplicate's links lead somewhere new: its links matched with its original's,
//! by target or by anchor text, and the keys they are matched by.

use super::{HashMap, HashSet, LinkMatch, Url};

pub use nearcrawl_link_policy::{Followed, same_site};

/// Which links of a judged page are followed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Follow {
    /// All (unique pages, the `--no-dedup` baseline, `duplicate_outlinks = "keep"`).
    All,
    /// None (duplicates with `"skip"`, copies of a shared-index page, and a page a probe found
    /// unchanged, whose links are its counterpart's).
    None,
    /// Those that lead somewhere new (duplicates, `"new"`): see [`Follow::follows`].
    NewLinks {
        /// The [`link_keys`] of the original's links.
        known: HashSet<u64>,
        /// How a link is matched with the original's.
        by: LinkMatch,
        /// The original links to this page: the two are steps of one sequence (days of a
        /// calendar, pages of a listing).
        in_sequence: bool,
        /// Matched by anchor text: the target keys (where they lead) of links whose anchor text
        /// leads to more places here than on the original, those beyond the original's count
        /// (computed by `anchor_surplus`).
        surplus: HashSet<u64>,
    },
}

/// A duplicate's links matched by anchor text lead to the same target this rarely (and at
/// least [`MIN_ALIGNED`] of them match): the sites' URL schemes differ ([`LinkMatch::Anchor`]).
pub(super) const MIN_SAME_TARGET: f64 = 0.5;
/// Links matched by anchor text needed to tell a site's URL scheme.
pub(super) const MIN_ALIGNED: usize = 3;

impl Follow {
    /// Whether the link from `page` to `target` with this anchor text is followed. With
    /// [`Follow::NewLinks`], by [`LinkMatch`]: when no link of the original leads to the same
    /// place (same path and query on the page's own host, the same URL elsewhere; fragments
    /// aside), or when the link has anchor text that no link of the original has, digits
    /// masked (a calendar's "Next: 4 May" is the original's "Next: 3 May"). By target, a link
    /// whose text and target differ from one of the original's only in their digits is still
    /// new (LLVM 16's `AMDGPUAsmGFX11.html` is not LLVM 15's `AMDGPUAsmGFX10.html`), unless the
    /// original links to this very page: then the two are steps of a sequence, and the next
    /// step (a calendar's next day) is not followed. By anchor text, a link whose text leads
    /// to more places than on the original is new beyond the original's count (LLVM 15's
    /// `saddr` leads to three operand pages in `AMDGPUAsmGFX1030.html`, to two in the
    /// `AMDGPUAsmGFX10.html` it copies: the least used of the three is followed).
    pub fn follows(&self, page: &Url, target: &Url, anchor: &str) -> bool {
        self.followed(page, target, anchor) != Followed::No
    }

    /// Whether the original (at `original`) links to `target`, a URL on its site or
    /// another: a duplicate's link carried to the original's site that leads where one of the
    /// original's does adds no page the original does not lead to. Always for
    /// [`Follow::All`], never for [`Follow::None`].
    pub fn original_links_to(&self, original: &Url, target: &Url) -> bool {
        match self {
            Follow::All => true,
            Follow::None => false,
            Follow::NewLinks { known, .. } => {
                known.contains(&target_key_of(&link_target(original, target)))
            }
        }
    }

    /// [`Follow::follows`], saying why a followed link is: [`Followed::Surplus`] when only for
    /// leading beyond the original's count of places for its anchor text (the crawl then asks
    /// whether its counterpart on the original's site was crawled already: a copy across
    /// sites judged against another page of its original's site).
    pub fn followed(&self, page: &Url, target: &Url, anchor: &str) -> Followed {
        let new = |yes: bool| if yes { Followed::New } else { Followed::No };
        match self {
            Follow::All => Followed::New,
            Follow::None => Followed::No,
            Follow::NewLinks {
                known,
                by,
                in_sequence,
                surplus,
            } => {
                let [exact, masked, text] = link_key_triple(page, target, anchor);
                match by {
                    LinkMatch::Target => {
                        new(!(known.contains(&exact) || *in_sequence && known.contains(&masked)))
                    }
                    LinkMatch::Anchor if anchor.trim().is_empty() => Followed::No,
                    LinkMatch::Anchor if !known.contains(&text) && !known.contains(&masked) => {
                        Followed::New
                    }
                    LinkMatch::Anchor if surplus.contains(&exact) => Followed::Surplus,
                    LinkMatch::Anchor => Followed::No,
                }
            }
        }
    }
}

/// Where a link from `page` leads, as compared across sites: the path and query when it
/// stays on the page's host (so a release's link to `/Passes.html` matches the previous
/// release's on another host), the whole URL otherwise; fragments dropped.
pub(super) fn link_target(page: &Url, target: &Url) -> String {
    let mut key = if same_site(page, target) {
        String::from(target.path())
    } else {
        format!(
            "{}://{}{}",
            target.scheme(),
            target.host_str().unwrap_or_default(),
            target.path()
        )
    };
    if let Some(query) = target.query() {
        key.push('?');
        key.push_str(query);
    }
    key
}

/// The three keys of a link: its target ([`link_target`]); its anchor text and target,
/// digits masked in both; its anchor text, digits masked.
pub(super) fn link_key_triple(page: &Url, target: &Url, anchor: &str) -> [u64; 3] {
    let target = link_target(page, target);
    let anchor = mask_digits(anchor);
    // One buffer for the three keys.
    let mut key = String::with_capacity(4 + 2 * target.len() + 2 * anchor.len());
    let mut hash = |parts: &[&str]| {
        key.clear();
        parts.iter().for_each(|p| key.push_str(p));
        nearcrawl_fingerprint::feature_hash(key.as_bytes())
    };
    [
        target_key_of(&target),
        hash(&["m\0", &anchor, "\0", &mask_digits(&target)]),
        hash(&["a\0", &anchor]),
    ]
}

/// The [keys](link_key_triple) of each of the links of the page at `page`, in their order.
pub(super) fn link_triples(page: &Url, links: &[nearcrawl_extract::Link]) -> Vec<[u64; 3]> {
    links
        .iter()
        .map(|l| link_key_triple(page, &l.url, &l.text))
        .collect()
}

/// The first of a link's keys: where it leads ([`link_target`]).
pub(super) fn target_key_of(target: &str) -> u64 {
    let mut key = String::with_capacity(2 + target.len());
    key.push_str("t\0");
    key.push_str(target);
    nearcrawl_fingerprint::feature_hash(key.as_bytes())
}

/// How `links` (of a duplicate at `page`) match an original's `known` link keys: by target,
/// unless most of the links whose anchor text the original has lead elsewhere than its.
/// `triples`: the links' [keys](link_key_triple), in their order.
pub(super) fn link_match(
    links: &[nearcrawl_extract::Link],
    triples: &[[u64; 3]],
    known: &HashSet<u64>,
) -> LinkMatch {
    let (mut aligned, mut same) = (0usize, 0usize);
    for (_, &[exact, _, text]) in links
        .iter()
        .zip(triples)
        .filter(|(l, _)| !l.text.trim().is_empty())
    {
        if known.contains(&text) {
            aligned += 1;
            same += usize::from(known.contains(&exact));
        }
    }
    if aligned >= MIN_ALIGNED && (same as f64) < MIN_SAME_TARGET * aligned as f64 {
        LinkMatch::Anchor
    } else {
        LinkMatch::Target
    }
}

/// The key of a page's own place (relative to its site), kept with its link keys.
pub(super) fn own_key(url: &Url) -> u64 {
    nearcrawl_fingerprint::feature_hash(format!("s\0{}", link_target(url, url)).as_bytes())
}

/// Whether a duplicate at `page` is the next step of a sequence its original (with these
/// link keys) is a step of: the original links to it, and is not at the same place on its
/// own site (a next release's copy of a page that links to itself is no sequence).
pub(super) fn in_sequence(page: &Url, known: &HashSet<u64>) -> bool {
    known.contains(&target_key_of(&link_target(page, page))) && !known.contains(&own_key(page))
}

/// Each anchor text of `links` (its key: digits masked, empty ones aside) with the places it
/// leads to (their keys), the most linked first (ties: the first linked first). `triples` are
/// the links' [keys](link_key_triple), in their order.
pub(super) fn anchor_targets(
    links: &[nearcrawl_extract::Link],
    triples: &[[u64; 3]],
) -> Vec<(u64, Vec<u64>)> {
    // Anchor key -> (target key -> (links, first position)).
    let mut by_anchor: HashMap<u64, HashMap<u64, (usize, usize)>> = HashMap::new();
    for (at, (link, &[target, _, text])) in links.iter().zip(triples).enumerate() {
        if !link.text.trim().is_empty() {
            let places = by_anchor.entry(text).or_default();
            places.entry(target).or_insert((0, at)).0 += 1;
        }
    }
    by_anchor
        .into_iter()
        .map(|(anchor, places)| {
            let mut places: Vec<(u64, (usize, usize))> = places.into_iter().collect();
            places.sort_unstable_by_key(|&(_, (links, first))| (std::cmp::Reverse(links), first));
            (
                anchor,
                places.into_iter().map(|(target, _)| target).collect(),
            )
        })
        .collect()
}

/// The key saying that the anchor text with key `anchor` leads to at least `rank` places
/// (1-based).
pub(super) fn rank_key(anchor: u64, rank: usize) -> u64 {
    let mut key = [0u8; 18];
    key[..2].copy_from_slice(b"r\0");
    key[2..10].copy_from_slice(&anchor.to_le_bytes());
    key[10..].copy_from_slice(&(rank as u64).to_le_bytes());
    nearcrawl_fingerprint::feature_hash(&key)
}

/// The target keys of a duplicate's links (`triples`: their keys) whose anchor text leads to
/// more places than on the original (with link keys `known`): its places beyond the
/// original's count, the least linked. (An original stored without these keys leads nowhere by any text: all of a
/// text's places are then new, which follows more, never less.)
pub(super) fn anchor_surplus(
    links: &[nearcrawl_extract::Link],
    triples: &[[u64; 3]],
    known: &HashSet<u64>,
) -> HashSet<u64> {
    let mut surplus = HashSet::new();
    for (anchor, places) in anchor_targets(links, triples) {
        if !known.contains(&anchor) {
            // A text the original does not have: new by the text itself.
            continue;
        }
        let beyond = (1..=places.len()).find(|&rank| !known.contains(&rank_key(anchor, rank)));
        if let Some(beyond) = beyond {
            surplus.extend(&places[beyond - 1..]);
        }
    }
    surplus
}

/// The keys a duplicate's links are compared with: the three [keys](Follow::follows) of every
/// link of `page` (at `url`), how many places each anchor text leads to (a key per text and
/// place), and the page's own place, sorted and deduplicated.
pub fn link_keys(url: &Url, links: &[nearcrawl_extract::Link]) -> Vec<u64> {
    let triples = link_triples(url, links);
    let ranks = anchor_targets(links, &triples)
        .into_iter()
        .flat_map(|(anchor, places)| (1..=places.len()).map(move |rank| rank_key(anchor, rank)));
    let mut keys: Vec<u64> = triples
        .iter()
        .flatten()
        .copied()
        .chain(ranks)
        .chain([own_key(url)])
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// Text normalised ([`nearcrawl_text::normalize`]) with every run of digits masked, so "Next:
/// 3 May" on one calendar page and "Next: 4 May" on the next are the same link.
pub(super) fn mask_digits(text: &str) -> String {
    let mut masked = String::with_capacity(text.len());
    let mut in_digits = false;
    for c in nearcrawl_text::normalize(text.trim()).chars() {
        if c.is_numeric() {
            if !in_digits {
                masked.push('0');
            }
            in_digits = true;
        } else {
            masked.push(c);
            in_digits = false;
        }
    }
    masked
}
