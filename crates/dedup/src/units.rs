//! The verification units of kept pages, computed from their texts once and cached for the
//! originals verified against most recently. Shared between the thread that judges pages and
//! those that analyse them: a page's likely candidates can have their units computed where
//! the page is analysed, before it is judged ([`UnitsCache::get_or_compute`] on either side,
//! each original's units computed from its text the same way, so a judgement does not depend
//! on where they were computed).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::analyze::Analyzer;

/// Verification units of originals kept in memory, at most, over all of them: the originals
/// verified against most recently. Rebuilding an original's units from its stored text was
/// half of verification's time on a text-rich crawl with a cache of 512 originals; 4,096 of
/// them (about 2.9 million units there) took a tenth off the crawl's CPU per page
/// (docs/BENCHMARKS.md). A unit is held as its number in the cache's [`Vocabulary`], in one to
/// three bytes ([`Numbers`]; at most 12 MiB in all, about 8 on the text site): at 8 bytes, the
/// cache was 28 MB of the text site's 79 MB of heap at its peak, and a cache of a quarter as
/// many units took verification over 200,000 pages from about 105 to 155 us a page
/// (docs/BENCHMARKS.md, "Peak memory on the text site").
pub(crate) const UNITS_CACHE_UNITS: usize = 4 << 20;

/// Distinct units the vocabulary numbers, at most (about 24 bytes each with its table: 6
/// MiB). Pages of one language use far fewer: the text site's 18,000 pages, made of real
/// documentation, hold about 14,000 distinct words. When it is full, it is numbered anew
/// from the originals still held; an original that does not fit even then is held as its
/// units, 8 bytes each, counted twice.
const VOCABULARY_UNITS: usize = 1 << 18;

/// Originals whose units the cache also holds as handed out (about 6 kB each on the text
/// site: 1.5 MB), so that the thread that verifies does not rebuild them from their numbers:
/// the threads that analyse pages do it for it ([`UnitsCache::warm`]).
const READY_ORIGINALS: usize = 256;

/// The cache; clones share it.
#[derive(Clone)]
pub struct UnitsCache {
    cache: Arc<Mutex<Cache>>,
    analyzer: Arc<Analyzer>,
}

/// The units cached, by original.
struct Cache {
    /// Weighed in units (those held whole counted twice).
    units: Oldest<Held>,
    vocabulary: Vocabulary,
    /// The units of the originals most recently warmed or computed, as handed out: the
    /// thread that verifies takes them as they are, rather than from their numbers. Weighed
    /// one an original.
    ready: Oldest<Arc<[u64]>>,
}

/// Values by original, the oldest first out once their weights would pass the capacity.
struct Oldest<V> {
    values: HashMap<u64, (V, usize)>,
    order: VecDeque<u64>,
    /// Weight held, and at most.
    held: usize,
    capacity: usize,
}

impl<V> Oldest<V> {
    fn new(capacity: usize) -> Oldest<V> {
        Oldest {
            values: HashMap::new(),
            order: VecDeque::new(),
            held: 0,
            capacity,
        }
    }

    fn get(&self, seq: u64) -> Option<&V> {
        self.values.get(&seq).map(|(value, _)| value)
    }

    fn contains(&self, seq: u64) -> bool {
        self.values.contains_key(&seq)
    }

    /// Evicts the oldest until `weight` more fits.
    fn make_room(&mut self, weight: usize) {
        while self.held + weight > self.capacity
            && let Some(oldest) = self.order.pop_front()
        {
            if let Some((_, removed)) = self.values.remove(&oldest) {
                self.held -= removed;
            }
        }
    }

    /// Keeps `value` of `weight` for `seq`, the oldest out until it fits; a value heavier
    /// than the whole capacity is not kept, nor a second one for `seq`.
    fn insert(&mut self, seq: u64, value: V, weight: usize) {
        if weight > self.capacity || self.contains(seq) {
            return;
        }
        self.make_room(weight);
        self.held += weight;
        self.order.push_back(seq);
        self.values.insert(seq, (value, weight));
    }

    /// Changes every value with `change`, which returns its new weight.
    fn change_all(&mut self, mut change: impl FnMut(&mut V) -> usize) {
        for (value, weight) in self.values.values_mut() {
            let changed = change(value);
            self.held = self.held - *weight + changed;
            *weight = changed;
        }
    }
}

/// An original's units as the cache holds them.
enum Held {
    /// Each unit's number in the vocabulary.
    Numbered(Numbers),
    /// The units themselves, when the vocabulary had no room for all of them.
    Whole(Arc<[u64]>),
}

