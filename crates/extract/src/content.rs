//! Main content: which text blocks of a page are its article and which are boilerplate.
//!
//! The method follows Readability's scoring, on the compact tree of [`Document`]:
//! 1. Elements that never hold an article are set aside: scripts, forms' controls, `nav`,
//!    `aside`, `footer`, hidden elements, and elements whose class or id says "comment",
//!    "sidebar", "share", "related" and the like (unless it also says "article", "content"...).
//! 2. The remaining text is cut into blocks (the nearest block-level element of each piece of
//!    text). Each block of 25 characters or more scores 1 + its commas + one per 100
//!    characters (at most 3), and hands that score to its parent (whole), grandparent (half)
//!    and further ancestors (a third per level). A `div` holding no block is a paragraph, as
//!    Readability turns it into a `p` (DocBook's `div.para`); a `div` holding text and blocks
//!    scores itself.
//! 3. Each ancestor's score is scaled by (1 - link density); the best one is the article root,
//!    joined by siblings that score nearly as well or read like paragraphs. A positive class
//!    name counts only for an element holding two scored blocks or more. When even the best
//!    scores under [`MIN_ARTICLE_SCORE`], the page is a [listing](Extraction::listing).
//! 4. Inside the chosen elements, lists, tables and boxes that look like link farms, image
//!    galleries or forms are dropped (paragraphs stay), and so is the `h1` (the headline,
//!    which the page's title already gives); paragraphs set aside in step 1 only for their
//!    class name (a manual's "sidebar" tip box) are kept.
//!
//! Measured on the 181 pages of the article-extraction benchmark (`cargo bench --bench
//! extract`): F1 0.969, 0.33 ms per page including decoding and parsing (measured at F1
//! 0.968, before div paragraphs); see
//! docs/BENCHMARKS.md.

use crate::html::{Document, NodeId, push_collapsed};
use crate::tag::{Attr, Tag};

mod candidate;
mod patterns;
mod scoring;

use patterns::{ClassPatterns, PatternKind, has};
use scoring::{block_owner, initial_score, is_paragraph_div, text_counts};

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
    /// No element scored like an article (the best scored under [`MIN_ARTICLE_SCORE`] once
    /// its link density was counted): the page is a listing (a table of contents, an index),
    /// and which of its blocks were marked content says little.
    pub listing: bool,
}

/// An article's root scores at least this (a `div` starts at 5, one paragraph adds 1 to 4;
/// both scaled by the share of text outside links).
pub const MIN_ARTICLE_SCORE: f32 = 3.0;

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

fn join<'a>(blocks: impl Iterator<Item = &'a TextBlock> + Clone) -> String {
    let mut out = String::with_capacity(blocks.clone().map(|b| b.text.len() + 1).sum());
    for block in blocks {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&block.text);
    }
    out
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
    const ALL: Rules = Rules {
        strip_unlikely: true,
        class_weights: true,
        clean: true,
    };
    const KEEP_UNLIKELY: Rules = Rules {
        strip_unlikely: false,
        ..Rules::ALL
    };
    const NO_CLASS_WEIGHTS: Rules = Rules {
        class_weights: false,
        ..Rules::KEEP_UNLIKELY
    };
    const NO_CLEANING: Rules = Rules {
        clean: false,
        ..Rules::NO_CLASS_WEIGHTS
    };
}

/// What a node is, whatever the rules of an attempt: an element's tag and attributes judged
/// ([`ContentExtractor::judge_element`]), a text node's counts ([`text_counts`]).
#[derive(Clone, Copy, Default)]
struct NodeFacts {
    /// Never shown (a script, `hidden`, `display:none`).
    invisible: bool,
    /// Never content, whatever the rules (navigation, a landmark role, comments).
    hard: bool,
    /// An "unlikely" class or id, not vouched for (set aside when the rules strip those).
    unlikely: bool,
    /// Readability's class weight (used when the rules weigh classes).
    weight: f32,
    /// A text node's characters other than whitespace.
    chars: u32,
    /// A text node's commas.
    commas: u32,
}

