//! Where a page's time goes: the crawl pipeline's stages, and the time one piece of work
//! spent in each. The dedup stage times what it does (decoding to verification); the crawler
//! adds the fetch, the store commit and the WARC record.

use std::time::{Duration, Instant};

/// A stage of the crawl pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// The request, from sending it to the body's last byte (wall clock: waiting included).
    Fetch,
    /// Charset detection and decoding to UTF-8.
    Decode,
    /// HTML parsing and the page facts (title, links, robots directives).
    Parse,
    /// Main content against boilerplate.
    Extract,
    /// The host's template model: learning the page's blocks, removing the template.
    Template,
    /// Tokenizing the text (Chinese segmented).
    Tokenize,
    /// Weighted features, simhash and exact key.
    Features,
    /// The Hamming index and the exact-key lookup; keeping a unique page.
    Index,
    /// Sentence-fingerprint candidates and LCS verification.
    Verify,
    /// A focused crawl's relevance: the page's terms counted, scored against the topic.
    Focus,
    /// The decision's store commit and its records.
    Commit,
    /// The WARC records.
    Warc,
}

impl Stage {
    /// Every stage, in pipeline order.
    pub const ALL: [Stage; 12] = [
        Stage::Fetch,
        Stage::Decode,
        Stage::Parse,
        Stage::Extract,
        Stage::Template,
        Stage::Tokenize,
        Stage::Features,
        Stage::Index,
        Stage::Verify,
        Stage::Focus,
        Stage::Commit,
        Stage::Warc,
    ];

    /// The stage's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Fetch => "fetch",
            Stage::Decode => "decode",
            Stage::Parse => "parse",
            Stage::Extract => "extract",
            Stage::Template => "template",
            Stage::Tokenize => "tokenize",
            Stage::Features => "features",
            Stage::Index => "index",
            Stage::Verify => "verify",
            Stage::Focus => "focus",
            Stage::Commit => "commit",
            Stage::Warc => "warc",
        }
    }
}

/// Nanoseconds spent in each [`Stage`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageTimes([u64; Stage::ALL.len()]);

impl StageTimes {
    /// Adds `took` to `stage`.
    pub fn add(&mut self, stage: Stage, took: Duration) {
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.0[stage as usize] = self.0[stage as usize].saturating_add(nanos);
    }

    /// Nanoseconds spent in `stage`.
    pub fn nanos(&self, stage: Stage) -> u64 {
        self.0[stage as usize]
    }

    /// Adds every stage of `other`.
    pub fn merge(&mut self, other: &StageTimes) {
        for (mine, theirs) in self.0.iter_mut().zip(other.0) {
            *mine = mine.saturating_add(theirs);
        }
    }

    /// Each stage with its nanoseconds, in pipeline order.
    pub fn iter(&self) -> impl Iterator<Item = (Stage, u64)> + '_ {
        Stage::ALL.iter().map(|&stage| (stage, self.nanos(stage)))
    }

    /// Brings the stages timed by the wall clock (all but [`Stage::Fetch`]) down to `cpu`
    /// in all, each in proportion, when they add up to more: the work ran on a thread that
    /// waited for a core at times (the crawl's pool runs below its coordinator), and the
    /// waits fall on the stages as their lengths do.
    /// Returns the share they were brought down to (1.0: left as they were).
    pub fn charge_cpu(&mut self, cpu: Duration) -> f64 {
        let cpu = u64::try_from(cpu.as_nanos()).unwrap_or(u64::MAX);
        let wall: u64 = self
            .iter()
            .filter(|(stage, _)| *stage != Stage::Fetch)
            .map(|(_, nanos)| nanos)
            .fold(0, u64::saturating_add);
        if wall <= cpu {
            return 1.0;
        }
        for stage in Stage::ALL.into_iter().filter(|s| *s != Stage::Fetch) {
            let nanos = &mut self.0[stage as usize];
            *nanos = (u128::from(*nanos) * u128::from(cpu) / u128::from(wall)) as u64;
        }
        cpu as f64 / wall as f64
    }
}

/// The CPU time the calling thread has used, where the system tells it (Linux: a system
/// call of about 0.4 us, so asked twice per page, not per stage).
pub fn thread_cpu_time() -> Option<Duration> {
    #[cfg(target_os = "linux")]
    {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes the calling thread's CPU clock into `now`.
        let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) } == 0;
        ok.then(|| Duration::new(now.tv_sec as u64, now.tv_nsec as u32))
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// A stopwatch for stages done one after another: each [`Lap::split`] charges the time since
/// the previous one to a stage.
#[derive(Debug)]
pub struct Lap(Instant);

impl Lap {
    /// Starts timing.
    pub fn start() -> Lap {
        Lap(Instant::now())
    }

    /// Charges the time since the start or the last split to `stage`.
    pub fn split(&mut self, times: &mut StageTimes, stage: Stage) {
        let now = Instant::now();
        times.add(stage, now - self.0);
        self.0 = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_add_up_by_stage() {
        let mut a = StageTimes::default();
        a.add(Stage::Parse, Duration::from_micros(3));
        a.add(Stage::Parse, Duration::from_micros(2));
        let mut b = StageTimes::default();
        b.add(Stage::Verify, Duration::from_nanos(7));
        a.merge(&b);
        assert_eq!(a.nanos(Stage::Parse), 5_000);
        assert_eq!(a.nanos(Stage::Verify), 7);
        assert_eq!(a.iter().map(|(_, n)| n).sum::<u64>(), 5_007);
        let names: Vec<&str> = Stage::ALL.iter().map(|s| s.name()).collect();
        assert_eq!(names.len(), 12);
        assert_eq!(Stage::ALL[Stage::Warc as usize], Stage::Warc);
    }

    #[test]
    fn wall_times_come_down_to_the_cpu_time_in_proportion() {
        let mut times = StageTimes::default();
        times.add(Stage::Fetch, Duration::from_micros(500));
        times.add(Stage::Parse, Duration::from_micros(30));
        times.add(Stage::Template, Duration::from_micros(90));
        assert_eq!(times.charge_cpu(Duration::from_micros(60)), 0.5);
        assert_eq!(times.nanos(Stage::Parse), 15_000);
        assert_eq!(times.nanos(Stage::Template), 45_000);
        assert_eq!(
            times.nanos(Stage::Fetch),
            500_000,
            "waiting is the fetch's nature"
        );
        // More CPU than wall time (clock granularity): left as measured.
        assert_eq!(times.charge_cpu(Duration::from_micros(100)), 1.0);
        assert_eq!(times.nanos(Stage::Template), 45_000);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_threads_cpu_time_counts_its_work_not_its_sleep() {
        let before = thread_cpu_time().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let slept = thread_cpu_time().unwrap() - before;
        let busy_until = std::time::Instant::now() + Duration::from_millis(20);
        let mut spins = 0u64;
        while std::time::Instant::now() < busy_until {
            spins = std::hint::black_box(spins + 1);
        }
        let worked = thread_cpu_time().unwrap() - before - slept;
        assert!(slept < Duration::from_millis(5), "{slept:?}");
        assert!(
            worked >= Duration::from_millis(5),
            "{worked:?} after {spins} spins"
        );
    }

    #[test]
    fn a_lap_charges_each_split_to_its_stage() {
        let mut times = StageTimes::default();
        let mut lap = Lap::start();
        std::thread::sleep(Duration::from_millis(2));
        lap.split(&mut times, Stage::Decode);
        lap.split(&mut times, Stage::Parse);
        assert!(times.nanos(Stage::Decode) >= 2_000_000);
        assert_eq!(times.nanos(Stage::Tokenize), 0);
    }
}