impl Held {
    /// Units this counts for against the capacity (a whole unit takes two numbers' room).
    fn weight(&self) -> usize {
        match self {
            Held::Numbered(numbers) => numbers.count(),
            Held::Whole(units) => 2 * units.len(),
        }
    }
}

/// Numbers below 2^21, seven bits a byte, lowest first, the top bit of each byte but the last
/// set: a number below 128 in one byte, below 16,384 in two. The vocabulary numbers units in
/// the order first met, so the words every page has are met first and take one byte; on the
/// text site (about 14,000 distinct words) no number takes three, and the cache's 4 million
/// units take about 8 MiB where 4 bytes each took 16 (the crawl's peak RSS fell by 8 MB).
struct Numbers {
    bytes: Box<[u8]>,
    count: u32,
}

impl Numbers {
    /// Appends `number` (at most 21 bits: [`VOCABULARY_UNITS`] is far below that) to `bytes`.
    fn push(bytes: &mut Vec<u8>, mut number: u32) {
        debug_assert!(number < 1 << 21);
        while number >= 0x80 {
            bytes.push((number as u8 & 0x7f) | 0x80);
            number >>= 7;
        }
        bytes.push(number as u8);
    }

    /// `numbers`, each [`Numbers::push`]ed.
    #[cfg(test)]
    fn encode(numbers: impl ExactSizeIterator<Item = u32>) -> Numbers {
        let count = numbers.len() as u32;
        let mut bytes = Vec::new();
        numbers.for_each(|number| Numbers::push(&mut bytes, number));
        Numbers {
            bytes: bytes.into_boxed_slice(),
            count,
        }
    }

    fn count(&self) -> usize {
        self.count as usize
    }

    /// The numbers, in order.
    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let mut bytes = self.bytes.iter();
        std::iter::from_fn(move || {
            let mut number = 0u32;
            let mut shift = 0;
            loop {
                let byte = *bytes.next()?;
                number |= u32::from(byte & 0x7f) << shift;
                if byte & 0x80 == 0 {
                    return Some(number);
                }
                shift += 7;
            }
        })
    }
}

/// The distinct units of the cached originals, numbered in the order first met: at most
/// `limit` ([`VOCABULARY_UNITS`]) of them, numbered anew when full ([`Cache::renumber`]).
#[derive(Default)]
struct Vocabulary {
    /// (Seeded, as every table keyed by a hash of a page's text.)
    numbers: foldhash::HashMap<u64, u32>,
    units: Vec<u64>,
    limit: usize,
    /// Units numbered when it was last numbered anew.
    renumbered: usize,
}

impl Vocabulary {
    /// `units` as their numbers, numbering those not met before; `None` when that would
    /// take the vocabulary past its limit (nothing is numbered then).
    fn number(&mut self, units: &[u64]) -> Option<Numbers> {
        let before = self.units.len();
        let mut bytes = Vec::with_capacity(2 * units.len());
        for &unit in units {
            let number = *self.numbers.entry(unit).or_insert_with(|| {
                self.units.push(unit);
                (self.units.len() - 1) as u32
            });
            if self.units.len() > self.limit {
                // Past the limit: the units numbered for these are forgotten again.
                for new in self.units.drain(before..) {
                    self.numbers.remove(&new);
                }
                return None;
            }
            Numbers::push(&mut bytes, number);
        }
        Some(Numbers {
            bytes: bytes.into_boxed_slice(),
            count: units.len() as u32,
        })
    }

    /// The units numbered `numbers`.
    fn units(&self, numbers: &Numbers) -> Arc<[u64]> {
        let mut units = Vec::with_capacity(numbers.count());
        units.extend(numbers.iter().map(|n| self.units[n as usize]));
        units.into()
    }
}

impl UnitsCache {
    /// An empty cache of `capacity` units, computing them with `analyzer`.
    pub fn new(analyzer: Arc<Analyzer>, capacity: usize) -> UnitsCache {
        UnitsCache::with_vocabulary(analyzer, capacity, VOCABULARY_UNITS)
    }

