//! URL canonicalisation never panics, and is idempotent: a canonical URL parses to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nearcrawl_frontier::CanonicalUrl;

fuzz_target!(|data: &[u8]| {
    let input = String::from_utf8_lossy(data);
    if let Ok(url) = CanonicalUrl::parse(&input) {
        let again = CanonicalUrl::parse(url.as_str()).expect("a canonical URL parses");
        assert_eq!(
            again.as_str(),
            url.as_str(),
            "canonicalisation is idempotent"
        );
        let _ = url.authority();
    }
});
