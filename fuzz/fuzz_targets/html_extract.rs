//! Decoding, parsing, page facts and main-content extraction never panic on any bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nearcrawl_extract::{CONTEXT_BYTES, ContentExtractor, Document, LinkReading, PageFacts, decode};

fuzz_target!(|data: &[u8]| {
    let decoded = decode(data, Some("text/html"), Some("org"));
    let doc = Document::parse(&decoded.text);
    let url = url::Url::parse("http://example.org/dir/page.html").expect("a fixed URL");
    let facts = PageFacts::read(&doc, &url);
    for link in &facts.links {
        assert!(matches!(link.url.scheme(), "http" | "https"));
    }
    // With the text after each link (a focused crawl's reading): the same links.
    let with = PageFacts::read_links(&doc, &url, usize::MAX, LinkReading::WithContext);
    assert_eq!(with.links.len(), facts.links.len());
    for link in &with.links {
        assert!(link.context.len() <= CONTEXT_BYTES);
    }
    let extraction = ContentExtractor::new().extract(&doc);
    let _ = (extraction.main_text(), extraction.full_text());
});
