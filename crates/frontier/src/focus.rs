//! Focused crawling: the topic, how relevant a page, an anchor text or a URL is to it, the
//! frontier priority that follows, and the tunnelling budget through off-topic pages.
//!
//! The topic is a tf-idf vector built from up to three sources, each a pseudo-document of
//! the centroid: weighted `terms`, a `description` text, and `examples` (pages whose text the
//! caller supplies). Its IDF is the crawl's own, counted over the pages scored so far in a
//! count-min sketch ([`DocFrequencies`], a fixed mebibyte); the topic vector is recomputed as
//! the counts grow. A page's relevance is the cosine between its tf-idf vector and the topic.
//!
//! A link's priority mixes the relevance of the page that links, the anchor text's and the
//! URL's words', and decays with each off-topic page in a row on the path: off-topic pages
//! are expanded too (tunnelling), up to `tunnel` of them in a row, after on-topic links.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

mod frequencies;

pub use frequencies::DocFrequencies;

/// The `[focus]` section of a job configuration. With no terms, examples or description the
/// crawl is breadth-first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FocusConfig {
    /// Topic terms and their weights (positive). A term is split as the crawler tokenises
    /// (lower-cased, NFKC; Chinese words as jieba splits them); a phrase weighs each word.
    pub terms: BTreeMap<String, f32>,
    /// Example pages of the topic: `http(s)://` URLs (fetched once when the crawl starts)
    /// or files (HTML or plain text). Their tf-idf centroid is the topic.
    pub examples: Vec<String>,
    /// A description of the topic in words, taken as one more example.
    pub description: String,
    /// A page whose relevance (0..1) reaches this is on topic; an off-topic page adds one to
    /// the run of off-topic pages on its path, unless no page found so far reached
    /// `threshold / 0.75` and it reaches 0.75 of the best one (`Relevance::bar`).
    pub threshold: f32,
    /// Off-topic pages in a row whose links are still followed (tunnelling). Seeds are
    /// always expanded.
    pub tunnel: u32,
    /// The share of a link's score taken from its anchor text.
    pub anchor_weight: f32,
    /// The share of a link's score taken from the words of its URL.
    pub url_weight: f32,
    /// One fetch in this many goes to the best URL of the host the crawl has fetched least
    /// from (exploration: a site whose entrance is off topic is still looked into); 0: every
    /// fetch takes the best URL of all.
    pub explore_every: u32,
}

impl Default for FocusConfig {
    /// Breadth-first (no topic). The numbers are the ones measured on the tuning topics of
    /// docs/FOCUSED.md.
    fn default() -> FocusConfig {
        FocusConfig {
            terms: BTreeMap::new(),
            examples: Vec::new(),
            description: String::new(),
            threshold: 0.2,
            tunnel: 3,
            anchor_weight: 0.5,
            url_weight: 0.1,
            explore_every: 4,
        }
    }
}

impl FocusConfig {
    /// Whether a topic is given (else the crawl is breadth-first).
    pub fn is_focused(&self) -> bool {
        self.terms.values().any(|w| *w > 0.0 && w.is_finite())
            || !self.examples.is_empty()
            || !self.description.trim().is_empty()
    }
}

/// The distinct terms of a text and how often each occurs: content words (stop words,
/// numbers and one-letter words left out), keyed by a 64-bit hash of the normalised word,
/// in the order of their hashes. Sorted, not a hash table: a page is written by whoever
/// serves it, and could fill an unseeded table with keys that collide; and a score summed in
/// this order is the same from run to run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TermCounts {
    counts: Vec<(u64, u32)>,
}

impl TermCounts {
    /// The terms of `text`.
    pub fn of(text: &str) -> TermCounts {
        let mut hashes = Vec::new();
        content_words(text, |hash, _| hashes.push(hash));
        TermCounts::of_hashes(hashes)
    }

    /// The words of a URL's host-relative part: `/library/asyncio-task.html?x=1` gives
    /// `library`, `asyncio`, `task`, `x` (file extensions and `index` left out).
    pub fn of_url(url: &url::Url) -> TermCounts {
        TermCounts::of(&url_words(url))
    }

