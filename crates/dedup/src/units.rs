//! The verification units of kept pages, computed from their texts once and cached for the
//! originals verified against most recently. Shared between the thread that judges pages and
//! those that analyse them: a page's likely candidates can have their units computed where
//! the page is analysed, before it is judged ([`UnitsCache::get_or_compute`] on either side,
//! each original's units computed from its text the same way, so a judgement does not depend
//! on where they were computed).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::analyze::Analyzer;

/// Verification units of originals kept in memory, at most, over all of them (8 bytes each:
/// 32 MiB): the originals verified against most recently. Rebuilding an original's units
/// from its stored text was half of verification's time on a text-rich crawl with a cache of
/// 512 originals; 4,096 of them (about 2.9 million units there) took a tenth off the crawl's
/// CPU per page for 25 MB (docs/BENCHMARKS.md).
pub(crate) const UNITS_CACHE_UNITS: usize = 4 << 20;

/// The cache; clones share it.
#[derive(Clone)]
pub struct UnitsCache {
    cache: Arc<Mutex<Cache>>,
    analyzer: Arc<Analyzer>,
}

/// Units by original, oldest first out.
#[derive(Default)]
struct Cache {
    units: HashMap<u64, Arc<[u64]>>,
    order: VecDeque<u64>,
    /// Units held, over all originals, and at most.
    held: usize,
    capacity: usize,
}

impl UnitsCache {
    /// An empty cache of `capacity` units, computing them with `analyzer`.
    pub fn new(analyzer: Arc<Analyzer>, capacity: usize) -> UnitsCache {
        UnitsCache {
            cache: Arc::new(Mutex::new(Cache {
                capacity,
                ..Cache::default()
            })),
            analyzer,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The units of kept page `seq`: cached, or computed from the text `text` reads (none
    /// when it has none) and cached.
    pub fn get_or_compute<E>(
        &self,
        seq: u64,
        text: impl FnOnce() -> Result<Option<String>, E>,
    ) -> Result<Option<Arc<[u64]>>, E> {
        if let Some(units) = self.get(seq) {
            return Ok(Some(units));
        }
        let Some(text) = text()? else {
            return Ok(None);
        };
        // Computed outside the lock: another thread may be doing the same for it.
        let units: Arc<[u64]> = self.analyzer.units_of(&text).into();
        self.lock().insert(seq, Arc::clone(&units));
        Ok(Some(units))
    }

    /// The cached units of `seq`.
    pub fn get(&self, seq: u64) -> Option<Arc<[u64]>> {
        self.lock().units.get(&seq).map(Arc::clone)
    }

    /// Units held, over all originals.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.lock().held
    }

    /// Units held, counted original by original.
    #[cfg(test)]
    pub(crate) fn counted(&self) -> usize {
        self.lock().units.values().map(|u| u.len()).sum()
    }

    /// Whether the units of `seq` are held.
    #[cfg(test)]
    pub(crate) fn holds(&self, seq: u64) -> bool {
        self.lock().units.contains_key(&seq)
    }
}

impl Cache {
    /// Keeps `units` for `seq`, the oldest out until they fit; units larger than the whole
    /// cache are not kept, nor a second copy.
    fn insert(&mut self, seq: u64, units: Arc<[u64]>) {
        if units.len() > self.capacity || self.units.contains_key(&seq) {
            return;
        }
        while self.held + units.len() > self.capacity
            && let Some(oldest) = self.order.pop_front()
        {
            if let Some(removed) = self.units.remove(&oldest) {
                self.held -= removed.len();
            }
        }
        self.held += units.len();
        self.order.push_back(seq);
        self.units.insert(seq, units);
    }
}
