//! The on-disk store: one fjall database with a keyspace per table.

use std::ops::Bound;
use std::path::Path;
use std::sync::{Arc, Mutex};

use fjall::config::{PartitioningPolicy, PinningPolicy};
use fjall::{AbstractTree, CompressionType, Database, Keyspace, KeyspaceCreateOptions, Slice};

use crate::behind::{self, Behind, TABLES, Write};
use crate::key_filter::SeenFilter;
use crate::{StoreError, UrlKey};

mod commit;
mod crawl_store;

use commit::writes;

/// Bytes a table holds in memory before it writes them to disk.
const MAX_MEMTABLE_BYTES: u64 = 8 << 20;

/// Tables written out that a table's first level holds before they are merged into the next
/// (fjall's default: 4). A table of keys in no order (the sentence postings, the seen URLs,
/// the exact keys) overlaps the whole of the next level each time, so each merge rewrites
/// all of it: merging eight at a time halves what is rewritten. Compaction was 5 % of a
/// text-rich crawl's CPU; with eight, the crawl took 6 % less CPU per page on 18,000 pages
/// and 14 % less on 200,000, its stage times as flat, verification (which reads the first
/// level's tables through their pinned filters) no slower (docs/BENCHMARKS.md, "Against
/// the crawlers users pick instead", 2026-12-02). Kept with each table by fjall: a store
/// made before keeps merging four.
const L0_TABLES: u8 = 8;

/// Bytes all tables together hold in memory before the fullest writes its own out, however
/// far it is from [`MAX_MEMTABLE_BYTES`]: seventeen tables of 8 MiB each, with the tables
/// sealed and waiting for their write, held 61 MB of a text-rich crawl's 138 MB of heap at
/// its peak (heaptrack; docs/BENCHMARKS.md, "Peak memory on the text site"). A budget of 8
/// MiB took the peak down by about 30 MB for no measurable CPU.
pub(crate) const MEMTABLES_BUDGET_BYTES: u64 = 8 << 20;

/// The least a table holds when the budget makes it write out: smaller tables are not worth
/// a file of their own (the budget is then held by tables already sealed and being written).
const MIN_ROTATED_BYTES: u64 = 1 << 20;

/// The block cache of [`FjallStore::open`]: 8 MiB (fjall's own default is 32). With filters
/// and indexes in partitions (see `open_with_cache`), 4 and 8 MiB gave the same pages/s and
/// CPU per page on the 2-core scaling check as 32 (docs/BENCHMARKS.md, "Scaling with
/// cores"), and 8 the same stage times over 200,000 pages; on the text site 8 MiB takes 29 MB
/// off the crawl's peak memory (docs/BENCHMARKS.md, "Peak memory on the text site").
pub const DEFAULT_CACHE_BYTES: u64 = 8 << 20;

/// The tables, by their places in [`FjallStore::tables`] below.
const NAMES: [&str; TABLES] = [
    "hosts",
    "queue",
    "seen",
    "exact",
    "records",
    "uniques",
    "texts",
    "link_keys",
    "dropped",
    "hubs",
    "hub_yields",
    "undecided",
    "parked",
    "lengths",
    "counters",
    "blobs",
    "sentences",
];
/// `hosts`: written at once by [`CrawlStore::host_id`], never by a commit.
const HOSTS: usize = 0;
const QUEUE: usize = 1;
const SEEN: usize = 2;
const EXACT: usize = 3;
const RECORDS: usize = 4;
const UNIQUES: usize = 5;
const TEXTS: usize = 6;
const LINK_KEYS: usize = 7;
const DROPPED: usize = 8;
const HUBS: usize = 9;
const HUB_YIELDS: usize = 10;
const UNDECIDED: usize = 11;
const PARKED: usize = 12;
const LENGTHS: usize = 13;
const COUNTERS: usize = 14;
const BLOBS: usize = 15;
const SENTENCES: usize = 16;

