//! Fetched bytes to what the dedup stage should fingerprint.
//!
//! Fingerprints of raw pages are dominated by templates, ads, counters and timestamps. This
//! crate turns a fetched page into the text that identifies it, in one parse:
//!
//! - [`decode_content`]: the bytes on the wire to the document's (`Content-Encoding`: gzip,
//!   deflate, br, zstd), within a limit that stops a decompression bomb.
//! - [`decode`]: bytes to text, with the charset from the BOM, the `Content-Type` header, a
//!   `<meta>` declaration or detection (chardetng), in that order.
//! - [`Document`]: a fast, forgiving HTML parser (implied end tags, raw text, all WHATWG
//!   character references) that builds a compact tree in document order.
//! - [`PageFacts`]: title, links (resolved against `<base>`, `nofollow` marked), canonical URL,
//!   meta robots and declared language, read from that tree.
//! - [`ContentExtractor`]: main content versus boilerplate, block by block (F1 0.970 on the
//!   181-page article-extraction benchmark at about 0.3 ms per page).
//! - [`TemplateModel`]: blocks that repeat across the pages of a host, learnt as a crawl goes.
//!
//! No I/O and no async: everything here works on bytes already fetched.
//!
//! ```
//! use nearcrawl_extract::{ContentExtractor, Document, PageFacts, decode};
//!
//! let bytes = "<html><head><title>Caf\u{e9}</title></head><body><nav><a href=/>Home</a></nav>\
//!     <article><p>Our caf\u{e9} opens at eight, serves coffee, tea and cake, and closes at six.</p>\
//!     <p>On Sundays, it opens at ten, and the kitchen serves brunch until two.</p></article>\
//!     </body></html>".as_bytes();
//! let decoded = decode(bytes, Some("text/html; charset=utf-8"), None);
//! let doc = Document::parse(&decoded.text);
//! let url = url::Url::parse("https://example.com/cafe").unwrap();
//! let facts = PageFacts::read(&doc, &url);
//! assert_eq!(facts.title.as_deref(), Some("Caf\u{e9}"));
//! assert_eq!(facts.links[0].url.as_str(), "https://example.com/");
//!
//! let extraction = ContentExtractor::new().extract(&doc);
//! assert!(extraction.main_text().starts_with("Our caf\u{e9} opens at eight"));
//! assert!(!extraction.main_text().contains("Home"));
//! ```

mod content;
mod decode;
mod entities;
mod entity;
mod html;
mod page;
mod sitemap;
mod tag;
mod template;
mod wire;

pub use crate::content::{ContentExtractor, Extraction, MIN_ARTICLE_SCORE, TextBlock};
pub use crate::decode::{CharsetSource, Decoded, charset_from_content_type, decode};
pub use crate::html::{Attribute, Children, Document, Node, NodeId};
pub use crate::page::{CONTEXT_BYTES, Link, LinkReading, MetaRobots, PageFacts};
pub use crate::sitemap::{Sitemap, read_sitemap, read_sitemap_file};
pub use crate::tag::{Attr, Tag};
pub use crate::template::{BlockKey, TemplateConfig, TemplateModel};
pub use crate::wire::{decode_content, is_page_type};
