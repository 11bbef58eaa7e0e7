//! LCS verification.
mod lcs;
mod skeleton;
mod trustable;
mod verify;
pub use crate::lcs::{lcs_len_reference, lcs_pairs};
pub use crate::skeleton::{skeleton, window_hashes};
pub use crate::trustable::trustable_region;
pub use crate::verify::{Verification, VerifyConfig, verify};
