//! What of a page's judgement is worked out where the page is analysed, on the blocking
//! pool, before the coordinator judges it: the store's answer for its exact keys, and its
//! verification against the sentence candidates whose units the pool has just computed
//! ([`super::sentences::PostingsReader::prefetch`]). The coordinator judges pages one at a
//! time; what it finds worked out here it takes instead of doing again (docs/BENCHMARKS.md,
//! "The coordinator's CPU per page").
//!
//! A verification is a pure function of the page's units and its candidate's (a kept page's
//! text never changes), so its answer holds whenever it is taken. An exact key's answer may
//! not: a page with that key may be kept between the read here and the judgement. So the
//! coordinator numbers the pages it keeps ([`Admitted`]) and remembers the keys of the last
//! [`RECENT`]; a page read here after `seen` admissions is judged by its read unless one of
//! those since has its key, and read again on the coordinator when more than [`RECENT`]
//! were kept since (the pool fell far behind).

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use nearcrawl_dedup::{PageAnalysis, UnitsCache};
use nearcrawl_store::CrawlStore;
use nearcrawl_text::ExactKey;
use nearcrawl_verify::{Verifier, VerifyConfig};

/// Kept pages whose exact keys the coordinator remembers: enough for every page in flight
/// (a few hundred at most) many times over.
pub(super) const RECENT: u64 = 4096;

/// The exact keys of the pages the coordinator kept last, numbered in the order kept.
#[derive(Default)]
pub(super) struct Admitted {
    /// Pages kept so far this run (in the store's reads once counted here).
    count: Arc<AtomicU64>,
    /// The last [`RECENT`] keys: key to (its number, the page).
    keys: foldhash::HashMap<u128, (u64, u64)>,
    /// Those keys, oldest first, with their numbers.
    order: VecDeque<(u64, u128)>,
}

impl Admitted {
    /// Page `seq`, kept under exact key `key`, is committed (the store's reads find it):
    /// counted.
    pub(super) fn kept(&mut self, key: u128, seq: u64) {
        let number = self.count.load(Ordering::Relaxed) + 1;
        self.keys.insert(key, (number, seq));
        self.order.push_back((number, key));
        while self.order.len() as u64 > RECENT {
            let Some((old, key)) = self.order.pop_front() else {
                break;
            };
            if self.keys.get(&key).is_some_and(|(n, _)| *n == old) {
                self.keys.remove(&key);
            }
        }
        // After the commit: a read that counted this page finds it in the store.
        self.count.store(number, Ordering::Release);
    }

    /// The kept page with exact key `key`, as `prejudged` read it and the pages kept since
    /// say: `None` when the coordinator must ask the store (not read there, or too many
    /// kept since).
    pub(super) fn exact(&self, prejudged: &Prejudged, key: ExactKey) -> Option<Option<u64>> {
        let (_, read) = prejudged.exact.iter().find(|(k, _)| *k == key.0)?;
        let count = self.count.load(Ordering::Relaxed);
        if count.saturating_sub(prejudged.seen) > RECENT {
            return None;
        }
        match self.keys.get(&key.0) {
            Some(&(number, seq)) if number > prejudged.seen => Some(Some(seq)),
            _ => Some(*read),
        }
    }
}

/// What the pool worked out of one page's judgement.
#[derive(Debug, Default)]
pub(super) struct Prejudged {
    /// Pages kept when the exact keys were read ([`Admitted`]).
    seen: u64,
    /// Its exact keys (the page's, and its main text's when it has little text of its
    /// own) and the kept page the store had under each.
    exact: Vec<(u128, Option<u64>)>,
    /// Its resemblance to each of its likely sentence candidates, in their order, up to
    /// the first similar one.
    verified: Vec<(u64, Option<f64>)>,
}

impl Prejudged {
    /// The page's resemblance to kept page `seq`, when it was worked out.
    pub(super) fn verified(&self, seq: u64) -> Option<Option<f64>> {
        self.verified
            .iter()
            .find(|(s, _)| *s == seq)
            .map(|(_, answer)| *answer)
    }
}

/// What the pool works a page's judgement out with.
#[derive(Clone)]
pub(super) struct Prejudge {
    store: Arc<dyn CrawlStore>,
    /// [`Admitted`]'s count.
    admitted: Arc<AtomicU64>,
    /// The stage's cache of originals' units.
    units: UnitsCache,
    /// The stage's verification.
    verify: VerifyConfig,
}

thread_local! {
    /// Each pool thread's verifier (its work memory reused from page to page).
    static VERIFIER: RefCell<Option<(VerifyConfig, Verifier)>> = const { RefCell::new(None) };
}

impl Prejudge {
    /// For pages judged against `store`, whose pages kept `admitted` counts.
    pub(super) fn new(
        store: Arc<dyn CrawlStore>,
        admitted: &Admitted,
        units: UnitsCache,
        verify: VerifyConfig,
    ) -> Prejudge {
        Prejudge {
            store,
            admitted: Arc::clone(&admitted.count),
            units,
            verify,
        }
    }

