//! A finished run's outputs: `clusters.jsonl` (largest first), `keep.txt`, `summary.json`
//! and `report.html`, from the records.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use nearcrawl_records::Verdict;
use serde::{Deserialize, Serialize};

use super::{CorpusConfig, CorpusError, CorpusRecord, Progress, Summary, io_error};

/// Writes `bytes` to `path` through a temporary file and a rename, made durable.
pub(super) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CorpusError> {
    let tmp = path.with_extension("tmp");
    let mut file = File::create(&tmp).map_err(io_error(&tmp))?;
    file.write_all(bytes).map_err(io_error(&tmp))?;
    file.sync_all().map_err(io_error(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io_error(path))?;
    if let Some(dir) = path.parent()
        && let Ok(dir) = File::open(dir)
    {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// A cluster in `clusters.jsonl`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Cluster {
    /// The original's sequence number (the cluster's id).
    pub cluster: u64,
    /// Pages in it, the original included.
    pub size: u64,
    /// The original: the first page of this content in the corpus.
    pub original: Member,
    /// The duplicates, in corpus order.
    pub members: Vec<Member>,
}

/// A page of a cluster.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Member {
    /// Its id.
    pub id: String,
    /// Its URL (else its id).
    pub url: String,
    /// `exact` or `near` (the original: `unique`).
    pub verdict: Verdict,
    /// Simhash distance to the original.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distance: Option<u32>,
    /// LCS similarity to the original.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
}

/// Writes `clusters.jsonl` (largest first), `keep.txt`, `summary.json` and `report.html`
/// from the records.
pub(super) fn finish(config: &CorpusConfig, progress: &Progress) -> Result<Summary, CorpusError> {
    let out = &config.out;
    let records_path = out.join("records.jsonl");
    let mut keep = Vec::new();
    let mut clusters: BTreeMap<u64, Cluster> = BTreeMap::new();
    let mut originals: HashMap<u64, Member> = HashMap::new();
    let file = File::open(&records_path).map_err(io_error(&records_path))?;
    for (n, line) in io::BufRead::lines(io::BufReader::new(file)).enumerate() {
        let line = line.map_err(io_error(&records_path))?;
        let record: CorpusRecord = serde_json::from_str(&line).map_err(|e| {
            CorpusError::State(format!("{}:{}: {e}", records_path.display(), n + 1))
        })?;
        let member = Member {
            id: record.id.clone(),
            url: record.record.url.clone(),
            verdict: record.record.verdict,
            distance: record.record.distance,
            similarity: record.record.similarity,
        };
        match (record.record.verdict, record.record.cluster) {
            (Verdict::Unique, cluster) => {
                keep.extend_from_slice(record.id.as_bytes());
                keep.push(b'\n');
                if let Some(cluster) = cluster {
                    originals.insert(cluster, member);
                }
            }
            (_, Some(cluster)) => {
                let entry = clusters.entry(cluster).or_insert_with(|| Cluster {
                    cluster,
                    size: 1,
                    original: originals.get(&cluster).cloned().unwrap_or(Member {
                        id: record.original_id.clone().unwrap_or_default(),
                        url: record.record.duplicate_of.clone().unwrap_or_default(),
                        verdict: Verdict::Unique,
                        distance: None,
                        similarity: None,
                    }),
                    members: Vec::new(),
                });
                entry.size += 1;
                entry.members.push(member);
            }
            // A revisit of a page not in the corpus: no cluster to join, nothing to keep.
            (_, None) => {}
        }
    }
    drop(originals);
    let mut ordered: Vec<Cluster> = clusters.into_values().collect();
    ordered.sort_by(|a, b| b.size.cmp(&a.size).then(a.cluster.cmp(&b.cluster)));
    let mut lines = Vec::new();
    for cluster in &ordered {
        serde_json::to_writer(&mut lines, cluster).expect("a cluster serialises");
        lines.push(b'\n');
    }
    write_atomically(&out.join("clusters.jsonl"), &lines)?;
    write_atomically(&out.join("keep.txt"), &keep)?;
    let seconds = progress.elapsed_ms as f64 / 1000.0;
    let summary = Summary {
        inputs: progress
            .inputs
            .iter()
            .map(|i| i.path.display().to_string())
            .collect(),
        counts: progress.counts.clone(),
        clusters: ordered.len() as u64,
        largest_cluster: ordered.first().map_or(0, |c| c.size),
        seconds,
        pages_per_second: if seconds > 0.0 {
            progress.counts.pages as f64 / seconds
        } else {
            0.0
        },
        threads: rayon::current_num_threads(),
    };
    write_atomically(
        &out.join("summary.json"),
        &serde_json::to_vec_pretty(&summary).expect("the summary serialises"),
    )?;
    nearcrawl_report::write(out).map_err(|e| CorpusError::State(format!("report.html: {e}")))?;
    Ok(summary)
}
