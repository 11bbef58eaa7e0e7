//! The job's report (`nearcrawl_records::Report`), counted from the store's records and the
//! run's progress.

use std::time::SystemTime;

use nearcrawl_records::{
    IndexFigures, Record, Report, ReportBuilder, RunFacts, StageTime, rfc3339, round3,
};
use nearcrawl_store::CrawlStore;

use crate::error::EngineError;
use crate::progress::Progress;

/// The figures of `index`.
pub(crate) fn index_figures(index: &nearcrawl_hamming_index::HammingIndex) -> IndexFigures {
    let (entries, heap_bytes) = (index.len() as u64, index.heap_bytes() as u64);
    IndexFigures {
        entries,
        tables: index.params().table_count() as u64,
        heap_bytes,
        bytes_per_entry: round3(heap_bytes as f64 / entries.max(1) as f64),
    }
}

/// Builds the report from the store's records.
pub(crate) fn build(
    store: &dyn CrawlStore,
    queued: u64,
    robots_bytes: u64,
    run_started: SystemTime,
    interrupted: bool,
    progress: &Progress,
) -> Result<Report, EngineError> {
    let mut report = ReportBuilder::new(RunFacts {
        queued,
        robots_bytes,
        run_started: rfc3339(run_started),
        run_seconds: progress.elapsed_secs(),
        interrupted,
        dropped_never_fetched: store.dropped_unseen()?,
    });
    for_each_stored_record(store, &mut |record| report.add(&record))?;
    let mut report = report.finish();
    let run_pages = Progress::get(&progress.pages) as f64;
    report.run_stages = progress
        .stage_times()
        .iter()
        .filter(|&(_, nanos)| nanos > 0)
        .map(|(stage, nanos)| StageTime {
            stage: stage.name().to_string(),
            total_ms: round3(nanos as f64 / 1e6),
            per_page_us: round3(nanos as f64 / 1e3 / run_pages.max(1.0)),
        })
        .collect();
    report.run_sentence_matches_per_page =
        round3(Progress::get(&progress.sentence_matches) as f64 / run_pages.max(1.0));
    report.run_pages_per_second = if report.run_seconds > 0.0 {
        run_pages / report.run_seconds
    } else {
        0.0
    };
    Ok(report)
}

/// Hands each record the store holds to `each`, in decision order; a record that does not
/// parse is the store's corruption.
pub(crate) fn for_each_stored_record(
    store: &dyn CrawlStore,
    each: &mut dyn FnMut(Record),
) -> Result<(), EngineError> {
    let mut bad = None;
    store.for_each_record(
        0,
        &mut |seq, bytes| match serde_json::from_slice::<Record>(bytes) {
            // (A record written before this version's form, in a resumed crawl's store.)
            Ok(record) => each(record.upgraded()),
            Err(e) => {
                bad.get_or_insert(format!("record {seq}: {e}"));
            }
        },
    )?;
    match bad {
        Some(reason) => Err(EngineError::Store(nearcrawl_store::StoreError::Corrupt {
            table: "records",
            reason,
        })),
        None => Ok(()),
    }
}
