//! `nearcrawl dedup`: near-duplicate clusters over an existing corpus.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use nearcrawl_corpus::{CorpusConfig, JsonlFields, run};

use nearcrawl_engine::JobFile;

/// What `nearcrawl dedup` is given.
pub struct DedupArgs<'a> {
    pub inputs: &'a [PathBuf],
    pub out: &'a Path,
    pub fields: JsonlFields,
    pub threads: Option<usize>,
    pub batch: usize,
    pub template_lookahead: usize,
    pub max_documents: Option<u64>,
    pub restart: bool,
    pub config: Option<&'a Path>,
}

pub fn dedup(args: DedupArgs<'_>) -> Result<()> {
    let (config, config_dir) = JobFile::load(args.config)?;
    if let Some(threads) = args.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads.max(1))
            .build_global()
            .context("cannot start the analysis threads")?;
    }
    let mut job = CorpusConfig::new(args.inputs.to_vec(), args.out.to_path_buf());
    job.fields = args.fields;
    job.analyzer = config.analyzer(config_dir.as_deref())?;
    job.stage = config.dedup.stage();
    job.batch = args.batch;
    job.template_lookahead = args.template_lookahead;
    job.max_documents = args.max_documents;
    job.restart = args.restart;
    match run(&job)? {
        Some(summary) => {
            let c = &summary.counts;
            println!(
                "{} pages: {} unique, {} exact, {} near ({} revisits); {} clusters, largest {}",
                c.pages,
                c.unique,
                c.exact,
                c.near,
                c.revisits,
                summary.clusters,
                summary.largest_cluster
            );
            println!(
                "duplicates: {} of {} bytes ({:.1} %); {} records not pages, {} bad (bad-records.jsonl)",
                c.duplicate_bytes,
                c.bytes,
                100.0 * c.duplicate_bytes as f64 / c.bytes.max(1) as f64,
                c.skipped,
                c.bad
            );
            println!(
                "{:.1} s, {:.0} pages/s on {} threads",
                summary.seconds, summary.pages_per_second, summary.threads
            );
            let out = args.out.display();
            println!("{out}/clusters.jsonl, {out}/keep.txt, {out}/summary.json, {out}/report.html");
        }
        None => println!(
            "stopped after --max-documents; run the same command again to go on ({})",
            args.out.join("work/progress.json").display()
        ),
    }
    Ok(())
}
