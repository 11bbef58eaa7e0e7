//! Host templates: text blocks that repeat across the pages of one host.
//!
//! A site's navigation, footers, cookie notices and "related" boxes appear on most of its
//! pages. Fed page by page as a crawl goes, [`TemplateModel`] counts on how many pages of each
//! host a block occurs; once a host has [`TemplateConfig::min_pages`] pages, a block seen on
//! at least [`TemplateConfig::min_share`] of them is template. Digits are masked before
//! counting, so "Updated 3 May, 10:31" and "1,204 readers" count as one block across pages.
//!
//! It works with or without main-content extraction: strip template blocks from the content,
//! or from the full text of pages where extraction finds no article.

use std::collections::HashMap;

use crate::content::{Extraction, TextBlock};

/// When a block counts as template.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TemplateConfig {
    /// Pages a host must have before any of its blocks is called template.
    pub min_pages: u32,
    /// Share of the host's pages a block must appear on.
    pub min_share: f32,
    /// Pages a block must appear on (a story copied once on its own host is not template).
    pub min_block_pages: u32,
    /// Distinct blocks remembered per host; when full, blocks seen on only one page are
    /// forgotten, so memory stays bounded on hosts with endless unique text.
    pub max_blocks_per_host: usize,
    /// Distinct blocks remembered over all hosts (about 20 bytes each): when more, blocks
    /// seen on only one page are forgotten everywhere, then the hosts not seen for longest,
    /// until a quarter is free. A crawl of many hosts stays within this, however many.
    pub max_blocks: usize,
}

impl Default for TemplateConfig {
    fn default() -> Self {
        TemplateConfig {
            min_pages: 4,
            min_share: 0.5,
            min_block_pages: 2,
            max_blocks_per_host: 20_000,
            max_blocks: 2_000_000,
        }
    }
}

#[derive(Clone, Debug, Default)]
struct HostBlocks {
    pages: u32,
    /// When the host was last observed ([`TemplateModel::observed`] then).
    last_seen: u64,
    /// Masked block hash -> pages it was seen on.
    /// (Seeded: block hashes come from the pages, which cannot be written to collide in it.)
    seen: foldhash::HashMap<u64, u32>,
}

/// Per-host counts of repeated text blocks.
#[derive(Clone, Debug, Default)]
pub struct TemplateModel {
    config: TemplateConfig,
    hosts: HashMap<String, HostBlocks>,
    /// Pages observed, over all hosts.
    observed: u64,
    /// Distinct blocks remembered, over all hosts.
    blocks: usize,
}

impl TemplateModel {
    /// An empty model.
    pub fn new(config: TemplateConfig) -> TemplateModel {
        TemplateModel {
            config,
            hosts: HashMap::new(),
            observed: 0,
            blocks: 0,
        }
    }