    /// An empty cache of `capacity` units, numbering at most `vocabulary` distinct ones.
    fn with_vocabulary(analyzer: Arc<Analyzer>, capacity: usize, vocabulary: usize) -> UnitsCache {
        let vocabulary = Vocabulary {
            limit: vocabulary,
            ..Vocabulary::default()
        };
        UnitsCache {
            cache: Arc::new(Mutex::new(Cache {
                units: Oldest::new(capacity),
                vocabulary,
                ready: Oldest::new(READY_ORIGINALS),
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

    /// The units of kept page `seq` cached, computed from the text `text` reads when they
    /// are not (and cached then), without handing them out: for a thread that computes them
    /// ahead of the one that verifies against them.
    pub fn warm<E>(
        &self,
        seq: u64,
        text: impl FnOnce() -> Result<Option<String>, E>,
    ) -> Result<(), E> {
        {
            let mut cache = self.lock();
            if cache.ready.contains(seq) {
                return Ok(());
            }
            if let Some(units) = cache.units_of(seq) {
                cache.ready.insert(seq, units, 1);
                return Ok(());
            }
        }
        if let Some(text) = text()? {
            let units: Arc<[u64]> = self.analyzer.units_of(&text).into();
            self.lock().insert(seq, units);
        }
        Ok(())
    }

    /// The cached units of `seq`.
    pub fn get(&self, seq: u64) -> Option<Arc<[u64]>> {
        let cache = self.lock();
        cache
            .ready
            .get(seq)
            .map(Arc::clone)
            .or_else(|| cache.units_of(seq))
    }

    /// Units held, over all originals.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.lock().units.held
    }

    /// Units held, counted original by original.
    #[cfg(test)]
    pub(crate) fn counted(&self) -> usize {
        let cache = self.lock();
        cache
            .units
            .values
            .values()
            .map(|(held, _)| held.weight())
            .sum()
    }

    /// Whether the units of `seq` are held.
    #[cfg(test)]
    pub(crate) fn holds(&self, seq: u64) -> bool {
        self.lock().units.contains(seq)
    }
}

impl Cache {
    /// The units held for `seq`, rebuilt from their numbers when so held.
    fn units_of(&self, seq: u64) -> Option<Arc<[u64]>> {
        match self.units.get(seq)? {
            Held::Numbered(numbers) => Some(self.vocabulary.units(numbers)),
            Held::Whole(units) => Some(Arc::clone(units)),
        }
    }

    /// Numbers anew the units of the originals held by number, forgetting those only
    /// evicted originals had: the vocabulary never shrinks otherwise, and a crawl whose pages
    /// each hold a word of their own (a page number, a date) would fill it, every original
    /// after that held whole, at twice the room. One pass over the units held, once each time
    /// the vocabulary fills.
    fn renumber(&mut self) {
        // Not again before a quarter of the vocabulary has been numbered since the last
        // time: a web whose held originals alone fill it would pay a pass a page.
        let limit = self.vocabulary.limit;
        if self.vocabulary.units.len() < self.vocabulary.renumbered + limit.div_ceil(4) {
            return;
        }
        let mut vocabulary = Vocabulary {
            limit,
            ..Vocabulary::default()
        };
        let old = &self.vocabulary;
        self.units.change_all(|held| {
            if let Held::Numbered(numbers) = held {
                let units = old.units(numbers);
                // No more distinct units than the old vocabulary held, so they fit; were
                // they not to, the original is held whole.
                *held = match vocabulary.number(&units) {
                    Some(renumbered) => Held::Numbered(renumbered),
                    None => Held::Whole(units),
                };
            }
            held.weight()
        });
        vocabulary.renumbered = vocabulary.units.len();
        self.vocabulary = vocabulary;
    }

    /// Keeps `units` for `seq`, the oldest out until they fit; units larger than the whole
    /// cache are not kept, nor a second copy.
    fn insert(&mut self, seq: u64, units: Arc<[u64]>) {
        if units.len() > self.units.capacity || self.units.contains(seq) {
            return;
        }
        self.ready.insert(seq, Arc::clone(&units), 1);
        // Room for them by number first, so that the words only evicted originals had can
        // be forgotten if the vocabulary is full.
        self.units.make_room(units.len());
        let numbered = self.vocabulary.number(&units).or_else(|| {
            self.renumber();
            self.vocabulary.number(&units)
        });
        let held = match numbered {
            Some(numbers) => Held::Numbered(numbers),
            None => Held::Whole(units),
        };
        let weight = held.weight();
        self.units.insert(seq, held, weight);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::AnalyzerConfig;

    /// A text of `len` words drawn from `words` distinct ones by `picks`.
    fn text(picks: &[u8], words: u8) -> String {
        picks
            .iter()
            .map(|p| format!("w{}", p % words))
            .collect::<Vec<_>>()
            .join(" ")
    }

    proptest::proptest! {
        /// Numbers read back as written, in at most three bytes each.
        #[test]
        fn numbers_read_back(numbers in proptest::collection::vec(0u32..1 << 21, 0..200)) {
            let encoded = Numbers::encode(numbers.iter().copied());
            proptest::prop_assert_eq!(encoded.count(), numbers.len());
            proptest::prop_assert!(encoded.bytes.len() <= 3 * numbers.len());
            proptest::prop_assert_eq!(encoded.iter().collect::<Vec<_>>(), numbers);
        }

        /// Whatever the cache holds and however (numbered, or whole once the vocabulary is
        /// full), it hands back the units computed from the text, and it holds no more than
        /// its capacity.
        #[test]
        fn the_cache_hands_back_the_units_of_the_text(
            texts in proptest::collection::vec(
                (proptest::collection::vec(proptest::num::u8::ANY, 0..40), 1u8..60),
                1..30,
            ),
            capacity in 1usize..200,
            vocabulary in 0usize..80,
        ) {
            let analyzer = Arc::new(Analyzer::new(AnalyzerConfig::default()));
            let cache = UnitsCache::with_vocabulary(Arc::clone(&analyzer), capacity, vocabulary);
            let texts: Vec<String> = texts.iter().map(|(picks, words)| text(picks, *words)).collect();
            for (seq, text) in texts.iter().enumerate() {
                let computed = analyzer.units_of(text);
                let got = cache
                    .get_or_compute(seq as u64, || Ok::<_, ()>(Some(text.clone())))
                    .unwrap();
                proptest::prop_assert_eq!(got.as_deref(), Some(&computed[..]));
                proptest::prop_assert!(cache.held() <= capacity);
                proptest::prop_assert_eq!(cache.held(), cache.counted());
            }
            for (seq, text) in texts.iter().enumerate() {
                if let Some(units) = cache.get(seq as u64) {
                    proptest::prop_assert_eq!(&units[..], &analyzer.units_of(text)[..]);
                }
            }
        }
    }

    /// A number below 128 takes one byte, below 16,384 two, and three up to 2^21.
    #[test]
    fn small_numbers_take_few_bytes() {
        for (number, bytes) in [(0, 1), (127, 1), (128, 2), (16_383, 2), (16_384, 3)] {
            let numbers = Numbers::encode([number].into_iter());
            assert_eq!(numbers.bytes.len(), bytes, "{number}");
        }
        let top = (1 << 21) - 1;
        assert_eq!(Numbers::encode([top].into_iter()).iter().next(), Some(top));
    }

    /// Originals are held by their units' numbers while the vocabulary has room, and whole,
    /// counted twice, once it has none.
    #[test]
    fn a_full_vocabulary_holds_originals_whole() {
        let analyzer = Arc::new(Analyzer::new(AnalyzerConfig::default()));
        let cache = UnitsCache::with_vocabulary(analyzer, 1_000, 6);
        let read = |text: &'static str| move || Ok::<_, ()>(Some(text.to_string()));
        cache.warm(0, read("alpha beta gamma alpha beta")).unwrap();
        assert_eq!(cache.held(), 5, "numbered: one each");
        cache.warm(1, read("gamma delta epsilon zeta")).unwrap();
        assert_eq!(cache.held(), 9, "three more words numbered");
        cache.warm(2, read("eta theta")).unwrap();
        assert_eq!(cache.held(), 13, "past six words: held whole, two each");
        cache.warm(3, read("beta gamma delta")).unwrap();
        assert_eq!(cache.held(), 16, "words already numbered");
        assert!((0..4).all(|seq| cache.holds(seq)));
        // Warmed once, not read again.
        cache
            .warm(3, || -> Result<_, ()> { panic!("read again") })
            .unwrap();
    }

    /// A full vocabulary is numbered anew from the originals still held: the words only
    /// evicted ones had make room, and every original still reads back as computed.
    #[test]
    fn a_full_vocabulary_forgets_the_words_of_evicted_originals() {
        let analyzer = Arc::new(Analyzer::new(AnalyzerConfig::default()));
        let cache = UnitsCache::with_vocabulary(Arc::clone(&analyzer), 8, 8);
        let texts = ["a1 a2 a3 a4", "b1 b2 a1 a2", "c1 c2 c3 a2", "d1 d2 d3 d4"];
        for (seq, text) in texts.iter().enumerate() {
            cache
                .warm(seq as u64, || Ok::<_, ()>(Some(text.to_string())))
                .unwrap();
        }
        // Eight units fit: each new original evicts the oldest. The fourth's four new words
        // fit only once the words that only evicted originals had (a1, a3, a4, b1, b2) are
        // forgotten.
        assert!(!cache.holds(0) && !cache.holds(1));
        assert!(cache.holds(2) && cache.holds(3));
        assert_eq!(cache.held(), 8, "both held by number");
        for (seq, text) in texts.iter().enumerate().skip(2) {
            let units = cache.get(seq as u64).expect("held");
            assert_eq!(&units[..], &analyzer.units_of(text)[..]);
        }
    }
}
