//! Local webs for `nearcrawl demo` and for the crawler's tests: an in-process HTTP/1.1
//! server (hyper) that serves a [`Site`] (a table of paths to scripted [`Reply`]s: status,
//! headers, body, delay, gzip, connection reset, plus a generator for endless paths) on a
//! free 127.0.0.1 port, and logs every request so a test can check what was fetched.
//!
//! [`DemoWeb`] generates the demo: an origin news site, a mirror under another template, a
//! syndicated copy with edits, and an endless calendar trap, from seeded pseudo-text.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! use nearcrawl_demo_web::{Reply, Site, serve};
//!
//! let site = serve(Site::new().page("/", Reply::html("<p>hello</p>"))).await?;
//! assert!(site.url("/").starts_with("http://127.0.0.1:"));
//! # Ok(()) }
//! ```

mod demo;
mod server;
mod text;

pub use crate::demo::{DemoConfig, DemoWeb};
pub use crate::server::{Exchange, Generator, Reply, RunningSite, Site, serve, serve_on};
pub use crate::text::{Article, Writer};
