//! `nearcrawl fingerprint`, `nearcrawl compare` and `nearcrawl idf`.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};
use nearcrawl_dedup::{Analyzer, Comparison, Extracted, Likeness, PageAnalysis};
use nearcrawl_fetch::{FetchConfig, Fetcher};
use nearcrawl_frontier::{AddressPolicy, CanonicalUrl};
use nearcrawl_text::IdfTable;

use nearcrawl_engine::JobFile;

/// The analyzer and the fetch settings of a configuration.
fn analyzer(config: Option<&Path>) -> Result<(Analyzer, FetchConfig)> {
    let (config, dir) = JobFile::load(config)?;
    Ok((
        Analyzer::new(config.analyzer(dir.as_deref())?),
        config.fetch,
    ))
}

/// Fetches a page given on the command line (any address: the user named it).
fn fetch_page(url: &str, config: &FetchConfig) -> Result<(Vec<u8>, Option<String>, url::Url)> {
    let canonical = CanonicalUrl::parse(url)?;
    let fetcher = Fetcher::new(config.clone(), AddressPolicy::new(true, &[&canonical]))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let page = runtime.block_on(fetcher.fetch(canonical.as_url()))?;
    if page.status != 200 {
        anyhow::bail!("{url}: HTTP {}", page.status);
    }
    if !page.is_html_or_text() {
        anyhow::bail!(
            "{url}: not HTML or text ({})",
            page.content_type().unwrap_or("no Content-Type")
        );
    }
    let content_type = page.content_type().map(str::to_owned);
    Ok((page.body, content_type, canonical.into_url()))
}

/// Reads and analyses one file or URL, as HTML or as plain text.
fn analyze_file(analyzer: &Analyzer, fetch: &FetchConfig, path: &Path) -> Result<PageAnalysis> {
    Ok(analyzer.analyze(extract_file(analyzer, fetch, path)?))
}

/// Reads and extracts one file or URL, as HTML or as plain text.
fn extract_file(analyzer: &Analyzer, fetch: &FetchConfig, path: &Path) -> Result<Extracted> {
    let name = path.to_string_lossy();
    if name.starts_with("http://") || name.starts_with("https://") {
        let (bytes, content_type, url) = fetch_page(&name, fetch)?;
        return Ok(analyzer.extract_body(&bytes, content_type.as_deref(), &url));
    }
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    analyzer
        .extract_file(path, &bytes)
        .map_err(anyhow::Error::msg)
}

pub fn fingerprint(
    files: &[std::path::PathBuf],
    explain: bool,
    config: Option<&Path>,
) -> Result<()> {
    let (analyzer, fetch) = analyzer(config)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for file in files {
        let analysis = analyze_file(&analyzer, &fetch, file)?;
        writeln!(
            out,
            "{} {} {} {}",
            analysis.simhash,
            analysis.tokens.len(),
            analysis.language(),
            file.display()
        )?;
        if explain {
            writeln!(
                out,
                "  encoding: {}; exact key: {}",
                analysis.encoding, analysis.exact_key
            )?;
            writeln!(out, "  heaviest features:")?;
            for feature in analyzer.features(&analysis).iter().take(15) {
                writeln!(out, "    {:8.3}  {}", feature.weight, feature.text)?;
            }
            match &analysis.extraction {
                Some(extraction) => {
                    let removed: Vec<_> =
                        extraction.blocks.iter().filter(|b| !b.in_content).collect();
                    writeln!(out, "  removed as boilerplate ({} blocks):", removed.len())?;
                    for block in removed {
                        let shown: String = block.text.chars().take(100).collect();
                        writeln!(out, "    - {shown}")?;
                    }
                }
                None => writeln!(out, "  plain text: nothing removed")?,
            }
        }
    }
    Ok(())
}

pub fn compare(a: &Path, b: &Path, explain: bool, config: Option<&Path>) -> Result<()> {
    let (analyzer, fetch) = analyzer(config)?;
    let first = extract_file(&analyzer, &fetch, a)?;
    let second = extract_file(&analyzer, &fetch, b)?;
    let analyzer = std::sync::Arc::new(analyzer);
    let comparison = nearcrawl_dedup::compare(std::sync::Arc::clone(&analyzer), first, second)
        .context("dedup.max_distance")?;
    println!("{}", serde_json::to_string_pretty(&comparison)?);
    if explain {
        eprintln!("{}", explanation(&analyzer, &comparison));
    }
    Ok(())
}

