//! Bytes to text: the charset of a fetched page, decided the way browsers decide it.

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};

use crate::html::Document;
use crate::tag::{Attr, Tag};

/// How many leading bytes are searched for a `<meta>` charset declaration (the HTML prescan
/// looks at 1024).
const META_PRESCAN_BYTES: usize = 1024;

/// Where the charset of a decoded page came from, most trusted first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CharsetSource {
    /// A byte order mark (UTF-8, UTF-16LE or UTF-16BE).
    Bom,
    /// The `charset` parameter of the HTTP `Content-Type` header.
    ContentType,
    /// `<meta charset>` or `<meta http-equiv=Content-Type>` in the first 1024 bytes.
    Meta,
    /// Valid UTF-8, or chardetng's guess from the bytes themselves.
    Detected,
}

/// A page's text and how it was decoded.
#[derive(Clone, Debug)]
pub struct Decoded {
    /// The text; malformed sequences became U+FFFD.
    pub text: String,
    /// The encoding used.
    pub encoding: &'static Encoding,
    /// Why that encoding.
    pub source: CharsetSource,
    /// True when some bytes were malformed in that encoding.
    pub had_errors: bool,
}

/// Decodes a page: BOM, then the `Content-Type` charset, then a `<meta>` declaration in the
/// first 1024 bytes, then detection (valid UTF-8, else chardetng). `tld` (for example `"cn"`)
/// helps the detector on short pages; pass `None` when unknown.
pub fn decode(bytes: &[u8], content_type: Option<&str>, tld: Option<&str>) -> Decoded {
    if let Some((encoding, bom_len)) = Encoding::for_bom(bytes) {
        return finish(&bytes[bom_len..], encoding, CharsetSource::Bom);
    }
    if let Some(encoding) = content_type.and_then(charset_from_content_type) {
        return finish(bytes, encoding, CharsetSource::ContentType);
    }
    if let Some(encoding) = prescan_meta(bytes) {
        return finish(bytes, encoding, CharsetSource::Meta);
    }
    let encoding = if std::str::from_utf8(bytes).is_ok() {
        UTF_8
    } else {
        let mut detector = chardetng::EncodingDetector::new();
        detector.feed(bytes, true);
        detector.guess(tld.map(str::as_bytes), false)
    };
    finish(bytes, encoding, CharsetSource::Detected)
}

fn finish(bytes: &[u8], encoding: &'static Encoding, source: CharsetSource) -> Decoded {
    let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
    Decoded {
        text: text.into_owned(),
        encoding,
        source,
        had_errors,
    }
}

/// The encoding named by `charset=` in a `Content-Type` value, if it names a known one.
pub fn charset_from_content_type(content_type: &str) -> Option<&'static Encoding> {
    let lower = content_type.to_ascii_lowercase();
    let start = lower.find("charset")? + "charset".len();
    let rest = lower[start..].trim_start().strip_prefix('=')?.trim_start();
    let rest = rest.trim_start_matches(['"', '\'']);
    let end = rest
        .find(|c: char| c == ';' || c == '"' || c == '\'' || c.is_whitespace())
        .unwrap_or(rest.len());
    Encoding::for_label(&rest.as_bytes()[..end])
}

/// `<meta charset>` or `<meta http-equiv=content-type content="...; charset=...">` in the first
/// 1024 bytes. A declared UTF-16 means UTF-8 (the page could not have declared it in ASCII
/// otherwise) and x-user-defined means windows-1252, as in the HTML standard.
fn prescan_meta(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(META_PRESCAN_BYTES)]);
    let doc = Document::parse(&head);
    let encoding = (0..doc.len() as u32)
        .filter(|&id| doc.node(id).tag == Some(Tag::Meta))
        .find_map(|id| {
            if let Some(label) = doc.attr(id, Attr::Charset) {
                return Encoding::for_label(label.trim().as_bytes());
            }
            let is_content_type = doc
                .attr(id, Attr::HttpEquiv)
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("content-type"));
            if is_content_type {
                doc.attr(id, Attr::Content)
                    .and_then(charset_from_content_type)
            } else {
                None
            }
        })?;
    Some(match encoding.name() {
        "UTF-16LE" | "UTF-16BE" => UTF_8,
        "x-user-defined" => WINDOWS_1252,
        _ => encoding,
    })
}

#[cfg(test)]
mod tests {
    use encoding_rs::{BIG5, GB18030, GBK, SHIFT_JIS, UTF_16LE};

    use super::*;

