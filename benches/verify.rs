//! LCS verification of 3,000-word document pairs from real English text
//! (benches/data/articles.txt): a near-duplicate (another template around the article, 5 % of
//! words changed, a paragraph moved) and a clearly different pair (rejected by the skeleton
//! bound). Baselines in the same process, on the same near pair: imara-diff 0.2's histogram
//! and Myers diffs (interning included, as its API requires), our Myers LCS alone on the whole
//! pair (no skeleton), and the textbook O(N·M) LCS.
//!
//! cargo bench --bench verify

#![allow(missing_docs)] // criterion_group!/criterion_main! generate undocumented items

use criterion::{Criterion, criterion_group, criterion_main};
use imara_diff::{Algorithm, Diff, InternedInput};
use nearcrawl_fingerprint::feature_hash;
use nearcrawl_verify::{Lcs, Verifier, VerifyConfig, lcs_len_reference, verify};

const ARTICLES: &str = include_str!("data/articles.txt");
const WORDS: usize = 3000;

fn words() -> Vec<u64> {
    ARTICLES
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(|t| feature_hash(t.to_lowercase().as_bytes()))
        .collect()
}

fn bench(c: &mut Criterion) {
    let corpus = words();
    let article = corpus[..WORDS].to_vec();
    // The copy: a 150-word header and footer from elsewhere, every 20th word changed, and
    // words 1000..1200 moved to the end of the article.
    let mut body = article.clone();
    for (i, word) in body.iter_mut().enumerate() {
        if i % 20 == 7 {
            *word = corpus[50_000 + i];
        }
    }
    let moved: Vec<u64> = body.drain(1000..1200).collect();
    body.extend(moved);
    let mut copy = corpus[40_000..40_150].to_vec();
    copy.extend(body);
    copy.extend(&corpus[41_000..41_150]);
    let different = corpus[60_000..60_000 + WORDS].to_vec();

    let config = VerifyConfig::default();
    let near = verify(&article, &copy, &config);
    let far = verify(&article, &different, &config);
    assert!(
        near.similar && !far.similar && far.rejected_by_skeleton,
        "{near:?} {far:?}"
    );
    println!("near pair: {near:?}");

    let mut group = c.benchmark_group("verify-3000-words");
    // As the crawler verifies: one Verifier for every pair, its work memory reused.
    let mut verifier = Verifier::new(config);
    group.bench_function("near-duplicate", |b| {
        b.iter(|| verifier.verify(&article, &copy).trustable)
    });
    group.bench_function("different-rejected-by-skeleton", |b| {
        b.iter(|| verifier.verify(&article, &different).similar)
    });
    // A one-off pair: `verify` allocates its work memory afresh.
    group.bench_function("near-duplicate-one-off", |b| {
        b.iter(|| verify(&article, &copy, &config).trustable)
    });
    let imara = |algorithm| {
        let mut input = InternedInput::default();
        input.update_before(article.iter().copied());
        input.update_after(copy.iter().copied());
        Diff::compute(algorithm, &input).count_removals()
    };
    // Its diff keeps what it does not remove: an LCS-like common subsequence.
    println!(
        "imara-diff histogram keeps {} words of A",
        WORDS as u32 - imara(Algorithm::Histogram)
    );
    group.bench_function("imara-diff-histogram-baseline", |b| {
        b.iter(|| imara(Algorithm::Histogram))
    });
    group.bench_function("imara-diff-myers-baseline", |b| {
        b.iter(|| imara(Algorithm::Myers))
    });
    let (mut lcs, mut pairs) = (Lcs::default(), Vec::new());
    group.bench_function("myers-lcs-whole-pair", |b| {
        b.iter(|| {
            lcs.pairs_into(&article, &copy, &mut pairs);
            pairs.len()
        })
    });
    group.sample_size(10);
    group.bench_function("textbook-lcs-baseline", |b| {
        b.iter(|| lcs_len_reference(&article, &copy))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