    /// Records the blocks of one page of `host` (each distinct block counts once per page).
    pub fn observe<'a>(&mut self, host: &str, blocks: impl IntoIterator<Item = &'a TextBlock>) {
        let keys: Vec<BlockKey> = blocks.into_iter().map(|b| BlockKey::of(&b.text)).collect();
        self.observe_keys(host, &keys);
    }

    /// [`TemplateModel::observe`] for blocks whose keys the caller computed once
    /// ([`BlockKey::of`]) to ask [`TemplateModel::is_template_key`] about them too.
    pub fn observe_keys(&mut self, host: &str, keys: &[BlockKey]) {
        let limit = self.config.max_blocks_per_host;
        let entry = match self.hosts.get_mut(host) {
            Some(entry) => entry,
            None => self.hosts.entry(host.to_owned()).or_default(),
        };
        self.observed += 1;
        entry.pages += 1;
        entry.last_seen = self.observed;
        let before = entry.seen.len();
        let distinct: foldhash::HashSet<u64> = keys.iter().map(|k| k.0).collect();
        for key in distinct {
            *entry.seen.entry(key).or_insert(0) += 1;
        }
        if entry.seen.len() > limit {
            entry.seen.retain(|_, pages| *pages > 1);
        }
        // `before` is part of the total, so this never goes below zero.
        self.blocks = (self.blocks + entry.seen.len()).saturating_sub(before);
        if self.blocks > self.config.max_blocks {
            self.shrink();
        }
    }

    /// [`TemplateModel::observe_keys`], then which of the page's blocks are its host's
    /// template now, one flag per key: what a page's own text leaves out, decided as the page
    /// arrives (later pages do not change it).
    pub fn observe_and_mark(&mut self, host: &str, keys: &[BlockKey]) -> Vec<bool> {
        self.observe_keys(host, keys);
        keys.iter()
            .map(|&key| self.is_template_key(host, key))
            .collect()
    }

    /// Distinct blocks remembered, over all hosts.
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// Brings the model under three quarters of [`TemplateConfig::max_blocks`]: blocks seen
    /// once go first, then the hosts not seen for longest.
    fn shrink(&mut self) {
        let target = self.config.max_blocks / 4 * 3;
        for host in self.hosts.values_mut() {
            host.seen.retain(|_, pages| *pages > 1);
        }
        self.blocks = self.hosts.values().map(|h| h.seen.len()).sum();
        if self.blocks <= target {
            return;
        }
        let mut by_age: Vec<(u64, String)> = self
            .hosts
            .iter()
            .map(|(name, h)| (h.last_seen, name.clone()))
            .collect();
        by_age.sort_unstable();
        for (_, name) in by_age {
            if self.blocks <= target {
                break;
            }
            if let Some(host) = self.hosts.remove(&name) {
                self.blocks -= host.seen.len();
            }
        }
    }

    /// Pages recorded for `host`.
    pub fn pages(&self, host: &str) -> u32 {
        self.hosts.get(host).map_or(0, |h| h.pages)
    }

    /// Share of `host`'s recorded pages that contain a block with this text (digits masked).
    pub fn share(&self, host: &str, text: &str) -> f32 {
        let Some(h) = self.hosts.get(host) else {
            return 0.0;
        };
        if h.pages == 0 {
            return 0.0;
        }
        h.seen.get(&BlockKey::of(text).0).copied().unwrap_or(0) as f32 / h.pages as f32
    }

    /// Whether a block with this text is part of `host`'s template.
    pub fn is_template(&self, host: &str, text: &str) -> bool {
        self.is_template_key(host, BlockKey::of(text))
    }

    /// [`TemplateModel::is_template`] by the block's key.
    pub fn is_template_key(&self, host: &str, key: BlockKey) -> bool {
        let Some(h) = self.hosts.get(host) else {
            return false;
        };
        let on = h.seen.get(&key.0).copied().unwrap_or(0);
        h.pages >= self.config.min_pages
            && on >= self.config.min_block_pages
            && on as f32 >= self.config.min_share * h.pages as f32
    }

    /// The main-content blocks of `extraction` that are not template, or, when extraction
    /// found no content, all its non-template blocks.
    pub fn strip<'a>(&self, host: &str, extraction: &'a Extraction) -> Vec<&'a TextBlock> {
        let any_content = extraction.blocks.iter().any(|b| b.in_content);
        extraction
            .blocks
            .iter()
            .filter(|b| b.in_content || !any_content)
            .filter(|b| !self.is_template(host, &b.text))
            .collect()
    }
}

/// What the model knows a block by: the hash of its text with digits masked (each run of
/// digits one `0`), case folded and trimmed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockKey(u64);

impl BlockKey {
    /// The key as a number (to write it down).
    pub fn to_bits(self) -> u64 {
        self.0
    }

    /// A key written down with [`BlockKey::to_bits`].
    pub fn from_bits(bits: u64) -> BlockKey {
        BlockKey(bits)
    }

    /// The key of a block's text: lower-cased, each run of digits one `0`, trimmed, hashed.
    pub fn of(text: &str) -> BlockKey {
        let bytes = text.as_bytes();
        let mut masked: Vec<u8> = Vec::with_capacity(text.len());
        let mut last_digit = false;
        let mut at = 0;
        while at < bytes.len() {
            // A run of ASCII other than digits is copied and lower-cased whole.
            let run = bytes[at..]
                .iter()
                .position(|&b| !b.is_ascii() || b.is_ascii_digit())
                .unwrap_or(bytes.len() - at);
            if run > 0 {
                let from = masked.len();
                masked.extend_from_slice(&bytes[at..at + run]);
                masked[from..].make_ascii_lowercase();
                last_digit = false;
                at += run;
                continue;
            }
            // A digit, or a character beyond ASCII.
            let c = text[at..].chars().next().expect("a character starts here");
            at += c.len_utf8();
            if c.is_numeric() {
                if !last_digit {
                    masked.push(b'0');
                }
                last_digit = true;
            } else {
                let mut buf = [0u8; 4];
                for lower in c.to_lowercase() {
                    masked.extend_from_slice(lower.encode_utf8(&mut buf).as_bytes());
                }
                last_digit = false;
            }
        }
        let masked = std::str::from_utf8(&masked).expect("built from whole characters");
        BlockKey(xxhash_rust::xxh3::xxh3_64(masked.trim().as_bytes()))
    }