    /// The terms of the words hashed in `hashes`, counted.
    fn of_hashes(mut hashes: Vec<u64>) -> TermCounts {
        hashes.sort_unstable();
        let mut counts: Vec<(u64, u32)> = Vec::with_capacity(hashes.len());
        for hash in hashes {
            match counts.last_mut() {
                Some((last, n)) if *last == hash => *n += 1,
                _ => counts.push((hash, 1)),
            }
        }
        TermCounts { counts }
    }

    /// Distinct terms.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// Whether the text had no content word.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    fn iter(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.counts.iter().copied()
    }
}

/// The words of a URL's host-relative part, separated by spaces ([`TermCounts::of_url`]).
fn url_words(url: &url::Url) -> String {
    let mut words = String::new();
    for word in url.path().split(|c: char| !c.is_alphanumeric()).chain(
        url.query()
            .unwrap_or("")
            .split(|c: char| !c.is_alphanumeric()),
    ) {
        if !URL_NOISE.contains(&word.to_ascii_lowercase().as_str()) {
            words.push_str(word);
            words.push(' ');
        }
    }
    words
}

/// Path words that say nothing about a page.
const URL_NOISE: [&str; 8] = ["html", "htm", "php", "asp", "aspx", "index", "www", "en"];

/// The content words of a text, hashed: tokens as the crawler cuts them, identifiers cut at
/// their underscores too (`mod_proxy_balancer` is about proxies and balancers).
fn content_words(text: &str, mut each: impl FnMut(u64, &str)) {
    let text = if text.contains('_') {
        std::borrow::Cow::Owned(text.replace('_', " "))
    } else {
        std::borrow::Cow::Borrowed(text)
    };
    for token in nearcrawl_text::tokenize(&text).iter() {
        if let Some(hash) = term_hash(token.text) {
            each(hash, token.text);
        }
    }
}

/// The hash of a content word, `None` for stop words, numbers and single letters.
fn term_hash(word: &str) -> Option<u64> {
    let mut chars = word.chars();
    let first = chars.next()?;
    let single = chars.next().is_none();
    if (single && !nearcrawl_text::is_han(first))
        || word.chars().all(|c| c.is_numeric() || c == '.' || c == ',')
        || nearcrawl_text::is_stop_word(word)
    {
        return None;
    }
    Some(xxhash_rust::xxh3::xxh3_64(word.as_bytes()))
}

/// Sublinear term frequency.
fn tf_weight(count: u32) -> f32 {
    1.0 + (count as f32).ln()
}

/// Most terms a topic vector keeps (the heaviest).
const MAX_TOPIC_TERMS: usize = 400;

/// One pseudo-document of the topic: base weights per term (user weights, or sublinear tf).
#[derive(Debug, Clone)]
struct Source {
    weights: FxHashMap<u64, f32>,
}

/// Why a topic cannot be built.
#[derive(Debug, Clone, PartialEq)]
pub struct TopicError(pub String);

impl std::fmt::Display for TopicError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TopicError {}

/// Relevance scoring for a focused crawl: the topic, the crawl's document frequencies and
/// the rules that turn relevance into priorities and expansion.
#[derive(Debug, Clone)]
pub struct Relevance {
    sources: Vec<Source>,
    /// The words of the sources, for [`Relevance::top_terms`].
    words: FxHashMap<u64, String>,
    df: DocFrequencies,
    /// The unit topic vector under the current frequencies.
    topic: FxHashMap<u64, f32>,
    /// Documents counted when the topic vector was last computed.
    refreshed_at: u64,
    threshold: f32,
    /// The highest relevance of a page the crawl found (seeds aside) so far.
    best: f32,
    tunnel: u32,
    anchor_weight: f32,
    url_weight: f32,
}

/// What a focused crawl decides about a fetched page ([`Relevance::assess`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PageFocus {
    /// Its relevance, 0..1.
    pub relevance: f32,
    /// Off-topic pages in a row on the path to it, itself included (0: on topic, or a seed).
    pub off_topic: u32,
    /// Whether its links are followed.
    pub expands: bool,
    /// What it passes on to its links ([`Relevance::potential`]).
    pub potential: f32,
}

/// Priority values: lower is fetched sooner. Breadth-first crawls use the depth.
pub type Priority = u32;

