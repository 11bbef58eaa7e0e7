//! The dedup stage alone over HTML files, as a crawl runs it (extraction, template model,
//! analysis, judgement, admission), for profiling and instruction counts:
//! `judge_files DIR [MAX]` reads up to MAX (default 1,000) `.html` files under DIR, in path
//! order, each as a page of the host named by its first directory, and prints the verdicts
//! and the time by stage. `valgrind --tool=callgrind target/release/examples/judge_files DIR
//! 300` gives repeatable instruction counts (docs/BENCHMARKS.md).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use nearcrawl_dedup::{
    Analyzer, AnalyzerConfig, DedupStage, DedupStageConfig, Likeness, MemoryOriginals, Stage,
    StageTimes,
};

fn html_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            html_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "html") {
            out.push(path);
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: judge_files DIR [MAX]";
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().ok_or(usage)?);
    let max: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1_000);
    let mut files = Vec::new();
    html_files(&dir, &mut files)?;
    files.sort();
    files.truncate(max);
    let analyzer = Arc::new(Analyzer::new(AnalyzerConfig::default()));
    let mut stage = DedupStage::new(
        Arc::clone(&analyzer),
        DedupStageConfig::default(),
        [],
        [],
        1 << 63,
    )?;
    let mut kept = MemoryOriginals::default();
    let mut times = StageTimes::default();
    let (mut unique, mut duplicates) = (0, 0);
    let clock = Instant::now();
    for (seq, file) in files.iter().enumerate() {
        let body = std::fs::read(file)?;
        let relative = file.strip_prefix(&dir).unwrap_or(file);
        let host = relative
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        let url = url::Url::parse(&format!("http://{host}.test/{}", relative.display()))?;
        let extracted = analyzer.extract_html(&body, Some("text/html"), &url);
        let judgement = stage.judge(&host, extracted, &kept)?;
        times.merge(&judgement.analysis.times);
        if judgement.verdict == Likeness::Unique {
            unique += 1;
            let admitting = Instant::now();
            kept.keep(stage.admit(seq as u64, &host, &judgement));
            times.add(Stage::Index, admitting.elapsed());
        } else {
            duplicates += 1;
        }
    }
    let took = clock.elapsed();
    let pages = files.len().max(1) as f64;
    println!(
        "{} pages: {unique} unique, {duplicates} duplicates; {:.1} us per page",
        files.len(),
        took.as_secs_f64() * 1e6 / pages
    );
    let stages: Vec<String> = times
        .iter()
        .filter(|&(_, nanos)| nanos > 0)
        .map(|(stage, nanos)| format!("{} {:.1}", stage.name(), nanos as f64 / 1e3 / pages))
        .collect();
    println!("us per page by stage: {}", stages.join(", "));
    Ok(())
}
