//! One page to its analysis.

use nearcrawl_extract::{ContentExtractor, Document, Extraction, LinkReading, PageFacts, decode};
use nearcrawl_fingerprint::{Fingerprint, ShingleSet, simhash};
use nearcrawl_text::{
    ExactKey, FeatureConfig, Tokens, WeightedFeature, Weighting, feature_weights, token_hashes,
    tokenize, weighted_features,
};
use nearcrawl_verify::VerifyConfig;

use crate::timing::{Lap, Stage, StageTimes};
use url::Url;

/// How pages are analysed and compared.
#[derive(Clone, Debug)]
pub struct AnalyzerConfig {
    /// Fingerprint the main content only (`true`) or all visible text.
    pub main_content: bool,
    /// Which features feed the simhash.
    pub features: FeatureConfig,
    /// Where feature weights come from.
    pub weighting: Weighting,
    /// Hamming distance at or under which two simhashes are near (Manku et al.: 3).
    pub max_distance: u32,
    /// Width of the word shingles reported by comparisons.
    pub shingle_width: usize,
    /// Run the LCS verification before calling a pair near.
    pub verify: bool,
    /// Its thresholds.
    pub verify_config: VerifyConfig,
    /// Text fingerprinted per page at most, in bytes: a longer text is cut (at a character
    /// boundary) before tokenizing, so a page of megabytes of text costs no more than one
    /// of this size (0: no limit).
    pub max_text_bytes: usize,
    /// Links kept per page, in document order; the rest are counted, not kept.
    pub max_links: usize,
    /// How the links are read: resolved (a crawl follows them), or left as `href`s until a
    /// page with little text is keyed by its link targets (corpus dedup).
    pub link_reading: LinkReading,
}

/// The LCS verification's thresholds as the crawl uses them: the paper's window and slope,
/// and thresholds chosen on real documentation (the tuning webs of `nearcrawl-lab quality`, see
/// docs/QUALITY.md) instead of the paper's r 0.28 or c 0.7, which call a heavily rewritten
/// chapter or two manual pages sharing their option lists near: similar when the resemble
/// rate r reaches 0.5, or when the shorter page lies wholly inside the other (c = 1).
pub fn verify_config() -> VerifyConfig {
    VerifyConfig {
        min_resemblance: 0.5,
        min_containment: 1.0,
        ..VerifyConfig::default()
    }
}

/// Default [`AnalyzerConfig::max_text_bytes`]: 512 KiB, a long book chapter.
pub const MAX_TEXT_BYTES: usize = 512 << 10;
/// Default [`AnalyzerConfig::max_links`]: above the 27,998 links of the largest page of
/// OpenJDK 17's javadoc (`java/lang/class-use/String.html`).
pub const MAX_LINKS: usize = 50_000;

impl Default for AnalyzerConfig {
    fn default() -> Self {
        AnalyzerConfig {
            main_content: true,
            features: FeatureConfig::default(),
            weighting: Weighting::default(),
            max_distance: 3,
            shingle_width: 4,
            verify: true,
            verify_config: verify_config(),
            max_text_bytes: MAX_TEXT_BYTES,
            max_links: MAX_LINKS,
            link_reading: LinkReading::Full,
        }
    }
}

