//! The originals of the copies learned from, by their URLs' hashes: a rule's prediction that
//! a page copies its counterpart is right when the page turns out a copy of the counterpart's
//! own original, the page the index holds for that content (a mirror's `/story/catalogs/`
//! and the origin's `/catalogs.html`, both copies of a syndication's `/news/catalogs.html`
//! fetched first, have one content). Without it, each pair crawled after a third copy of its
//! content counted against its rule: sixteen at once on the held-out mirror, 20 of its
//! rule's 114 checks.

use std::collections::HashMap;

use xxhash_rust::xxh3::xxh3_64;

/// Copies remembered at most (about 20 bytes each with the map's overhead: some 5 MB); past
/// it a copy's original is not remembered, and a prediction of a page that copies the same
/// content counts as right only when the page is judged a copy of the counterpart itself,
/// as before.
const MAX_COPIES: usize = 1 << 18;

/// Per copy, its original (hashes of the URLs, as rules name pages).
#[derive(Debug, Default)]
pub(crate) struct Originals {
    of: HashMap<u64, u64>,
}

impl Originals {
    /// `copy` was judged to have the content of `original`.
    pub(crate) fn note(&mut self, copy: &str, original: &str) {
        if self.of.len() < MAX_COPIES {
            self.of
                .insert(xxh3_64(copy.as_bytes()), xxh3_64(original.as_bytes()));
        }
    }

    /// Whether `page` and `counterpart` have one content as far as the copies noted say: the
    /// same page, or `counterpart` a copy of `page`.
    pub(crate) fn same_content(&self, page: &str, counterpart: &str) -> bool {
        page == counterpart
            || self.of.get(&xxh3_64(counterpart.as_bytes())) == Some(&xxh3_64(page.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_has_its_original_s_content_and_no_other_s() {
        let mut originals = Originals::default();
        let (news, origin, mirror) = ("http://n/news/a.html", "http://o/a.html", "http://m/a/");
        assert!(originals.same_content(origin, origin));
        assert!(!originals.same_content(news, origin), "nothing noted yet");
        originals.note(origin, news);
        // The mirror's page, a copy of the news page, was predicted to copy the origin's.
        assert!(originals.same_content(news, origin));
        // Not the other way: the index names kept pages only, so a page judged a copy of the
        // origin's copy says nothing of the news page.
        assert!(!originals.same_content(origin, news));
        assert!(!originals.same_content(news, mirror));
    }
}
