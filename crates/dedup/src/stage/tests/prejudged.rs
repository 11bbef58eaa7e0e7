//! Verification answers worked out before a page is judged ([`Originals::verified`]): the
//! stage takes them in place of verifying, so given the right answers it judges as it would
//! have alone.

use super::*;

/// Kept pages in memory, with answers worked out beforehand for some of them.
struct Prejudged<'a> {
    kept: &'a MemoryOriginals,
    answers: HashMap<u64, Option<f64>>,
    /// Answers the stage asked for and found.
    taken: Cell<usize>,
}

impl Originals for Prejudged<'_> {
    type Error = Infallible;
    fn text(&self, seq: u64) -> Result<Option<String>, Infallible> {
        self.kept.text(seq)
    }
    fn exact(&self, key: ExactKey) -> Result<Option<u64>, Infallible> {
        self.kept.exact(key)
    }
    fn simhash(&self, seq: u64) -> Result<Option<Fingerprint>, Infallible> {
        self.kept.simhash(seq)
    }
    fn link_keys(&self, seq: u64) -> Result<Option<Vec<u64>>, Infallible> {
        self.kept.link_keys(seq)
    }
    fn sentence_candidates(&self, fingerprints: &[u128]) -> Result<Vec<(u64, usize)>, Infallible> {
        self.kept.sentence_candidates(fingerprints)
    }
    fn verified(&self, seq: u64) -> Option<Option<f64>> {
        let answer = self.answers.get(&seq).copied();
        self.taken
            .set(self.taken.get() + usize::from(answer.is_some()));
        answer
    }
}

/// What a thread that analyses pages would work out: the page's resemblance to each of
/// `seqs` (those of `kept` with a text), with a verifier of its own.
fn answers(
    stage: &DedupStage,
    kept: &MemoryOriginals,
    text: &str,
    seqs: &[u64],
) -> HashMap<u64, Option<f64>> {
    let analyzer = stage.analyzer();
    let page = Prepared::of(&analyzer.analyze_text(text));
    let mut verifier = Verifier::new(analyzer.config().verify_config);
    let mut answers = HashMap::new();
    for &seq in seqs {
        let Ok(Some(original)) = kept.text(seq) else {
            continue;
        };
        let units = analyzer.units_of(&original);
        answers.insert(seq, verifier.similarity(&page.units, &units));
    }
    answers
}

#[test]
fn an_answer_worked_out_beforehand_is_taken_without_verifying() {
    let (mut stage, mut kept) = (stage(), MemoryOriginals::default());
    let original = document(20, 30);
    keep(&mut stage, &mut kept, 0, &original);
    let edited = original.replacen("river", "brook", 1);
    // Right: the same judgement, and the original's text never read.
    let right = Prejudged {
        kept: &kept,
        answers: answers(&stage, &kept, &edited, &[0]),
        taken: Cell::new(0),
    };
    let Ok(judgement) = stage.judge("host", plain(&edited), &right);
    assert_eq!(
        (judgement.verdict, judgement.original),
        (Likeness::Near, Some(Original::Kept(0)))
    );
    assert_eq!(right.taken.get(), 1);
    // An answer that says "not similar" is believed: the page is unique.
    let wrong = Prejudged {
        kept: &kept,
        answers: HashMap::from([(0, None)]),
        taken: Cell::new(0),
    };
    let Ok(judgement) = stage.judge("host", plain(&edited), &wrong);
    assert_eq!(judgement.verdict, Likeness::Unique);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// With answers worked out beforehand for any share of the kept pages, every page is
    /// judged exactly as without them.
    #[test]
    fn answers_worked_out_beforehand_change_no_judgement(
        choices in prop::collection::vec(any::<u64>(), 1..20),
        share in 0u64..4,
    ) {
        let config = DedupStageConfig { max_candidates: 1_000, ..DedupStageConfig::default() };
        let mut alone = stage_with(config.clone(), AnalyzerConfig::default());
        let mut helped = stage_with(config, AnalyzerConfig::default());
        let mut originals = MemoryOriginals::default();
        let mut kept_seqs = Vec::new();
        for (seq, choice) in choices.into_iter().enumerate() {
            let text = derived(choice);
            let Ok(expected) = alone.judge("host", plain(&text), &originals);
            let some: Vec<u64> = kept_seqs.iter().copied().filter(|s| (s + choice) % 4 >= share).collect();
            let prejudged = Prejudged {
                kept: &originals,
                answers: answers(&helped, &originals, &text, &some),
                taken: Cell::new(0),
            };
            let Ok(judgement) = helped.judge("host", plain(&text), &prejudged);
            prop_assert_eq!(judgement.verdict, expected.verdict, "page {}: {}", seq, text);
            prop_assert_eq!(judgement.original, expected.original);
            prop_assert_eq!(judgement.similarity, expected.similarity);
            if expected.verdict == Likeness::Unique {
                let admission = alone.admit(seq as u64, "host", &expected);
                helped.admit(seq as u64, "host", &judgement);
                originals.keep(admission);
                kept_seqs.push(seq as u64);
            }
        }
    }
}
