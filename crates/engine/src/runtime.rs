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
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_start(move || lower_priority(BELOW))
        .build()
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
}
