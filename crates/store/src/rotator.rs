//! The memtables' budget kept behind the committing thread: sealing a table's memtable for
//! its write out takes fjall's version upkeep over every table with it (files looked up and
//! removed), 4.8 % of the crawl coordinator's CPU when it ran there (`perf` of the
//! coordinator's thread over a 100,000-page crawl; docs/BENCHMARKS.md, "Peak memory on the
//! text site"). The committing thread still decides which table goes (a few atomic reads);
//! a thread of the store's own seals it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use fjall::{AbstractTree, Keyspace};

use crate::StoreError;

/// Seals the memtables it is asked to, on a thread of its own.
pub(crate) struct Rotator {
    /// `None` when no thread could be had: tables are then sealed on the caller's thread.
    requests: Option<SyncSender<usize>>,
    tables: Arc<[Keyspace]>,
    /// Requests sent and not done yet.
    pending: Arc<AtomicUsize>,
    /// What sealing a table met, for the next request to report.
    failure: Arc<Mutex<Option<StoreError>>>,
    thread: Option<JoinHandle<()>>,
    /// An error sealing a table, as the store names it.
    error: fn(&str, &Keyspace, fjall::Error) -> StoreError,
    path: Arc<str>,
}

impl Rotator {
    /// A rotator of `tables` (a request names one by its place here) of the store at `path`.
    pub(crate) fn start(
        tables: Vec<Keyspace>,
        path: &str,
        error: fn(&str, &Keyspace, fjall::Error) -> StoreError,
        least: u64,
    ) -> Rotator {
        let (tables, path): (Arc<[Keyspace]>, Arc<str>) = (tables.into(), path.into());
        let pending = Arc::new(AtomicUsize::new(0));
        let failure = Arc::new(Mutex::new(None));
        // One request waits at most: a table asked for again meanwhile is the same request.
        let (requests, received) = sync_channel::<usize>(1);
        let thread = {
            let (tables, path) = (Arc::clone(&tables), Arc::clone(&path));
            let (pending, failure) = (Arc::clone(&pending), Arc::clone(&failure));
            std::thread::Builder::new()
                .name("nearcrawl-memtables".into())
                .spawn(move || {
                    for table in received {
                        if let Err(e) = seal(&tables[table], least) {
                            let mut failed = failure.lock().unwrap_or_else(PoisonError::into_inner);
                            failed.get_or_insert(error(&path, &tables[table], e));
                        }
                        pending.fetch_sub(1, Ordering::Release);
                    }
                })
        };
        let (requests, thread) = match thread {
            Ok(thread) => (Some(requests), Some(thread)),
            Err(_) => (None, None),
        };
        Rotator {
            requests,
            tables,
            pending,
            failure,
            thread,
            error,
            path,
        }
    }

    /// A rotator of no table yet, no thread either.
    pub(crate) fn none(
        path: &str,
        error: fn(&str, &Keyspace, fjall::Error) -> StoreError,
    ) -> Rotator {
        Rotator {
            requests: None,
            tables: Vec::new().into(),
            pending: Arc::default(),
            failure: Arc::default(),
            thread: None,
            error,
            path: path.into(),
        }
    }

    /// Asks for `table`'s memtable to be sealed and written out (when it holds at least
    /// `least` bytes by then); returns at once, with what an earlier request met.
    pub(crate) fn request(&self, table: usize, least: u64) -> Result<(), StoreError> {
        self.failed()?;
        let Some(requests) = &self.requests else {
            let keyspace = &self.tables[table];
            return seal(keyspace, least).map_err(|e| (self.error)(&self.path, keyspace, e));
        };
        self.pending.fetch_add(1, Ordering::Acquire);
        match requests.try_send(table) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.pending.fetch_sub(1, Ordering::Release);
                Ok(())
            }
        }
    }

    /// The first error sealing a table met, once.
    fn failed(&self) -> Result<(), StoreError> {
        let mut failed = self.failure.lock().unwrap_or_else(PoisonError::into_inner);
        failed.take().map_or(Ok(()), Err)
    }

    /// Waits until every request sent is done.
    #[cfg(test)]
    pub(crate) fn settle(&self) {
        while self.pending.load(Ordering::Acquire) > 0 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}

/// Seals `table`'s memtable, when it holds `least` bytes or more.
fn seal(table: &Keyspace, least: u64) -> Result<(), fjall::Error> {
    if table.tree.active_memtable().size() >= least {
        table.rotate_memtable()?;
    }
    Ok(())
}

impl Drop for Rotator {
    fn drop(&mut self) {
        self.requests = None;
        if let Some(thread) = self.thread.take() {
            // A panic there was fjall's; the tables are written out by fjall all the same.
            let _ = thread.join();
        }
    }
}
