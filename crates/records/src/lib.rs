//! A crawl's output format, apart from the crawler that writes it: what a user, corpus dedup
//! (`nearcrawl-corpus`) and the HTML report (`nearcrawl-report`) read.
//!
//! - `records.jsonl`: one [`Record`] per URL decision, in decision order, with its
//!   [`Verdict`] and the evidence that decided it (the page it copies and how alike they are,
//!   the one fate the link policy decided for it ([`UrlFate`]: what decided it, the URL rule's
//!   [`Prediction`], the cheap [`Probe`] made before fetching), a recrawl's
//!   [`Change`]); [`read_records`] reads it a line at a time, naming `file:line` of a line that
//!   does not parse.
//! - `report.json`: the job's [`Report`], counted from its records by [`ReportBuilder`], with
//!   what the run knows of itself ([`RunFacts`]).
//! - `what-if.json`: the exact [`WhatIf`] of a `--no-dedup` crawl, replayed over its own link
//!   graph ([`replay`], [`reachable`]).
//! - The output directory itself: [`set_aside`] moves a job's outputs into `previous-N/` so it
//!   can start over, deleting nothing.
//!
//! No I/O beyond reading and writing these files, and none of the crawler's dependencies (no
//! async runtime, HTTP client, store or Redis client).
//!
//! ```
//! use nearcrawl_records::{Record, ReportBuilder, RunFacts, Verdict};
//!
//! let mut page = Record::new(0, "http://a.example/".into(), 0, Verdict::Unique);
//! page.status = Some(200);
//! page.bytes = 2_000;
//! let mut copy = Record::new(1, "http://b.example/".into(), 1, Verdict::Near);
//! copy.status = Some(200);
//! copy.bytes = 1_900;
//! copy.duplicate_of = Some(page.url.clone());
//! let mut report = ReportBuilder::new(RunFacts::default());
//! for record in [&page, &copy] {
//!     report.add(record);
//! }
//! let report = report.finish();
//! assert_eq!((report.pages_fetched, report.near_duplicates), (2, 1));
//! assert_eq!(report.duplicate_bytes, 1_900);
//! ```

mod dates;
mod error;
mod fates;
mod kinds;
mod outputs;
mod probe;
mod record;
mod report;
mod what_if;

pub use crate::dates::rfc3339;
pub use crate::error::RecordsError;
pub use crate::fates::{Counts, Legacy, LinkFates, UrlFate};
pub use crate::kinds::{Change, Verdict};
pub use crate::outputs::{PREVIOUS_FILE, set_aside, set_aside_named, unfinished_recrawl};
pub use crate::probe::{Prediction, Probe, Sample};
pub use crate::record::{Record, Rendered, read_records};
pub use crate::report::{
    AddressSummary, ChangeFigures, DedupTiming, HostRevisits, IndexFigures, PredictionFigures,
    RecrawlFigures, RenderFigures, Report, ReportBuilder, RunFacts, SharedJobFigures, StageTime,
    round3,
};
pub use crate::what_if::{WhatIf, reachable, replay, what_if};