/// The tables whose reads (nearly) always find their key: those keyed by a decision's
/// sequence number, read only for decisions made, and the sentence postings, read only for
/// keys the crawl's own filter of them lets through (`crawl/sentences.rs` in the engine).
const READS_HIT: [usize; 5] = [RECORDS, UNIQUES, TEXTS, LINK_KEYS, SENTENCES];

/// What [`FjallStore::scan`] calls with each key and value: `false` stops it.
type Each<'a> = dyn FnMut(&[u8], &[u8]) -> Result<bool, StoreError> + 'a;

/// Every key of a table.
const ALL: (Bound<Vec<u8>>, Bound<Vec<u8>>) = (Bound::Unbounded, Bound::Unbounded);

/// A [`CrawlStore`] in a fjall database directory.
///
/// Tables: `hosts` (authority -> id), `queue` ([`QueueKey`] -> URL), `seen` (URL key),
/// `exact` (exact key -> sequence number), `records` (sequence number -> JSON record),
/// `uniques` (sequence number -> simhash), `texts` (sequence number -> fingerprinted text),
/// `link_keys` (sequence number -> link keys of a unique page, see `nearcrawl_dedup::Follow`),
/// `dropped` (URL keys of outlinks skipped with a duplicate), `hubs` (URL key of a page that
/// led to new pages -> its sequence number), `hub_yields` (a hub's sequence number -> what it
/// led to, [`HubYield`]), `undecided` (URL keys queued and not decided yet), `parked` (the URL
/// key a link waits for and the link's key -> [`ParkedLink`]), `lengths` (URL key -> declared `Content-Length`), `sentences`
/// (sentence-fingerprint key -> posting), `counters`, `blobs`. Commits are landed by a thread
/// of the store's own (`behind.rs`), several to a fjall write batch, each handed to
/// the operating system before its ticket counts as landed: `commit` returns once its commit
/// has, so a killed process loses nothing it committed; `commit_behind` returns at once, and
/// a killed process may lose what has not landed yet (every read sees it meanwhile). A power
/// cut may lose the last moments; [`CrawlStore::sync`] fsyncs.
pub struct FjallStore {
    path: String,
    db: Database,
    /// The tables, in the order of [`NAMES`].
    tables: [Keyspace; TABLES],
    /// Host ids are assigned read-then-write; serialise that.
    host_lock: Mutex<()>,
    /// Commits not landed yet, and the thread that lands them.
    behind: Behind,
    /// A filter of the keys of the `seen` table: most links name a URL never seen.
    seen: SeenFilter,
}

impl std::fmt::Debug for FjallStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FjallStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

thread_local! {
    /// Set while this thread runs [`quietly`]: its panics are caught and reported, not printed.
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, catching a panic without printing it. The process's panic hook is wrapped once
/// (so that it stays quiet on this thread only, while `f` runs): swapping the hook around each
/// call would race with other threads doing the same, and could leave every later panic of
/// the process silent.
fn quietly<T>(f: impl FnOnce() -> T + std::panic::UnwindSafe) -> std::thread::Result<T> {
    static WRAP: std::sync::Once = std::sync::Once::new();
    WRAP.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(std::cell::Cell::get) {
                previous(info);
            }
        }));
    });
    QUIET.with(|quiet| quiet.set(true));
    let result = std::panic::catch_unwind(f);
    QUIET.with(|quiet| quiet.set(false));
    result
}

impl FjallStore {
    /// Opens (or creates) the store in directory `path`, with a block cache of
    /// [`DEFAULT_CACHE_BYTES`].
    pub fn open(path: &Path) -> Result<FjallStore, StoreError> {
        FjallStore::open_with_cache(path, DEFAULT_CACHE_BYTES)
    }