    /// [`BlockKey::of`] without its ASCII branches: the reference.
    #[cfg(test)]
    fn of_chars(text: &str) -> BlockKey {
        let mut last_digit = false;
        let mut masked = String::with_capacity(text.len());
        for c in text.chars() {
            if c.is_numeric() {
                if !last_digit {
                    masked.push('0');
                }
                last_digit = true;
            } else {
                last_digit = false;
                masked.extend(c.to_lowercase());
            }
        }
        BlockKey(xxhash_rust::xxh3::xxh3_64(masked.trim().as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ContentExtractor, Document};

    proptest::proptest! {
        /// The ASCII branches key a block as the reference does.
        #[test]
        fn ascii_keys_are_the_character_keys(text in "[ -~\t\n\x0b\x0c\rÉé’٣²Σ]{0,60}") {
            proptest::prop_assert_eq!(BlockKey::of(&text), BlockKey::of_chars(&text));
        }
    }

    fn page(i: usize, body: &str) -> Extraction {
        let html = format!(
            "<body><div class=top>Welcome to the Shop | Cart (3 items)</div><div><p>{body}</p>\
             <p>Updated {i} May 2024, {i}:31 - {} visitors</p></div><div>Free shipping on orders over $50</div></body>",
            1000 + i
        );
        ContentExtractor::new().extract(&Document::parse(&html))
    }

    #[test]
    fn the_model_stays_within_its_bound_over_many_hosts() {
        let mut model = TemplateModel::new(TemplateConfig {
            max_blocks: 1_000,
            ..TemplateConfig::default()
        });
        let block = |text: String| TextBlock {
            node: 0,
            tag: crate::Tag::P,
            text,
            in_content: true,
        };
        for host in 0..1_200 {
            let name = format!("h{host}.test");
            for page in 0..5 {
                let blocks = [
                    block(format!("Navigation of host {host}")),
                    block(format!("Text of page {page} of host {host}, its own")),
                ];
                model.observe(&name, &blocks);
                assert!(model.blocks() <= 1_000, "{}", model.blocks());
                let counted: usize = model.hosts.values().map(|h| h.seen.len()).sum();
                assert_eq!(model.blocks(), counted);
            }
        }
        // Blocks seen once went first, then the hosts not seen for longest: the recent host
        // still knows its template, the first one was forgotten.
        assert!(model.is_template("h1199.test", "Navigation of host 1199"));
        assert_eq!(model.pages("h0.test"), 0);
    }

    #[test]
    fn repeated_blocks_become_template_after_enough_pages() {
        let mut model = TemplateModel::new(TemplateConfig::default());
        let names = [
            "anchor", "bell", "candle", "drum", "easel", "flute", "globe", "harp", "inkwell", "jug",
        ];
        for (i, name) in names.iter().enumerate().take(3) {
            model.observe(
                "shop.test",
                &page(i, &format!("Product description: a {name}")).blocks,
            );
        }
        assert!(
            !model.is_template("shop.test", "Free shipping on orders over $50"),
            "3 pages are too few"
        );
        for (i, name) in names.iter().enumerate().skip(3) {
            model.observe(
                "shop.test",
                &page(i, &format!("A unique text about a {name}")).blocks,
            );
        }
        assert!(model.is_template("shop.test", "Free shipping on orders over $50"));
        assert!(
            model.is_template("shop.test", "Updated 77 May 2024, 8:31 - 99 visitors"),
            "digits are masked"
        );
        assert!(!model.is_template("shop.test", "A unique text about a flute"));
        assert!(
            !model.is_template("other.test", "Free shipping on orders over $50"),
            "per host"
        );
        assert_eq!(model.pages("shop.test"), 10);

        let body = "The one thing this page says, at some length, so that it reads as an article: a kettle.";
        let fresh = page(11, body);
        let content: Vec<&str> = fresh
            .blocks
            .iter()
            .filter(|b| b.in_content)
            .map(|b| b.text.as_str())
            .collect();
        assert_eq!(
            content,
            [body, "Updated 11 May 2024, 11:31 - 1011 visitors"]
        );
        let kept: Vec<&str> = model
            .strip("shop.test", &fresh)
            .iter()
            .map(|b| b.text.as_str())
            .collect();
        assert_eq!(kept, [body]);
    }

    #[test]
    fn memory_is_bounded_by_forgetting_singletons() {
        let config = TemplateConfig {
            max_blocks_per_host: 100,
            ..TemplateConfig::default()
        };
        let mut model = TemplateModel::new(config);
        for i in 0..1000 {
            let extraction = page(i, &format!("unique words {}", "x".repeat(i % 50 + 1)));
            model.observe("a.test", &extraction.blocks);
            assert!(model.hosts["a.test"].seen.len() <= 101);
        }
        assert!(model.is_template("a.test", "Free shipping on orders over $50"));
    }
}
