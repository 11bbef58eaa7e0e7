//! XML sitemaps (sitemaps.org): the `<loc>` URLs of a `<urlset>` or a `<sitemapindex>`.

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

/// Reads the `<loc>` values of a sitemap (UTF-8 XML; entities `&amp;` `&lt;` `&gt;`
/// `&quot;` `&apos;` and numeric references decoded, CDATA sections taken as they are).
/// Namespace prefixes on the elements are accepted. Returns `None` when the text is neither
/// a urlset nor a sitemap index.
pub fn read_sitemap(text: &str) -> Option<Sitemap> {
    let lower = text.to_ascii_lowercase();
    let is_index = lower.contains("sitemapindex");
    if !is_index && !lower.contains("urlset") {
        return None;
    }
    let mut locs = Vec::new();
    let mut at = 0;
    while let Some(open) = find_tag(&lower, at, "loc") {
        let Some(gt) = lower[open..].find('>') else {
            break;
        };
        let start = open + gt + 1;
        let Some(close) = find_closing(&lower, start, "loc") else {
            break;
        };
        let raw = text[start..close].trim();
        let raw = raw
            .strip_prefix("<![CDATA[")
            .and_then(|r| r.strip_suffix("]]>"))
            .map_or_else(|| unescape(raw), str::to_owned);
        if !raw.is_empty() {
            locs.push(raw.trim().to_string());
        }
        at = close + 1;
    }
    Some(if is_index {
        Sitemap::Index(locs)
    } else {
        Sitemap::Pages(locs)
    })
}

/// Position of the next `<loc>` or `<prefix:loc>` start tag at or after `from`.
fn find_tag(lower: &str, from: usize, name: &str) -> Option<usize> {
    let mut at = from;
    while let Some(lt) = lower[at..].find('<') {
        let start = at + lt;
        let rest = &lower[start + 1..];
        let tag_name: &str = rest
            .split(|c: char| c == '>' || c.is_whitespace() || c == '/')
            .next()
            .unwrap_or("");
        let local = tag_name.rsplit(':').next().unwrap_or("");
        if local == name && !rest.starts_with('/') {
            return Some(start);
        }
        at = start + 1;
    }
    None
}

fn find_closing(lower: &str, from: usize, name: &str) -> Option<usize> {
    let mut at = from;
    while let Some(lt) = lower[at..].find("</") {
        let start = at + lt;
        let tag_name = lower[start + 2..].split('>').next().unwrap_or("").trim();
        if tag_name.rsplit(':').next() == Some(name) {
            return Some(start);
        }
        at = start + 2;
    }
    None
}

fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        let Some(semi) = after.find(';').filter(|&s| s <= 10) else {
            out.push('&');
            rest = after;
            continue;
        };
        let entity = &after[..semi];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .or_else(|| entity.strip_prefix("#X"))
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &after[semi + 1..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
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
</urlset>"#;
        assert_eq!(
            read_sitemap(urlset),
            Some(Sitemap::Pages(vec![
                "http://example.com/a?x=1&y=2".into(),
                "http://example.com/b".into(),
                "http://example.com/c&d".into()
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
