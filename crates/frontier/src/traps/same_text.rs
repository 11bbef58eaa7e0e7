//! Pages that keep saying the same few words: a path that branches below every page on
//! letters only (`/g/a/b/b/a/...`, two links a page), every page the same short text, is
//! caught by no rule of the URL (no number to mask, no segment three times in a row) and by
//! no verdict (a page of too little text is not judged a duplicate). What such pages say is
//! the evidence: past `max_same_text` pages of one host saying about the same, a page's
//! links are not followed.

use std::collections::{HashMap, VecDeque};

use super::Trap;

/// Fingerprints at most this many bits apart say about the same (the text differs by an
/// echo of its URL, a counter, a date).
pub const SAME_TEXT_DISTANCE: u32 = 3;

/// The texts told apart per host: past this many, the least recent is forgotten (a host
/// of many distinct short pages costs bounded memory and time; a trap's pages, all one
/// text, stay one entry).
const TEXTS_PER_HOST: usize = 256;

/// What the short pages of each host said: each text (a fingerprint) with the pages that
/// said about it. Kept in memory: a resumed or shared job counts anew, at worst
/// `max_same_text` more pages of a trap.
#[derive(Debug, Default)]
pub struct SameText {
    hosts: HashMap<String, VecDeque<(u64, u32)>>,
}

impl SameText {
    /// Notes that a page of `host` with too little text to judge has the fingerprint
    /// `fingerprint`; the trap once more than `max` of its host's pages (this one included)
    /// said about the same (`max` 0: never).
    pub fn note(&mut self, host: &str, fingerprint: u64, max: u32) -> Result<(), Trap> {
        if max == 0 {
            return Ok(());
        }
        let texts = self.hosts.entry(host.to_owned()).or_default();
        let near = |(text, _): &(u64, u32)| (text ^ fingerprint).count_ones() <= SAME_TEXT_DISTANCE;
        let pages = match texts.iter_mut().find(|t| near(t)) {
            Some((_, pages)) => {
                *pages += 1;
                *pages
            }
            None => {
                if texts.len() == TEXTS_PER_HOST {
                    texts.pop_front();
                }
                texts.push_back((fingerprint, 1));
                1
            }
        };
        match pages > max {
            true => Err(Trap::SameText { pages, max }),
            false => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_s_pages_saying_the_same_are_a_trap_past_the_limit() {
        // (what it protects, pages noted as (host, fingerprint), the limit) -> the last
        // page's answer
        let one_text = |n: u64| (0..n).map(|i| ("h", 0xf0f0 ^ (i % 2))).collect::<Vec<_>>();
        type Pages = Vec<(&'static str, u64)>;
        let cases: Vec<(&str, Pages, u32, Result<(), Trap>)> = vec![
            ("under the limit", one_text(3), 3, Ok(())),
            (
                "past it: the same text but an echo of the URL (one bit)",
                one_text(4),
                3,
                Err(Trap::SameText { pages: 4, max: 3 }),
            ),
            ("no limit", one_text(10), 0, Ok(())),
            (
                "distinct texts are never counted together",
                (0..10)
                    .map(|i| ("h", 0xffu64 << (8 * (i % 8)) ^ i))
                    .collect(),
                3,
                Ok(()),
            ),
            (
                "another host's pages count for their own",
                [one_text(3), vec![("g", 0xf0f0)]].concat(),
                3,
                Ok(()),
            ),
        ];
        for (what, pages, max, last) in cases {
            let mut same = SameText::default();
            let mut answer = Ok(());
            for (host, fingerprint) in pages {
                answer = same.note(host, fingerprint, max);
            }
            assert_eq!(answer, last, "{what}");
        }
    }

    #[test]
    fn a_host_remembers_a_bounded_number_of_texts() {
        let mut same = SameText::default();
        for i in 0..(TEXTS_PER_HOST as u64 + 10) {
            // Each text its own (far apart), noted once.
            let fingerprint = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            assert_eq!(same.note("h", fingerprint, 1), Ok(()));
        }
        assert_eq!(same.hosts["h"].len(), TEXTS_PER_HOST);
    }
}
