//! The crawl frontier's rules, without I/O: what a URL is, which URLs a job may fetch, when a
//! host may be asked again, and which links to follow first.
//!
//! - [`CanonicalUrl`]: one spelling per resource (fragments, default ports, percent-encoding,
//!   query order, tracking parameters and session ids normalised away).
//! - [`read_seeds`]: seed lists, with errors naming `file:line`.
//! - [`Scope`]: seed hosts / seed domains / any host, include and exclude patterns, depth, and
//!   the [`AddressPolicy`] that keeps a public page from steering the crawler into a private
//!   network.
//! - [`HostPoliteness`]: connections per host, delays, `Crawl-delay`, back-off on 429 and 5xx with
//!   `Retry-After`, parking of hosts that keep failing. The caller passes the time in.
//! - [`AddressPoliteness`]: the same budget per server address ([`AddressKey`]), shared by
//!   every name on it, with back-off when several of its names fail at once.
//! - [`TrapRules`]: URLs that give a crawler trap away by themselves (paths ever deeper, or
//!   repeating their own segments).
//! - [`Relevance`]: a focused crawl's topic (terms, example pages, a description) as a tf-idf
//!   vector under the crawl's own document frequencies, page relevance, link priorities and
//!   the tunnelling budget through off-topic pages.
//!
//! The queues themselves live in the crawl store (`nearcrawl-store`); the engine
//! (`nearcrawl-engine`) applies these rules to them.
//!
//! ```
//! use nearcrawl_frontier::{CanonicalUrl, Scope, ScopeConfig, parse_seeds, OutOfScope};
//! use std::path::Path;
//!
//! let seeds = parse_seeds("# a job\nhttp://Example.com:80/docs/\n", Path::new("seeds.txt")).unwrap();
//! let scope = Scope::new(&ScopeConfig::default(), &seeds).unwrap();
//! let link = CanonicalUrl::parse("http://example.com/docs/a?utm_source=feed#top").unwrap();
//! assert_eq!(link.as_str(), "http://example.com/docs/a");
//! assert_eq!(scope.check(&link, 1), Ok(()));
//! let away = CanonicalUrl::parse("http://elsewhere.org/").unwrap();
//! assert_eq!(scope.check(&away, 1), Err(OutOfScope::Host));
//! ```

mod address;
mod canonical;
mod focus;
mod politeness;
mod scope;
mod seeds;
mod sessions;
mod traps;

pub use crate::address::{AddressKey, AddressPoliteness, FAILING_NAMES};
pub use crate::canonical::{CanonicalUrl, UrlError, authority};
pub use crate::focus::{
    DocFrequencies, FocusConfig, PageFocus, Priority, Relevance, TermCounts, TopicError,
};
pub use crate::politeness::{
    ADDRESS_CONNECTIONS, ADDRESS_DELAY_MS, HostOutcome, HostPoliteness, PolitenessConfig,
};
pub use crate::scope::{
    AddressPolicy, HostScope, OutOfScope, Scope, ScopeConfig, ScopeError, is_non_public,
    registrable_domain,
};
pub use crate::seeds::{Seed, SeedError, parse_seeds, read_seeds};
pub use crate::sessions::{EVIDENCE, SessionParams, Stripped};
pub use crate::traps::{
    PATH_PATTERNS, PatternPath, SAME_TEXT_DISTANCE, SameText, Trap, TrapConfig, TrapRules,
    UrlPattern,
};
