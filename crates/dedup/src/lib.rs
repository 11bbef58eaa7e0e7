//! The dedup stage's pure logic: what a page is, and whether two pages are the same.
//!
//! [`Analyzer::analyze_html`] runs the page-understanding pipeline once per page: decode,
//! parse, read the page facts, separate main content from boilerplate, tokenize, weigh
//! features, and compute the 64-bit simhash and the exact-duplicate key.
//! [`Analyzer::compare`] compares two analyses: Hamming distance, exact-key equality, shingle
//! resemblance and containment, the LCS verification's resemble and contain rates, and a
//! [`Verdict`].
//!
//! ```
//! use nearcrawl_dedup::{Analyzer, AnalyzerConfig, Verdict};
//!
//! let analyzer = Analyzer::new(AnalyzerConfig::default());
//! let body = "Rivers carve valleys over thousands of years, moving sediment from the \
//!             mountains to the sea. In hard rock a river cuts a narrow gorge with steep walls. \
//!             In soft rock the walls slump and the valley widens into a gentle V.";
//! let a = analyzer.analyze_text(body);
//! let b = analyzer.analyze_text(&body.to_uppercase());
//! assert_eq!(analyzer.compare(&a, &b).verdict, Verdict::Exact);
//! let c = analyzer.analyze_text("Glaciers leave U-shaped valleys because the ice grinds the floor and the walls.");
//! assert_eq!(analyzer.compare(&a, &c).verdict, Verdict::Distinct);
//! ```

mod analyze;
mod compare;

pub use crate::analyze::{Analyzer, AnalyzerConfig, PageAnalysis};
pub use crate::compare::{Comparison, Verdict};