impl NodeFacts {
    /// An element as the rules judge it: (invisible, hard-excluded, unlikely, class weight).
    fn judged(self, rules: Rules) -> (bool, bool, bool, f32) {
        (
            self.invisible,
            self.hard,
            rules.strip_unlikely && self.unlikely,
            if rules.class_weights {
                self.weight
            } else {
                0.0
            },
        )
    }
}

/// The forward pass over a page under one setting of "unlikely" classes: each node's facts
/// so far, the text blocks (none yet marked content) and each block's (non-whitespace
/// characters, commas).
struct Forward {
    stats: Vec<Stats>,
    blocks: Vec<TextBlock>,
    block_counts: Vec<(u32, u32)>,
}

impl Forward {
    /// The extraction of a pass whose attempt was chosen, its blocks marked.
    fn extraction(pass: Option<Forward>, marks: Vec<bool>, listing: bool) -> Extraction {
        let mut blocks = pass.map(|f| f.blocks).unwrap_or_default();
        for (block, in_content) in blocks.iter_mut().zip(marks) {
            block.in_content = in_content;
        }
        Extraction { blocks, listing }
    }
}

/// Per-element facts gathered in the passes over the tree.
#[derive(Clone, Copy, Default)]
struct Stats {
    /// Set aside: this element or an ancestor can never be content.
    excluded: bool,
    /// Set aside for something other than an "unlikely" class name (a tag, a landmark role,
    /// comments, invisibility): never content, even inside the article.
    hard_excluded: bool,
    /// Never rendered as text: scripts, styles, `head`, hidden elements and their descendants.
    invisible: bool,
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
    /// Scored blocks that handed their score to this element.
    blocks: u16,
}

impl ContentExtractor {
    /// Compiles the patterns.
    pub fn new() -> ContentExtractor {
        ContentExtractor {
            patterns: ClassPatterns::new(),
        }
    }

    /// Splits `doc` into text blocks and marks the main content.
    ///
    /// When the content found is shorter than 500 characters, the extraction is retried with
    /// fewer rules (as Readability does): first keeping "unlikely" classes, then ignoring class
    /// weights, then without conditional cleaning. A looser attempt replaces a stricter one
    /// only when it finds more than twice the text.
    pub fn extract(&self, doc: &Document) -> Extraction {
        // What does not depend on the rules, worked out once for all attempts; the blocks
        // once with "unlikely" classes set aside and once without (the looser attempts differ
        // only in how they score and clean).
        let facts = self.node_facts(doc);
        let mut passes: [Option<Forward>; 2] = [None, None];
        // (content length, pass, content marks, listing) of the best attempt so far.
        let mut best: Option<(usize, usize, Vec<bool>, bool)> = None;
        for rules in [
            Rules::ALL,
            Rules::KEEP_UNLIKELY,
            Rules::NO_CLASS_WEIGHTS,
            Rules::NO_CLEANING,
        ] {
            let pass = usize::from(!rules.strip_unlikely);
            let forward =
                passes[pass].get_or_insert_with(|| self.forward(doc, &facts, rules.strip_unlikely));
            let (marks, listing) = self.choose(doc, forward, rules);
            let length: usize = forward
                .blocks
                .iter()
                .zip(&marks)
                .filter(|(_, in_content)| **in_content)
                .map(|(b, _)| b.text.len())
                .sum();
            if length >= 500 {
                return Forward::extraction(passes[pass].take(), marks, listing);
            }
            // A looser attempt is always at least as long; it must find clearly more text.
            if best.as_ref().is_none_or(|(l, ..)| length > 2 * *l) {
                best = Some((length, pass, marks, listing));
            }
        }
        match best {
            Some((_, pass, marks, listing)) => {
                Forward::extraction(passes[pass].take(), marks, listing)
            }
            None => Extraction::default(),
        }
    }