    /// Opens (or creates) the store in directory `path`, keeping up to `cache_bytes` of its
    /// blocks in memory.
    pub fn open_with_cache(path: &Path, cache_bytes: u64) -> Result<FjallStore, StoreError> {
        let name = path.display().to_string();
        // A garbled journal can trip an assertion in fjall's recovery instead of an error: it
        // is damage all the same, reported as such.
        // The panic is reported below, not printed.
        // The journal uncompressed: fjall compresses values of 4 KiB and more with LZ4 on the
        // committing thread (the crawl's one coordinator), 2.5 % of a text-rich crawl's CPU
        // for a file that lives until its memtable is written out, compressed then.
        //
        // One thread writes tables out and compacts them, not one a core up to four: fjall's
        // first worker hands every compaction it receives back to the queue while others
        // exist, and with two it spun on that queue whenever the other compacted, 11 % of the
        // text site's CPU once the memtables' budget made writes out more frequent (perf by
        // thread; docs/BENCHMARKS.md, "Peak memory on the text site"). One worker kept the
        // stage times of a 200,000-page crawl.
        let opened = quietly(|| {
            Database::builder(path)
                .journal_compression(CompressionType::None)
                .cache_size(cache_bytes)
                .worker_threads(1)
                .open()
        });
        let db = match opened {
            Ok(db) => db.map_err(|e| store_error(&name, None, e))?,
            Err(panic) => {
                let what = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("a panic");
                return Err(StoreError::Damaged {
                    path: name,
                    table: None,
                    reason: format!("recovering its journal failed: {what}"),
                });
            }
        };
        // Memtables of 8 MiB instead of fjall's 64: fourteen tables would otherwise hold up to
        // 900 MB in memory before writing a byte of it out.
        //
        // Filters pinned and indexes in partitions, at every level (fjall pins filters at
        // level 0 only and partitions from its fourth level on): the block cache is split into
        // four shards a core, and a block heavier than most of its shard is never cached. A
        // table's whole filter or index outgrew a shard's share part way through a long crawl
        // (at about 65,000 pages of the scaling check on 8 cores, the sooner the more cores),
        // and from then on every read loaded it from its file again: on 8 cores the crawl's
        // system CPU went from 5 to 75 s and verification, which reads postings and texts,
        // from 81 to 1,143 us a page (docs/BENCHMARKS.md, "Scaling with cores"). Index
        // partitions are small blocks that any shard caches; the filters (about 1.25 bytes a
        // key) stay in memory with their tables, checked on every read without a cache
        // lookup: partitioned too, the crawl ran 5 % slower on 2 cores.
        //
        // A table whose reads find what they ask for ([`READS_HIT`]) builds no filter for its
        // last level, where most of its keys are (fjall's `expect_point_read_hits`): a read
        // that reaches the last level finds its key there whatever a filter says. The
        // sentence postings' filters were a third of what a long crawl's memory grew by.
        let options = |hits: bool| {
            move || {
                KeyspaceCreateOptions::default()
                    .max_memtable_size(MAX_MEMTABLE_BYTES)
                    .filter_block_pinning_policy(PinningPolicy::all(true))
                    .index_block_partitioning_policy(PartitioningPolicy::all(true))
                    .expect_point_read_hits(hits)
                    .compaction_strategy(Arc::new(
                        fjall::compaction::Leveled::default().with_l0_threshold(L0_TABLES),
                    ))
            }
        };
        let open = |(n, table): (usize, &&str)| {
            db.keyspace(table, options(READS_HIT.contains(&n)))
                .map_err(|e| store_error(&name, Some(table.to_string()), e))
        };
        let opened: Vec<Keyspace> = NAMES
            .iter()
            .enumerate()
            .map(open)
            .collect::<Result<_, _>>()?;
        let tables: [Keyspace; TABLES] = opened.try_into().map_err(|_| StoreError::Database {
            path: name.clone(),
            reason: "tables missing".into(),
        })?;
        let (path, writer_db, writer_tables): (Arc<str>, _, _) =
            (name.as_str().into(), db.clone(), tables.clone());
        let behind = Behind::start(move |jobs| land(&path, &writer_db, &writer_tables, jobs))
            .map_err(|e| StoreError::Database {
                path: name.clone(),
                reason: format!("no thread to write with: {e}"),
            })?;
        let store = FjallStore {
            path: name,
            db,
            tables,
            host_lock: Mutex::new(()),
            behind,
            seen: SeenFilter::new(),
        };
        store.scan(SEEN, ALL, &mut |key, _| {
            let key: &UrlKey = key.try_into().map_err(|_| StoreError::Corrupt {
                table: "seen",
                reason: format!("a key of {} bytes", key.len()),
            })?;
            store.seen.insert(key);
            Ok(true)
        })?;
        Ok(store)
    }