/// The shortest topic term found inside a longer word of a link, and the shortest rest of
/// that word ([`Relevance::link_terms`]).
const MIN_PART: usize = 3;
/// Longer words of a link are not cut into a topic term and a rest.
const MAX_COMPOUND: usize = 32;

/// Of the best relevance found so far, the share a page needs to be on topic while no page
/// has come near the threshold ([`Relevance::bar`]).
const RELATIVE_BAR: f32 = 0.75;

/// How much of its inherited potential an off-topic page passes on.
const TUNNEL_DECAY: f32 = 0.5;

impl Relevance {
    /// Compiles the focus section with the texts of its examples (in the order of
    /// `config.examples`); `Ok(None)` when there is no topic (a breadth-first crawl). An
    /// example without a content word is an error naming it.
    pub fn new(config: &FocusConfig, examples: &[String]) -> Result<Option<Relevance>, TopicError> {
        if !config.is_focused() {
            return Ok(None);
        }
        let mut words = FxHashMap::default();
        let mut sources = Vec::new();
        let mut terms: FxHashMap<u64, f32> = FxHashMap::default();
        for (term, weight) in &config.terms {
            if !(*weight > 0.0 && weight.is_finite()) {
                continue;
            }
            let mut any = false;
            content_words(term, |hash, word| {
                *terms.entry(hash).or_default() += weight;
                words.insert(hash, word.to_string());
                any = true;
            });
            if !any && !term.trim().is_empty() {
                return Err(TopicError(format!(
                    "focus.terms: {term:?} has no content word (stop words, numbers and single \
                     letters do not count)"
                )));
            }
        }
        if !terms.is_empty() {
            sources.push(Source { weights: terms });
        }
        let texts = examples
            .iter()
            .zip(config.examples.iter().map(String::as_str))
            .map(|(text, name)| (text.as_str(), format!("focus.examples: {name}")))
            .chain(
                (!config.description.trim().is_empty())
                    .then(|| (config.description.as_str(), "focus.description".to_string())),
            );
        for (text, name) in texts {
            let mut weights = FxHashMap::default();
            content_words(text, |hash, word| {
                *weights.entry(hash).or_insert(0.0) += 1.0;
                words.entry(hash).or_insert_with(|| word.to_string());
            });
            if weights.is_empty() {
                return Err(TopicError(format!("{name}: no content word in its text")));
            }
            for w in weights.values_mut() {
                *w = tf_weight(*w as u32);
            }
            sources.push(Source { weights });
        }
        let mut relevance = Relevance {
            sources,
            words,
            df: DocFrequencies::default(),
            topic: FxHashMap::default(),
            refreshed_at: 0,
            threshold: config.threshold.clamp(0.0, 1.0),
            best: 0.0,
            tunnel: config.tunnel,
            anchor_weight: config.anchor_weight.clamp(0.0, 1.0),
            url_weight: config
                .url_weight
                .clamp(0.0, 1.0 - config.anchor_weight.clamp(0.0, 1.0)),
        };
        relevance.refresh();
        Ok(Some(relevance))
    }

    /// Recomputes the topic vector under the current document frequencies: the mean of the
    /// sources' unit tf-idf vectors, its heaviest terms kept, made unit again.
    fn refresh(&mut self) {
        let mut centroid: FxHashMap<u64, f32> = FxHashMap::default();
        for source in &self.sources {
            let weighted: Vec<(u64, f32)> = source
                .weights
                .iter()
                .map(|(h, w)| (*h, w * self.df.idf(*h)))
                .collect();
            let norm = weighted.iter().map(|(_, w)| w * w).sum::<f32>().sqrt();
            if norm > 0.0 {
                for (h, w) in weighted {
                    *centroid.entry(h).or_default() += w / norm;
                }
            }
        }
        let mut terms: Vec<(u64, f32)> = centroid.into_iter().collect();
        terms.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        terms.truncate(MAX_TOPIC_TERMS);
        let norm = terms.iter().map(|(_, w)| w * w).sum::<f32>().sqrt();
        self.topic = terms
            .into_iter()
            .map(|(h, w)| (h, if norm > 0.0 { w / norm } else { 0.0 }))
            .collect();
        self.refreshed_at = self.df.documents();
    }