    /// Each node's facts that no rule changes: an element's tag and attributes judged, a text
    /// node's characters counted.
    fn node_facts(&self, doc: &Document) -> Vec<NodeFacts> {
        doc.nodes()
            .iter()
            .enumerate()
            .map(|(id, node)| match node.tag {
                Some(tag) => self.judge_element(doc, id as NodeId, tag),
                None => {
                    let (chars, commas) = text_counts(doc.text(id as NodeId));
                    NodeFacts {
                        chars,
                        commas,
                        ..NodeFacts::default()
                    }
                }
            })
            .collect()
    }

    /// The forward pass: what is set aside, link context, class weights, and the text blocks
    /// with their counts.
    fn forward(&self, doc: &Document, facts: &[NodeFacts], strip_unlikely: bool) -> Forward {
        let rules = Rules {
            strip_unlikely,
            ..Rules::ALL
        };
        let n = doc.len();
        let mut stats = vec![Stats::default(); n];
        let mut blocks: Vec<TextBlock> = Vec::new();
        // (non-whitespace characters, commas) of each block, counted as its text arrives.
        let mut block_counts: Vec<(u32, u32)> = Vec::new();

        // Forward pass: exclusion, link context, class weights, block text.
        let mut block_of = vec![u32::MAX; n];
        for id in 1..n as NodeId {
            let node = doc.node(id);
            let parent = stats[node.parent as usize];
            let mut s = Stats {
                excluded: parent.excluded,
                hard_excluded: parent.hard_excluded,
                invisible: parent.invisible,
                in_link: parent.in_link,
                ..Stats::default()
            };
            match node.tag {
                Some(tag) => {
                    let (invisible, hard, unlikely, weight) = facts[id as usize].judged(rules);
                    s.invisible |= invisible;
                    s.hard_excluded |= hard || invisible;
                    s.excluded |= hard || unlikely || invisible;
                    s.class_weight = weight;
                    s.in_link |= tag == Tag::A;
                    if tag == Tag::Br && !s.invisible {
                        let owner = block_owner(doc, &stats, id);
                        if let Some(block) = blocks.get_mut(block_of[owner as usize] as usize) {
                            push_collapsed(&mut block.text, " ");
                        }
                    }
                }
                None if !s.invisible => {
                    let text = doc.text(id);
                    let owner = block_owner(doc, &stats, id);
                    let NodeFacts { chars, commas, .. } = facts[id as usize];
                    if chars > 0 {
                        if block_of[owner as usize] == u32::MAX {
                            block_of[owner as usize] = blocks.len() as u32;
                            let tag = doc.node(owner).tag.unwrap_or(Tag::Other);
                            blocks.push(TextBlock {
                                node: owner,
                                tag,
                                text: String::new(),
                                in_content: false,
                            });
                            block_counts.push((0, 0));
                        }
                        let index = block_of[owner as usize] as usize;
                        push_collapsed(&mut blocks[index].text, text);
                        block_counts[index].0 += chars;
                        block_counts[index].1 += commas;
                    } else if let Some(block) = blocks.get_mut(block_of[owner as usize] as usize) {
                        push_collapsed(&mut block.text, " ");
                    }
                    if !s.excluded {
                        s.chars = chars;
                        s.link_chars = if s.in_link { chars } else { 0 };
                        s.commas = commas;
                    }
                }
                None => {}
            }
            stats[id as usize] = s;
        }
        for block in &mut blocks {
            block.text.truncate(block.text.trim_end().len());
        }
        Forward {
            stats,
            blocks,
            block_counts,
        }
    }