    /// Queues a commit's writes (`urgent`: the caller waits for them), its seen URLs noted
    /// in the filter of them first.
    fn push(&self, writes: Vec<Write>, urgent: bool) -> Result<u64, StoreError> {
        for write in &writes {
            if write.table == SEEN
                && let Ok(key) = <&UrlKey>::try_from(write.key.as_ref())
            {
                self.seen.insert(key);
            }
        }
        self.behind.push(writes, urgent)
    }

    /// Bytes the tables hold in the memtables they write to, once every commit has landed.
    #[cfg(test)]
    pub(crate) fn memtable_bytes(&self) -> u64 {
        self.behind.wait(self.behind.last()).ok();
        memtable_sizes(&self.tables).iter().sum()
    }

    /// What `table` holds under `key`: a commit's write not landed yet, or the database's.
    fn read(&self, table: usize, key: &[u8]) -> Result<Option<Slice>, StoreError> {
        match self.behind.get(table, key) {
            Some(pending) => Ok(pending),
            None => {
                let keyspace = &self.tables[table];
                keyspace.get(key).map_err(|e| self.err_in(keyspace, e))
            }
        }
    }

    /// Whether `table` holds `key`.
    fn holds(&self, table: usize, key: &[u8]) -> Result<bool, StoreError> {
        if table == SEEN && !self.seen.may_hold(key) {
            return Ok(false);
        }
        match self.behind.get(table, key) {
            Some(pending) => Ok(pending.is_some()),
            None => {
                let keyspace = &self.tables[table];
                keyspace
                    .contains_key(key)
                    .map_err(|e| self.err_in(keyspace, e))
            }
        }
    }

    /// Calls `each` with the keys and values of `table` in `range`, in key order, the commits
    /// not landed yet with the database's, until it returns `false`.
    fn scan(
        &self,
        table: usize,
        range: (Bound<Vec<u8>>, Bound<Vec<u8>>),
        each: &mut Each<'_>,
    ) -> Result<(), StoreError> {
        // The writes not landed, taken before the database is read: a commit that lands
        // meanwhile is in one or the other.
        let mut pending = self
            .behind
            .range(table, behind::borrowed(&range))
            .into_iter()
            .peekable();
        let keyspace = &self.tables[table];
        for item in keyspace.range::<Vec<u8>, _>(range) {
            let (key, value) = item.into_inner().map_err(|e| self.err_in(keyspace, e))?;
            // The writes not landed up to this key; one of this key replaces its value.
            let mut replaced = false;
            while let Some((written, pending_value)) =
                pending.next_if(|(k, _)| k.as_ref() <= key.as_ref())
            {
                replaced |= written == key;
                if let Some(v) = pending_value
                    && !each(&written, &v)?
                {
                    return Ok(());
                }
            }
            if !replaced && !each(&key, &value)? {
                return Ok(());
            }
        }
        for (key, value) in pending {
            if let Some(value) = value
                && !each(&key, &value)?
            {
                return Ok(());
            }
        }
        Ok(())
    }

    fn err(&self, e: fjall::Error) -> StoreError {
        store_error(&self.path, None, e)
    }

    /// An error reading or writing `table`: a damaged one names its directory.
    fn err_in(&self, table: &Keyspace, e: fjall::Error) -> StoreError {
        table_error(&self.path, table, e)
    }
}

