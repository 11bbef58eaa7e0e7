//! The parts of the report that a corpus run (`nearcrawl dedup`) has in place of a crawl's:
//! its summary, its time per page by stage, its pages and bytes over the corpus.

use std::fmt::Write as _;

use crate::{StageTime, Tally, bytes, cumulative, escape, pages};

/// A corpus run's figures: every number of its summary.
pub(crate) fn corpus_summary(
    html: &mut String,
    corpus: &serde_json::Map<String, serde_json::Value>,
) {
    html.push_str("<h2>Summary</h2>\n<table>");
    for (name, value) in corpus {
        let value = match value {
            serde_json::Value::Number(n) => match n.as_f64() {
                Some(x) if n.is_f64() => format!("{x:.2}"),
                _ => n.to_string(),
            },
            serde_json::Value::Array(items) => items
                .iter()
                .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
                .collect::<Vec<_>>()
                .join(", "),
            _ => continue,
        };
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td></tr>",
            escape(&name.replace('_', " ")),
            escape(&value)
        );
    }
    html.push_str("</table>\n");
}

/// A corpus run's time per page by stage, from its summary's `stage_nanos`.
pub(crate) fn corpus_stages(corpus: &serde_json::Map<String, serde_json::Value>) -> Vec<StageTime> {
    let pages = corpus
        .get("pages")
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(0.0)
        .max(1.0);
    corpus
        .get("stage_nanos")
        .and_then(serde_json::Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(stage, nanos)| {
            let nanos = nanos.as_f64()?;
            Some(StageTime {
                stage: stage.clone(),
                total_ms: nanos / 1e6,
                per_page_us: nanos / 1e3 / pages,
            })
        })
        .collect()
}

/// Cumulative pages and bytes by verdict, over a corpus in order.
pub(crate) fn over_the_corpus(html: &mut String, tally: &Tally) {
    html.push_str("<h2>Over the corpus</h2>\n");
    let label = format!("pages in corpus order (0 to {})", tally.decisions());
    html.push_str(&cumulative(
        tally,
        "Pages, cumulative, by verdict",
        &label,
        pages,
    ));
    html.push_str(&cumulative(
        tally,
        "Bytes, cumulative, by verdict",
        &label,
        bytes,
    ));
}
