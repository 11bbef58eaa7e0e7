//! XML sitemaps (sitemaps.org): the `<loc>` URLs of a `<urlset>` or a `<sitemapindex>`, read
//! with `quick-xml` (a maintained parser in place of the scanner of our own it replaced).

use quick_xml::Reader;
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::Event;

/// What a sitemap file lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sitemap {
    /// `<urlset>`: page URLs.
    Pages(Vec<String>),
    /// `<sitemapindex>`: further sitemaps.
    Index(Vec<String>),
}

/// Reads a sitemap file as fetched (`body`, at most `limit` bytes once decoded): plain XML,
/// or gzip data (`.xml.gz` files are usually served as gzip data, not with a
/// `Content-Encoding`). What is wrong with it, when it is not a sitemap.
pub fn read_sitemap_file(body: &[u8], limit: u64) -> Result<Sitemap, String> {
    let decoded;
    let body = match body.starts_with(&[0x1f, 0x8b]) {
        true => {
            decoded = crate::decode_content(Some("gzip"), body, limit)
                .map_err(|e| format!("sitemap: {e}"))?
                .0;
            &decoded[..]
        }
        false => body,
    };
    read_sitemap(&String::from_utf8_lossy(body))
        .ok_or_else(|| "not a sitemap (no urlset or sitemapindex)".to_string())
}

/// Reads the `<loc>` values of a sitemap (UTF-8 XML, read by `quick-xml`: entities and
/// character references decoded, CDATA sections taken as they are). The root element, with
/// or without a namespace prefix and in any case, says what it lists; `None` when it is
/// neither a `urlset` nor a `sitemapindex`. A document cut short or malformed gives the
/// `<loc>` values read before the fault (a sitemap cut at the size limit is still read).
pub fn read_sitemap(text: &str) -> Option<Sitemap> {
    let mut reader = Reader::from_str(text);
    let mut root: Option<bool> = None;
    let mut locs = Vec::new();
    // The text of the `<loc>` being read, if one is open.
    let mut loc: Option<String> = None;
    loop {
        let event = match reader.read_event() {
            Ok(Event::Eof) | Err(_) => break,
            Ok(event) => event,
        };
        match event {
            Event::Start(tag) | Event::Empty(tag) if root.is_none() => {
                let name = tag.local_name();
                match name.as_ref().to_ascii_lowercase().as_str() {
                    "urlset" => root = Some(false),
                    "sitemapindex" => root = Some(true),
                    _ => return None,
                }
            }
            Event::Start(tag) if tag.local_name().as_ref().eq_ignore_ascii_case("loc") => {
                loc = Some(String::new());
            }
            Event::End(tag) if tag.local_name().as_ref().eq_ignore_ascii_case("loc") => {
                if let Some(value) = loc.take().map(|l| l.trim().to_string())
                    && !value.is_empty()
                {
                    locs.push(value);
                }
            }
            Event::Text(text) => {
                if let Some(loc) = loc.as_mut() {
                    loc.push_str(&text.into_inner());
                }
            }
            Event::CData(data) => {
                if let Some(loc) = loc.as_mut() {
                    loc.push_str(&data.into_inner());
                }
            }
            Event::GeneralRef(reference) => {
                if let Some(loc) = loc.as_mut() {
                    match reference.resolve_char_ref() {
                        Ok(Some(c)) => loc.push(c),
                        _ => {
                            // An entity XML does not define is kept as written.
                            let name = reference.into_inner();
                            match resolve_predefined_entity(&name) {
                                Some(resolved) => loc.push_str(resolved),
                                None => loc.push_str(&format!("&{name};")),
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Some(match root? {
        true => Sitemap::Index(locs),
        false => Sitemap::Pages(locs),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urlset_and_index() {
        let urlset = r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc> http://example.com/a?x=1&amp;y=2 </loc><lastmod>2026-01-01</lastmod></url>
  <url><LOC>http://example.com/&#x62;</LOC></url>
  <url><loc><![CDATA[http://example.com/c&d]]></loc></url>
  <url><loc>http://example.com/e?a=1&nbsp;</loc></url>
</urlset>"#;
        assert_eq!(
            read_sitemap(urlset),
            Some(Sitemap::Pages(vec![
                "http://example.com/a?x=1&y=2".into(),
                "http://example.com/b".into(),
                "http://example.com/c&d".into(),
                "http://example.com/e?a=1&nbsp;".into()
            ]))
        );
        let index = r#"<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:sitemap><sm:loc>http://example.com/s1.xml.gz</sm:loc></sm:sitemap></sm:sitemapindex>"#;
        assert_eq!(
            read_sitemap(index),
            Some(Sitemap::Index(vec!["http://example.com/s1.xml.gz".into()]))
        );
        assert_eq!(
            read_sitemap("<html><body>not a sitemap</body></html>"),
            None
        );
        assert_eq!(
            read_sitemap("<urlset><url><loc>unterminated"),
            Some(Sitemap::Pages(vec![]))
        );
    }

    #[test]
    fn a_sitemap_file_read_plain_or_gzipped_or_refused() {
        use std::io::Write;
        let xml = "<urlset><url><loc>http://example.com/a</loc></url></urlset>";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(xml.as_bytes()).unwrap();
        let gz = gz.finish().unwrap();
        let pages = Sitemap::Pages(vec!["http://example.com/a".into()]);
        // (what it protects, the file as fetched, its limit) -> the sitemap, or the error's start
        type Case<'a> = (&'a str, &'a [u8], u64, Result<Sitemap, &'a str>);
        let cases: [Case<'_>; 5] = [
            ("plain XML", xml.as_bytes(), 1 << 20, Ok(pages.clone())),
            (
                "gzip data without a Content-Encoding",
                &gz,
                1 << 20,
                Ok(pages),
            ),
            (
                "cut at the limit: what fits is read",
                &gz,
                8,
                Ok(Sitemap::Pages(vec![])),
            ),
            (
                "damaged gzip data",
                &[0x1f, 0x8b, 0, 1, 2][..],
                1 << 20,
                Err("sitemap: "),
            ),
            (
                "an HTML page",
                b"<html>no</html>",
                1 << 20,
                Err("not a sitemap"),
            ),
        ];
        for (what, body, limit, expected) in cases {
            match (read_sitemap_file(body, limit), expected) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{what}"),
                (Err(e), Err(start)) => assert!(e.starts_with(start), "{what}: {e}"),
                (got, want) => panic!("{what}: {got:?}, expected {want:?}"),
            }
        }
    }
}
