//! `nearcrawl-lab`: the evaluation harness, apart from the crawler users ship. It measures
//! what `nearcrawl` does on webs whose truth is known: detection quality on the labelled web
//! and the real webs (`quality`), corpus dedup against MinHashLSH (`dedup-quality`), focused
//! crawls against breadth-first (`focus-quality`). docs/QUALITY.md, docs/CORPUS.md and
//! docs/FOCUSED.md give the figures and the commands.

mod commands;

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "nearcrawl-lab",
    version,
    about = "nearcrawl's evaluation harness: crawls webs whose truth is known and measures the crawler"
)]
struct Lab {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measure detection quality: build the labelled web from Debian documentation text
    /// (scripts/quality-deps.sh installs it), crawl it with dedup and with --no-dedup, and
    /// print precision, recall, bytes saved against the oracle, coverage and robots
    /// violations (also OUT/quality.json).
    Quality(commands::QualityArgs),
    /// Measure corpus dedup: crawl a real web (Debian documentation, scripts/quality-deps.sh)
    /// with --no-dedup into WARC files, run `nearcrawl dedup` over them, and datasketch's
    /// MinHashLSH too when --minhash-python is given (scripts/bench-tools.sh installs it);
    /// print each one's pair precision, recall and F1 against the web's truth, and pages/s
    /// (also OUT/dedup-quality.json).
    DedupQuality {
        /// The real web: llvm-14-15, handbook-tuning or mirror-apache (tuning), llvm-15-16,
        /// clang-14-16, handbook-held-out, reference-languages or mirror-postgresql (held
        /// out).
        #[arg(long)]
        web: String,
        /// "small" (150 pages per site) or "large" (every page).
        #[arg(long, default_value = "large")]
        size: String,
        /// The Python of scripts/bench-tools.sh's venv: runs the MinHashLSH baseline.
        #[arg(long)]
        minhash_python: Option<PathBuf>,
        /// The baseline's script.
        #[arg(long, default_value = "scripts/minhash-dedup.py")]
        minhash_script: PathBuf,
        /// The baseline's LSH thresholds, separated by commas.
        #[arg(long, default_value = "0.8")]
        thresholds: String,
        /// How the baseline reads a page's text: "trafilatura" (main text) and/or "text"
        /// (all text), separated by commas.
        #[arg(long, default_value = "trafilatura")]
        extract: String,
        /// `nearcrawl dedup --template-lookahead`.
        #[arg(long, default_value_t = nearcrawl_corpus::TEMPLATE_LOOKAHEAD)]
        template_lookahead: usize,
        /// Where the crawl and the runs go (default: a new directory under the system temp
        /// directory).
        #[arg(long)]
        out: Option<PathBuf>,
        /// The job configuration (TOML): its [dedup] settings.
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Measure focused crawling: serve Debian's Apache, PostgreSQL, Python and LLVM manuals
    /// behind a portal page (scripts/quality-deps.sh installs them), crawl them breadth-first
    /// and focused on each topic from the portal, and print harvest rate and recall against
    /// breadth-first (also OUT/focused.json and OUT/harvest-TOPIC.svg). See docs/FOCUSED.md.
    FocusQuality {
        /// "small" (the CI variant: Apache and PostgreSQL) or "large" (all four manuals).
        #[arg(long, default_value = "large")]
        size: String,
        /// Topics: "tuning", "held-out", "all", or names separated by commas
        /// (apache-proxy, postgres-indexes, python-email, ssl-tls, llvm-globalisel,
        /// apache-rewrite, apache-auth; held out: python-asyncio, postgres-full-text,
        /// postgres-plpgsql, python-xml, llvm-kaleidoscope, postgres-logical-replication,
        /// python-tkinter, llvm-pdb, apache-vhosts, apache-caching, postgres-pltcl,
        /// python-logging, llvm-tablegen).
        #[arg(long, default_value = "all")]
        topics: String,
        /// How each topic is given: "terms", "examples", "description", separated by commas.
        #[arg(long, default_value = "terms,examples,description")]
        from: String,
        /// Where the crawls go (default: a new directory under the system temp directory).
        #[arg(long)]
        out: Option<PathBuf>,
        /// The job configuration (TOML): its [focus] threshold, tunnel and weights are used.
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

/// The crawler's allocator, so that what is measured is what `nearcrawl` runs.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() {
    // The crawls' messages, as `nearcrawl crawl` gives them (NEARCRAWL_LOG=debug for more).
    let filter = tracing_subscriber::EnvFilter::try_from_env("NEARCRAWL_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("error"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
    if let Err(error) = run() {
        eprintln!("Error: {error:?}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    match Lab::parse().command {
        Command::Quality(args) => commands::quality(&args),
        Command::FocusQuality {
            size,
            topics,
            from,
            out,
            config,
        } => commands::focus_quality(&size, &topics, &from, out.as_deref(), config.as_deref()),
        Command::DedupQuality {
            web,
            size,
            minhash_python,
            minhash_script,
            thresholds,
            extract,
            template_lookahead,
            out,
            config,
        } => commands::dedup_quality(commands::DedupQualityArgs {
            web: &web,
            size: &size,
            minhash_python: minhash_python.as_deref(),
            minhash_script: &minhash_script,
            thresholds: &thresholds,
            extract: &extract,
            template_lookahead,
            out: out.as_deref(),
            config: config.as_deref(),
        }),
    }
}
