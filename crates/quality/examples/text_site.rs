//! Writes the text-rich site of the throughput benchmark (scripts/bench-text.sh, served by
//! nginx): `text_site DIR HOSTS PAGES [SEED]`. Each host `DIR/hH/` has pages `/p/I.html`
//! (I = 1..=PAGES) forming a tree (page I links to its eight children 8I-6..8I+1 and to two
//! other pages of its host) under a navigation template; each page holds 4-5 kB of real
//! documentation sentences (python3.11-doc's library reference, installed by
//! scripts/quality-deps.sh) drawn from one pool shared by every page of every host, as real
//! sites share boilerplate sentences, notes and quotes: the sentence-candidate index and LCS
//! verification get real work, and few pages are near-duplicates of each other.

use std::io::Write;

use nearcrawl_quality::{Corpus, Source};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn main() {
    // An error as a sentence naming what is at fault (a missing package says what to run),
    // not a debug dump.
    if let Err(e) = run() {
        eprintln!("Error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: text_site DIR HOSTS PAGES [SEED]";
    let mut args = std::env::args().skip(1);
    let dir = std::path::PathBuf::from(args.next().ok_or(usage)?);
    let hosts: usize = args.next().and_then(|n| n.parse().ok()).ok_or(usage)?;
    let pages: usize = args.next().and_then(|n| n.parse().ok()).ok_or(usage)?;
    let seed: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(1);
    let corpus = Corpus::load(Source::PythonDocs, usize::MAX)?;
    let pool: Vec<String> = corpus
        .articles
        .iter()
        .flat_map(|a| &a.paragraphs)
        .flat_map(|p| p.split_inclusive(". "))
        .map(|s| s.trim().to_string())
        .filter(|s| s.split_whitespace().count() >= 6)
        .collect();
    if pool.is_empty() {
        return Err("no sentences in python3.11-doc".into());
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for host in 0..hosts {
        let root = dir.join(format!("h{host}/p"));
        std::fs::create_dir_all(&root)?;
        for i in 1..=pages {
            let mut links = String::new();
            let first_child = 8 * i - 6;
            for child in (first_child..first_child + 8).filter(|&c| c <= pages) {
                links.push_str(&format!(
                    "<li><a href=\"/p/{child}.html\">Part {child}</a></li>"
                ));
            }
            for _ in 0..2 {
                let other = rng.random_range(1..=pages);
                links.push_str(&format!(
                    "<li><a href=\"/p/{other}.html\">See also {other}</a></li>"
                ));
            }
            let mut body = String::new();
            let mut paragraph = String::new();
            while body.len() + paragraph.len() < rng.random_range(4000..5000) {
                let sentence = &pool[rng.random_range(0..pool.len())];
                paragraph.push_str(sentence);
                paragraph.push(' ');
                if paragraph.len() > 600 {
                    body.push_str(&format!("<p>{}</p>\n", paragraph.trim_end()));
                    paragraph.clear();
                }
            }
            if !paragraph.is_empty() {
                body.push_str(&format!("<p>{}</p>\n", paragraph.trim_end()));
            }
            let html = format!(
                "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Host {host}, part \
                 {i}</title></head><body>\n<div class=\"header\"><a href=\"/p/1.html\">Manual \
                 {host}</a> | <a href=\"/p/2.html\">Tutorial</a> | <a href=\"/p/3.html\">\
                 Reference</a></div>\n<div class=\"nav\"><ul>{links}</ul></div>\n<div \
                 class=\"body\"><h1>Part {i}</h1>\n{body}</div>\n<div class=\"footer\">\
                 Copyright the authors of manual {host}. Generated for a benchmark.</div>\n\
                 </body></html>\n"
            );
            std::fs::File::create(root.join(format!("{i}.html")))?.write_all(html.as_bytes())?;
        }
    }
    Ok(())
}
