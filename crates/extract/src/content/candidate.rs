//! The article chosen: the best-scoring candidate, the siblings that join it, and what is
//! cleaned out of it (Readability's last steps).

use super::scoring::{is_paragraph_div, link_density};
use super::{ContentExtractor, Stats};
use crate::html::{Document, NodeId};
use crate::tag::{Attr, Tag};

impl ContentExtractor {
    pub(super) fn top_candidate(&self, doc: &Document, stats: &mut [Stats]) -> Option<NodeId> {
        let mut best: Option<(NodeId, f32)> = None;
        for (id, s) in stats.iter_mut().enumerate() {
            if !s.candidate {
                continue;
            }
            let density = link_density(s);
            // A positive class vouches for a container of paragraphs, not for one block:
            // DocBook's `div.example-contents` around a lone listing is no article.
            if s.blocks < 2 && s.class_weight > 0.0 {
                s.score -= s.class_weight;
            }
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
            let significant = doc
                .children(parent)
                .filter(|&c| doc.node(c).tag.is_some() || !doc.text(c).trim().is_empty())
                .count();
            if parent == 0 || doc.node(parent).tag == Some(Tag::Body) || significant != 1 {
                break;
            }
            top = parent;
        }
        Some(top)
    }

    /// The top candidate and those of its siblings that belong to the article.
    pub(super) fn with_siblings(
        &self,
        doc: &Document,
        stats: &[Stats],
        top: NodeId,
    ) -> Vec<NodeId> {
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
                    || (s.chars > 0
                        && s.chars <= 80
                        && density == 0.0
                        && (text.contains(". ") || text.ends_with('.')))
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
    pub(super) fn clean(&self, doc: &Document, stats: &[Stats], top: NodeId, keep: &mut [bool]) {
        use Tag::*;
        let n = doc.len() as NodeId;
        let mut id = 0;
        while id < n {
            let node = doc.node(id);
            let removable = matches!(
                node.tag,
                Some(Table | Ul | Ol | Div | Section | Header | Dl)
            ) && keep[id as usize]
                && id != top
                // Set-aside elements are judged block by block at the end.
                && !stats[id as usize].excluded;
            // A paragraph `div` (as in scoring) of real prose is kept as a paragraph would be,
            // its cross-references notwithstanding.
            let s = stats[id as usize];
            let paragraph = node.tag == Some(Div)
                && s.chars >= 100
                && link_density(&s) <= 0.5
                && is_paragraph_div(doc, id);
            if !removable || paragraph || !self.looks_like_boilerplate(doc, stats, id) {
                id += 1;
                continue;
            }
            for i in id..node.end {
                keep[i as usize] = false;
            }
            id = node.end;
        }
    }

    pub(super) fn looks_like_boilerplate(
        &self,
        doc: &Document,
        stats: &[Stats],
        id: NodeId,
    ) -> bool {
        let s = stats[id as usize];
        if s.class_weight < 0.0 {
            return true;
        }
        if s.commas >= 10 {
            return false;
        }
        let (mut paragraphs, mut images, mut items, mut inputs) = (0u32, 0u32, 0u32, 0u32);
        for i in id + 1..doc.node(id).end {
            match doc.node(i).tag {
                Some(Tag::P) => paragraphs += 1,
                Some(Tag::Img) => images += 1,
                Some(Tag::Li) => items += 1,
                Some(Tag::Input) => inputs += 1,
                _ => {}
            }
        }
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
