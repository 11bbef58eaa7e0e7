//! The class and id fragments that say what an element is (Readability's lists: unlikely to
//! be an article, maybe one, positive, negative, reader comments), matched in one pass.

use aho_corasick::AhoCorasick;

/// Class and id fragments, matched case-insensitively anywhere in `class` + `id`.
pub(super) struct ClassPatterns {
    matcher: AhoCorasick,
    kinds: Vec<PatternKind>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum PatternKind {
    /// Never an article, unless also [`PatternKind::Maybe`].
    Unlikely,
    /// Rescues an unlikely element.
    Maybe,
    /// Adds 25 to the class weight.
    Positive,
    /// Reader comments: excluded even when a retry keeps the unlikely elements.
    Comments,
    /// Subtracts 25 from the class weight.
    Negative,
}

const UNLIKELY: &[&str] = &[
    "-ad-",
    "ai2html",
    "banner",
    "breadcrumb",
    "combx",
    "comment",
    "community",
    "cover-wrap",
    "disqus",
    "extra",
    "footer",
    "gdpr",
    "header",
    "legends",
    "menu",
    "related",
    "remark",
    "replies",
    "rss",
    "shoutbox",
    "sidebar",
    "skyscraper",
    "social",
    "sponsor",
    "supplemental",
    "ad-break",
    "agegate",
    "pagination",
    "pager",
    "popup",
    "yom-remote",
    "newsletter",
    "cookie",
    "subscribe",
    "signup",
    "share",
    "recirc",
    "promo",
];
const COMMENTS: &[&str] = &["comment", "disqus", "replies", "respond"];
const MAYBE: &[&str] = &[
    "and", "article", "body", "column", "content", "main", "shadow",
];
const POSITIVE: &[&str] = &[
    "article", "body", "content", "entry", "hentry", "h-entry", "main", "page", "post", "text",
    "blog", "story",
];
const NEGATIVE: &[&str] = &[
    "-ad-",
    "hidden",
    "banner",
    "combx",
    "comment",
    "com-",
    "contact",
    "foot",
    "footnote",
    "gdpr",
    "masthead",
    "media",
    "meta",
    "outbrain",
    "promo",
    "related",
    "scroll",
    "share",
    "shoutbox",
    "sidebar",
    "skyscraper",
    "sponsor",
    "shopping",
    "tags",
    "tool",
    "widget",
    "byline",
    "author",
    "caption",
    "credit",
];

impl ClassPatterns {
    pub(super) fn new() -> ClassPatterns {
        let groups = [
            (UNLIKELY, PatternKind::Unlikely),
            (MAYBE, PatternKind::Maybe),
            (COMMENTS, PatternKind::Comments),
            (POSITIVE, PatternKind::Positive),
            (NEGATIVE, PatternKind::Negative),
        ];
        let mut patterns = Vec::new();
        let mut kinds = Vec::new();
        for (words, kind) in groups {
            for word in words {
                patterns.push(*word);
                kinds.push(kind);
            }
        }
        let matcher = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(&patterns)
            .expect("the class patterns are a small fixed set");
        ClassPatterns { matcher, kinds }
    }

    /// Which kinds of fragment `value` contains, as a bit set indexed by `PatternKind as u8`.
    pub(super) fn kinds_in(&self, value: &str) -> u8 {
        let mut found = 0u8;
        for m in self.matcher.find_overlapping_iter(value) {
            found |= 1 << self.kinds[m.pattern().as_usize()] as u8;
        }
        found
    }
}

pub(super) fn has(kinds: u8, kind: PatternKind) -> bool {
    kinds & (1 << kind as u8) != 0
}
