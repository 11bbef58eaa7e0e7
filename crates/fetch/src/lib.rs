//! HTTP for the crawler: [`Fetcher`] makes one GET per call and returns what a crawl record
//! and a WARC file need: status, headers in order, the body as received (content-encoded)
//! and decoded, the bytes received on the wire, whether the body cap cut it, and the request
//! as sent. It follows no redirects itself (each hop goes back through the frontier, so it is
//! scoped, deduplicated and recorded) and decompresses gzip, deflate, br and zstd itself, so
//! the wire size is known and a decompression bomb stops at the cap.
//!
//! Names are resolved by a [`PolicyResolver`] that drops addresses the job's
//! [`nearcrawl_frontier::AddressPolicy`] refuses. [`RobotsRules`] applies RFC 9309: rules
//! from a 2xx file, everything allowed on 4xx, nothing allowed while the file is unavailable.
//!
//! The crawl takes any [`Fetch`] (one GET, a host's robots.txt); [`Fetcher`] is the HTTP one.
//!
//! This crate and `nearcrawl-engine` are the only ones with tokio and reqwest.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use nearcrawl_fetch::{FetchConfig, Fetcher};
//! use nearcrawl_frontier::AddressPolicy;
//!
//! let fetcher = Fetcher::new(FetchConfig::default(), AddressPolicy::default())?;
//! let site = url::Url::parse("http://example.com/")?;
//! let robots = fetcher.fetch_robots(&site).await;
//! if robots.rules.allows(&site) {
//!     let page = fetcher.fetch(&site).await?;
//!     println!("{} {} bytes on the wire", page.status, page.wire_bytes);
//! }
//! # Ok(()) }
//! ```

mod config;
mod dns_ttl;
mod fetch;
mod fetched;
mod fetcher;
mod ranges;
mod resolve;
mod robots;

pub use crate::config::FetchConfig;
pub use crate::fetch::{BoxFuture, Fetch};
pub use crate::fetched::{Fetched, LargeBody};
pub use crate::fetcher::{BuildError, FailureKind, FetchFailure, Fetcher, Resolved, Validators};
pub use crate::ranges::{Parts, RangeError, byte_ranges};
pub use crate::resolve::{MIN_TTL, PolicyResolver};
pub use crate::robots::{RobotsFetch, RobotsRules, RobotsSource};