/// What the dedup stage knows about one page.
#[derive(Clone, Debug)]
pub struct PageAnalysis {
    /// Title, links, canonical URL, robots directives, declared language (HTML pages only).
    pub facts: Option<PageFacts>,
    /// The encoding the page was decoded with.
    pub encoding: &'static str,
    /// The text blocks, content and boilerplate (HTML pages only).
    pub extraction: Option<Extraction>,
    /// The text that was fingerprinted.
    pub text: String,
    /// Its tokens.
    pub tokens: Tokens,
    /// The 64-bit simhash of the features.
    pub simhash: Fingerprint,
    /// The exact-duplicate key of the tokens.
    pub exact_key: ExactKey,
    /// The length of the text before it was cut at `max_text_bytes`, if it was.
    pub text_cut_from: Option<usize>,
    /// Set when the page has too little text of its own for a resemblance to mean anything
    /// (fewer than 100 characters once its host's template is removed, or fewer than
    /// [`MIN_NEAR_TOKENS`] tokens): the characters it has. Such a page is only ever an exact
    /// duplicate, judged over its title, text and link targets.
    pub little_text: Option<usize>,
    /// For a page with little text: the exact key of its main text, before its title and
    /// link targets were added.
    pub main_key: Option<ExactKey>,
    /// Characters of the page's text removed as its host's template (blocks on most of the
    /// host's pages) before it was fingerprinted: what `compare`, which sees one page per
    /// host, keeps, and what may have changed the verdict. `None` when nothing was removed.
    pub template_chars: Option<usize>,
    /// Time spent on the page so far, by stage (decoding to verification).
    pub times: StageTimes,
    /// What verification needs of the page, when it was computed where the page was analysed
    /// (off the thread that judges); the stage computes it otherwise.
    pub prepared: Option<Prepared>,
    /// The keys of its links ([`crate::link_keys`]), what the stage keeps of a unique page
    /// to match a later copy's links with, when computed where the page was analysed; the
    /// stage computes them otherwise.
    pub link_keys: Option<Vec<u64>>,
}

/// What LCS verification needs of a page: its units and its sentence fingerprints, pure
/// functions of its text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prepared {
    /// [`PageAnalysis::units`].
    pub units: Vec<u64>,
    /// Its sentence fingerprints ([`crate::stage_sentence_config`]).
    pub sentences: Vec<u128>,
}

impl Prepared {
    /// Computes them for `analysis`.
    pub fn of(analysis: &PageAnalysis) -> Prepared {
        Prepared {
            units: analysis.units(),
            sentences: nearcrawl_verify::sentence_fingerprints(
                &analysis.text,
                &crate::settings::stage_sentence_config(),
            ),
        }
    }
}

/// Fewer tokens than this, and a page is judged by exact key only.
pub const MIN_NEAR_TOKENS: usize = 30;

impl PageAnalysis {
    /// Frees what only judging the page needed (its text blocks, tokens and verification
    /// units), keeping its facts, text, fingerprints and keys: for a page judged on one
    /// thread and decided on another, which would otherwise free them.
    pub fn shed_judging(&mut self) {
        self.extraction = None;
        self.tokens = Tokens::default();
        self.prepared = None;
    }

    /// The units of LCS verification: one hash per token (stop words included), and one per
    /// character of a Han token, as the paper compares characters: a segmenter's word is one
    /// or several characters, and a translated paragraph should weigh what it holds, not how
    /// it was segmented ([`nearcrawl_text::token_unit_hashes`]).
    pub fn units(&self) -> Vec<u64> {
        nearcrawl_text::token_unit_hashes(&self.tokens)
    }

    /// The word shingles of the content tokens.
    pub fn shingles(&self, config: &AnalyzerConfig) -> ShingleSet {
        let hashes = token_hashes(&self.tokens, &config.features);
        ShingleSet::from_token_hashes(&hashes, config.shingle_width.max(1))
            .unwrap_or_else(|_| ShingleSet::from_hashes(Vec::new()))
    }

    /// Best guess of the language: declared, else `zh` when most tokens are Han, else
    /// `und` (undetermined).
    pub fn language(&self) -> String {
        if let Some(declared) = self.facts.as_ref().and_then(|f| f.language.clone()) {
            return declared;
        }
        let han = self
            .tokens
            .iter()
            .filter(|t| t.kind == nearcrawl_text::TokenKind::Han)
            .count();
        if han * 2 > self.tokens.len() && han > 0 {
            "zh".into()
        } else {
            "und".into()
        }
    }
}

/// Runs the page-understanding pipeline. Build one per process (or per thread) and reuse it.
pub struct Analyzer {
    config: AnalyzerConfig,
    extractor: ContentExtractor,
}

