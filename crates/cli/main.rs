//! The `nearcrawl` command.
//!
//! `crawl` runs a job from a seed list, `demo` crawls a generated local web; `fingerprint` and
//! `compare` expose the page-understanding pipeline, `idf` learns IDF weights from a crawl's
//! own pages, `near-pairs` the Hamming index, `dedup` clusters an existing corpus; `job`
//! looks after a crawl shared by several workers through Redis.

mod crawl_commands;
mod dedup_command;
mod job_command;
mod metrics;
mod page_commands;

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use nearcrawl_fingerprint::Fingerprint;
use nearcrawl_hamming_index::{IndexParams, near_pairs};

#[derive(Parser)]
#[command(
    name = "nearcrawl",
    version,
    about = "A web crawler with inline near-duplicate filtering"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Crawl from a seed list into an output directory (records.jsonl, report.json, warc/,
    /// state/). Running the same command again on the same --out resumes the job.
    Crawl {
        /// Seed URLs, one per line; `#` comments and blank lines are ignored.
        #[arg(long)]
        seeds: PathBuf,
        /// The job's output and state directory.
        #[arg(long)]
        out: PathBuf,
        /// Start over: move the job's earlier outputs and state in --out into
        /// OUT/previous-N/ (nothing is deleted), then crawl from the seeds.
        #[arg(long)]
        restart: bool,
        #[command(flatten)]
        flags: crawl_commands::CrawlFlags,
        #[command(flatten)]
        shared: crawl_commands::SharedFlags,
    },
    /// A job shared by several workers through Redis (`crawl --redis URL --job NAME`): its
    /// figures, stopping it, and the workers' reports merged.
    Job {
        #[command(subcommand)]
        action: job_command::JobAction,
    },
    /// Replay a --no-dedup (baseline) crawl's link graph as a crawl that skips duplicates'
    /// outlinks, and print the exact pages and bytes it would have saved (also written to
    /// DIR/what-if.json).
    WhatIf {
        /// The baseline crawl's output directory.
        dir: PathBuf,
    },
    /// Write DIR/report.html from a crawl's outputs (records.jsonl, report.json, what-if.json):
    /// one self-contained page of charts and tables, no script, no network. Every crawl
    /// writes it at its end; run this after `what-if` to add its figures.
    Report {
        /// The crawl's output directory.
        dir: PathBuf,
    },
    /// Serve a generated web on 127.0.0.1 (an origin, a mirror under another template, an
    /// edited syndicated copy, a trap, a robots.txt-disallowed area) and crawl it, printing
    /// the report.
    Demo {
        /// Output directory (default: a new directory under the system temp directory).
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        flags: crawl_commands::CrawlFlags,
    },
    /// Find near-duplicate clusters in an existing corpus: WARC files from any crawler (GNU
    /// wget --warc-file, Heritrix, Common Crawl, nearcrawl; plain or gzipped) and JSON lines
    /// with a text field. Pages are judged as a crawl judges them, the first of each content
    /// being the original. Writes OUT/records.jsonl, clusters.jsonl (largest first),
    /// keep.txt (the ids to keep: every unique page), summary.json and report.html. Bad
    /// records are reported by file and offset (OUT/bad-records.jsonl) and skipped. Running
    /// the same command again resumes an interrupted run.
    Dedup {
        /// WARC (.warc, .warc.gz) or JSON lines (.jsonl, .jsonl.gz) files, read in this
        /// order; the format is recognised from the content.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
        /// Output and state directory.
        #[arg(long)]
        out: PathBuf,
        /// JSON lines: the field holding the text.
        #[arg(long, default_value = "text")]
        text_field: String,
        /// JSON lines: the field holding the document's id (else FILE:LINE is its id).
        #[arg(long, default_value = "id")]
        id_field: String,
        /// JSON lines: the field holding the document's URL, if any.
        #[arg(long, default_value = "url")]
        url_field: String,
        /// Threads analysing pages (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
        /// Documents read and analysed together (memory grows with it; no verdict depends on
        /// it).
        #[arg(long, default_value_t = nearcrawl_corpus::DEFAULT_BATCH)]
        batch: usize,
        /// Pages the host template model sees after a page before deciding which of the
        /// page's blocks are its site's template (0: none, as a crawl does). Changes verdicts:
        /// a run resumes with the value it started with.
        #[arg(long, default_value_t = nearcrawl_corpus::TEMPLATE_LOOKAHEAD)]
        template_lookahead: usize,
        /// Stop after about this many documents (at the end of a batch); run again to go
        /// on.
        #[arg(long)]
        max_documents: Option<u64>,
        /// Start over: move OUT's earlier outputs into OUT/previous-N/ (nothing is deleted).
        #[arg(long)]
        restart: bool,
        /// The job configuration (TOML, see config/default.toml): its [dedup] settings.
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Feed a crawl's link-policy journal (OUT/policy-events.jsonl, written with
    /// `[links] policy_events = true`) to the link policy alone, and check that it decides
    /// every link as the crawl did: prints the events and fates replayed, or names the line
    /// where the policy decided otherwise.
    PolicyReplay {
        /// The journal.
        file: PathBuf,
    },
    /// Print every pair of fingerprints within Hamming distance k of each other (clustering
    /// input). FILE holds one 64-bit fingerprint per line, as 16 hex digits (optionally 0x-prefixed);
    /// blank lines and lines starting with # are skipped. Output: "LINE_A LINE_B DISTANCE" per
    /// pair, 1-based line numbers.
    NearPairs {
        /// The fingerprint file.
        file: PathBuf,
        /// Permuted-table design: 20-tables, 16-tables, 10-tables or 4-tables (all k = 3).
        #[arg(long, default_value = "16-tables")]
        design: String,
    },
    /// Print, for each HTML or text file (or http(s) URL), its simhash (16 hex digits), token count and
    /// language: "SIMHASH TOKENS LANGUAGE FILE".
    Fingerprint {
        /// HTML (by extension .html/.htm or content) or plain-text files, or http(s) URLs.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Also print the heaviest features and the text removed as boilerplate.
        #[arg(long)]
        explain: bool,
        /// The job configuration (TOML, see config/default.toml).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Compare two HTML or text files or http(s) URLs: print JSON with the Hamming distance, exact-key
    /// equality, shingle resemblance and containment, LCS resemble and contain rates, and the
    /// verdict (exact, near, distinct).
    Compare {
        /// First file or URL.
        a: PathBuf,
        /// Second file or URL.
        b: PathBuf,
        /// Also explain the verdict in words (on stderr, after the JSON).
        #[arg(long)]
        explain: bool,
        /// The job configuration (TOML, see config/default.toml).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Learn an IDF table for `weighting = "learned"` from the kept page texts of finished
    /// crawls and from HTML or text files (or http(s) URLs), one document each, and write it
    /// to OUT. Prints "DOCUMENTS documents, TERMS terms -> OUT".
    Idf {
        /// Where the table goes (set `idf_table` in the configuration to use it).
        #[arg(long)]
        out: PathBuf,
        /// A finished crawl's output directory: its unique pages' texts (repeatable).
        #[arg(long = "crawl")]
        crawls: Vec<PathBuf>,
        /// HTML or plain-text files, or http(s) URLs.
        files: Vec<PathBuf>,
        /// The job configuration (TOML, see config/default.toml): how text is tokenized.
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

/// jemalloc instead of the system's allocator: a crawl allocates on the fetch and analysis
/// threads and frees on the coordinator, and glibc's malloc spent 13 % of a text-rich crawl's
/// CPU on it (its arena locks, consolidation); with jemalloc, 0.349 -> 0.315 CPU ms per page
/// and 1.13 times the pages/s, for 25 MB more peak memory (docs/BENCHMARKS.md).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read as it starts (`_RJEM_MALLOC_CONF` in the environment still
/// overrides them): memory freed is handed back to the system after 1 s by one background
/// thread, instead of after 10 s by whichever thread allocates. A crawl frees as fast as it
/// allocates (each page's text, tokens and postings), and with the defaults the freed pages
/// stayed resident: 129 to 134 MB at the peak of the text site's crawl against 122 to 123
/// with 200 ms. In one set of rounds (medians of three), 200 ms cost 5 % more CPU per page
/// (pages handed back and faulted in again) and 1 s 1.4 %, for 3 MB more than 200 ms
/// (docs/BENCHMARKS.md, "Peak memory on the text site").
#[cfg(not(target_env = "msvc"))]
#[unsafe(export_name = "_rjem_malloc_conf")]
static JEMALLOC_OPTIONS: JemallocOptions = JemallocOptions(
    c"background_thread:true,max_background_threads:1,dirty_decay_ms:1000,muzzy_decay_ms:0"
        .as_ptr(),
);

/// A C string jemalloc reads at its start (a thin pointer, as C's `const char *`).
#[cfg(not(target_env = "msvc"))]
#[repr(transparent)]
struct JemallocOptions(*const std::ffi::c_char);

// SAFETY: the pointer is to a `'static` C string literal, never written.
#[cfg(not(target_env = "msvc"))]
unsafe impl Sync for JemallocOptions {}

/// Exit status of a command whose reader went away (a shell's for a process ended by
/// SIGPIPE: 128 + 13).
const READER_GONE: i32 = 141;

/// Whether printing failed because the reader of standard output went away (`| head`).
fn reader_gone(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn main() {
    // `println!` panics when standard output's reader went away; that ends the command
    // quietly, as it ends `cat` or `grep`, not with a panic message. Any other panic is
    // reported as before.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(READER_GONE);
        }
        report(info);
    }));
    match run() {
        Ok(()) => {}
        Err(error) if reader_gone(&error) => std::process::exit(READER_GONE),
        Err(error) => {
            eprintln!("Error: {error:?}");
            std::process::exit(1);
        }
    }
}

fn run() -> Result<()> {
    match Cli::parse().command {
        Command::Crawl {
            seeds,
            out,
            restart,
            flags,
            shared,
        } => crawl_commands::crawl_command(&seeds, &out, restart, &flags, &shared),
        Command::Job { action } => job_command::job_command(&action),
        Command::WhatIf { dir } => what_if_command(&dir),
        Command::Report { dir } => {
            let path = nearcrawl_report::write(&dir)?;
            println!("{}", path.display());
            Ok(())
        }
        Command::Demo { out, flags } => crawl_commands::demo_command(out.as_deref(), &flags),
        Command::Dedup {
            inputs,
            out,
            text_field,
            id_field,
            url_field,
            threads,
            batch,
            template_lookahead,
            max_documents,
            restart,
            config,
        } => dedup_command::dedup(dedup_command::DedupArgs {
            inputs: &inputs,
            out: &out,
            fields: nearcrawl_corpus::JsonlFields {
                text: text_field,
                id: id_field,
                url: url_field,
            },
            threads,
            batch,
            template_lookahead,
            max_documents,
            restart,
            config: config.as_deref(),
        }),
        Command::NearPairs { file, design } => near_pairs_command(&file, &design),
        Command::PolicyReplay { file } => policy_replay_command(&file),
        Command::Fingerprint {
            files,
            explain,
            config,
        } => page_commands::fingerprint(&files, explain, config.as_deref()),
        Command::Compare {
            a,
            b,
            explain,
            config,
        } => page_commands::compare(&a, &b, explain, config.as_deref()),
        Command::Idf {
            out,
            crawls,
            files,
            config,
        } => page_commands::learn_idf(&out, &crawls, &files, config.as_deref()),
    }
}

fn what_if_command(dir: &Path) -> Result<()> {
    let what_if = nearcrawl_records::what_if(dir)?;
    print!("{}", what_if.summary());
    let path = dir.join("what-if.json");
    std::fs::write(&path, serde_json::to_string_pretty(&what_if)? + "\n")
        .with_context(|| format!("cannot write {}", path.display()))?;
    // The crawl's HTML report gains the what-if figures.
    nearcrawl_report::write(dir)?;
    Ok(())
}

fn policy_replay_command(file: &Path) -> Result<()> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let mut replay = nearcrawl_link_policy::Replay::new();
    for (i, line) in text.lines().enumerate() {
        let at = || format!("{}:{}", file.display(), i + 1);
        let event: nearcrawl_link_policy::Event =
            serde_json::from_str(line).with_context(|| format!("{}: not an event", at()))?;
        if let Err(diverged) = replay.feed(event) {
            bail!("{}: the policy decided otherwise: {diverged}", at());
        }
    }
    println!(
        "{} events, {} fates decided again, all as the crawl decided them",
        replay.events, replay.fates
    );
    Ok(())
}

fn near_pairs_command(file: &Path, design: &str) -> Result<()> {
    let Some((_, params)) = IndexParams::manku_designs()
        .into_iter()
        .find(|(name, _)| *name == design)
    else {
        bail!("unknown design {design:?}: expected 20-tables, 16-tables, 10-tables or 4-tables");
    };
    let (lines, fingerprints) = read_fingerprints(file)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for (a, b, distance) in near_pairs(params, &fingerprints) {
        writeln!(out, "{} {} {distance}", lines[a], lines[b])?;
    }
    out.flush()?;
    Ok(())
}

/// The fingerprints of a file with the 1-based line number of each.
fn read_fingerprints(file: &Path) -> Result<(Vec<usize>, Vec<Fingerprint>)> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let mut lines = Vec::new();
    let mut fingerprints = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fp = line
            .parse::<Fingerprint>()
            .with_context(|| format!("{}:{}", file.display(), i + 1))?;
        lines.push(i + 1);
        fingerprints.push(fp);
    }
    Ok((lines, fingerprints))
}
