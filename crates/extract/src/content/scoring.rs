//! What a block and an element score: the text's counts, link density, a tag's first score,
//! and which element a piece of text belongs to.

use super::Stats;
use crate::html::{Document, NodeId, is_ascii_whitespace};
use crate::tag::Tag;

/// The element whose block a text node belongs to: its nearest block-level ancestor, or, for
/// set-aside text inside a kept block (a share button in a paragraph), the element that set
/// it aside, so boilerplate never merges into content. The root when there is none.
pub(super) fn block_owner(doc: &Document, stats: &[Stats], node: NodeId) -> NodeId {
    let excluded = stats[doc.node(node).parent as usize].excluded;
    let mut id = doc.node(node).parent;
    while id != 0 {
        let parent = doc.node(id).parent;
        let exclusion_root =
            excluded && stats[id as usize].excluded && !stats[parent as usize].excluded;
        if exclusion_root || doc.node(id).tag.is_some_and(Tag::is_block) {
            return id;
        }
        id = parent;
    }
    0
}

/// A `div` with no block inside: Readability turns such divs into `p` (DocBook's `div.para`).
pub(super) fn is_paragraph_div(doc: &Document, id: NodeId) -> bool {
    !doc.children(id)
        .any(|c| doc.node(c).tag.is_some_and(Tag::is_block))
}

/// Commas in Latin and CJK punctuation (the ideographic comma and the enumeration comma).
pub(super) fn is_comma(c: char) -> bool {
    matches!(c, ',' | '\u{ff0c}' | '\u{3001}')
}

/// A text's characters other than whitespace, and its commas ([`is_comma`]); ASCII text
/// counted a byte at a time (most text nodes of most pages).
pub(super) fn text_counts(text: &str) -> (u32, u32) {
    if text.is_ascii() {
        let (mut spaces, mut commas) = (0u32, 0u32);
        for &b in text.as_bytes() {
            spaces += u32::from(is_ascii_whitespace(b));
            commas += u32::from(b == b',');
        }
        return (text.len() as u32 - spaces, commas);
    }
    text.chars().fold((0, 0), |(chars, commas), c| {
        (
            chars + u32::from(!c.is_whitespace()),
            commas + u32::from(is_comma(c)),
        )
    })
}

pub(super) fn link_density(s: &Stats) -> f32 {
    if s.chars == 0 {
        0.0
    } else {
        s.link_chars as f32 / s.chars as f32
    }
}

/// Readability's starting score by element type.
pub(super) fn initial_score(tag: Tag) -> f32 {
    use Tag::*;
    match tag {
        Div | Article | Section | Main => 5.0,
        Pre | Td | Blockquote => 3.0,
        Address | Ol | Ul | Dl | Dd | Dt | Li | Form => -3.0,
        H1 | H2 | H3 | H4 | H5 | H6 | Th => -5.0,
        _ => 0.0,
    }
}
