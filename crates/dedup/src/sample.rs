//! A probe's sample: whether a page whose length changed still has its counterpart's text,
//! told from a few parts of it asked with `Range` instead of the whole page.
//!
//! A duplicate's link to where its original's leads is probed (`dedup.probe_links`): a HEAD
//! whose `Content-Length` is about the counterpart's says the page is unchanged. A length
//! that changed says little on its own: a release's page whose code is highlighted anew
//! changes by 5 to 13 % with the same text, while a rewritten one can keep its length within
//! 5 %. So a large page whose length changed is sampled: [`SAMPLE_PARTS`] parts of
//! [`SAMPLE_PART_BYTES`] spread over it, their text (markup stripped) cut into shingles of
//! three words, each part matched when most of its shingles are in the counterpart's kept
//! text. Unchanged when every part with text matched (two at least); else it is fetched.

use std::collections::HashSet;

/// Parts of a page a sample asks for.
pub const SAMPLE_PARTS: u64 = 4;
/// Bytes in each part.
pub const SAMPLE_PART_BYTES: u64 = 768;
/// Pages shorter than this (their declared length) are fetched whole rather than sampled:
/// a sample with its answer's headers costs about a tenth of such a page.
pub const SAMPLE_MIN_LENGTH: u64 = 32 * 1024;
/// Words in a shingle.
const SHINGLE: usize = 3;
/// Shingles a part needs to say anything.
const MIN_SHINGLES: usize = 4;
/// Share of a part's shingles the counterpart must have for the part to match.
const PART_MATCH: f64 = 0.5;

/// The inclusive byte ranges a sample of a page of `length` bytes asks for: [`SAMPLE_PARTS`]
/// parts centred on the points that divide it evenly (none for an empty page).
pub fn sample_ranges(length: u64) -> Vec<(u64, u64)> {
    if length == 0 {
        return Vec::new();
    }
    (1..=SAMPLE_PARTS)
        .map(|i| {
            let centre = length / (SAMPLE_PARTS + 1) * i;
            let start = centre.saturating_sub(SAMPLE_PART_BYTES / 2);
            (start, (start + SAMPLE_PART_BYTES - 1).min(length - 1))
        })
        .collect()
}

/// What a sample found: parts received, those with enough text to tell, those whose text
/// the counterpart has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SampleCheck {
    /// Parts received.
    pub parts: u8,
    /// Parts with at least [`MIN_SHINGLES`] shingles.
    pub informative: u8,
    /// Informative parts whose shingles the counterpart mostly has.
    pub matched: u8,
}

impl SampleCheck {
    /// Whether the page is taken to be unchanged: two parts at least told, and all matched.
    pub fn unchanged(&self) -> bool {
        self.informative >= 2 && self.matched == self.informative
    }
}

/// Compares the parts of a page (raw bytes cut anywhere, markup included) with the kept text
/// of its counterpart.
pub fn check_sample(parts: &[Vec<u8>], counterpart: &str) -> SampleCheck {
    let known: HashSet<u64> = shingles(&nearcrawl_text::unit_hashes(counterpart)).collect();
    let mut check = SampleCheck {
        parts: parts.len().min(u8::MAX as usize) as u8,
        ..SampleCheck::default()
    };
    for part in parts {
        let units = nearcrawl_text::unit_hashes(&fragment_text(part));
        // The first and last words may be cut by the range's ends.
        let inner = units.get(1..units.len().saturating_sub(1)).unwrap_or(&[]);
        let (mut all, mut found) = (0usize, 0usize);
        for shingle in shingles(inner) {
            all += 1;
            found += usize::from(known.contains(&shingle));
        }
        if all >= MIN_SHINGLES {
            check.informative = check.informative.saturating_add(1);
            if found as f64 >= PART_MATCH * all as f64 {
                check.matched = check.matched.saturating_add(1);
            }
        }
    }
    check
}

/// The shingles of a run of word hashes: one hash per [`SHINGLE`] consecutive words.
fn shingles(units: &[u64]) -> impl Iterator<Item = u64> + '_ {
    units.windows(SHINGLE).map(|w| {
        w.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &u| {
            (h ^ u).wrapping_mul(0x0100_0000_01b3).rotate_left(23)
        })
    })
}

