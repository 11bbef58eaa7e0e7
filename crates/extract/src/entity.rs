//! Character references (`&amp;`, `&#233;`, `&#x20AC;`) in text and attribute values.

use crate::entities::ENTITIES;

/// Longest name in the WHATWG list (`&CounterClockwiseContourIntegral;` is 33 bytes with `;`).
const LONGEST_NAME: usize = 33;

/// Appends `raw` to `out` with character references replaced.
///
/// `in_attribute` applies the HTML rule that a legacy reference without `;` followed by `=` or
/// an alphanumeric is left alone in attribute values (so `?a=1&copy=2` stays a query string).
pub(crate) fn decode_into(raw: &str, in_attribute: bool, out: &mut String) {
    let bytes = raw.as_bytes();
    let mut start = 0;
    let mut pos = 0;
    while let Some(offset) = memchr::memchr(b'&', &bytes[pos..]) {
        let amp = pos + offset;
        if let Some((replacement, len)) = reference_at(&raw[amp + 1..], in_attribute) {
            out.push_str(&raw[start..amp]);
            match replacement {
                Replacement::Str(s) => out.push_str(s),
                Replacement::Char(c) => out.push(c),
            }
            start = amp + 1 + len;
            pos = start;
        } else {
            pos = amp + 1;
        }
    }
    out.push_str(&raw[start..]);
}

enum Replacement {
    Str(&'static str),
    Char(char),
}

/// The reference starting right after a `&`, and how many bytes it spans.
fn reference_at(rest: &str, in_attribute: bool) -> Option<(Replacement, usize)> {
    let bytes = rest.as_bytes();
    if bytes.first() == Some(&b'#') {
        return numeric_reference(bytes);
    }
    let name_len = bytes
        .iter()
        .take(LONGEST_NAME)
        .position(|b| !b.is_ascii_alphanumeric())
        .unwrap_or(bytes.len().min(LONGEST_NAME));
    if name_len == 0 {
        return None;
    }
    if bytes.get(name_len) == Some(&b';')
        && let Some(value) = lookup(&rest[..=name_len])
    {
        return Some((Replacement::Str(value), name_len + 1));
    }
    // Legacy references without `;`: the longest matching prefix wins (`&notit;` is `¬it;`).
    for len in (2..=name_len.min(6)).rev() {
        if let Some(value) = lookup(&rest[..len]) {
            let next = bytes.get(len);
            let ambiguous = matches!(next, Some(b) if *b == b'=' || b.is_ascii_alphanumeric());
            if in_attribute && ambiguous {
                return None;
            }
            return Some((Replacement::Str(value), len));
        }
    }
    None
}

fn lookup(name: &str) -> Option<&'static str> {
    ENTITIES
        .binary_search_by(|(candidate, _)| candidate.as_bytes().cmp(name.as_bytes()))
        .ok()
        .map(|i| ENTITIES[i].1)
}

/// `#123;` or `#x1F;` (the `;` may be missing, as browsers allow).
fn numeric_reference(bytes: &[u8]) -> Option<(Replacement, usize)> {
    let (radix, digits_start) = match bytes.get(1) {
        Some(b'x' | b'X') => (16, 2),
        _ => (10, 1),
    };
    let digits = bytes[digits_start..]
        .iter()
        .take_while(|b| {
            if radix == 16 {
                b.is_ascii_hexdigit()
            } else {
                b.is_ascii_digit()
            }
        })
        .count();
    if digits == 0 {
        return None;
    }
    let mut value: u32 = 0;
    for &b in &bytes[digits_start..digits_start + digits] {
        let digit = (b as char).to_digit(radix).unwrap_or(0);
        value = value.saturating_mul(radix).saturating_add(digit);
    }
    let mut len = digits_start + digits;
    if bytes.get(len) == Some(&b';') {
        len += 1;
    }
    Some((Replacement::Char(numeric_char(value)), len))
}

/// The HTML rules for numeric references: C1 controls are read as windows-1252 (what the
/// author meant), and surrogates, zero and out-of-range values become U+FFFD.
fn numeric_char(value: u32) -> char {
    const WINDOWS_1252_C1: [u32; 32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
        0x2039, 0x0152, 0x8D, 0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013,
        0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    ];
    let value = if (0x80..0xA0).contains(&value) {
        WINDOWS_1252_C1[(value - 0x80) as usize]
    } else {
        value
    };
    if value == 0 {
        return char::REPLACEMENT_CHARACTER;
    }
    char::from_u32(value).unwrap_or(char::REPLACEMENT_CHARACTER)
}

#[cfg(test)]
mod tests {
    use super::decode_into;

    fn decode(raw: &str, attr: bool) -> String {
        let mut out = String::new();
        decode_into(raw, attr, &mut out);
        out
    }

    #[test]
    fn named_numeric_and_legacy_references() {
        let cases = [
            ("a &amp; b", "a & b"),
            ("&lt;p&gt;", "<p>"),
            ("caf&eacute; &#233; &#xE9; &#XE9", "café é é é"),
            ("&#150; &#x80;", "\u{2013} \u{20AC}"),
            ("&nbsp;x", "\u{a0}x"),
            ("&copy 2024", "© 2024"),
            ("&notit;", "¬it;"),
            ("&unknown; & &; &#;", "&unknown; & &; &#;"),
            ("&#0; &#xD800; &#99999999999;", "\u{fffd} \u{fffd} \u{fffd}"),
            ("&CounterClockwiseContourIntegral;", "\u{2233}"),
            ("trailing &", "trailing &"),
        ];
        for (raw, want) in cases {
            assert_eq!(decode(raw, false), want, "{raw}");
        }
    }

    #[test]
    fn attribute_values_keep_query_strings() {
        assert_eq!(decode("/x?a=1&copy=2&amp;b=3", true), "/x?a=1&copy=2&b=3");
        assert_eq!(decode("/x?a=1&copy=2", false), "/x?a=1©=2");
    }
}