impl Analyzer {
    /// An analyzer with this configuration.
    pub fn new(config: AnalyzerConfig) -> Analyzer {
        Analyzer {
            config,
            extractor: ContentExtractor::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &AnalyzerConfig {
        &self.config
    }

    /// Analyses an HTML page fetched from `url` (`content_type`: the HTTP header, if any).
    pub fn analyze_html(
        &self,
        bytes: &[u8],
        content_type: Option<&str>,
        url: &Url,
    ) -> PageAnalysis {
        self.analyze(self.extract_html(bytes, content_type, url))
    }

    /// The first half of [`Analyzer::analyze_html`]: decoding, parsing, page facts and the
    /// main content, without tokenizing. The dedup stage takes a page here, removes its
    /// host's template from the text, and then [analyses](Analyzer::analyze) it once.
    pub fn extract_html(&self, bytes: &[u8], content_type: Option<&str>, url: &Url) -> Extracted {
        let tld = url
            .host_str()
            .and_then(|h| h.rsplit('.').next())
            .map(str::to_owned);
        let mut times = StageTimes::default();
        let mut lap = Lap::start();
        let decoded = decode(bytes, content_type, tld.as_deref());
        lap.split(&mut times, Stage::Decode);
        let doc = Document::parse(&decoded.text);
        let facts =
            PageFacts::read_links(&doc, url, self.config.max_links, self.config.link_reading);
        lap.split(&mut times, Stage::Parse);
        let extraction = self.extractor.extract(&doc);
        let main = extraction.main_text();
        let text = if self.config.main_content && !main.trim().is_empty() {
            main
        } else {
            extraction.full_text()
        };
        lap.split(&mut times, Stage::Extract);
        Extracted {
            facts: Some(facts),
            encoding: decoded.encoding.name(),
            extraction: Some(extraction),
            text,
            times,
        }
    }

    /// A fetched body: plain text when its `Content-Type` says `text/plain` (decoded by its
    /// charset), else HTML ([`Analyzer::extract_html`]).
    pub fn extract_body(&self, bytes: &[u8], content_type: Option<&str>, url: &Url) -> Extracted {
        if content_type.is_some_and(|ct| ct.trim_start().starts_with("text/plain")) {
            return Extracted::plain(decode(bytes, content_type, None).text);
        }
        self.extract_html(bytes, content_type, url)
    }

    /// A document read from the file at `path`: HTML when its extension or first bytes say
    /// so (links resolved against its `file:` URL), else plain text (UTF-8, or decoded by
    /// detection). The error says why the path has no `file:` URL.
    pub fn extract_file(&self, path: &std::path::Path, bytes: &[u8]) -> Result<Extracted, String> {
        if !looks_like_html(path, bytes) {
            let text = match std::str::from_utf8(bytes) {
                Ok(text) => text.to_owned(),
                Err(_) => decode(bytes, None, None).text,
            };
            return Ok(Extracted::plain(text));
        }
        let absolute = std::path::absolute(path)
            .map_err(|e| format!("{}: cannot resolve: {e}", path.display()))?;
        let url = Url::from_file_path(&absolute)
            .map_err(|()| format!("{}: cannot be turned into a file URL", path.display()))?;
        Ok(self.extract_html(bytes, None, &url))
    }

    /// Tokenizes an extracted page and fingerprints its text.
    pub fn analyze(&self, page: Extracted) -> PageAnalysis {
        let mut analysis = self.analyze_text(&page.text);
        analysis.times.merge(&page.times);
        analysis.facts = page.facts;
        analysis.encoding = page.encoding;
        analysis.extraction = page.extraction;
        analysis
    }

    /// The weighted features of an analysed page, heaviest first, with their text (what
    /// its simhash is made of; the crawl computes only their hashes and weights).
    pub fn features(&self, analysis: &PageAnalysis) -> Vec<WeightedFeature> {
        weighted_features(
            &analysis.tokens,
            &self.config.features,
            &self.config.weighting,
        )
    }

    /// Analyses plain text.
    pub fn analyze_text(&self, text: &str) -> PageAnalysis {
        let max = self.config.max_text_bytes;
        let (text, text_cut_from) = if max > 0 && text.len() > max {
            let mut end = max;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            (&text[..end], Some(text.len()))
        } else {
            (text, None)
        };
        let mut times = StageTimes::default();
        let mut lap = Lap::start();
        let tokens = tokenize(text);
        lap.split(&mut times, Stage::Tokenize);
        let simhash = simhash(feature_weights(
            &tokens,
            &self.config.features,
            &self.config.weighting,
        ));
        let exact_key = ExactKey::of(&tokens);
        lap.split(&mut times, Stage::Features);
        let little_text = (tokens.len() < MIN_NEAR_TOKENS).then(|| text.chars().count());
        PageAnalysis {
            times,
            prepared: None,
            link_keys: None,
            little_text,
            main_key: None,
            template_chars: None,
            facts: None,
            encoding: "UTF-8",
            extraction: None,
            text: text.to_owned(),
            tokens,
            simhash,
            exact_key,
            text_cut_from,
        }
    }

    /// The verification units of a text ([`PageAnalysis::units`]) without the rest of an
    /// analysis: what an original needs when it is verified against.
    pub fn units_of(&self, text: &str) -> Vec<u64> {
        nearcrawl_text::unit_hashes(text)
    }
}

/// A page decoded, parsed and reduced to the text to fingerprint, not yet tokenized.
#[derive(Clone, Debug)]
pub struct Extracted {
    /// Title, links, canonical URL, robots directives, declared language (HTML pages only).
    pub facts: Option<PageFacts>,
    /// The encoding the page was decoded with.
    pub encoding: &'static str,
    /// The text blocks, content and boilerplate (HTML pages only).
    pub extraction: Option<Extraction>,
    /// The text to fingerprint: the main content (or all visible text).
    pub text: String,
    /// Time spent so far, by stage (decoding, parsing, extraction).
    pub times: StageTimes,
}

impl Extracted {
    /// A plain-text page.
    pub fn plain(text: String) -> Extracted {
        Extracted {
            facts: None,
            encoding: "UTF-8",
            extraction: None,
            text,
            times: StageTimes::default(),
        }
    }
}

/// Whether a file holds HTML: its extension (`.html`, `.htm`, `.xhtml`) or its first bytes
/// (a doctype, `<html` or `<body`) say so.
fn looks_like_html(path: &std::path::Path, bytes: &[u8]) -> bool {
    let by_extension = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "html" | "htm" | "xhtml"));
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(512)]).to_ascii_lowercase();
    let trimmed = head.trim_start_matches('\u{feff}').trim_start();
    by_extension
        || trimmed.starts_with("<!doctype html")
        || trimmed.starts_with("<html")
        || head.contains("<body")
}

