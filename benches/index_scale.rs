//! The permuted-table index at scale: for N = 2^24 and 2^26 random and clustered fingerprints,
//! k = 3, and each of the paper's designs, prints one Markdown row with bulk build rate, online
//! insert rate, first-match and all-matches query latency (median, p99, after a warm-up pass of
//! other queries), candidates examined per query, batch queries per second (median of three
//! passes), and memory per fingerprint (raw and compressed).
//!
//! cargo bench --bench index_scale                     # 2^24 and 2^26, every design (~20 min, ~16 GB)
//! cargo bench --bench index_scale -- --log2n 20       # one size
//! cargo bench --bench index_scale -- --log2n 26 --set random --design 10-tables  # one row
//! cargo bench --bench index_scale -- --log2n 24 --auto 2,4,8  # also IndexParams::auto's pick
//!                                                     # for each memory budget (GiB)
//! cargo bench --bench index_scale -- --near-pairs 20  # near_pairs on 2^20 fingerprints, and write
//!                                                     # them for scripts/bench-python.sh
//!
//! Without `--bench` (as `cargo test --benches` runs it) it does a small smoke run.

use std::time::Instant;

use nearcrawl_fingerprint::Fingerprint;
use nearcrawl_hamming_index::{CompressedTables, HammingIndex, IndexParams, near_pairs};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const QUERIES: usize = 100_000;
const ONLINE_INSERTS_LOG2: u32 = 21;
const BATCH_LOG2: u32 = 20;
/// Above this many bytes of raw tables the compressed copy is skipped (this machine has 24 GB).
const COMPRESS_LIMIT: u64 = 6 << 30;

fn random_set(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.random()).collect()
}

/// One fingerprint in 8 is a new centre (a fifth of them in a dense region sharing their top 24
/// bits), the others are near copies of the last centre at distance 0..=6.
fn clustered_set(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut centre = 0u64;
    (0..n)
        .map(|i| {
            if i % 8 == 0 {
                centre = if rng.random_bool(0.2) {
                    rng.random::<u64>() >> 24
                } else {
                    rng.random()
                };
                centre
            } else {
                let bits = rng.random_range(0..=6);
                flip(&mut rng, centre, bits)
            }
        })
        .collect()
}

fn flip(rng: &mut ChaCha8Rng, fp: u64, bits: u32) -> u64 {
    let mut out = fp;
    while (out ^ fp).count_ones() < bits {
        out ^= 1 << rng.random_range(0..64);
    }
    out
}

/// Half the queries are stored fingerprints with 0..=3 bits flipped, half are fresh.
fn queries(set: &[u64], n: usize, seed: u64) -> Vec<Fingerprint> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                let base = set[rng.random_range(0..set.len())];
                let bits = rng.random_range(0..=3);
                Fingerprint::new(flip(&mut rng, base, bits))
            } else {
                Fingerprint::new(rng.random())
            }
        })
        .collect()
}

