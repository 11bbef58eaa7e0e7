//! Detection quality, measured.
//!
//! [`build`] generates and serves a labelled web on 127.0.0.x from real text read at run time
//! from Debian documentation packages ([`Corpus`]: `python3.11-doc` for tuning, `git-doc`
//! held out, `debian-reference-zh-cn` for Chinese): an origin site, a mirror under another
//! template and URL scheme, syndicated copies with the labelling guideline's edits (and heavy
//! rewrites labelled unknown), a Chinese site and its GBK mirror, a template-heavy shop whose
//! pages differ only in a short text (the hard negatives), exact duplicates behind URL
//! variants, an endless calendar trap, robots-disallowed areas, and pages reachable only
//! through the mirror. [`Truth`] says what every URL is.
//!
//! [`run`] crawls it with dedup and with `--no-dedup` and [`measure`]s: precision and recall
//! of the duplicate verdicts per kind of variant, bytes saved against the baseline and against
//! an oracle that skips exactly the true duplicates, coverage of content groups, robots
//! violations.
//!
//! [`build_shop`] serves a shop whose listings take sort, filter, page and session-id
//! parameters and whose products have print and colour variants; [`run_shop`] measures it
//! as [`run`] does the labelled web.
//!
//! [`run_focused`] measures focused crawling on manuals served behind a portal page
//! ([`build_focused`]): the harvest rate and recall of a focused crawl per [`Topic`], given as
//! terms, examples or a description, against a breadth-first crawl of the same web.

mod corpus;
mod corpus_dedup;
mod focused;
mod measure;
mod pairs;
mod real;
mod run;
mod shop;
mod truth;
mod web;

pub use crate::corpus::{Corpus, CorpusError, Source};
pub use crate::corpus_dedup::{
    CorpusDedupReport, MinHashBaseline, PairScore, ToolRun, run_corpus_dedup, score_clusters,
};
pub use crate::focused::{
    FocusedSize, FocusedWeb, Harvest, Manual, RECALL_TARGET, TOPICS, Topic, TopicFrom,
    TopicMeasure, build_focused, harvest_svg, measure_harvest,
};
pub use crate::measure::{KindCounts, Labels, Measures, content_bound, copy_bound, measure};
pub use crate::pairs::{CurvePoint, MeasuredPair, PairReport, measure_pairs, measure_real_pairs};
pub use crate::real::{
    RealLabelledWeb, RealSize, RealTruth, RealWeb, RealWebError, build_real, build_real_served,
    is_script_shell, sequence_ratio,
};
pub use crate::run::{
    RunConfig, RunError, Workers, local_crawl_config, run, run_focused, run_pairs, run_real,
    run_real_pairs, run_shop,
};
pub use crate::shop::{ShopConfig, build_shop};
pub use crate::truth::{Kind, PageTruth, Truth};
pub use crate::web::{LabelledWeb, SITE_NAMES, WebConfig, build};