    /// Works out what it can of `analysis`'s judgement: its exact keys read, and when none
    /// is kept, its verification against `candidates` (kept pages most likely its
    /// original, their units in the cache). `None` when a read failed: the coordinator
    /// reads again, and reports what fails.
    pub(super) fn of(&self, analysis: &PageAnalysis, candidates: &[u64]) -> Option<Prejudged> {
        // The count first: a page counted is in what the store reads.
        let seen = self.admitted.load(Ordering::Acquire);
        let mut prejudged = Prejudged {
            seen,
            ..Prejudged::default()
        };
        if analysis.tokens.is_empty() {
            return Some(prejudged);
        }
        let main_key = analysis.main_key.filter(|_| analysis.little_text.is_some());
        for key in [Some(analysis.exact_key), main_key].into_iter().flatten() {
            let found = self.store.exact_original(&key.0.to_be_bytes()).ok()?;
            prejudged.exact.push((key.0, found));
        }
        let kept = prejudged.exact.iter().any(|(_, found)| found.is_some());
        let (Some(prepared), false, None) = (&analysis.prepared, kept, analysis.little_text) else {
            return Some(prejudged);
        };
        VERIFIER.with_borrow_mut(|held| {
            if held
                .as_ref()
                .is_none_or(|(config, _)| *config != self.verify)
            {
                *held = Some((self.verify, Verifier::new(self.verify)));
            }
            let Some((_, verifier)) = held else {
                return;
            };
            for &seq in candidates {
                let Some(units) = self.units.get(seq) else {
                    continue;
                };
                let answer = verifier.similarity(&prepared.units, &units);
                prejudged.verified.push((seq, answer));
                if answer.is_some() {
                    break;
                }
            }
        });
        Some(prejudged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(seen: u64, exact: &[(u128, Option<u64>)]) -> Prejudged {
        Prejudged {
            seen,
            exact: exact.to_vec(),
            verified: Vec::new(),
        }
    }

    /// What the coordinator takes of a read made after `seen` pages were kept, with pages
    /// kept since: a table of cases.
    #[test]
    fn a_read_exact_key_is_taken_unless_a_page_kept_since_has_it() {
        let mut admitted = Admitted::default();
        for seq in 0..10 {
            admitted.kept(100 + u128::from(seq), seq);
        }
        let cases: [(&str, Prejudged, u128, Option<Option<u64>>); 6] = [
            (
                "read after all ten, not kept",
                read(10, &[(7, None)]),
                7,
                Some(None),
            ),
            (
                "read after all ten, kept",
                read(10, &[(7, Some(3))]),
                7,
                Some(Some(3)),
            ),
            (
                "kept after the read",
                read(4, &[(105, None)]),
                105,
                Some(Some(5)),
            ),
            (
                "kept before the read, so read",
                read(6, &[(105, Some(5))]),
                105,
                Some(Some(5)),
            ),
            (
                "another key kept since",
                read(4, &[(7, None)]),
                7,
                Some(None),
            ),
            ("not read there", read(10, &[(7, None)]), 8, None),
        ];
        for (case, prejudged, key, expected) in cases {
            assert_eq!(
                admitted.exact(&prejudged, ExactKey(key)),
                expected,
                "{case}"
            );
        }
    }

    #[test]
    fn a_read_older_than_the_keys_remembered_is_made_again() {
        let mut admitted = Admitted::default();
        for seq in 0..RECENT + 5 {
            admitted.kept(u128::from(seq), seq);
        }
        assert_eq!(admitted.keys.len() as u64, RECENT);
        assert_eq!(admitted.order.len() as u64, RECENT);
        // Kept 5th, since forgotten: a read from before it cannot be judged here.
        assert_eq!(admitted.exact(&read(4, &[(4, None)]), ExactKey(4)), None);
        // A read from after the first five forgotten: every key kept since is remembered.
        assert_eq!(
            admitted.exact(&read(5, &[(9, None)]), ExactKey(9)),
            Some(Some(9))
        );
        assert_eq!(
            admitted.exact(&read(5, &[(4, Some(4))]), ExactKey(4)),
            Some(Some(4))
        );
    }

    #[test]
    fn a_key_kept_again_is_remembered_by_its_last_number() {
        let mut admitted = Admitted::default();
        admitted.kept(1, 10);
        for seq in 0..RECENT - 1 {
            admitted.kept(1_000 + u128::from(seq), seq);
        }
        admitted.kept(1, 11);
        admitted.kept(2, 12);
        // The first keeping of key 1 went out of the window; its second stays.
        assert_eq!(
            admitted.exact(&read(RECENT, &[(1, None)]), ExactKey(1)),
            Some(Some(11))
        );
    }
}
