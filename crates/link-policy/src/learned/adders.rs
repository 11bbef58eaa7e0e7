//! Copies held as adding pages until what they linked to is decided: a copy that links to
//! pages its original does not (`CopyFacts::adds_pages`) holds its rules back, as its pages
//! may lead where nothing else does; but when each page only it linked to turns out to be a
//! copy too (a mirror's "related" links to its other copies, found before any rule named
//! them), it added nothing, and its rules are let go ([`crate::RuleEvent::Retracted`]).

use std::collections::HashMap;

/// Pages waited on at most. A page only a copy linked to that turns out new is never let go
/// of (nothing asks again), so past this many the copies that come are not waited for: they
/// hold their rules back, as before retraction (a URL of about 100 bytes each: some 10 MB
/// and the map's own overhead at most).
const MAX_WAITING: usize = 100_000;

/// The copies waiting, and the pages each waits on.
#[derive(Debug, Default)]
pub(crate) struct Adders {
    /// Per copy (its URL and its original's), the pages only it linked to not decided yet.
    copies: Vec<(String, String, usize)>,
    /// Per page only a copy linked to, the copies waiting on it (indices into `copies`).
    waiting: HashMap<String, Vec<usize>>,
}

impl Adders {
    /// `copy` (of `original`) linked to `added`, pages its original does not link to.
    pub(crate) fn added(&mut self, copy: &str, original: &str, added: &[String]) {
        let mut pages: Vec<&String> = added.iter().collect();
        pages.sort();
        pages.dedup();
        if pages.is_empty() || self.waiting.len() + pages.len() > MAX_WAITING {
            return;
        }
        let index = self.copies.len();
        self.copies
            .push((copy.to_owned(), original.to_owned(), pages.len()));
        for page in pages {
            self.waiting.entry(page.clone()).or_default().push(index);
        }
    }

    /// The page at `url` was judged a copy: the copies (and their originals) each of whose
    /// added pages is now known to be one.
    pub(crate) fn copy_decided(&mut self, url: &str) -> Vec<(String, String)> {
        let Some(indices) = self.waiting.remove(url) else {
            return Vec::new();
        };
        let mut done = Vec::new();
        for index in indices {
            let (copy, original, left) = &mut self.copies[index];
            *left -= 1;
            if *left == 0 {
                done.push((std::mem::take(copy), std::mem::take(original)));
            }
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (copies and the pages each added, pages judged copies in order, copies let go after
    /// each)
    type Case = (
        &'static [(&'static str, &'static [&'static str])],
        &'static [&'static str],
        &'static [&'static [&'static str]],
    );

    fn pages(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn a_copy_added_nothing_once_each_page_only_it_linked_to_is_a_copy() {
        let cases: &[Case] = &[
            // A mirror page's two related links, both to its other copies.
            (
                &[("m/a", &["m/b", "m/c"])],
                &["m/b", "m/c"],
                &[&[], &["m/a"]],
            ),
            // A release's copy whose link led to a new chapter: held back for good.
            (&[("n/a", &["n/new", "n/b"])], &["n/b"], &[&[]]),
            // Two copies naming one page: both let go by it.
            (
                &[("m/a", &["m/x"]), ("m/b", &["m/x"])],
                &["m/x"],
                &[&["m/a", "m/b"]],
            ),
            // A page named twice by one copy counts once; a page no copy named lets none go.
            (
                &[("m/a", &["m/x", "m/x"])],
                &["m/y", "m/x"],
                &[&[], &["m/a"]],
            ),
            // Decided twice: let go once.
            (&[("m/a", &["m/x"])], &["m/x", "m/x"], &[&["m/a"], &[]]),
            // A copy that added nothing never waits.
            (&[("m/a", &[])], &["m/a"], &[&[]]),
        ];
        for (copies, decided, want) in cases {
            let mut adders = Adders::default();
            for (copy, added) in *copies {
                adders.added(copy, "o", &pages(added));
            }
            for (url, want) in decided.iter().zip(*want) {
                let got: Vec<String> = (adders.copy_decided(url).into_iter())
                    .map(|(copy, original)| {
                        assert_eq!(original, "o");
                        copy
                    })
                    .collect();
                assert_eq!(got, pages(want), "{copies:?}: {url}");
            }
        }
    }

    #[test]
    fn past_its_limit_a_copy_is_not_waited_for_and_holds_its_rules_back() {
        let mut adders = Adders::default();
        let many: Vec<String> = (0..MAX_WAITING).map(|n| format!("m/{n}")).collect();
        adders.added("m/full", "o", &many);
        adders.added("m/late", "o", &pages(&["m/x"]));
        assert!(adders.copy_decided("m/x").is_empty());
        assert_eq!(adders.waiting.len(), MAX_WAITING);
    }
}
