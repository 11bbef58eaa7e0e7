//! robots.txt parsing never panics; `/robots.txt` itself is always allowed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nearcrawl_fetch::RobotsRules;

fuzz_target!(|data: &[u8]| {
    let rules = RobotsRules::from_response("nearcrawl", 200, data);
    let robots = url::Url::parse("http://example.org/robots.txt").expect("a fixed URL");
    assert!(rules.allows(&robots));
    for path in ["/", "/a/b?c=d", "/%7Euser/", "/*$"] {
        let url = url::Url::parse(&format!("http://example.org{path}")).expect("a fixed URL");
        let _ = rules.allows(&url);
    }
});
