//! LCS verification.
mod lcs;
pub use crate::lcs::{lcs_len_reference, lcs_pairs};
