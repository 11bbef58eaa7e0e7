//! Focused crawling: how relevant a page or an anchor text is to the job's weighted topic
//! terms, and the frontier priority that follows from it.

use std::collections::BTreeMap;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// The `[focus]` section of a job configuration. With no terms the crawl is breadth-first.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FocusConfig {
    /// Topic terms and their weights (positive). Terms are single words after the crawler's
    /// tokenisation (lower-cased, NFKC; Chinese words as jieba splits them).
    pub terms: BTreeMap<String, f32>,
    /// A page whose relevance is below this (0..1) is recorded but its outlinks are not
    /// followed.
    pub threshold: f32,
    /// The share of a link's priority taken from its anchor text; the rest comes from the
    /// page that links.
    pub anchor_weight: f32,
}

/// Relevance scoring for a focused crawl.
#[derive(Debug, Clone)]
pub struct Relevance {
    terms: HashMap<String, f32>,
    total_weight: f32,
    threshold: f32,
    anchor_weight: f32,
}

/// Priority values: lower is fetched sooner. Breadth-first crawls use the depth.
pub type Priority = u32;

impl Relevance {
    /// Compiles the focus section; `None` when it has no terms (a breadth-first crawl).
    pub fn new(config: &FocusConfig) -> Option<Relevance> {
        let terms: HashMap<String, f32> = config
            .terms
            .iter()
            .filter(|(_, w)| **w > 0.0 && w.is_finite())
            .map(|(t, w)| (nearcrawl_text::normalize(t), *w))
            .collect();
        if terms.is_empty() {
            return None;
        }
        let total_weight = terms.values().sum();
        Some(Relevance {
            terms,
            total_weight,
            threshold: config.threshold.clamp(0.0, 1.0),
            anchor_weight: config.anchor_weight.clamp(0.0, 1.0),
        })
    }

    /// Relevance of a text in 0..1: the weighted share of topic terms present, each term
    /// counting more with repeated use (saturating at four occurrences).
    pub fn score(&self, text: &str) -> f32 {
        let mut counts: HashMap<&str, u32> = HashMap::new();
        for token in nearcrawl_text::tokenize(text) {
            if let Some((term, _)) = self.terms.get_key_value(token.text.as_str()) {
                *counts.entry(term.as_str()).or_default() += 1;
            }
        }
        let covered: f32 = counts
            .iter()
            .map(|(term, n)| self.terms[*term] * ((1.0 + *n as f32).ln() / 5f32.ln()).min(1.0))
            .sum();
        (covered / self.total_weight).clamp(0.0, 1.0)
    }

    /// Whether a page with this relevance has its outlinks followed.
    pub fn expands(&self, page_score: f32) -> bool {
        page_score >= self.threshold
    }

    /// The frontier priority of a link from a page of relevance `page_score` with anchor
    /// text `anchor`: the more relevant, the sooner.
    pub fn link_priority(&self, page_score: f32, anchor: &str) -> Priority {
        let anchor_score = if anchor.trim().is_empty() {
            0.0
        } else {
            self.score(anchor)
        };
        let score = (1.0 - self.anchor_weight) * page_score + self.anchor_weight * anchor_score;
        ((1.0 - score.clamp(0.0, 1.0)) * 1_000_000.0) as Priority
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relevance() -> Relevance {
        let config = FocusConfig {
            terms: [
                ("river".to_string(), 2.0),
                ("valley".to_string(), 1.0),
                ("河流".to_string(), 2.0),
            ]
            .into_iter()
            .collect(),
            threshold: 0.2,
            anchor_weight: 0.5,
        };
        Relevance::new(&config).unwrap()
    }

    #[test]
    fn no_terms_means_breadth_first() {
        assert!(Relevance::new(&FocusConfig::default()).is_none());
    }

    #[test]
    fn scores_order_pages_and_links() {
        let r = relevance();
        let on_topic = r.score("The river cut a valley. Rivers and the river bank: river, river.");
        let off_topic = r.score("Stock prices fell sharply on Monday.");
        assert!(on_topic > 0.4, "{on_topic}"); // 河流 (weight 2 of 5) is absent
        assert_eq!(off_topic, 0.0);
        assert!(r.expands(on_topic) && !r.expands(off_topic));
        assert!(
            r.score("长江是中国最长的河流") > 0.0,
            "Chinese terms go through jieba"
        );
        let good = r.link_priority(on_topic, "river valley guide");
        let weak = r.link_priority(on_topic, "contact us");
        let bad = r.link_priority(off_topic, "contact us");
        assert!(good < weak && weak < bad, "{good} {weak} {bad}");
    }
}
