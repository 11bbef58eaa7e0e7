//! A probe's sample: whether a page still has its counterpart's text, told from a few parts
//! of it asked with `Range` instead of the whole page.
//!
//! A duplicate's link to where its original's leads is probed (`probe_links`): a HEAD
//! whose `Content-Length` is about the counterpart's says the page is unchanged. A length says
//! little on its own: a release's page whose code is highlighted anew changes by 5 to 13 % with
//! the same text, while a rewritten one can keep its length within 5 %. So a large page is
//! sampled: [`SAMPLE_PARTS`] parts of [`SAMPLE_PART_BYTES`] spread over it, their words (markup
//! stripped as [`fragment_text`] strips it, read in place: `words`) cut into shingles of
//! three, each part matched when most
//! of its shingles are among the counterpart's. The counterpart's are taken from its whole
//! page the same way when it is fetched, into a Bloom filter of [`FILTER_BITS_PER_SHINGLE`]
//! bits per shingle ([`shingle_filter`]: about half a byte per word of the page), as the text
//! a crawl keeps of a page is its main content only, often one section of a manual page.
//! Unchanged when at most one in four of the parts with text did not match (two at least
//! with text); else the page is fetched.

mod words;

pub use nearcrawl_link_policy::{
    SAMPLE_MAX_GROWTH, SAMPLE_MIN_LENGTH, SAMPLE_MIN_LENGTH_RATIO, comparable_lengths,
    worth_sampling,
};

/// Parts of a page a sample asks for.
pub const SAMPLE_PARTS: u64 = 4;
/// Bytes in each part, at least: a larger page's parts are [`SAMPLE_PART_SHARE`] of it
/// ([`sample_part_bytes`]).
pub const SAMPLE_PART_BYTES: u64 = 768;
/// A part's share of a large page: 1/256, so a sample asks for about 1.6 % of it. A large
/// page is often a table whose 768 bytes hold a handful of words (an instruction set's
/// syntax: an operand name per link), too few to tell anything by.
pub const SAMPLE_PART_SHARE: u64 = 256;
/// Words in a shingle.
const SHINGLE: usize = 3;
/// Shingles a part needs to say anything.
const MIN_SHINGLES: usize = 6;
/// Share of a part's shingles the counterpart must have for the part to match. The filter
/// answers yes for about one shingle in seven it does not hold (three probes at four bits per
/// shingle), so a rewritten part matches about 0.15 of its shingles, an unchanged one nearly
/// all.
const PART_MATCH: f64 = 0.5;
/// Bits of a page's [`shingle_filter`] per shingle of its text.
pub const FILTER_BITS_PER_SHINGLE: usize = 4;
/// Bits a shingle sets in a filter.
const FILTER_PROBES: u64 = 3;

/// The bytes of each part of a sample of a page of `length` bytes: [`SAMPLE_PART_BYTES`], or
/// [`SAMPLE_PART_SHARE`] of a larger page.
pub fn sample_part_bytes(length: u64) -> u64 {
    (length / SAMPLE_PART_SHARE).max(SAMPLE_PART_BYTES)
}

/// The inclusive byte ranges a sample of a page of `length` bytes asks for: [`SAMPLE_PARTS`]
/// parts of [`sample_part_bytes`] centred on the points that divide it evenly (none for an
/// empty page).
pub fn sample_ranges(length: u64) -> Vec<(u64, u64)> {
    if length == 0 {
        return Vec::new();
    }
    let part = sample_part_bytes(length);
    (1..=SAMPLE_PARTS)
        .map(|i| {
            let centre = length / (SAMPLE_PARTS + 1) * i;
            let start = centre.saturating_sub(part / 2);
            (start, (start + part - 1).min(length - 1))
        })
        .collect()
}

/// Pages shorter than this keep no [`shingle_filter`]: a sample of a page predicted to copy
/// one ([`sample_cost`]) would cost most of what fetching it does.
pub const SHINGLES_MIN_LENGTH: u64 = 4 * 1024;

/// Whether a fetched page of `length` bytes keeps its [`shingle_filter`]: whether a page
/// could be sampled against it ([`worth_sampling`], or a URL rule's prediction: see
/// [`sample_cost`]).
pub fn keeps_shingles(length: u64) -> bool {
    length >= SHINGLES_MIN_LENGTH
}

