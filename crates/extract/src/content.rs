//! Main content: which text blocks of a page are its article and which are boilerplate.
//!
//! The method follows Readability's scoring, on the compact tree of [`Document`]:
//! 1. Elements that never hold an article are set aside: scripts, forms' controls, `nav`,
//!    `aside`, `footer`, hidden elements, and elements whose class or id says "comment",
//!    "sidebar", "share", "related" and the like (unless it also says "article", "content"...).
//! 2. The remaining text is cut into blocks (the nearest block-level element of each piece of
//!    text). Each block of 25 characters or more scores 1 + its commas + one per 100
//!    characters (at most 3), and hands that score to its parent (whole), grandparent (half)
//!    and further ancestors (a third per level).
//! 3. Each ancestor's score is scaled by (1 - link density); the best one is the article root,
//!    joined by siblings that score nearly as well or read like paragraphs.
//! 4. Inside the chosen elements, lists, tables and boxes that look like link farms, image
//!    galleries or forms are dropped.

use aho_corasick::AhoCorasick;

use crate::html::{Document, NodeId, push_collapsed};
use crate::tag::{Attr, Tag};

/// A piece of a page's text delimited by block-level elements.
#[derive(Clone, Debug, PartialEq)]
pub struct TextBlock {
    /// The block-level element holding the text.
    pub node: NodeId,
    /// Its tag.
    pub tag: Tag,
    /// The text, whitespace collapsed.
    pub text: String,
    /// Part of the main content (`false`: boilerplate).
    pub in_content: bool,
}

/// The text blocks of a page, each marked as main content or boilerplate.
#[derive(Clone, Debug, Default)]
pub struct Extraction {
    /// Every non-empty text block in document order (script, style and hidden text excluded).
    pub blocks: Vec<TextBlock>,
}

impl Extraction {
    /// The main content: its blocks joined by newlines.
    pub fn main_text(&self) -> String {
        join(self.blocks.iter().filter(|b| b.in_content))
    }

    /// Everything else: the boilerplate blocks joined by newlines.
    pub fn boilerplate_text(&self) -> String {
        join(self.blocks.iter().filter(|b| !b.in_content))
    }

    /// All visible text, main content and boilerplate alike.
    pub fn full_text(&self) -> String {
        join(self.blocks.iter())
    }
}

fn join<'a>(blocks: impl Iterator<Item = &'a TextBlock>) -> String {
    let mut out = String::new();
    for block in blocks {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&block.text);
    }
    out
}

/// Class and id fragments, matched case-insensitively anywhere in `class` + `id`.
struct ClassPatterns {
    matcher: AhoCorasick,
    kinds: Vec<PatternKind>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PatternKind {
    /// Never an article, unless also [`PatternKind::Maybe`].
    Unlikely,
    /// Rescues an unlikely element.
    Maybe,
    /// Adds 25 to the class weight.
    Positive,
    /// Subtracts 25 from the class weight.
    Negative,
}

const UNLIKELY: &[&str] = &[
    "-ad-", "ai2html", "banner", "breadcrumb", "combx", "comment", "community", "cover-wrap", "disqus", "extra",
    "footer", "gdpr", "header", "legends", "menu", "related", "remark", "replies", "rss", "shoutbox", "sidebar",
    "skyscraper", "social", "sponsor", "supplemental", "ad-break", "agegate", "pagination", "pager", "popup",
    "yom-remote", "newsletter", "cookie", "subscribe", "signup", "share", "recirc", "promo",
];
const MAYBE: &[&str] = &["and", "article", "body", "column", "content", "main", "shadow"];
const POSITIVE: &[&str] = &["article", "body", "content", "entry", "hentry", "h-entry", "main", "page", "post", "text", "blog", "story"];
const NEGATIVE: &[&str] = &[
    "-ad-", "hidden", "banner", "combx", "comment", "com-", "contact", "foot", "footnote", "gdpr", "masthead",
    "media", "meta", "outbrain", "promo", "related", "scroll", "share", "shoutbox", "sidebar", "skyscraper",
    "sponsor", "shopping", "tags", "tool", "widget", "byline", "author", "caption", "credit",
];

impl ClassPatterns {
    fn new() -> ClassPatterns {
        let groups = [
            (UNLIKELY, PatternKind::Unlikely),
            (MAYBE, PatternKind::Maybe),
            (POSITIVE, PatternKind::Positive),
            (NEGATIVE, PatternKind::Negative),
        ];
        let mut patterns = Vec::new();
        let mut kinds = Vec::new();
        for (words, kind) in groups {
            for word in words {
                patterns.push(*word);
                kinds.push(kind);
            }
        }
        let matcher = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&patterns)
            .expect("the class patterns are a small fixed set");
        ClassPatterns { matcher, kinds }
    }

