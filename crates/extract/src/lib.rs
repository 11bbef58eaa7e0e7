//! Fetched bytes to what the dedup stage should fingerprint.
mod content;
mod decode;
mod entities;
mod entity;
pub mod html;
mod page;
mod tag;

pub use crate::content::{ContentExtractor, Extraction, TextBlock};
pub use crate::decode::{CharsetSource, Decoded, charset_from_content_type, decode};
pub use crate::html::{Document, NodeId};
pub use crate::page::{Link, MetaRobots, PageFacts};
pub use crate::tag::{Attr, Tag};