#[cfg(test)]
mod tests {
    use super::*;
    use nearcrawl_fingerprint::feature_hash;
    use nearcrawl_text::{Token, TokenKind};

    proptest::proptest! {
        /// An original's units, computed from its text alone, are the units of its tokens.
        #[test]
        fn units_of_text_are_units_of_tokens(text in "[a-zA-Z0-9 .,'’é\\n北京大学学习网页去重很快。，]{0,80}") {
            proptest::prop_assert_eq!(
                nearcrawl_text::unit_hashes(&text),
                nearcrawl_text::token_unit_hashes(&tokenize(&text))
            );
        }
    }

    #[test]
    fn long_texts_are_cut_at_a_character_boundary_and_say_so() {
        let analyzer = Analyzer::new(AnalyzerConfig {
            max_text_bytes: 10,
            ..AnalyzerConfig::default()
        });
        // "é" is two bytes: byte 10 falls inside the sixth one.
        let text = "ééééééééé tail words";
        let analysis = analyzer.analyze_text(text);
        assert_eq!(analysis.text, "ééééé");
        assert_eq!(analysis.text_cut_from, Some(text.len()));
        assert_eq!(analysis.simhash, analyzer.analyze_text("ééééé").simhash);
        let short = analyzer.analyze_text("short");
        assert_eq!((short.text.as_str(), short.text_cut_from), ("short", None));
        let unlimited = Analyzer::new(AnalyzerConfig {
            max_text_bytes: 0,
            ..AnalyzerConfig::default()
        });
        assert_eq!(unlimited.analyze_text(text).text_cut_from, None);
    }

    #[test]
    fn han_text_is_compared_by_character() {
        let tokens = tokenize("Debian 管理员手册 guide");
        let (han, other): (Vec<Token<'_>>, Vec<Token<'_>>) =
            tokens.iter().partition(|t| t.kind == TokenKind::Han);
        assert!(!han.is_empty() && other.len() == 2);
        let units = nearcrawl_text::token_unit_hashes(&tokens);
        assert_eq!(units.len(), 2 + 5);
        assert_eq!(units[1], feature_hash("管".as_bytes()));
        assert_eq!(units[6], feature_hash(b"guide"));
    }
}
