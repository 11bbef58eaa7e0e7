//! What came over the wire to the bytes of the document (`Content-Encoding`), and whether
//! the document is one the crawler reads (`Content-Type`).

use std::io::Read;

/// Decodes a body sent with `Content-Encoding: encoding` (gzip, deflate, br, zstd or
/// identity), producing at most `limit` bytes. Returns the bytes and whether the limit cut
/// them.
pub fn decode_content(
    encoding: Option<&str>,
    body: &[u8],
    limit: u64,
) -> Result<(Vec<u8>, bool), String> {
    let encoding = encoding.map(|e| e.trim().to_ascii_lowercase());
    let reader: Box<dyn Read + '_> = match encoding.as_deref() {
        None | Some("") | Some("identity") => {
            let cut = body.len() as u64 > limit;
            return Ok((body[..body.len().min(limit as usize)].to_vec(), cut));
        }
        Some("gzip") | Some("x-gzip") => Box::new(flate2::read::MultiGzDecoder::new(body)),
        Some("deflate") => Box::new(flate2::read::ZlibDecoder::new(body)),
        Some("br") => Box::new(brotli_decompressor::Decompressor::new(body, 8192)),
        Some("zstd") => {
            Box::new(zstd::stream::read::Decoder::new(body).map_err(|e| e.to_string())?)
        }
        Some(other) => return Err(format!("unsupported Content-Encoding {other:?}")),
    };
    let mut out = Vec::new();
    // Read one byte past the limit to know whether it cut anything (a decompression bomb
    // stops here, not in memory).
    reader
        .take(limit + 1)
        .read_to_end(&mut out)
        .map_err(|e| e.to_string())?;
    let cut = out.len() as u64 > limit;
    out.truncate(limit as usize);
    Ok((out, cut))
}

/// Whether a `Content-Type` names something the crawler parses: HTML, XHTML or plain text
/// (parameters such as the charset ignored).
pub fn is_page_type(content_type: &str) -> bool {
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    matches!(
        mime.as_str(),
        "text/html" | "application/xhtml+xml" | "text/plain"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn gzip_zstd_identity_and_limits() {
        let text = b"<html>hello hello hello</html>".repeat(50);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&text).unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(
            decode_content(Some("gzip"), &gz, 1 << 20).unwrap(),
            (text.clone(), false)
        );
        let mut br = Vec::new();
        brotli::BrotliCompress(
            &mut &text[..],
            &mut br,
            &brotli::enc::BrotliEncoderParams::default(),
        )
        .unwrap();
        assert_eq!(
            decode_content(Some("br"), &br, 1 << 20).unwrap(),
            (text.clone(), false)
        );
        let zs = zstd::encode_all(&text[..], 3).unwrap();
        assert_eq!(
            decode_content(Some("zstd"), &zs, 1 << 20).unwrap(),
            (text.clone(), false)
        );
        assert_eq!(
            decode_content(None, &text, 1 << 20).unwrap(),
            (text.clone(), false)
        );
        let (cut, truncated) = decode_content(Some("gzip"), &gz, 100).unwrap();
        assert!(truncated);
        assert_eq!(cut, &text[..100]);
        assert!(
            decode_content(Some("compress"), &text, 10)
                .unwrap_err()
                .contains("compress")
        );
        assert!(decode_content(Some("gzip"), b"not gzip", 10).is_err());
    }
}