/// Bytes a `multipart/byteranges` answer spends on each part beside its bytes (its
/// boundary, `Content-Type` and `Content-Range` lines), about.
const PART_HEAD_BYTES: u64 = 96;
/// Bytes of an answer's status line and headers, about: what a HEAD costs.
pub const HEAD_COST: u64 = 256;

/// What a sample of a page of about `length` bytes costs, its answer's headers included:
/// what a URL rule's prediction is weighed against (a page predicted to copy one of
/// `length` bytes is sampled first when its rule's rate times `length` exceeds this).
pub fn sample_cost(length: u64) -> u64 {
    SAMPLE_PARTS * (sample_part_bytes(length) + PART_HEAD_BYTES) + HEAD_COST
}

/// What a sample found: parts received, those with enough text to tell, those whose text
/// the counterpart has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SampleCheck {
    /// Parts received.
    pub parts: u8,
    /// Parts with enough shingles to tell (six).
    pub informative: u8,
    /// Informative parts whose shingles the counterpart mostly has.
    pub matched: u8,
}

impl SampleCheck {
    /// Whether the page is taken to be unchanged: two parts at least told, and at most one
    /// in four of them not matched (an edit here and there leaves a page a near-duplicate; a
    /// rewritten release note matches one part in four).
    pub fn unchanged(&self) -> bool {
        let missed = self.informative.saturating_sub(self.matched);
        self.informative >= 2 && usize::from(missed) * 4 <= usize::from(self.informative)
    }

    /// Whether the page is taken to be unchanged when nothing but a URL rule that is often
    /// wrong says it copies its counterpart (a language's host, most of whose pages are
    /// translated): two parts at least told, every one of them matched. One part in four
    /// differing is what a page of the same template and words in another order gives (an
    /// instruction set's page for one encoding against another's).
    pub fn unchanged_strictly(&self) -> bool {
        self.informative >= 2 && self.matched == self.informative
    }
}

/// The shingles of a whole page (raw bytes, markup included) that a sample of another page
/// is compared with, as a Bloom filter: [`FILTER_BITS_PER_SHINGLE`] bits per shingle (64 at
/// least), three set by each. Empty for a page without three words.
pub fn shingle_filter(body: &[u8]) -> Vec<u8> {
    let units = words::word_hashes(body);
    let count = units.len().saturating_sub(SHINGLE - 1);
    if count == 0 {
        return Vec::new();
    }
    let mut filter = vec![0u8; (count * FILTER_BITS_PER_SHINGLE).max(64).div_ceil(8)];
    for shingle in shingles(&units) {
        for bit in filter_bits(shingle, filter.len()) {
            filter[bit / 8] |= 1 << (bit % 8);
        }
    }
    filter
}