    const CHINESE: &str =
        "近似重复网页检测是搜索引擎的重要组成部分，它能节省大量的带宽和存储空间。";
    const TRADITIONAL: &str = "網頁去重是搜尋引擎的重要組成部分，它能節省大量的頻寬與儲存空間。";
    const JAPANESE: &str =
        "ウェブクローラーは重複したページを検出して帯域幅を節約します。日本語の文章です。";
    const FRENCH: &str = "Le crawler détecte les pages quasi identiques — économie de bande passante, à coût réduit.";

    fn page(body: &str) -> String {
        format!("<html><head><title>t</title></head><body><p>{body}</p><p>{body}</p></body></html>")
    }

    fn encode(encoding: &'static Encoding, text: &str) -> Vec<u8> {
        let (bytes, _, unmappable) = encoding.encode(text);
        assert!(
            !unmappable,
            "fixture text must be representable in {}",
            encoding.name()
        );
        bytes.into_owned()
    }

    #[test]
    fn every_source_in_order_of_trust() {
        let html = page(FRENCH);
        let latin = encode(WINDOWS_1252, &html);
        let mut with_bom = b"\xEF\xBB\xBF".to_vec();
        with_bom.extend_from_slice(html.as_bytes());

        let d = decode(&with_bom, Some("text/html; charset=windows-1252"), None);
        assert_eq!(
            (d.encoding, d.source, d.text.as_str()),
            (UTF_8, CharsetSource::Bom, html.as_str())
        );

        let d = decode(&latin, Some("text/html; Charset=\"ISO-8859-1\""), None);
        assert_eq!(
            (d.encoding, d.source, d.text.as_str()),
            (WINDOWS_1252, CharsetSource::ContentType, html.as_str())
        );

        let declared = format!(
            "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1252\">{html}"
        );
        let d = decode(&encode(WINDOWS_1252, &declared), Some("text/html"), None);
        assert_eq!(
            (d.encoding, d.source, d.text.as_str()),
            (WINDOWS_1252, CharsetSource::Meta, declared.as_str())
        );

        let d = decode(&latin, None, None);
        assert_eq!(
            (d.encoding, d.source, d.text.as_str()),
            (WINDOWS_1252, CharsetSource::Detected, html.as_str())
        );

        let d = decode(html.as_bytes(), None, None);
        assert_eq!((d.encoding, d.source), (UTF_8, CharsetSource::Detected));
    }

    #[test]
    fn chinese_japanese_and_traditional_pages_decode() {
        let cases = [
            (GBK, CHINESE, "gb2312"),
            (GB18030, CHINESE, "gb18030"),
            (BIG5, TRADITIONAL, "big5"),
            (SHIFT_JIS, JAPANESE, "shift_jis"),
        ];
        for (encoding, text, label) in cases {
            let html = page(text);
            let bytes = encode(encoding, &html);
            // Declared in a meta tag.
            let declared = format!("<meta charset=\"{label}\">{html}");
            let d = decode(&encode(encoding, &declared), None, None);
            assert_eq!(d.text, declared, "{label} via meta");
            assert!(!d.had_errors);
            // Declared in the header.
            let d = decode(&bytes, Some(&format!("text/html;charset={label}")), None);
            assert_eq!(d.text, html, "{label} via header");
            // Undeclared: detection must land on a compatible encoding.
            let d = decode(&bytes, None, None);
            assert_eq!(d.text, html, "{label} detected as {}", d.encoding.name());
        }
    }

    #[test]
    fn declared_utf16_means_utf8_and_unknown_labels_fall_through() {
        let html = page(CHINESE);
        let declared = format!("<meta charset=utf-16>{html}");
        let d = decode(declared.as_bytes(), None, None);
        assert_eq!((d.encoding, d.source), (UTF_8, CharsetSource::Meta));

        let d = decode(
            html.as_bytes(),
            Some("text/html; charset=no-such-charset"),
            None,
        );
        assert_eq!((d.encoding, d.source), (UTF_8, CharsetSource::Detected));

        let mut utf16 = vec![0xFF, 0xFE];
        utf16.extend(html.encode_utf16().flat_map(u16::to_le_bytes));
        let d = decode(&utf16, None, None);
        assert_eq!(
            (d.encoding, d.source, d.text.as_str()),
            (UTF_16LE, CharsetSource::Bom, html.as_str())
        );
    }

    #[test]
    fn malformed_bytes_are_replaced_and_reported() {
        let d = decode(
            b"<p>ok \xFF\xFE\xFD ok</p>",
            Some("text/html; charset=utf-8"),
            None,
        );
        assert!(d.had_errors);
        assert!(d.text.contains('\u{FFFD}'));
    }
}
