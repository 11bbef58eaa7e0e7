//! Main-content extraction on the article-extraction benchmark: F1 and time per page.
//!
//! `cargo bench --bench extract` (add `-- --pages` to print each page's scores).

#[path = "../tests/support/article_benchmark.rs"]
#[allow(dead_code, missing_docs)]
mod article_benchmark;

use std::time::Instant;

use nearcrawl_extract::{ContentExtractor, Document, decode};

fn main() {
    let per_page = std::env::args().any(|a| a == "--pages");
    let pages = article_benchmark::load();
    let extractor = ContentExtractor::new();
    let mut f1_sum = 0.0;
    let mut p_sum = 0.0;
    let mut r_sum = 0.0;
    for page in &pages {
        let text = decode(&page.html, None, None).text;
        let extraction = extractor.extract(&Document::parse(&text));
        let (p, r, f1) = article_benchmark::shingle_scores(&extraction.main_text(), &page.truth);
        if per_page {
            println!("{:.3} p={p:.3} r={r:.3} {} {}", f1, &page.id[..12], page.url);
        }
        f1_sum += f1;
        p_sum += p;
        r_sum += r;
    }
    let n = pages.len() as f64;
    println!("pages {} precision {:.4} recall {:.4} F1 {:.4}", pages.len(), p_sum / n, r_sum / n, f1_sum / n);

    let mut rounds = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        for page in &pages {
            let text = decode(&page.html, None, None).text;
            let extraction = extractor.extract(&Document::parse(&text));
            std::hint::black_box(extraction.main_text());
        }
        rounds.push(start.elapsed().as_secs_f64() * 1000.0 / n);
    }
    rounds.sort_by(f64::total_cmp);
    println!("ms/page (decode + parse + extract), median of 5 rounds: {:.3}", rounds[2]);
}