    /// Which kinds of fragment `value` contains, as a bit set indexed by `PatternKind as u8`.
    fn kinds_in(&self, value: &str) -> u8 {
        let mut found = 0u8;
        for m in self.matcher.find_overlapping_iter(value) {
            found |= 1 << self.kinds[m.pattern().as_usize()] as u8;
        }
        found
    }
}

fn has(kinds: u8, kind: PatternKind) -> bool {
    kinds & (1 << kind as u8) != 0
}

/// Separates main content from boilerplate. Build once and reuse: it holds the compiled
/// class-name patterns.
pub struct ContentExtractor {
    patterns: ClassPatterns,
}

impl Default for ContentExtractor {
    fn default() -> Self {
        ContentExtractor::new()
    }
}

/// Which of the rules an extraction attempt applies.
#[derive(Clone, Copy)]
struct Rules {
    strip_unlikely: bool,
    class_weights: bool,
    clean: bool,
}

impl Rules {
    const ALL: Rules = Rules { strip_unlikely: true, class_weights: true, clean: true };
    const KEEP_UNLIKELY: Rules = Rules { strip_unlikely: false, ..Rules::ALL };
    const NO_CLASS_WEIGHTS: Rules = Rules { class_weights: false, ..Rules::KEEP_UNLIKELY };
    const NO_CLEANING: Rules = Rules { clean: false, ..Rules::NO_CLASS_WEIGHTS };
}

/// Per-element facts gathered in the passes over the tree.
#[derive(Clone, Copy, Default)]
struct Stats {
    /// Set aside: this element or an ancestor can never be content.
    excluded: bool,
    /// Inside an `<a>`.
    in_link: bool,
    /// Readability's class weight (+-25 per positive/negative class and id).
    class_weight: f32,
    /// Non-whitespace characters of text in the subtree (excluded parts not counted).
    chars: u32,
    /// Of those, characters inside links.
    link_chars: u32,
    /// Commas in the subtree.
    commas: u32,
    /// Content score handed up from the blocks below.
    score: f32,
    /// Whether `score` was initialised (the element is a candidate).
    candidate: bool,
}

impl ContentExtractor {
    /// Compiles the patterns.
    pub fn new() -> ContentExtractor {
        ContentExtractor { patterns: ClassPatterns::new() }
    }

    /// Splits `doc` into text blocks and marks the main content.
    ///
    /// When the content found is shorter than 500 characters, the extraction is retried with
    /// fewer rules (as Readability does): first keeping "unlikely" classes, then ignoring class
    /// weights, then without conditional cleaning; the longest result wins.
    pub fn extract(&self, doc: &Document) -> Extraction {
        let mut best: Option<(usize, Extraction)> = None;
        for rules in [Rules::ALL, Rules::KEEP_UNLIKELY, Rules::NO_CLASS_WEIGHTS, Rules::NO_CLEANING] {
            let extraction = self.extract_with(doc, rules);
            let length: usize = extraction.blocks.iter().filter(|b| b.in_content).map(|b| b.text.len()).sum();
            if length >= 500 {
                return extraction;
            }
            if best.as_ref().is_none_or(|(l, _)| length > *l) {
                best = Some((length, extraction));
            }
        }
        best.map(|(_, e)| e).unwrap_or_default()
    }

