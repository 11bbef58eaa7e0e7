//! Commits written behind the committing thread. A commit's writes go into an overlay that
//! every read looks at first, and into a queue that a thread of the store's own lands in the
//! database, several commits to a write batch. The crawl's coordinator committed each
//! decision itself, memtable inserts and the journal's write to the operating system: 19 %
//! of its CPU (`perf` of its thread over a 100,000-page crawl; docs/BENCHMARKS.md, "The
//! coordinator's CPU per page").
//!
//! The queue is landed in order, so a later write of a key is never overtaken by an earlier
//! one, and a commit leaves the overlay only once the database has it: a read finds every
//! write the moment its commit returns, landed or not. A commit is durable (a killed process
//! keeps it) once it has landed ([`Behind::landed`]); the writer looks at the queue every
//! millisecond without being woken (a wake per commit is a system call on the committing
//! thread), at once when someone waits for a commit, and the committer waits when
//! [`MAX_QUEUED`] commits are queued.

use std::collections::VecDeque;
use std::collections::hash_map::Entry;
use std::ops::{Bound, RangeBounds};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, RwLock};
use std::thread::JoinHandle;
use std::time::Duration;

use fjall::Slice;

use crate::StoreError;

/// Tables of the store ([`crate::fjall_store::FjallStore`]'s, in their order).
pub(crate) const TABLES: usize = 17;

/// Commits queued at most before the committer waits for the writer.
const MAX_QUEUED: usize = 256;

/// How long the writer sleeps when the queue is empty, unless woken.
const POLL: Duration = Duration::from_millis(1);

/// One write of a commit: its table (a place in the store's tables), its key, and its value
/// (`None`: the key removed).
#[derive(Clone, Debug)]
pub(crate) struct Write {
    pub(crate) table: usize,
    pub(crate) key: Slice,
    pub(crate) value: Option<Slice>,
}

/// A commit's writes and its ticket.
pub(crate) type Job = (u64, Vec<Write>);

/// The writes not landed yet, by table and key: the last of each key, with its ticket. A
/// hash map: a few hundred keys at most, read on every read of the store, scanned in order
/// only by the store's rare range reads (a host's queue refilled, a URL's parked links).
#[derive(Default)]
struct Overlay {
    tables: [foldhash::HashMap<Slice, (u64, Option<Slice>)>; TABLES],
    /// The last ticket given.
    last: u64,
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    stopping: bool,
}

/// What the committers and the writer share.
struct Shared {
    overlay: RwLock<Overlay>,
    queue: Mutex<Queue>,
    /// The writer waits on it for work; woken only when someone waits for a commit.
    work: Condvar,
    /// Committers wait on it for commits to land.
    landing: Condvar,
    /// The last ticket landed: every commit up to it is in the database.
    landed: AtomicU64,
    /// What landing met; nothing lands after it.
    failure: Mutex<Option<StoreError>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The overlay, the queue and the writer's thread.
pub(crate) struct Behind {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Behind {
    /// A writer that lands the commits queued with `land`, several at a time, in their
    /// order (the store's: one write batch, then its memtables' budget).
    pub(crate) fn start(
        mut land: impl FnMut(&[Job]) -> Result<(), StoreError> + Send + 'static,
    ) -> Result<Behind, std::io::Error> {
        let shared = Shared::new();
        let writer = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("nearcrawl-store".into())
            .spawn(move || {
                while let Some(jobs) = writer.next_jobs() {
                    let landed = land(&jobs);
                    writer.landed(&jobs, landed);
                }
            })?;
        Ok(Behind {
            shared,
            thread: Some(thread),
        })
    }

    /// Queues a commit's writes, which every read sees from now on; returns its ticket.
    /// `urgent`: the caller will wait for it.
    pub(crate) fn push(&self, writes: Vec<Write>, urgent: bool) -> Result<u64, StoreError> {
        self.failed()?;
        let shared = &self.shared;
        let (ticket, queued) = {
            let mut overlay = shared
                .overlay
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            overlay.last += 1;
            let ticket = overlay.last;
            for write in &writes {
                let value = (ticket, write.value.clone());
                overlay.tables[write.table].insert(write.key.clone(), value);
            }
            // Queued under the overlay's lock: tickets are queued in their order.
            let mut queue = lock(&shared.queue);
            queue.jobs.push_back((ticket, writes));
            (ticket, queue.jobs.len())
        };
        if urgent {
            shared.work.notify_one();
        }
        if queued >= MAX_QUEUED {
            self.wait(ticket - (MAX_QUEUED as u64) / 2)?;
        }
        Ok(ticket)
    }

    /// The last ticket landed.
    pub(crate) fn landed(&self) -> Result<u64, StoreError> {
        self.failed()?;
        Ok(self.shared.landed.load(Ordering::Acquire))
    }

