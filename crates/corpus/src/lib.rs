//! Near-duplicate clusters over a corpus someone already holds: WARC files from any crawler
//! (GNU wget `--warc-file`, Heritrix, Common Crawl, nearcrawl) and JSON lines of text.
//!
//! Pages are analysed as the crawl analyses them (decoding, main content, the host template
//! model, the same features and simhash) and judged by the crawl's own
//! [`DedupStage`](nearcrawl_dedup::DedupStage) in corpus order, so a page's original is the
//! first page of its content in the corpus: exact key, the permuted-table Hamming index,
//! sentence-fingerprint candidates, LCS verification; the index is asked for a whole batch at
//! once. Analysis runs on every core (rayon) while the previous batch is judged; a page's
//! site template is decided once the template model has seen the pages after it
//! ([`TEMPLATE_LOOKAHEAD`]). No verdict depends on the batch size or the threads.
//!
//! - [`warc`]: a WARC/1.0 and 1.1 reader, plain or gzipped, that names a damaged record by
//!   its offset and goes on.
//! - [`input`]: inputs as documents: `response`, `resource` and `revisit` records, JSON lines
//!   with a text field; formats recognised from the bytes.
//! - [`run`]: the job: `records.jsonl`, `clusters.jsonl`, `keep.txt`, `summary.json`,
//!   `report.html`, resumable from checkpoints in `OUT/work/`.
//!
//! ```no_run
//! use nearcrawl_corpus::{CorpusConfig, run};
//!
//! let config = CorpusConfig::new(vec!["crawl.warc.gz".into()], "dedup-out".into());
//! if let Some(summary) = run(&config)? {
//!     println!("{} pages, {} clusters", summary.counts.pages, summary.clusters);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod candidates;
mod http;
pub mod input;
mod job;
mod kept;
pub mod warc;

pub use crate::http::{HttpResponse, is_page_type, parse_response};
pub use crate::input::{Content, Cursor, Document, Format, InputReader, Item, JsonlFields, sniff};
pub use crate::job::{
    Cluster, CorpusConfig, CorpusError, CorpusRecord, Counts, DEFAULT_BATCH, Member, Summary,
    TEMPLATE_LOOKAHEAD, run,
};
pub use crate::kept::{KeptPage, KeptPages};
