//! Finds every stored 64-bit fingerprint within Hamming distance k of a query, fast: Manku,
//! Jain and Das Sarma's permuted tables ("Detecting Near-Duplicates for Web Crawling", WWW 2007).
//!
//! A design ([`IndexParams`]) splits the 64 bits into blocks; each table sorts the fingerprints
//! with some blocks moved to the front, and the pigeonhole principle guarantees that any
//! fingerprint within distance k agrees with the query on the leading blocks of at least one
//! table. A query probes each table for its prefix and checks the few candidates found.
//!
//! - [`HammingIndex`]: the online index; inserts and queries interleave, [`HammingIndex::first_match`]
//!   is the crawler's hot path, [`HammingIndex::query`] returns every match exactly once.
//! - [`IndexParams`]: the paper's designs for k = 3 (20, 16, 10 and 4 tables), the 4 x 16-bit
//!   pigeonhole layout, any valid multi-level design, or one chosen by [`IndexParams::auto`] from
//!   the expected size and a memory budget.
//! - [`BatchQuery`] and [`near_pairs`]: batch mode, tables over the batch, the big set streamed.
//! - [`CompressedTables`]: the paper's block compression of sorted tables (§3.2).
//! - [`HammingIndex::save`] / [`HammingIndex::load`]: a versioned, checksummed file format.
//! - [`BruteForceIndex`]: the obviously correct reference every design is property-tested
//!   against.
//!
//! At scale a query's cost is memory latency: each table is hundreds of megabytes. The tables
//! are advised for 2 MiB pages (Linux transparent huge pages, `madvise` mode) so a probe rarely
//! misses the TLB, and a query asks for every table's directory slot, then every range, before
//! probing any, so it pays about two memory latencies instead of two per table.
//! [`HammingIndex::query_batch`] walks each table once for the whole batch instead: the queries
//! grouped by their key in two counting passes (queries into a dense prefix sorted, so they find
//! its range in cache; tables that lead with the same block of the fingerprint share one
//! grouping), memory fetched a few probes ahead (every line of a directory slot of up to 256
//! keys, which the walk scans whole), each probe's key computed once (a bit gather per run of
//! the key where the processor has a fast one) and what each fetch step finds kept for the
//! next, and the walk compiled for the processor's instruction set, its table's parts held in
//! registers. Most probes of a walk find nothing, and a table
//! whose prefixes are mostly absent (a 28-bit prefix over 2^26 keys: four in five) keeps a
//! bitmap of those present, half a byte per key: the walk reads it first and fetches neither
//! directory slot nor keys for a probe whose prefix is absent. It does not branch on that
//! either: such a probe reads slot 0, in cache, and scans no keys. Ranges of up to
//! 4,096 keys are scanned rather than split by binary searches, eight keys per instruction with
//! AVX-512 VPOPCNTDQ, or four with AVX2; both are detected at run time.
//!
//! Dense prefixes (all empty pages hash to 0; pages of one forum engine collide) do not make a
//! probe scan, at three levels:
//! - A directory slot holding many keys has a subdirectory on the next bits, so finding a
//!   prefix's range or a key's payloads in it is a lookup, not a binary search.
//! - A hot range, far more distinct keys under one table's prefix than the table's average,
//!   gets a permuted-table design of its own over the bits the prefix leaves free (Manku's
//!   construction applied to the range): a probe into it costs a few short probes. Only hot
//!   ranges pay its memory, 12 bytes per distinct key per table of its design (at most 10).
//! - Any other range longer than 4,096 keys (many equal keys, say) is descended bit by bit
//!   within the distance budget, so its cost is bounded by the number of bit patterns within k,
//!   not by the number of keys.
//!
//! ```
//! use nearcrawl_fingerprint::Fingerprint;
//! use nearcrawl_hamming_index::{HammingIndex, IndexParams};
//!
//! let mut index = HammingIndex::new(IndexParams::manku_20_tables());
//! index.insert(Fingerprint::new(0x0123_4567_89ab_cdef), 7);
//! index.insert(Fingerprint::new(0xfedc_ba98_7654_3210), 8);
//! let hits = index.query(Fingerprint::new(0x0123_4567_89ab_cdee));
//! assert_eq!(hits.len(), 1);
//! assert_eq!((hits[0].payload, hits[0].distance), (7, 1));
//! ```

mod batch;
mod brute;
mod compress;
mod error;
mod index;
mod layout;
mod memory;
mod params;
mod persist;
mod prefetch;
mod run;
mod sort;
mod table;

pub use crate::batch::{BatchMatch, BatchQuery, near_pairs};
pub use crate::brute::{BruteForceIndex, near_pairs_brute_force};
pub use crate::compress::{CompressedTables, CompressionStats};
pub use crate::error::IndexError;
pub use crate::index::{HammingIndex, Match, QueryStats};
pub use crate::memory::zeroed_huge_words;
pub use crate::params::{IndexParams, Level};
