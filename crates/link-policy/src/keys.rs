//! The key a URL (or a place links wait on) is known by: in the crawl's seen set, in its
//! parked links, in the policy's state.

/// A URL's key: 128-bit xxh3 of its canonical form, collision odds negligible at any crawl
/// size. The store's seen-set key is this one (`nearcrawl_store::url_key`).
pub type Key = [u8; 16];

/// The key of a canonical URL, or of a place links wait on ("mirror A of B", "hub 12").
pub fn key(text: &str) -> Key {
    xxhash_rust::xxh3::xxh3_128(text.as_bytes()).to_be_bytes()
}