    /// The cosine between a text's tf-idf vector and the topic, in 0..1.
    fn cosine(&self, terms: &TermCounts) -> f32 {
        let (mut dot, mut norm) = (0.0f32, 0.0f32);
        for (hash, count) in terms.iter() {
            let w = tf_weight(count) * self.df.idf(hash);
            norm += w * w;
            if let Some(q) = self.topic.get(&hash) {
                dot += w * q;
            }
        }
        if norm > 0.0 {
            (dot / norm.sqrt()).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// The crawl's document frequencies so far (to keep with the job's state).
    pub fn frequencies(&self) -> &DocFrequencies {
        &self.df
    }

    /// Goes on from document frequencies counted by an earlier run of the job (a resumed
    /// crawl): the topic vector is recomputed under them.
    pub fn resume_with(&mut self, df: DocFrequencies) {
        self.df = df;
        self.refresh();
    }

    /// Counts a fetched page's terms into the crawl's document frequencies and returns its
    /// relevance in 0..1. The topic vector follows the frequencies as they grow (recomputed
    /// each time the pages counted grow by a tenth).
    pub fn observe(&mut self, page: &TermCounts) -> f32 {
        self.df.add(page);
        let n = self.df.documents();
        if n >= self.refreshed_at + 16 + self.refreshed_at / 10 {
            self.refresh();
        }
        self.cosine(page)
    }

    /// Scores a fetched page (its terms counted into the crawl's frequencies) reached through
    /// `off_topic_before` off-topic pages in a row, its parent having passed on `inherited`
    /// (`None`, like `seed`, for a seed: a seed starts no tunnel and is always expanded).
    pub fn assess(
        &mut self,
        page: &TermCounts,
        off_topic_before: u32,
        inherited: Option<f32>,
        seed: bool,
    ) -> PageFocus {
        let relevance = self.observe(page);
        if !seed {
            self.best = self.best.max(relevance);
        }
        let off_topic = if seed {
            0
        } else {
            self.off_topic_run(relevance, off_topic_before)
        };
        PageFocus {
            relevance,
            off_topic,
            expands: self.expands(off_topic, seed),
            potential: self.potential(relevance, inherited.filter(|_| !seed)),
        }
    }

    /// The best relevance of a page found so far (seeds aside), to keep with the job's state.
    pub fn best(&self) -> f32 {
        self.best
    }

    /// Goes on from the best relevance an earlier run of the job found (a resumed crawl).
    pub fn resume_best(&mut self, best: f32) {
        if best.is_finite() {
            self.best = self.best.max(best.clamp(0.0, 1.0));
        }
    }

    /// Relevance of a text in 0..1, the crawl's frequencies unchanged.
    pub fn score(&self, text: &str) -> f32 {
        self.cosine(&TermCounts::of(text))
    }

    /// Whether a page of this relevance is on topic.
    pub fn on_topic(&self, page_score: f32) -> bool {
        page_score >= self.threshold
    }

    /// The relevance a page needs to end a tunnel: the threshold, or less while no page found
    /// so far came near it (a topic of few words, a description, scores every page lower):
    /// [`RELATIVE_BAR`] of the best relevance found. So the crawl does not stop, its tunnels
    /// spent, when its topic's pages all score below the threshold: the best it finds lead on.
    pub fn bar(&self) -> f32 {
        if self.best > 0.0 {
            self.threshold.min(RELATIVE_BAR * self.best)
        } else {
            self.threshold
        }
    }

    /// Off-topic pages in a row on the path to a page of relevance `page_score`, itself
    /// included, when `before` of them led to it: 0 when it reaches the [`Relevance::bar`]
    /// (an on-topic page always does).
    pub fn off_topic_run(&self, page_score: f32, before: u32) -> u32 {
        if page_score > 0.0 && page_score >= self.bar() {
            0
        } else {
            before.saturating_add(1)
        }
    }

    /// Whether the links of a page `run` off-topic pages into a tunnel are followed (a seed's
    /// always are).
    pub fn expands(&self, run: u32, seed: bool) -> bool {
        seed || run <= self.tunnel
    }

    /// What a page of relevance `page_score` passes on to its links (the inherited score of
    /// Hersovici et al.'s shark-search): an on-topic page its relevance, an off-topic page
    /// half of the larger of its relevance and what it was passed (`inherited`), a seed at
    /// least the threshold (`inherited` is `None`: a seed counts as just on topic). So every
    /// tunnel fades with each off-topic page, whether it started at a seed, at a relevant
    /// page or at a page nearly relevant, and the links near the seeds (another site's
    /// entrance) are not starved by a long tunnel through near misses elsewhere.
    pub fn potential(&self, page_score: f32, inherited: Option<f32>) -> f32 {
        match inherited {
            None => page_score.max(self.threshold),
            Some(_) if self.on_topic(page_score) => page_score,
            Some(inherited) => TUNNEL_DECAY * page_score.max(inherited),
        }
    }

    /// The frontier priority of a link to `url` with anchor text `anchor`, followed by the
    /// text `context` (up to the next link: a list's description of its entry), on a page of
    /// [`Relevance::potential`] `potential`: the weighted mean of the potential, the anchor's
    /// relevance (or of the anchor with its context, the larger) and the URL's, the higher
    /// the sooner.
    pub fn link_priority(
        &self,
        potential: f32,
        anchor: &str,
        context: &str,
        url: &url::Url,
    ) -> Priority {
        // The anchor's words, read once; the context's added to them.
        let mut hashes = Vec::new();
        self.link_hashes(anchor, &mut hashes);
        let mut anchor_score = self.cosine(&TermCounts::of_hashes(hashes.clone()));
        if !context.trim().is_empty() {
            self.link_hashes(context, &mut hashes);
            anchor_score = anchor_score.max(self.cosine(&TermCounts::of_hashes(hashes)));
        }
        let url_score = self.cosine(&self.link_terms(&url_words(url)));
        let page_weight = 1.0 - self.anchor_weight - self.url_weight;
        let score = page_weight * potential
            + self.anchor_weight * anchor_score
            + self.url_weight * url_score;
        ((1.0 - score.clamp(0.0, 1.0)) * 1_000_000.0) as Priority
    }

    /// The terms of an anchor text or a URL's words, a word run together from a topic word
    /// and another counted as the topic word: names in links and paths often are
    /// (`sslinfo`, `textsearch`, `asyncio-eventloop`), where a page's text has the words
    /// apart. A word that is no topic term but starts or ends with one of at least
    /// [`MIN_PART`] characters counts as the longest such term.
    fn link_terms(&self, text: &str) -> TermCounts {
        let mut hashes = Vec::new();
        self.link_hashes(text, &mut hashes);
        TermCounts::of_hashes(hashes)
    }

    /// Adds the hashes of the terms of `text`, read as [`Relevance::link_terms`] reads them,
    /// to `hashes`.
    fn link_hashes(&self, text: &str, hashes: &mut Vec<u64>) {
        content_words(text, |hash, word| {
            hashes.push(if self.topic.contains_key(&hash) {
                hash
            } else {
                self.topic_part(word).unwrap_or(hash)
            });
        });
    }

    /// The hash of the longest topic term that `word` starts or ends with, leaving at least
    /// [`MIN_PART`] characters of it out (`None` when there is none).
    fn topic_part(&self, word: &str) -> Option<u64> {
        let len = word.len();
        if !(2 * MIN_PART..=MAX_COMPOUND).contains(&len) {
            return None;
        }
        // Longest first: the prefix and the suffix of each length, as long as the rest of
        // the word is at least MIN_PART bytes and the cut falls between characters.
        (MIN_PART..=len - MIN_PART).rev().find_map(|part| {
            let prefix = word.get(..part);
            let suffix = word.get(len - part..);
            [prefix, suffix]
                .into_iter()
                .flatten()
                .map(|piece| xxhash_rust::xxh3::xxh3_64(piece.as_bytes()))
                .find(|hash| self.topic.contains_key(hash))
        })
    }

    /// The topic's heaviest words under the current frequencies, with their weights (at most
    /// `n`), for the report.
    pub fn top_terms(&self, n: usize) -> Vec<(String, f32)> {
        let mut terms: Vec<(String, f32)> = self
            .topic
            .iter()
            .filter_map(|(h, w)| Some((self.words.get(h)?.clone(), *w)))
            .collect();
        terms.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        terms.truncate(n);
        terms
    }
}

#[cfg(test)]
mod tests;
