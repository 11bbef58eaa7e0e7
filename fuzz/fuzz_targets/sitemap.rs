//! Sitemap reading never panics on any text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nearcrawl_extract::read_sitemap;

fuzz_target!(|data: &[u8]| {
    let _ = read_sitemap(&String::from_utf8_lossy(data));
});
