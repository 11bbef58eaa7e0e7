//! Fetched bytes to what the dedup stage should fingerprint.
mod decode;
mod entities;
mod entity;
pub mod html;
mod tag;

pub use crate::decode::{CharsetSource, Decoded, charset_from_content_type, decode};
pub use crate::html::{Document, NodeId};
pub use crate::tag::{Attr, Tag};
