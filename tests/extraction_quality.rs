//! Main-content extraction on the 181 pages of the article-extraction benchmark, scored as the
//! benchmark scores (F1 of 4-token shingles against human extraction): the floor is 0.95.

#[path = "support/article_benchmark.rs"]
#[allow(dead_code)]
mod article_benchmark;

use nearcrawl_extract::{ContentExtractor, Document, decode};

#[test]
fn article_benchmark_f1_is_at_least_0_95() {
    let pages = article_benchmark::load();
    assert_eq!(pages.len(), 181, "the benchmark has 181 pages");
    let extractor = ContentExtractor::new();
    let mut f1_sum = 0.0;
    for page in &pages {
        let text = decode(&page.html, None, None).text;
        let main = extractor.extract(&Document::parse(&text)).main_text();
        f1_sum += article_benchmark::shingle_scores(&main, &page.truth).2;
    }
    let f1 = f1_sum / pages.len() as f64;
    eprintln!("mean F1 {f1:.4}");
    assert!(f1 >= 0.95, "mean F1 {f1:.4} is below the 0.95 floor");
}

#[test]
fn the_metric_scores_known_cases() {
    let truth = "one two three four five six";
    assert_eq!(
        article_benchmark::shingle_scores(truth, truth),
        (1.0, 1.0, 1.0)
    );
    let (p, r, _) = article_benchmark::shingle_scores("One, two three four five six seven", truth);
    assert_eq!((p, r), (3.0 / 4.0, 1.0));
    assert_eq!(article_benchmark::shingle_scores("", truth).2, 0.0);
}