    /// The last ticket given.
    pub(crate) fn last(&self) -> u64 {
        let overlay = self.shared.overlay.read();
        overlay.unwrap_or_else(PoisonError::into_inner).last
    }

    /// Waits until the commit of `ticket` (and every one before it) has landed.
    pub(crate) fn wait(&self, ticket: u64) -> Result<(), StoreError> {
        let shared = &self.shared;
        let mut queue = lock(&shared.queue);
        loop {
            self.failed()?;
            if shared.landed.load(Ordering::Acquire) >= ticket {
                return Ok(());
            }
            shared.work.notify_one();
            queue = shared
                .landing
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn failed(&self) -> Result<(), StoreError> {
        match &*lock(&self.shared.failure) {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// What a write not landed yet says of `key` in `table`: `Some(None)` when it removed it.
    pub(crate) fn get(&self, table: usize, key: &[u8]) -> Option<Option<Slice>> {
        let overlay = self.shared.overlay.read();
        let overlay = overlay.unwrap_or_else(PoisonError::into_inner);
        overlay.tables[table]
            .get(key)
            .map(|(_, value)| value.clone())
    }

    /// The writes not landed yet of `table` in `range`, in key order.
    pub(crate) fn range(
        &self,
        table: usize,
        range: (Bound<&[u8]>, Bound<&[u8]>),
    ) -> Vec<(Slice, Option<Slice>)> {
        let overlay = self.shared.overlay.read();
        let overlay = overlay.unwrap_or_else(PoisonError::into_inner);
        let mut found: Vec<(Slice, Option<Slice>)> = overlay.tables[table]
            .iter()
            .filter(|(key, _)| range.contains(key.as_ref()))
            .map(|(key, (_, value))| (key.clone(), value.clone()))
            .collect();
        found.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        found
    }
}

impl Shared {
    fn new() -> Arc<Shared> {
        Arc::new(Shared {
            overlay: RwLock::default(),
            queue: Mutex::default(),
            work: Condvar::new(),
            landing: Condvar::new(),
            landed: AtomicU64::new(0),
            failure: Mutex::new(None),
        })
    }

    /// The commits queued, once there are any (and the writer's sleep is over, unless some
    /// commit is waited for); `None` once stopping with none left.
    fn next_jobs(&self) -> Option<Vec<Job>> {
        let mut queue = lock(&self.queue);
        loop {
            if !queue.jobs.is_empty() {
                return Some(queue.jobs.drain(..).collect());
            }
            if queue.stopping {
                return None;
            }
            queue = self
                .work
                .wait_timeout(queue, POLL)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// `jobs` landed (or failed): their writes leave the overlay where no later commit wrote
    /// the same key, and those waiting for them are told.
    fn landed(&self, jobs: &[Job], landed: Result<(), StoreError>) {
        let Some(last) = jobs.last().map(|(ticket, _)| *ticket) else {
            return;
        };
        if let Err(e) = landed {
            lock(&self.failure).get_or_insert(e);
        } else {
            let mut overlay = self.overlay.write().unwrap_or_else(PoisonError::into_inner);
            for (ticket, writes) in jobs {
                for write in writes {
                    let table = &mut overlay.tables[write.table];
                    if let Entry::Occupied(entry) = table.entry(write.key.clone())
                        && entry.get().0 == *ticket
                    {
                        entry.remove();
                    }
                }
            }
            self.landed.store(last, Ordering::Release);
        }
        let _queue = lock(&self.queue);
        self.landing.notify_all();
    }
}

impl Drop for Behind {
    fn drop(&mut self) {
        lock(&self.shared.queue).stopping = true;
        self.shared.work.notify_one();
        if let Some(thread) = self.thread.take() {
            // The writer lands what is queued before it stops.
            let _ = thread.join();
        }
    }
}

/// The bounds of the keys starting with `prefix`.
pub(crate) fn prefix_range(prefix: &[u8]) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return (Bound::Included(prefix.to_vec()), Bound::Excluded(end));
        }
    }
    (Bound::Included(prefix.to_vec()), Bound::Unbounded)
}

/// `range` as borrowed bounds.
pub(crate) fn borrowed(range: &(Bound<Vec<u8>>, Bound<Vec<u8>>)) -> (Bound<&[u8]>, Bound<&[u8]>) {
    fn each(bound: &Bound<Vec<u8>>) -> Bound<&[u8]> {
        match bound {
            Bound::Included(key) => Bound::Included(key.as_slice()),
            Bound::Excluded(key) => Bound::Excluded(key.as_slice()),
            Bound::Unbounded => Bound::Unbounded,
        }
    }
    (each(&range.0), each(&range.1))
}