    fn extract_with(&self, doc: &Document, rules: Rules) -> Extraction {
        let n = doc.len();
        let mut stats = vec![Stats::default(); n];
        let mut blocks: Vec<TextBlock> = Vec::new();

        // Forward pass: exclusion, link context, class weights, block text.
        let mut block_of = vec![u32::MAX; n];
        for id in 1..n as NodeId {
            let node = doc.node(id);
            let parent = stats[node.parent as usize];
            let mut s = Stats { excluded: parent.excluded, in_link: parent.in_link, ..Stats::default() };
            match node.tag {
                Some(tag) => {
                    let (excluded, weight) = self.judge_element(doc, id, tag, rules);
                    s.excluded |= excluded;
                    s.class_weight = weight;
                    s.in_link |= tag == Tag::A;
                    if tag == Tag::Br && !s.excluded {
                        let owner = block_owner(doc, id);
                        if let Some(block) = blocks.get_mut(block_of[owner as usize] as usize) {
                            push_collapsed(&mut block.text, " ");
                        }
                    }
                }
                None if !s.excluded => {
                    let text = doc.text(id);
                    let owner = block_owner(doc, id);
                    let chars = text.chars().filter(|c| !c.is_whitespace()).count() as u32;
                    if chars > 0 {
                        if block_of[owner as usize] == u32::MAX {
                            block_of[owner as usize] = blocks.len() as u32;
                            let tag = doc.node(owner).tag.unwrap_or(Tag::Other);
                            blocks.push(TextBlock { node: owner, tag, text: String::new(), in_content: false });
                        }
                        push_collapsed(&mut blocks[block_of[owner as usize] as usize].text, text);
                    } else if let Some(block) = blocks.get_mut(block_of[owner as usize] as usize) {
                        push_collapsed(&mut block.text, " ");
                    }
                    s.chars = chars;
                    s.link_chars = if s.in_link { chars } else { 0 };
                    s.commas = text.chars().filter(|&c| c == ',' || c == '\u{ff0c}' || c == '\u{3001}').count() as u32;
                }
                None => {}
            }
            stats[id as usize] = s;
        }
        for block in &mut blocks {
            block.text.truncate(block.text.trim_end().len());
        }

        // Reverse pass: subtree totals.
        for id in (1..n).rev() {
            let parent = doc.node(id as NodeId).parent as usize;
            let s = stats[id];
            stats[parent].chars += s.chars;
            stats[parent].link_chars += s.link_chars;
            stats[parent].commas += s.commas;
        }

        // Score blocks into their ancestors.
        for block in &blocks {
            let b = stats[block.node as usize];
            let own_chars = block.text.chars().filter(|c| !c.is_whitespace()).count();
            if own_chars < 25 || b.excluded {
                continue;
            }
            let commas = block.text.chars().filter(|&c| c == ',' || c == '\u{ff0c}' || c == '\u{3001}').count();
            let score = 1.0 + commas as f32 + (own_chars as f32 / 100.0).min(3.0);
            let mut ancestor = doc.node(block.node).parent;
            for level in 0..5 {
                if ancestor == 0 {
                    break;
                }
                let divider = match level {
                    0 => 1.0,
                    1 => 2.0,
                    _ => level as f32 * 3.0,
                };
                let a = &mut stats[ancestor as usize];
                if !a.candidate {
                    a.candidate = true;
                    a.score = initial_score(doc.node(ancestor).tag.unwrap_or(Tag::Other)) + a.class_weight;
                }
                a.score += score / divider;
                ancestor = doc.node(ancestor).parent;
            }
        }

        let Some(top) = self.top_candidate(doc, &mut stats) else {
            return Extraction { blocks };
        };
        let chosen = self.with_siblings(doc, &stats, top);
        let mut keep = vec![false; n];
        for root in chosen {
            for id in root..doc.node(root).end {
                keep[id as usize] = true;
            }
        }
        if rules.clean {
            self.clean(doc, &stats, top, &mut keep);
        }
        for block in &mut blocks {
            block.in_content = keep[block.node as usize] && !stats[block.node as usize].excluded;
        }
        Extraction { blocks }
    }