/// The share of `heap_bytes` the process has in transparent huge pages (Linux; "n/a" elsewhere):
/// the tables are advised for them, and the kernel grants them only where it finds free 2 MiB
/// pages, which decides much of the query latency.
fn huge_page_share(heap_bytes: usize) -> String {
    let rollup = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    let kib = rollup
        .lines()
        .find_map(|line| line.strip_prefix("AnonHugePages:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok());
    kib.map_or("n/a".into(), |kib| {
        format!(
            "{:.0} %",
            (kib * 1024.0 / heap_bytes as f64 * 100.0).min(100.0)
        )
    })
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn latency_ns(
    queries: &[Fingerprint],
    mut f: impl FnMut(Fingerprint) -> usize,
) -> (u64, u64, usize) {
    let mut times = Vec::with_capacity(queries.len());
    let mut found = 0;
    for &q in queries {
        let start = Instant::now();
        found += std::hint::black_box(f(q));
        times.push(start.elapsed().as_nanos() as u64);
    }
    times.sort_unstable();
    (percentile(&times, 0.5), percentile(&times, 0.99), found)
}

fn run(
    log2n: u32,
    kind: &str,
    design: &str,
    params: IndexParams,
    set: &[u64],
    queries_n: usize,
    batch_log2: u32,
) {
    let n = set.len();
    let start = Instant::now();
    let index = HammingIndex::from_entries(
        params.clone(),
        set.iter()
            .enumerate()
            .map(|(i, &f)| (Fingerprint::new(f), i as u64)),
    );
    let build = start.elapsed().as_secs_f64();
    let huge = huge_page_share(index.heap_bytes());

    let online_n = n.min(1 << ONLINE_INSERTS_LOG2);
    let mut online = HammingIndex::new(params.clone());
    let start = Instant::now();
    for (i, &f) in set[..online_n].iter().enumerate() {
        online.insert(Fingerprint::new(f), i as u64);
    }
    let online_rate = online_n as f64 / start.elapsed().as_secs_f64();
    drop(online);

    // A warm-up pass with other queries first: right after a build the kernel is still
    // settling the new memory (collapsing pages into huge pages, reclaiming the freed online
    // index), which put one-off stalls of 100+ us into whichever phase came first.
    for q in queries(set, queries_n, 5) {
        std::hint::black_box(index.first_match(q));
    }
    let qs = queries(set, queries_n, 7);
    let (first_med, first_p99, hits) =
        latency_ns(&qs, |q| usize::from(index.first_match(q).is_some()));
    let mut buf = Vec::new();
    let (all_med, all_p99, _) = latency_ns(&qs, |q| {
        buf.clear();
        index.query_into(q, &mut buf);
        buf.len()
    });
    let candidates: u64 = qs
        .iter()
        .take(20_000)
        .map(|&q| index.query_stats(q).candidates)
        .sum();
    let candidates = candidates as f64 / qs.len().min(20_000) as f64;

    // Batch throughput: the median of three passes (the host is noisy).
    let batch = queries(set, 1 << batch_log2, 11);
    let mut batch_hits = 0;
    let mut rates: Vec<f64> = (0..3)
        .map(|_| {
            let start = Instant::now();
            batch_hits = index.query_batch(&batch).len();
            batch.len() as f64 / start.elapsed().as_secs_f64()
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    let batch_rate = rates[1];

    let heap = index.heap_bytes() as f64 / n as f64;
    let raw_tables = (n as u64) * 8 * params.table_count() as u64;
    let compressed = if raw_tables <= COMPRESS_LIMIT {
        let c = CompressedTables::new(&index);
        format!(
            "{:.2}",
            c.stats().compressed_bytes_per_fingerprint_per_table
        )
    } else {
        "skipped (memory)".into()
    };
    println!(
        "| 2^{log2n} | {kind} | {design} | {build:.1} | {:.2} M/s | {:.2} M/s | {first_med} / {first_p99} | {all_med} / {all_p99} | {candidates:.1} | {:.2} M/s | {heap:.1} | 8.00 | {compressed} | {hits} / {batch_hits} | {huge} |",
        n as f64 / build / 1e6,
        online_rate / 1e6,
        batch_rate / 1e6,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let bench = args.iter().any(|a| a == "--bench");
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    if let Some(log2) = value("--near-pairs") {
        let log2: u32 = log2
            .parse()
            .expect("--near-pairs takes log2 of the set size");
        near_pairs_run(log2);
        return;
    }
    let sizes: Vec<u32> = match value("--log2n") {
        Some(list) => list
            .split(',')
            .map(|s| s.parse().expect("--log2n takes a list like 24,26"))
            .collect(),
        None if bench => vec![24, 26],
        None => vec![12],
    };
    let (queries_n, batch_log2) = if bench {
        (QUERIES, BATCH_LOG2)
    } else {
        (1_000, 10)
    };
    println!(
        "| N | set | design | build s | bulk insert | online insert | first match ns median / p99 | all matches ns median / p99 | candidates/query | batch queries/s | heap bytes/fp | raw bytes/fp/table | compressed bytes/fp/table | hits (first-match / batch) | in huge pages |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let wanted =
        |flag: &str, name: &str| value(flag).is_none_or(|want| want.split(',').any(|w| w == name));
    for log2n in sizes {
        for kind in ["random", "clustered"]
            .into_iter()
            .filter(|kind| wanted("--set", kind))
        {
            let n = 1usize << log2n;
            let set = if kind == "random" {
                random_set(n, 1)
            } else {
                clustered_set(n, 2)
            };
            for (design, params) in IndexParams::manku_designs()
                .into_iter()
                .filter(|(design, _)| wanted("--design", design))
            {
                run(log2n, kind, design, params, &set, queries_n, batch_log2);
            }
            for budget in value("--auto").iter().flat_map(|list| list.split(',')) {
                let gib: u64 = budget
                    .parse()
                    .expect("--auto takes memory budgets in GiB, like 2,4,8");
                let params =
                    IndexParams::auto(n as u64, 3, gib << 30).expect("a design fits the budget");
                let design = format!(
                    "auto({gib} GiB): {} tables, prefixes {:?}",
                    params.table_count(),
                    params.prefix_lengths()
                );
                run(log2n, kind, &design, params, &set, queries_n, batch_log2);
            }
        }
    }
}

/// near_pairs over 2^log2 distinct fingerprints (random plus planted neighbours), timed (median
/// of `REPEATS` runs, default 3); the set is written to target/bench-data/near-pairs-2^N.txt for
/// the Python comparison.
fn near_pairs_run(log2: u32) {
    let mut set = clustered_set(1 << log2, 3);
    set.sort_unstable();
    set.dedup();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    std::fs::create_dir_all(&dir).expect("create target/bench-data");
    let path = dir.join(format!("near-pairs-2^{log2}.txt"));
    let text: String = set.iter().map(|f| format!("{f}\n")).collect();
    std::fs::write(&path, text).expect("write the fingerprint file");
    let fps: Vec<Fingerprint> = set.iter().map(|&f| Fingerprint::new(f)).collect();
    let repeats: usize = std::env::var("REPEATS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3)
        .max(1);
    let mut times = Vec::new();
    let mut pairs = 0;
    for _ in 0..repeats {
        let start = Instant::now();
        pairs = near_pairs(IndexParams::manku_20_tables(), &fps).len();
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{{\"tool\": \"nearcrawl near_pairs (20 tables)\", \"fingerprints\": {}, \"pairs\": {pairs}, \"median_s\": {:.3}, \"file\": \"{}\"}}",
        fps.len(),
        times[times.len() / 2],
        path.display()
    );
}
