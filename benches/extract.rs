//! Main-content extraction on the article-extraction benchmark: F1 and time per page, for
//! nearcrawl's extractor and, in the same run on the same decoded text, dom_smoothie (a Rust
//! port of Mozilla's Readability).
//!
//! `cargo bench --bench extract` (add `-- --pages` to print each page's scores for nearcrawl).

#[path = "../tests/support/article_benchmark.rs"]
#[allow(dead_code, missing_docs)]
mod article_benchmark;

use std::time::Instant;

use nearcrawl_extract::{ContentExtractor, Document, decode};

/// Scores an extractor over every page, then times it: median of 5 rounds, ms per page
/// (decoding included, the same for both).
fn measure(
    name: &str,
    pages: &[article_benchmark::BenchmarkPage],
    per_page: bool,
    extract: &dyn Fn(&str) -> String,
) {
    let (mut f1_sum, mut p_sum, mut r_sum) = (0.0, 0.0, 0.0);
    for page in pages {
        let text = decode(&page.html, None, None).text;
        let (p, r, f1) = article_benchmark::shingle_scores(&extract(&text), &page.truth);
        if per_page {
            println!(
                "{name} {:.3} p={p:.3} r={r:.3} {} {}",
                f1,
                &page.id[..12],
                page.url
            );
        }
        f1_sum += f1;
        p_sum += p;
        r_sum += r;
    }
    let n = pages.len() as f64;
    let mut rounds = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        for page in pages {
            let text = decode(&page.html, None, None).text;
            std::hint::black_box(extract(&text));
        }
        rounds.push(start.elapsed().as_secs_f64() * 1000.0 / n);
    }
    rounds.sort_by(f64::total_cmp);
    println!(
        "{name:<13} pages {} precision {:.4} recall {:.4} F1 {:.4}  ms/page (decode + extract), median of 5 rounds: {:.3}",
        pages.len(),
        p_sum / n,
        r_sum / n,
        f1_sum / n,
        rounds[2]
    );
}

fn main() {
    let per_page = std::env::args().any(|a| a == "--pages");
    let pages = article_benchmark::load();
    let extractor = ContentExtractor::new();
    measure("nearcrawl", &pages, per_page, &|text| {
        extractor.extract(&Document::parse(text)).main_text()
    });
    measure("dom_smoothie", &pages, false, &|text| {
        dom_smoothie::Readability::new(text, None, None)
            .and_then(|mut r| r.parse())
            .map(|article| article.text_content.to_string())
            .unwrap_or_default()
    });
}