/// The text of a piece of HTML cut anywhere: tags dropped (a tag cut at the start or the end
/// too), character references decoded (the common named ones and numeric ones; any other is
/// a space), each tag a word break.
pub fn fragment_text(bytes: &[u8]) -> String {
    let html = String::from_utf8_lossy(bytes);
    // Cut inside a tag: its end comes before any start.
    let start = match (html.find('<'), html.find('>')) {
        (Some(lt), Some(gt)) if gt < lt => gt + 1,
        (None, Some(gt)) => gt + 1,
        _ => 0,
    };
    let mut out = String::with_capacity(html.len());
    let mut rest = &html[start..];
    while let Some(c) = rest.chars().next() {
        match c {
            '<' => {
                out.push(' ');
                match rest.find('>') {
                    Some(end) => rest = &rest[end + 1..],
                    None => break,
                }
            }
            '&' => {
                let (decoded, used) = reference(rest);
                out.push_str(decoded.as_deref().unwrap_or(" "));
                rest = &rest[used..];
            }
            _ => {
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    out
}

/// The character reference at the start of `text` (which starts with `&`): what it stands for
/// (`None`: unknown) and the bytes it takes (1 when it is no reference: a lone `&`).
fn reference(text: &str) -> (Option<String>, usize) {
    let Some(end) = text.get(1..12).and_then(|t| t.find(';')).map(|e| e + 1) else {
        return (Some("&".into()), 1);
    };
    let name = &text[1..end];
    let decoded = match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        "nbsp" => Some(' '),
        _ => name.strip_prefix('#').and_then(|n| {
            match n.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok(),
                None => n.parse().ok(),
            }
            .and_then(char::from_u32)
        }),
    };
    (decoded.map(String::from), end + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "The optimizer runs each pass over the module in turn, and a pass that \
        changes nothing leaves the analyses it computed valid for the next one. Passes are \
        scheduled by the pass manager, which keeps their results until a transformation \
        invalidates them, so that expensive analyses such as the dominator tree are computed \
        once for many passes instead of once per pass.";

    /// `TEXT` as HTML with this markup around each word, cut at `at..at + len`.
    fn cut(markup: &str, at: usize, len: usize) -> Vec<u8> {
        let html: String = TEXT
            .split(' ')
            .map(|w| format!("<span class=\"{markup}\">{w}</span> "))
            .collect();
        html.as_bytes()[at..(at + len).min(html.len())].to_vec()
    }

    #[test]
    fn parts_of_the_same_text_under_other_markup_match() {
        let parts = [cut("n", 7, 300), cut("nv", 400, 300), cut("k", 900, 300)];
        let check = check_sample(&parts, TEXT);
        assert_eq!(check.informative, 3, "{check:?}");
        assert!(check.unchanged(), "{check:?}");
    }

    #[test]
    fn parts_of_another_text_do_not() {
        let other = "Release notes: this release adds a new register allocator, removes the \
            legacy pass manager from the code generator, changes the default target of the \
            driver, and fixes many bugs in the assembler for several architectures.";
        let parts = [cut("n", 7, 300), other.as_bytes().to_vec()];
        let check = check_sample(&parts, TEXT);
        assert_eq!((check.informative, check.matched), (2, 1), "{check:?}");
        assert!(!check.unchanged());
    }

    #[test]
    fn a_part_with_too_little_text_tells_nothing() {
        let check = check_sample(
            &[b"<div class=\"x\"><a href=\"y\">z</a></div>".to_vec()],
            TEXT,
        );
        assert_eq!(check.informative, 0);
        assert!(!check.unchanged(), "one part or none is not enough");
    }

    #[test]
    fn fragments_lose_their_markup_and_keep_their_references() {
        assert_eq!(
            fragment_text(b"ss=\"a\">x &lt; y&#8217;s &amp;&bogus; z</p><p>w<sp"),
            "x < y\u{2019}s &  z  w "
        );
        assert_eq!(fragment_text(b"a & b"), "a & b");
    }

    #[test]
    fn the_parts_are_spread_over_the_page_and_inside_it() {
        let ranges = sample_ranges(100_000);
        assert_eq!(ranges.len(), SAMPLE_PARTS as usize);
        assert!(ranges.windows(2).all(|w| w[0].1 < w[1].0), "{ranges:?}");
        for &(a, b) in &ranges {
            assert_eq!(b - a + 1, SAMPLE_PART_BYTES);
        }
        assert!(sample_ranges(10).iter().all(|&(a, b)| a <= b && b < 10));
        assert!(sample_ranges(0).is_empty());
    }
}