/// Lands commits in `tables` of `db` (the store at `path`): their writes in one write batch,
/// a key written more than once with its last value (a batch gives every write one sequence
/// number, so two of a key would tie), then the memtables' budget kept.
fn land(
    path: &str,
    db: &Database,
    tables: &[Keyspace],
    jobs: &[(u64, Vec<Write>)],
) -> Result<(), StoreError> {
    let writes = || jobs.iter().flat_map(|(_, writes)| writes);
    // Each key's last write, by its place among the writes.
    let mut last: foldhash::HashMap<(usize, &[u8]), usize> = foldhash::HashMap::default();
    for (n, write) in writes().enumerate() {
        last.insert((write.table, write.key.as_ref()), n);
    }
    let mut batch = db.batch();
    for (n, write) in writes().enumerate() {
        if last.get(&(write.table, write.key.as_ref())) != Some(&n) {
            continue;
        }
        let table = &tables[write.table];
        match &write.value {
            Some(value) => batch.insert(table, write.key.clone(), value.clone()),
            None => batch.remove(table, write.key.clone()),
        }
    }
    batch.commit().map_err(|e| store_error(path, None, e))?;
    keep_memtables_within_budget(path, db, tables)
}

/// Bytes each table holds in the memtable it writes to.
fn memtable_sizes(tables: &[Keyspace]) -> Vec<u64> {
    tables
        .iter()
        .map(|table| table.tree.active_memtable().size())
        .collect()
}

/// Writes out the fullest table's memory when all of them together hold more than
/// [`MEMTABLES_BUDGET_BYTES`] in the memtables they write to (fjall bounds each table alone,
/// not their sum; tables sealed and being written are bounded by fjall, which holds writes
/// back while a table has four of them). On the writer's thread: sealing a table takes
/// fjall's version upkeep over every table with it, 4.8 % of the crawl coordinator's CPU
/// when it committed itself.
fn keep_memtables_within_budget(
    path: &str,
    db: &Database,
    tables: &[Keyspace],
) -> Result<(), StoreError> {
    // Memtables written to and sealed ones together, one atomic read: within the budget, so
    // is their part (the tables' own sizes are a lock each).
    if db.write_buffer_size() <= MEMTABLES_BUDGET_BYTES {
        return Ok(());
    }
    let sizes = memtable_sizes(tables);
    if sizes.iter().sum::<u64>() <= MEMTABLES_BUDGET_BYTES {
        return Ok(());
    }
    match (0..sizes.len()).max_by_key(|&table| sizes[table]) {
        Some(table) if sizes[table] >= MIN_ROTATED_BYTES => tables[table]
            .rotate_memtable()
            .map(|_| ())
            .map_err(|e| table_error(path, &tables[table], e)),
        _ => Ok(()),
    }
}

/// An error reading or writing `table` of the store at `path`: a damaged one names its
/// directory.
fn table_error(path: &str, table: &Keyspace, e: fjall::Error) -> StoreError {
    let name = format!("{} ({})", &**table.name(), table.path().display());
    store_error(path, Some(name), e)
}

/// A fjall error as a [`StoreError`]: [`StoreError::Damaged`] when the files are.
fn store_error(path: &str, table: Option<String>, e: fjall::Error) -> StoreError {
    use fjall::Error as F;
    use fjall::LsmError as L;
    let damaged = match &e {
        F::Storage(L::Io(io)) | F::Io(io) => matches!(
            io.kind(),
            std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::InvalidData
        ),
        F::Storage(_)
        | F::JournalRecovery(_)
        | F::InvalidVersion(_)
        | F::Decompress(_)
        | F::InvalidTrailer
        | F::InvalidTag(_)
        | F::Unrecoverable => true,
        _ => false,
    };
    let reason = e.to_string();
    let path = path.to_string();
    if damaged {
        StoreError::Damaged {
            path,
            table,
            reason,
        }
    } else {
        StoreError::Database { path, reason }
    }
}

fn be_u64(bytes: &[u8], table: &'static str) -> Result<u64, StoreError> {
    bytes
        .try_into()
        .map(u64::from_be_bytes)
        .map_err(|_| StoreError::Corrupt {
            table,
            reason: format!("{} bytes, want 8", bytes.len()),
        })
}