fn explanation(analyzer: &Analyzer, c: &Comparison) -> String {
    let config = analyzer.config();
    let mut lines = vec![format!(
        "simhash distance {} ({} the threshold k = {}).",
        c.distance,
        if c.within_distance {
            "within"
        } else {
            "beyond"
        },
        config.max_distance
    )];
    lines.push(format!(
        "word {}-shingles: resemblance {:.3}, containment {:.3}.",
        config.shingle_width, c.shingle_resemblance, c.shingle_containment
    ));
    match &c.verification {
        Some(v) if v.rejected_by_skeleton => lines.push(format!(
            "LCS verification: the shared skeletons ({} and {} of {} and {} tokens) are too short for r >= {} or c >= {}; no LCS computed.",
            v.skeleton.0, v.skeleton.1, v.len_a, v.len_b, config.verify_config.min_resemblance, config.verify_config.min_containment
        )),
        Some(v) => lines.push(format!(
            "LCS verification: trustable LCS {} tokens in {} pass(es) (first LCS {}); r = {:.3} (threshold {}), c = {:.3} (threshold {}).",
            v.trustable, v.passes, v.lcs, v.resemblance, config.verify_config.min_resemblance, v.contained, config.verify_config.min_containment
        )),
        None => lines.push("LCS verification is off: the verdict follows the simhash distance.".into()),
    }
    for (name, little) in [("first", c.little_text.0), ("second", c.little_text.1)] {
        if let Some(chars) = little {
            lines.push(format!(
                "the {name} page has {chars} characters of its own (under 100, or under {} tokens): it is judged by exact key only, over its title, text and link targets.",
                nearcrawl_dedup::MIN_NEAR_TOKENS
            ));
        }
    }
    lines.push(format!(
        "host context: compare sees each page as the only page of its host. A crawl also removes each host's template (blocks on most of the host's pages, 3 at least) before fingerprinting; extraction set aside {} and {} blocks here as boilerplate, and the template of the pages' hosts may remove more, which can change this verdict (a crawl's records say how much it removed, template_chars, and little_text when too little was left).",
        c.boilerplate_blocks.0, c.boilerplate_blocks.1
    ));
    lines.push(match c.verdict {
        Likeness::Exact => "verdict: exact (the normalised token streams are identical).".into(),
        Likeness::Near => "verdict: near.".into(),
        Likeness::Unique => {
            let passes = c.verification.as_ref().is_some_and(|v| {
                v.resemblance >= config.verify_config.min_resemblance
                    || v.contained >= config.verify_config.min_containment
            });
            if passes && c.little_text == (None, None) {
                "verdict: distinct: the pages would pass LCS verification, but the dedup stage never compares them (the simhash distance is beyond k and they share no sentence fingerprint: neither finds the first page as a candidate).".into()
            } else {
                "verdict: distinct (the dedup stage would keep the second page too).".into()
            }
        }
    });
    lines.join("\n")
}

/// Learns an IDF table from the kept texts of finished crawls and from files or URLs.
pub fn learn_idf(
    out: &Path,
    crawls: &[std::path::PathBuf],
    files: &[std::path::PathBuf],
    config: Option<&Path>,
) -> Result<()> {
    if crawls.is_empty() && files.is_empty() {
        bail!("nothing to learn from: give --crawl DIR (a finished crawl) or files");
    }
    let (analyzer, fetch) = analyzer(config)?;
    let mut table = IdfTable::new();
    let add = |table: &mut IdfTable, analysis: &PageAnalysis| {
        table.add_document(analysis.tokens.iter().map(|t| t.text))
    };
    for dir in crawls {
        let kept = nearcrawl_engine::for_each_kept_text(dir, |text| {
            add(&mut table, &analyzer.analyze_text(text))
        })?;
        if kept == 0 {
            bail!(
                "{}: the crawl kept no page texts (no unique pages, or verification was off)",
                dir.display()
            );
        }
    }
    for file in files {
        add(&mut table, &analyze_file(&analyzer, &fetch, file)?);
    }
    table.save(out)?;
    println!(
        "{} documents, {} terms -> {}",
        table.documents(),
        table.terms(),
        out.display()
    );
    Ok(())
}
