//! The article-extraction benchmark in `tests/data/article-extraction-benchmark`: its pages, its
//! ground truth, and its metric (F1 of 4-token shingles, averaged over pages).

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

/// One page of the benchmark.
pub struct BenchmarkPage {
    pub id: String,
    pub url: String,
    pub html: Vec<u8>,
    pub truth: String,
}

pub fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/article-extraction-benchmark")
}

/// All pages, sorted by id.
pub fn load() -> Vec<BenchmarkPage> {
    let dir = data_dir();
    let truth_path = dir.join("ground-truth.json");
    let truth_text = std::fs::read_to_string(&truth_path)
        .unwrap_or_else(|e| panic!("{}: {e}", truth_path.display()));
    let truth: serde_json::Value =
        serde_json::from_str(&truth_text).expect("ground-truth.json is JSON");
    let mut pages: Vec<BenchmarkPage> = truth
        .as_object()
        .expect("ground truth is an object")
        .iter()
        .map(|(id, entry)| {
            let path = dir.join("html").join(format!("{id}.html.gz"));
            let file =
                std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let mut html = Vec::new();
            flate2::read::GzDecoder::new(file)
                .read_to_end(&mut html)
                .expect("gzip page");
            BenchmarkPage {
                id: id.clone(),
                url: entry["url"].as_str().unwrap_or_default().to_owned(),
                html,
                truth: entry["articleBody"].as_str().unwrap_or_default().to_owned(),
            }
        })
        .collect();
    pages.sort_by(|a, b| a.id.cmp(&b.id));
    pages
}

/// Precision, recall and F1 of `extracted` against `truth`, on sets of 4-token shingles of
/// lower-cased `\w+` tokens, as the benchmark scores.
pub fn shingle_scores(extracted: &str, truth: &str) -> (f64, f64, f64) {
    let got = shingles(extracted);
    let want = shingles(truth);
    if got.is_empty() && want.is_empty() {
        return (1.0, 1.0, 1.0);
    }
    let common = got.intersection(&want).count() as f64;
    let precision = if got.is_empty() {
        0.0
    } else {
        common / got.len() as f64
    };
    let recall = if want.is_empty() {
        0.0
    } else {
        common / want.len() as f64
    };
    let f1 = if precision + recall == 0.0 {
        0.0
    } else {
        2.0 * precision * recall / (precision + recall)
    };
    (precision, recall, f1)
}

fn shingles(text: &str) -> HashSet<Vec<String>> {
    let lower = text.to_lowercase();
    let tokens: Vec<String> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect();
    tokens.windows(4).map(<[String]>::to_vec).collect()
}