    /// Whether an element is set aside, and its class weight.
    fn judge_element(&self, doc: &Document, id: NodeId, tag: Tag, rules: Rules) -> (bool, f32) {
        use Tag::*;
        let by_tag = matches!(
            tag,
            Script | Style | Noscript | Template | Svg | Math | Iframe | Object | Embed | Button | Select
                | Input | Textarea | Nav | Aside | Footer | Head | Title | Canvas | Video | Audio | Dialog
                | Option | Label | Form | Figure | Figcaption | Menu
        );
        let mut kinds = 0u8;
        let mut weight = 0.0;
        let mut hidden = false;
        for attribute in doc.attributes(id) {
            let value = doc.value(attribute);
            match attribute.name {
                Attr::Class | Attr::Id => {
                    let k = self.patterns.kinds_in(value);
                    kinds |= k;
                    if has(k, PatternKind::Positive) {
                        weight += 25.0;
                    }
                    if has(k, PatternKind::Negative) {
                        weight -= 25.0;
                    }
                }
                Attr::Hidden => hidden = true,
                Attr::AriaHidden => hidden |= value.trim().eq_ignore_ascii_case("true"),
                Attr::Style => {
                    let style = value.to_ascii_lowercase();
                    let compact: String = style.chars().filter(|c| !c.is_whitespace()).collect();
                    hidden |= compact.contains("display:none") || compact.contains("visibility:hidden");
                }
                Attr::Role => {
                    hidden |= matches!(
                        value.trim(),
                        "navigation" | "complementary" | "menu" | "menubar" | "alert" | "alertdialog" | "dialog" | "contentinfo" | "banner"
                    );
                }
                _ => {}
            }
        }
        let structural = matches!(tag, Html | Body | Article | Main);
        let unlikely =
            rules.strip_unlikely && has(kinds, PatternKind::Unlikely) && !has(kinds, PatternKind::Maybe) && !structural;
        (by_tag || hidden || unlikely, if rules.class_weights { weight } else { 0.0 })
    }

    fn top_candidate(&self, doc: &Document, stats: &mut [Stats]) -> Option<NodeId> {
        let mut best: Option<(NodeId, f32)> = None;
        for (id, s) in stats.iter_mut().enumerate() {
            if !s.candidate {
                continue;
            }
            let density = link_density(s);
            s.score *= 1.0 - density;
            if best.is_none_or(|(_, score)| s.score > score) {
                best = Some((id as NodeId, s.score));
            }
        }
        let (mut top, top_score) = best?;
        // Climb while the parent holds clearly more of the scored text (the top candidate is
        // often one column of a split article).
        let mut last_score = top_score;
        let threshold = top_score / 3.0;
        let mut parent = doc.node(top).parent;
        while parent != 0 && doc.node(parent).tag != Some(Tag::Body) {
            let p = stats[parent as usize];
            if !p.candidate {
                parent = doc.node(parent).parent;
                continue;
            }
            if p.score < threshold {
                break;
            }
            if p.score > last_score {
                top = parent;
                break;
            }
            last_score = p.score;
            parent = doc.node(parent).parent;
        }
        // A lone child is the same content as its parent: take the parent.
        loop {
            let parent = doc.node(top).parent;
            if parent == 0 || doc.node(parent).tag == Some(Tag::Body) || doc.children(parent).count() != 1 {
                break;
            }
            top = parent;
        }
        Some(top)
    }

