//! Simhash throughput on real English text (benches/data/articles.txt), end to end from a token
//! stream: hash every token with xxh3 and fold it into the 64 counters. The textbook reference
//! runs in the same process as the baseline, so the ratio is robust to a noisy machine.
//!
//! cargo bench --bench simhash

#![allow(missing_docs)] // criterion_group!/criterion_main! generate undocumented items

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use nearcrawl_fingerprint::{Weight, feature_hash, simhash, simhash_reference};

const ARTICLES: &str = include_str!("data/articles.txt");

/// Tokens as the extractor hands them over: runs of alphanumeric characters.
fn tokenize(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .collect()
}

fn bench(c: &mut Criterion) {
    let documents: Vec<Vec<&str>> = ARTICLES.lines().map(tokenize).collect();
    let tokens: usize = documents.iter().map(Vec::len).sum();
    let mut group = c.benchmark_group("simhash");
    group.throughput(Throughput::Bytes(ARTICLES.len() as u64));
    group.bench_function("tokens-to-fingerprint/bytes", |b| {
        b.iter(|| {
            documents
                .iter()
                .map(|doc| {
                    simhash(
                        doc.iter()
                            .map(|t| (feature_hash(t.as_bytes()), Weight::ONE)),
                    )
                    .bits()
                })
                .fold(0, |a, f| a ^ f)
        })
    });
    group.bench_function("reference/bytes", |b| {
        b.iter(|| {
            documents
                .iter()
                .map(|doc| {
                    simhash_reference(
                        doc.iter()
                            .map(|t| (feature_hash(t.as_bytes()), Weight::ONE)),
                    )
                    .bits()
                })
                .fold(0, |a, f| a ^ f)
        })
    });
    group.throughput(Throughput::Elements(tokens as u64));
    let hashed: Vec<Vec<(u64, Weight)>> = documents
        .iter()
        .map(|doc| {
            doc.iter()
                .map(|t| (feature_hash(t.as_bytes()), Weight::ONE))
                .collect()
        })
        .collect();
    group.bench_function("prehashed-counters/tokens", |b| {
        b.iter(|| {
            hashed
                .iter()
                .map(|doc| simhash(doc.iter().copied()).bits())
                .fold(0, |a, f| a ^ f)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
