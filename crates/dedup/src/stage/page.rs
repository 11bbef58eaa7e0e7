//! The first half of the stage: a page analysed against its host's template model, on any
//! thread, before it is judged.

use super::{
    Analyzer, Arc, BlockKey, ExactKey, Extracted, Lap, Mutex, PageAnalysis, PoisonError, Prepared,
    Stage, TemplateModel, link_keys, mask_digits,
};

/// Fewer characters of its own than this (once its host's template is removed), and a page
/// is judged by exact key only ([`PageAnalysis::little_text`]).
pub(super) const MIN_OWN_TEXT: usize = 100;
/// The keys of a page's blocks, as the template model knows them.
pub fn block_keys(page: &Extracted) -> Vec<BlockKey> {
    page.extraction
        .iter()
        .flat_map(|e| &e.blocks)
        .map(|b| BlockKey::of(&b.text))
        .collect()
}

/// The first half of the stage: the host template model and the analyzer. Clones share the
/// model, so pages can be analysed on many threads while the stage judges on one.
#[derive(Clone)]
pub struct PageAnalyzer {
    pub(super) analyzer: Arc<Analyzer>,
    /// Per-host repeated blocks, fed with every page.
    pub(super) templates: Arc<Mutex<TemplateModel>>,
}

impl PageAnalyzer {
    /// The analyzer.
    pub fn analyzer(&self) -> &Arc<Analyzer> {
        &self.analyzer
    }

    /// The page as the stage fingerprints it: the host's template model learns its blocks,
    /// and its text loses them (main text without template blocks; when extraction chose
    /// little or only template, all the page's blocks but the template). When even that text
    /// is short, the page has [little text](PageAnalysis::little_text) and is fingerprinted
    /// by its title, main text and link targets. Then tokenized, once.
    pub fn analyze(&self, host: &str, mut page: Extracted) -> PageAnalysis {
        let mut lap = Lap::start();
        let marks = page.extraction.as_ref().map(|_| {
            // A panic elsewhere cannot leave the counts half-updated in a way that matters.
            let mut templates = self
                .templates
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            templates.observe_and_mark(host, &block_keys(&page))
        });
        let own = page
            .extraction
            .as_ref()
            .zip(marks.as_deref())
            .map(|(extraction, marks)| own_text(extraction, marks));
        lap.split(&mut page.times, Stage::Template);
        finish_analysis(&self.analyzer, page, own)
    }
}

/// [`PageAnalyzer::analyze`] with the page's template blocks already marked, one flag per
/// block ([`TemplateModel::observe_and_mark`] over its [`block_keys`]): pages shown to the
/// model in order by one thread can then be analysed on many, with the same result as one
/// after the other.
pub fn analyze_marked(analyzer: &Analyzer, mut page: Extracted, marks: &[bool]) -> PageAnalysis {
    let mut lap = Lap::start();
    let own = page
        .extraction
        .as_ref()
        .map(|extraction| own_text(extraction, marks));
    lap.split(&mut page.times, Stage::Template);
    finish_analysis(analyzer, page, own)
}

/// A page's own text: its main text without its template blocks (`marks`, one per block);
/// when extraction chose a listing or only template, all its blocks but the template.
/// With it, the characters of the blocks it would have had but for the template.
pub(super) fn own_text(extraction: &nearcrawl_extract::Extraction, marks: &[bool]) -> OwnText {
    let own = |in_content_only: bool| -> OwnText {
        let (mut text, mut template_chars) = (String::new(), 0);
        for (block, &template) in extraction.blocks.iter().zip(marks) {
            if in_content_only && !block.in_content {
                continue;
            }
            if template {
                template_chars += block.text.chars().count();
                continue;
            }
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&block.text);
        }
        OwnText {
            text,
            template_chars,
        }
    };
    let text = own(true);
    if extraction.listing || text.text.trim().is_empty() {
        // A listing (whose content extraction chose at random: one section of a table of
        // contents, or none) or a page whose content is all template: the page's other
        // blocks are its own too. Not for a short article: its navigation would make it look
        // like every other short article of its section.
        own(false)
    } else {
        text
    }
}

/// A page's own text ([`own_text`]) and the characters its host's template took from it.
pub(super) struct OwnText {
    text: String,
    template_chars: usize,
}

/// The rest of [`PageAnalyzer::analyze`] once the page's own text (HTML pages) is known.
pub(super) fn finish_analysis(
    analyzer: &Analyzer,
    page: Extracted,
    own: Option<OwnText>,
) -> PageAnalysis {
    let template_chars = own.as_ref().map(|o| o.template_chars).filter(|&n| n > 0);
    let mut analysis = judged_text(analyzer, page, own);
    analysis.template_chars = template_chars;
    // Computed here, on the analysing thread, not on the one that judges.
    analysis.link_keys = analysis
        .facts
        .as_ref()
        .map(|facts| link_keys(&facts.base, &facts.links));
    analysis
}

/// [`finish_analysis`] but for the template's share.
pub(super) fn judged_text(
    analyzer: &Analyzer,
    mut page: Extracted,
    own: Option<OwnText>,
) -> PageAnalysis {
    if let Some(OwnText { text, .. }) = own {
        let own_chars = text.chars().count();
        if own_chars >= MIN_OWN_TEXT {
            page.text = text;
        } else {
            // Too little text of its own to compare: judged by exact key only, over what the
            // page does have (its title, its text, where its links lead, digits masked), so
            // two section index pages of one manual are not "exact" copies of each other. Its
            // main text's own key still finds a kept page it copies whole (a story copied on
            // its own host, whose blocks are then template).
            let main_key = ExactKey::of(&nearcrawl_text::tokenize(&page.text));
            page.text = little_text_key(&page);
            let mut analysis = analyzer.analyze(page);
            analysis.little_text = Some(own_chars);
            analysis.main_key = Some(main_key);
            return analysis;
        }
    }
    let mut analysis = analyzer.analyze(page);
    // What verification will need, computed here, on the analysing thread, not on the one
    // that judges (pages with little text are never verified).
    if analyzer.config().verify && analysis.little_text.is_none() {
        let mut lap = Lap::start();
        analysis.prepared = Some(Prepared::of(&analysis));
        lap.split(&mut analysis.times, Stage::Verify);
    }
    analysis
}

/// The text a page with little text of its own is judged by: its title, its text and the
/// targets of its links (path and query, in order), digits masked (two days of an empty
/// calendar are copies; two section index pages of a manual are not).
pub(super) fn little_text_key(page: &Extracted) -> String {
    let mut key = String::new();
    if let Some(facts) = &page.facts {
        key.push_str(facts.title.as_deref().unwrap_or_default());
        key.push('\n');
    }
    key.push_str(&page.text);
    if let Some(facts) = &page.facts {
        facts.for_each_target(|url| {
            key.push('\n');
            key.push_str(url.path());
            if let Some(query) = url.query() {
                key.push('?');
                key.push_str(query);
            }
        });
    }
    mask_digits(&key)
}
