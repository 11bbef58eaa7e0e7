//! The judge away answers for the pages it kept before their commits.

use nearcrawl_dedup::{Analyzer, AnalyzerConfig, DedupStage, DedupStageConfig};
use nearcrawl_store::{CrawlStore, MemoryStore};

use super::*;

fn judge(store: &Arc<dyn CrawlStore>) -> Judge {
    let analyzer = Arc::new(Analyzer::new(AnalyzerConfig::default()));
    let stage = DedupStage::new(analyzer, DedupStageConfig::default(), [], [], 1 << 63)
        .unwrap_or_else(|e| panic!("{e}"));
    Judge::open(Arc::clone(store), stage).unwrap_or_else(|e| panic!("{e}"))
}

fn verdict(judge: &mut Judge, text: &str) -> (Likeness, Option<Original>) {
    let judged = judge.judge_text(text).unwrap_or_else(|e| panic!("{e}"));
    (judged.judgement.verdict, judged.judgement.original)
}

/// A page the judge kept before the coordinator committed it is every later copy's
/// original, exact or near (the store has nothing of it yet), until its commit is
/// noted: then the store answers for it.
#[test]
fn a_page_kept_away_is_found_before_its_commit() {
    let store: Arc<dyn CrawlStore> = Arc::new(MemoryStore::default());
    let mut judge = judge(&store);
    let text: String = (0..12)
        .map(|i| format!("Sentence {i} tells of the river, the stone and lantern {i}. "))
        .collect();
    let judged = judge.judge_text(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(judged.judgement.verdict, Likeness::Unique);
    let mut admission = judge.stage().admission(0, "h.test", &judged.judgement);
    let sentences = admission.sentences.take();
    let key = admission.fingerprint.map(|(_, key)| key.0);
    let waiting = Waiting {
        ticket: 1,
        admission,
        sentences,
        postings: judged.postings,
    };
    keep(&mut judge, waiting, 7).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        verdict(&mut judge, &text),
        (Likeness::Exact, Some(Original::Kept(7)))
    );
    let near = format!("{text} And one closing sentence of its own.");
    assert_eq!(
        verdict(&mut judge, &near),
        (Likeness::Near, Some(Original::Kept(7)))
    );
    // Noted as committed: the store answers for it from then on.
    judge.kept(key.unwrap_or_default(), 7);
    assert!(judge.pending.0.is_empty());
}