    /// One attempt over a forward pass: scores, the top candidate and its siblings, cleaning;
    /// returns which blocks are content, and whether the page is a listing.
    fn choose(&self, doc: &Document, forward: &Forward, rules: Rules) -> (Vec<bool>, bool) {
        let n = doc.len();
        let Forward {
            stats,
            blocks,
            block_counts,
        } = forward;
        let mut stats = stats.clone();
        if !rules.class_weights {
            for s in &mut stats {
                s.class_weight = 0.0;
            }
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
        for (block, &(own_chars, commas)) in blocks.iter().zip(block_counts) {
            let b = stats[block.node as usize];
            if own_chars < 25 || b.excluded {
                continue;
            }
            let score = 1.0 + commas as f32 + (own_chars as f32 / 100.0).min(3.0);
            // Text directly inside a container (a `div` holding both text and blocks) counts
            // as a paragraph of that container, as Readability wraps such text in a `p`.
            let paragraph_like = matches!(
                block.tag,
                Tag::P
                    | Tag::Pre
                    | Tag::Li
                    | Tag::Dt
                    | Tag::Dd
                    | Tag::Td
                    | Tag::Th
                    | Tag::Caption
                    | Tag::Address
            ) || block.tag.is_heading()
                // A `div` with no block inside is a paragraph too (Readability turns such divs
                // into `p`): DocBook's `div.para`.
                || (block.tag == Tag::Div && is_paragraph_div(doc, block.node));
            let mut ancestor = if paragraph_like {
                doc.node(block.node).parent
            } else {
                block.node
            };
            for level in 0..5 {
                let divider = match level {
                    0 => 1.0,
                    1 => 2.0,
                    _ => level as f32 * 3.0,
                };
                let a = &mut stats[ancestor as usize];
                if !a.candidate {
                    a.candidate = true;
                    a.score = initial_score(doc.node(ancestor).tag.unwrap_or(Tag::Other))
                        + a.class_weight;
                }
                a.score += score / divider;
                a.blocks = a.blocks.saturating_add(1);
                if ancestor == 0 {
                    break; // the root scores too: fragments have no <body>
                }
                ancestor = doc.node(ancestor).parent;
            }
        }

        let Some(top) = self.top_candidate(doc, &mut stats) else {
            return (vec![false; blocks.len()], true);
        };
        let listing = stats[top as usize].score < MIN_ARTICLE_SCORE;
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
        let marks = blocks
            .iter()
            .zip(block_counts)
            .map(|(block, &(own_chars, _))| {
                let s = stats[block.node as usize];
                // Prose set aside only for its class name, inside the article, is the
                // article's: a manual's "sidebar" boxes (tips, notes) are part of its chapter.
                let aside_prose = !s.hard_excluded
                    && own_chars >= 25
                    && (block.tag == Tag::P
                        || (block.tag == Tag::Div && is_paragraph_div(doc, block.node)));
                keep[block.node as usize] && (!s.excluded || aside_prose) && block.tag != Tag::H1
            })
            .collect();
        (marks, listing)
    }

    /// Whether an element is invisible, whether it is set aside for good (its tag, a landmark
    /// role, comments), whether its class looks unlikely to be content, and its class weight.
    fn judge_element(&self, doc: &Document, id: NodeId, tag: Tag) -> NodeFacts {
        use Tag::*;
        let invisible_tag = matches!(
            tag,
            Script
                | Style
                | Noscript
                | Template
                | Svg
                | Math
                | Iframe
                | Object
                | Embed
                | Select
                | Option
                | Textarea
                | Head
                | Title
                | Canvas
                | Video
                | Audio
        );
        let by_tag = matches!(
            tag,
            Button
                | Input
                | Nav
                | Aside
                | Footer
                | Dialog
                | Label
                | Figure
                | Figcaption
                | Menu
                | Header
        );
        let mut kinds = 0u8;
        let mut weight = 0.0;
        let mut hidden = false;
        let mut landmark = false;
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
                    hidden |=
                        compact.contains("display:none") || compact.contains("visibility:hidden");
                }
                Attr::Role => {
                    landmark |= matches!(
                        value.trim(),
                        "navigation"
                            | "complementary"
                            | "menu"
                            | "menubar"
                            | "alert"
                            | "alertdialog"
                            | "dialog"
                            | "contentinfo"
                            | "banner"
                    );
                }
                _ => {}
            }
        }
        let structural = matches!(tag, Html | Body | Article | Main);
        let maybe = has(kinds, PatternKind::Maybe) || structural;
        NodeFacts {
            invisible: invisible_tag || hidden,
            hard: by_tag || landmark || (has(kinds, PatternKind::Comments) && !maybe),
            unlikely: has(kinds, PatternKind::Unlikely) && !maybe,
            weight,
            chars: 0,
            commas: 0,
        }
    }
}

#[cfg(test)]
mod tests;