/// Compares the parts of a page (raw bytes cut anywhere, markup included) with the
/// [`shingle_filter`] of its counterpart.
pub fn check_sample(parts: &[Vec<u8>], counterpart: &[u8]) -> SampleCheck {
    let mut check = SampleCheck {
        parts: parts.len().min(u8::MAX as usize) as u8,
        ..SampleCheck::default()
    };
    let holds = |shingle: u64| {
        !counterpart.is_empty()
            && filter_bits(shingle, counterpart.len())
                .all(|bit| counterpart[bit / 8] & (1 << (bit % 8)) != 0)
    };
    for part in parts {
        let units = words::word_hashes(part);
        // The first and last words may be cut by the range's ends.
        let inner = units.get(1..units.len().saturating_sub(1)).unwrap_or(&[]);
        let (mut all, mut found) = (0usize, 0usize);
        for shingle in shingles(inner) {
            all += 1;
            found += usize::from(holds(shingle));
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

/// The bits a shingle sets in a filter of `bytes` bytes (double hashing).
fn filter_bits(shingle: u64, bytes: usize) -> impl Iterator<Item = usize> {
    let bits = (bytes * 8) as u64;
    let (a, b) = (shingle, (shingle >> 32) | 1);
    (0..FILTER_PROBES).map(move |i| (a.wrapping_add(i.wrapping_mul(b)) % bits) as usize)
}

/// The shingles of a run of word hashes: one hash per [`SHINGLE`] consecutive words.
fn shingles(units: &[u64]) -> impl Iterator<Item = u64> + '_ {
    units.windows(SHINGLE).map(|w| {
        let h = w.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &u| {
            (h ^ u).wrapping_mul(0x0100_0000_01b3).rotate_left(23)
        });
        // Mixed, so that the low bits (a filter's positions) depend on every word.
        (h ^ (h >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ (h >> 32)
    })
}

/// The text of a piece of HTML cut anywhere: tags dropped (a tag cut at the start or the end
/// too), character references decoded (the common named ones and numeric ones; any other is
/// a space), each tag a word break.
pub fn fragment_text(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    read_fragment(bytes, &mut out);
    out
}

/// What reads a piece of HTML as [`read_fragment`] walks it.
trait Fragment {
    /// A run of text between markup: `then_breaks` when what follows it is a tag or the end,
    /// not a reference that may continue its last word.
    fn text(&mut self, text: &str, then_breaks: bool);
    /// A tag (a word break).
    fn tag(&mut self);
    /// A character reference's character (a space for an unknown one).
    fn char(&mut self, c: char);
}

/// [`fragment_text`]'s reader: the text as it is read, each tag a space.
impl Fragment for String {
    fn text(&mut self, text: &str, _then_breaks: bool) {
        self.push_str(text);
    }
    fn tag(&mut self) {
        self.push(' ');
    }
    fn char(&mut self, c: char) {
        self.push(c);
    }
}

/// Walks a piece of HTML cut anywhere: a tag cut at the start skipped, then runs of text, tags
/// and references in their order to `reader`, up to a tag cut at the end.
fn read_fragment(bytes: &[u8], reader: &mut impl Fragment) {
    // Valid UTF-8 checked the fast way first (`from_utf8_lossy` reads a chunk at a time).
    let html = match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    };
    // Cut inside a tag: its end comes before any start.
    let find = |byte: u8| memchr::memchr(byte, html.as_bytes());
    let start = match (find(b'<'), find(b'>')) {
        (Some(lt), Some(gt)) if gt < lt => gt + 1,
        (None, Some(gt)) => gt + 1,
        _ => 0,
    };
    let mut rest = &html[start..];
    // Text handed over a run at a time up to the next `<` or `&` (ASCII: never inside a
    // longer UTF-8 character).
    while let Some(at) = memchr::memchr2(b'<', b'&', rest.as_bytes()) {
        let is_tag = rest.as_bytes()[at] == b'<';
        reader.text(&rest[..at], is_tag);
        rest = &rest[at..];
        if is_tag {
            reader.tag();
            match memchr::memchr(b'>', rest.as_bytes()) {
                Some(end) => rest = &rest[end + 1..],
                None => return,
            }
        } else {
            let (decoded, used) = reference(rest);
            reader.char(decoded.unwrap_or(' '));
            rest = &rest[used..];
        }
    }
    reader.text(rest, true);
}

/// The character reference at the start of `text` (which starts with `&`): what it stands for
/// (`None`: unknown) and the bytes it takes (1 when it is no reference: a lone `&`).
fn reference(text: &str) -> (Option<char>, usize) {
    let Some(end) = text.get(1..12).and_then(|t| t.find(';')).map(|e| e + 1) else {
        return (Some('&'), 1);
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
    (decoded, end + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`fragment_text`] a character at a time, as first written: the reference its runs
    /// are checked against.
    fn fragment_text_by_char(bytes: &[u8]) -> String {
        let html = String::from_utf8_lossy(bytes);
        let start = match (html.find('<'), html.find('>')) {
            (Some(lt), Some(gt)) if gt < lt => gt + 1,
            (None, Some(gt)) => gt + 1,
            _ => 0,
        };
        let mut out = String::new();
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
                    out.push(decoded.unwrap_or(' '));
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

    /// Pieces of HTML joined and cut anywhere: markup, references (known, numeric, bogus,
    /// cut), letters of both cases, digits, combining marks and Han, for the property tests
    /// of what reads such a part.
    pub(super) fn cut_html() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::Just;
        use proptest::strategy::Strategy;
        let piece = proptest::prop_oneof![
            Just("<p class=\"a\">".to_string()),
            Just("</span>".to_string()),
            Just("&amp;".to_string()),
            Just("&#8217;".to_string()),
            Just("&#233;".to_string()),
            Just("&#x41;".to_string()),
            Just("&#20013;".to_string()),
            Just("&bogus;".to_string()),
            Just("& ".to_string()),
            Just("<".to_string()),
            Just(">".to_string()),
            "[a-zA-Z0-9éÉß中\u{301}ǅ .;]{0,14}",
        ];
        (
            proptest::collection::vec(piece, 0..40),
            0usize..8,
            0usize..8,
        )
            .prop_map(|(pieces, cut_start, cut_end)| {
                let bytes = pieces.concat().into_bytes();
                let start = cut_start.min(bytes.len());
                let end = bytes.len().saturating_sub(cut_end).max(start);
                bytes[start..end].to_vec()
            })
    }

    /// Words all different, `n` of them from `from`.
    fn text(from: usize, n: usize) -> String {
        let words: Vec<String> = (from..from + n)
            .map(|i| format!("w{}", (i * 7919) % 100_003))
            .collect();
        words.join(" ")
    }

    /// `text` as HTML with this markup around each word, cut at `at..at + len`.
    fn cut(text: &str, markup: &str, at: usize, len: usize) -> Vec<u8> {
        let html: String = text
            .split(' ')
            .map(|w| format!("<span class=\"{markup}\">{w}</span> "))
            .collect();
        html.as_bytes()[at..(at + len).min(html.len())].to_vec()
    }

    #[test]
    fn parts_of_the_same_text_under_other_markup_match() {
        let old = text(0, 2_000);
        let kept = shingle_filter(format!("<p>{old}</p>").as_bytes());
        let parts = [
            cut(&old, "n", 7, 3_000),
            cut(&old, "nv", 20_000, 3_000),
            cut(&old, "k", 50_000, 3_000),
        ];
        let check = check_sample(&parts, &kept);
        assert_eq!(check.informative, 3, "{check:?}");
        assert!(check.unchanged(), "{check:?}");
    }

    #[test]
    fn parts_of_another_text_do_not() {
        let kept = shingle_filter(text(0, 2_000).as_bytes());
        let parts = [
            cut(&text(0, 2_000), "n", 7, 3_000),
            cut(&text(5_000, 2_000), "n", 7, 3_000),
        ];
        let check = check_sample(&parts, &kept);
        assert_eq!((check.informative, check.matched), (2, 1), "{check:?}");
        assert!(!check.unchanged());
    }

    #[test]
    fn one_part_in_four_may_miss() {
        let check = |informative, matched| SampleCheck {
            parts: 4,
            informative,
            matched,
        };
        assert!(check(4, 4).unchanged() && check(4, 3).unchanged());
        assert!(!check(4, 2).unchanged() && !check(4, 1).unchanged());
        assert!(check(3, 3).unchanged() && !check(3, 2).unchanged());
        assert!(check(2, 2).unchanged() && !check(1, 1).unchanged());
        // A URL rule's sample: none may miss.
        assert!(check(4, 4).unchanged_strictly() && !check(4, 3).unchanged_strictly());
        assert!(check(2, 2).unchanged_strictly() && !check(1, 1).unchanged_strictly());
    }

    #[test]
    fn a_part_with_too_little_text_tells_nothing() {
        let part = b"<div class=\"x\"><a href=\"y\">z</a></div>".to_vec();
        let check = check_sample(&[part], &shingle_filter(text(0, 100).as_bytes()));
        assert_eq!(check.informative, 0);
        assert!(!check.unchanged(), "one part or none is not enough");
    }

    #[test]
    fn a_filter_holds_its_pages_shingles_and_few_others() {
        let kept = shingle_filter(text(0, 8_000).as_bytes());
        assert_eq!(kept.len(), 7_998 * FILTER_BITS_PER_SHINGLE / 8);
        let units = words::word_hashes(text(0, 8_000).as_bytes());
        assert!(
            shingles(&units)
                .all(|s| filter_bits(s, kept.len()).all(|b| kept[b / 8] & (1 << (b % 8)) != 0))
        );
        let others = words::word_hashes(text(50_000, 8_000).as_bytes());
        let false_yes = shingles(&others)
            .filter(|&s| filter_bits(s, kept.len()).all(|b| kept[b / 8] & (1 << (b % 8)) != 0))
            .count();
        assert!(false_yes < 8_000 / 4, "{false_yes} of 8,000");
        assert!(shingle_filter(b"two words").is_empty());
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
    fn only_large_pages_of_about_their_counterparts_length_are_sampled() {
        assert!(worth_sampling(100_000, 100_000));
        assert!(worth_sampling(100_000, 125_000));
        assert!(
            !worth_sampling(62_214, 604_477),
            "an index of fewer entries"
        );
        assert!(
            worth_sampling(78_326, 57_673),
            "a page that grew by a third"
        );
        assert!(!worth_sampling(130_000, 60_000), "more than twice as long");
        assert!(!worth_sampling(20_000, 20_000), "small: fetched whole");
        // Every counterpart a page is sampled against keeps its shingles.
        for counterpart in [10_000, 16_384, 40_000] {
            assert!(
                !worth_sampling(SAMPLE_MIN_LENGTH, counterpart) || keeps_shingles(counterpart),
                "{counterpart}"
            );
        }
        assert!(!keeps_shingles(SHINGLES_MIN_LENGTH - 1) && keeps_shingles(SHINGLES_MIN_LENGTH));
    }

    #[test]
    fn a_sample_costs_its_parts_and_their_headers() {
        // Four parts of 768 bytes: about a fifth of a 20 kB page.
        assert_eq!(sample_cost(20_000), 4 * (768 + 96) + 256);
        // A larger page's parts are 1/256 of it.
        assert_eq!(sample_cost(1 << 20), 4 * (4096 + 96) + 256);
        assert!(comparable_lengths(20_000, 20_000) && comparable_lengths(16_000, 20_000));
        assert!(!comparable_lengths(14_000, 20_000) && !comparable_lengths(41_000, 20_000));
    }

    /// HTML of these words, each wrapped in a tag or not (`tags`, per word), one space apart.
    fn html_of(words: &[String], tags: &[u8]) -> String {
        words
            .iter()
            .zip(tags.iter().cycle())
            .map(|(w, t)| match t % 4 {
                0 => format!("<span class=\"n\">{w}</span> "),
                1 => format!("<a href=\"#{w}\">{w}</a> "),
                2 => format!("{w} &amp; "),
                _ => format!("{w} "),
            })
            .collect()
    }

    proptest::proptest! {
        /// A page sampled against itself is unchanged: wherever a part is cut, every part
        /// with text matches (the filter answers yes for all a page's shingles).
        #[test]
        fn a_page_sampled_against_itself_matches_everywhere(
            words in proptest::collection::vec("[a-z]{1,9}", 300..600),
            tags in proptest::collection::vec(proptest::prelude::any::<u8>(), 1..50),
            cuts in proptest::collection::vec((0.0f64..1.0, 200usize..900), 1..6),
        ) {
            let html = html_of(&words, &tags);
            let filter = shingle_filter(html.as_bytes());
            let parts: Vec<Vec<u8>> = cuts
                .iter()
                .map(|&(at, len)| {
                    let start = (at * html.len() as f64) as usize;
                    html.as_bytes()[start..(start + len).min(html.len())].to_vec()
                })
                .collect();
            let check = check_sample(&parts, &filter);
            proptest::prop_assert_eq!(check.matched, check.informative);
        }

        /// Bytes of any kind, cut anywhere: no panic, and text without markup or references
        /// comes out as it went in.
        #[test]
        fn fragments_of_anything_are_read(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300), plain in "[a-z .,;]{0,80}") {
            let _ = check_sample(std::slice::from_ref(&bytes), &shingle_filter(&bytes));
            proptest::prop_assert_eq!(fragment_text(plain.as_bytes()), plain);
        }

        /// The runs copied at once give the text read a character at a time, on markup,
        /// references (known, numeric, bogus, cut) and multi-byte characters cut anywhere.
        #[test]
        fn fragment_text_reads_as_a_character_at_a_time(cut in cut_html()) {
            proptest::prop_assert_eq!(fragment_text(&cut), fragment_text_by_char(&cut));
        }
    }

    #[test]
    fn the_parts_are_spread_over_the_page_and_inside_it() {
        let ranges = sample_ranges(100_000);
        assert_eq!(ranges.len(), SAMPLE_PARTS as usize);
        assert!(ranges.windows(2).all(|w| w[0].1 < w[1].0), "{ranges:?}");
        for &(a, b) in &ranges {
            assert_eq!(b - a + 1, SAMPLE_PART_BYTES);
        }
        // A large page's parts are a share of it: 4 kB of a 1 MB page.
        let large = sample_ranges(1 << 20);
        assert!(large.windows(2).all(|w| w[0].1 < w[1].0), "{large:?}");
        for &(a, b) in &large {
            assert_eq!(b - a + 1, (1 << 20) / SAMPLE_PART_SHARE);
        }
        assert_eq!(sample_part_bytes(SAMPLE_MIN_LENGTH), SAMPLE_PART_BYTES);
        assert!(sample_ranges(10).iter().all(|&(a, b)| a <= b && b < 10));
        assert!(sample_ranges(0).is_empty());
    }
}