    /// The top candidate and those of its siblings that belong to the article.
    fn with_siblings(&self, doc: &Document, stats: &[Stats], top: NodeId) -> Vec<NodeId> {
        let parent = doc.node(top).parent;
        if parent == 0 {
            return vec![top];
        }
        let top_stats = stats[top as usize];
        let threshold = (top_stats.score * 0.2).max(10.0);
        let top_class = doc.attr(top, Attr::Class).unwrap_or("");
        let mut chosen = Vec::new();
        for sibling in doc.children(parent) {
            let s = stats[sibling as usize];
            if sibling == top {
                chosen.push(sibling);
                continue;
            }
            if s.excluded || doc.node(sibling).tag.is_none() {
                continue;
            }
            let mut bonus = 0.0;
            if !top_class.is_empty() && doc.attr(sibling, Attr::Class) == Some(top_class) {
                bonus = top_stats.score * 0.2;
            }
            let append = if s.candidate && s.score + bonus >= threshold {
                true
            } else if doc.node(sibling).tag == Some(Tag::P) {
                let density = link_density(&s);
                let text = doc.subtree_text(sibling);
                (s.chars > 80 && density < 0.25)
                    || (s.chars > 0 && s.chars <= 80 && density == 0.0 && (text.contains(". ") || text.ends_with('.')))
            } else {
                false
            };
            if append {
                chosen.push(sibling);
            }
        }
        chosen
    }

    /// Drops link farms, galleries and forms inside the chosen content (Readability's
    /// "clean conditionally").
    fn clean(&self, doc: &Document, stats: &[Stats], top: NodeId, keep: &mut [bool]) {
        use Tag::*;
        let n = doc.len() as NodeId;
        let mut id = 0;
        while id < n {
            let node = doc.node(id);
            let removable = matches!(node.tag, Some(Table | Ul | Ol | Div | Section | Header | Dl))
                && keep[id as usize]
                && id != top;
            if !removable || !self.looks_like_boilerplate(doc, stats, id) {
                id += 1;
                continue;
            }
            for i in id..node.end {
                keep[i as usize] = false;
            }
            id = node.end;
        }
    }

    fn looks_like_boilerplate(&self, doc: &Document, stats: &[Stats], id: NodeId) -> bool {
        let s = stats[id as usize];
        if s.class_weight < 0.0 {
            return true;
        }
        if s.commas >= 10 {
            return false;
        }
        let (mut paragraphs, mut images, mut items, mut inputs, mut headings) = (0u32, 0u32, 0u32, 0u32, 0u32);
        for i in id + 1..doc.node(id).end {
            match doc.node(i).tag {
                Some(Tag::P) => paragraphs += 1,
                Some(Tag::Img) => images += 1,
                Some(Tag::Li) => items += 1,
                Some(Tag::Input) => inputs += 1,
                Some(t) if t.is_heading() => headings += 1,
                _ => {}
            }
        }
        let _ = headings;
        let tag = doc.node(id).tag.unwrap_or(Tag::Other);
        let is_list = matches!(tag, Tag::Ul | Tag::Ol);
        let density = link_density(&s);
        let weight = s.class_weight;
        (images > 1 && (paragraphs as f32) / (images as f32) < 0.5 && !is_list)
            || (!is_list && items > paragraphs + 100)
            || (inputs > paragraphs / 3)
            || (!is_list && s.chars < 25 && (images == 0 || images > 2))
            || (weight < 25.0 && density > 0.2)
            || (weight >= 25.0 && density > 0.5)
    }
}

/// The nearest block-level ancestor (or self) of a text node, the root when there is none.
fn block_owner(doc: &Document, text: NodeId) -> NodeId {
    let mut id = doc.node(text).parent;
    while id != 0 {
        if doc.node(id).tag.is_some_and(Tag::is_block) {
            return id;
        }
        id = doc.node(id).parent;
    }
    0
}

fn link_density(s: &Stats) -> f32 {
    if s.chars == 0 { 0.0 } else { s.link_chars as f32 / s.chars as f32 }
}

/// Readability's starting score by element type.
fn initial_score(tag: Tag) -> f32 {
    use Tag::*;
    match tag {
        Div | Article | Section | Main => 5.0,
        Pre | Td | Blockquote => 3.0,
        Address | Ol | Ul | Dl | Dd | Dt | Li | Form => -3.0,
        H1 | H2 | H3 | H4 | H5 | H6 | Th => -5.0,
        _ => 0.0,
    }
}
