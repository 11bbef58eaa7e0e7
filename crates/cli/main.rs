//! The `nearcrawl` command.
//!
//! Today it exposes the near-duplicate core; the crawler's commands (`crawl`, `demo`,
//! `fingerprint`, `compare`) arrive with the crates that implement them.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use nearcrawl_fingerprint::Fingerprint;
use nearcrawl_hamming_index::{IndexParams, near_pairs};

#[derive(Parser)]
#[command(name = "nearcrawl", version, about = "A web crawler with inline near-duplicate filtering")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Command::NearPairs { file, design } => near_pairs_command(&file, &design),
    }
}

fn near_pairs_command(file: &Path, design: &str) -> Result<()> {
    let Some((_, params)) = IndexParams::manku_designs().into_iter().find(|(name, _)| *name == design) else {
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
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let mut lines = Vec::new();
    let mut fingerprints = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fp = line.parse::<Fingerprint>().with_context(|| format!("{}:{}", file.display(), i + 1))?;
        lines.push(i + 1);
        fingerprints.push(fp);
    }
    Ok((lines, fingerprints))
}
