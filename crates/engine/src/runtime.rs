//! The runtime a crawl runs best on.

/// How far below the calling thread's priority the runtime's threads run: measured on the
/// text-rich site of docs/BENCHMARKS.md, where 3, 5 and 10 steps gave 1.07, 1.15 and 1.12
/// times the pages/s of none.
const BELOW: i32 = 5;

/// A multi-threaded tokio runtime for [`crate::crawl`], whose worker and blocking threads
/// (fetches, page analysis, WARC compression) run a few steps of `nice` below the thread
/// that builds it (on Linux, where each thread has its own). Block on the crawl on that
/// thread: its coordinator judges the pages one at a time, so when every core is busy it
/// goes first and the others fill the time it leaves.
///
/// Its blocking pool, where pages are analysed (HTML to fingerprints, WARC records
/// compressed), has [`BLOCKING_THREADS_PER_CORE`] threads a core, not tokio's 512: work past
/// that waits its turn. (Host names are resolved on threads of their own,
/// [`nearcrawl_fetch::PolicyResolver`], so a slow name server never holds up the analysis.)
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(BLOCKING_THREADS_PER_CORE * cores)
        .on_thread_start(move || lower_priority(BELOW))
        .build()
}

/// Blocking threads per core: 1, 2, 3, 4 and 6 a core (2, 4, 6, 8 and 12 threads on 2 cores)
/// gave 0.96, 1.02, 1.06, 1.09 and 1.05 times the pages/s of tokio's default (up to 512
/// threads; 36 busy at once) on the text-rich benchmark of docs/BENCHMARKS.md, and 5 % less
/// CPU per page at 4: past a few threads a core, each one's compressor and buffers go cold in
/// the cache while it waits its turn; with too few, a thread preempted by the coordinator
/// leaves a core idle.
pub const BLOCKING_THREADS_PER_CORE: usize = 4;

/// Runs the calling thread as the runtime's threads run: below the coordinator (for threads
/// of the crawl's own, such as the WARC writer's).
pub(crate) fn below_the_coordinator() {
    lower_priority(BELOW);
}

/// Work done behind the coordinator: on a thread of its own, below the coordinator's
/// priority, or at once on the caller's when no thread can be had.
pub(crate) enum Behind<T> {
    Running(std::thread::JoinHandle<T>),
    Done(T),
}

impl<T: Send + 'static> Behind<T> {
    /// Starts `work` on a thread named `name` (or does it here).
    pub(crate) fn start(
        name: &str,
        work: impl FnOnce() -> T + Clone + Send + 'static,
    ) -> Behind<T> {
        let here = work.clone();
        let thread = std::thread::Builder::new().name(name.into());
        match thread.spawn(move || {
            below_the_coordinator();
            work()
        }) {
            Ok(running) => Behind::Running(running),
            Err(_) => Behind::Done(here()),
        }
    }

    /// Whether its result is ready.
    pub(crate) fn is_finished(&self) -> bool {
        match self {
            Behind::Running(running) => running.is_finished(),
            Behind::Done(_) => true,
        }
    }

    /// Its result, waited for. A panic there is the caller's, as if it had done the work.
    pub(crate) fn join(self) -> T {
        match self {
            Behind::Running(running) => running
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Behind::Done(done) => done,
        }
    }
}

#[cfg(target_os = "linux")]
fn lower_priority(by: i32) {
    // SAFETY: getpriority/setpriority read and set the calling thread's nice value (Linux:
    // PRIO_PROCESS with 0 names the calling thread); a failure leaves it as it was.
    unsafe {
        let now = libc::getpriority(libc::PRIO_PROCESS, 0);
        libc::setpriority(libc::PRIO_PROCESS, 0, (now + by).min(19));
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority(_by: i32) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn nice() -> i32 {
        // SAFETY: reads the calling thread's nice value.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }
    }

    #[test]
    fn the_runtimes_threads_run_below_the_thread_that_built_it() {
        let caller = nice();
        let runtime = runtime().unwrap();
        let (worker, blocking) = runtime.block_on(async {
            let worker = tokio::spawn(async { nice() }).await.unwrap();
            let blocking = tokio::task::spawn_blocking(nice).await.unwrap();
            (worker, blocking)
        });
        let below = (caller + BELOW).min(19);
        assert_eq!((worker, blocking), (below, below));

        assert_eq!(nice(), caller, "the caller's own priority is left alone");
    }

    #[test]
    fn work_past_the_blocking_threads_waits_its_turn() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let most = BLOCKING_THREADS_PER_CORE * cores;
        let runtime = runtime().unwrap();
        let (now, peak) = (
            std::sync::Arc::new(AtomicUsize::new(0)),
            std::sync::Arc::new(AtomicUsize::new(0)),
        );
        runtime.block_on(async {
            let tasks: Vec<_> = (0..most + 4)
                .map(|_| {
                    let (now, peak) = (now.clone(), peak.clone());
                    tokio::task::spawn_blocking(move || {
                        let running = now.fetch_add(1, Ordering::SeqCst) + 1;
                        peak.fetch_max(running, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(100));
                        now.fetch_sub(1, Ordering::SeqCst);
                    })
                })
                .collect();
            for task in tasks {
                task.await.unwrap();
            }
        });
        let peak = peak.load(Ordering::SeqCst);
        assert!(peak <= most, "{peak} at once, {most} at most");
    }
}
