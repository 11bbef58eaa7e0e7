//! The tasks in flight (requests, name lookups, robots.txt files) and the channel they report
//! back on, with the progress gauge that shows how many there are.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::tasks::TaskResult;
use crate::progress::Progress;

/// The tasks in flight: each started one reports back once, on the channel it was given.
pub(super) struct InFlight {
    tx: mpsc::UnboundedSender<TaskResult>,
    rx: mpsc::UnboundedReceiver<TaskResult>,
    /// Started and not reported back yet.
    count: usize,
    progress: Arc<Progress>,
}

impl InFlight {
    pub(super) fn new(progress: Arc<Progress>) -> InFlight {
        let (tx, rx) = mpsc::unbounded_channel();
        InFlight {
            tx,
            rx,
            count: 0,
            progress,
        }
    }

    /// A task started: where it reports back.
    pub(super) fn start(&mut self) -> mpsc::UnboundedSender<TaskResult> {
        self.count += 1;
        Progress::set(&self.progress.in_flight, self.count as u64);
        self.tx.clone()
    }

    /// Tasks started and not reported back yet.
    pub(super) fn count(&self) -> usize {
        self.count
    }

    /// The next task's result, when one reports back. Never `None` in practice: this holds
    /// a sender itself.
    pub(super) async fn finished(&mut self) -> Option<TaskResult> {
        let result = self.rx.recv().await;
        if result.is_some() {
            self.count = self.count.saturating_sub(1);
            Progress::set(&self.progress.in_flight, self.count as u64);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::*;

    fn resolved(host: u32) -> TaskResult {
        TaskResult::Resolved {
            host,
            addresses: Err("no answer".into()),
        }
    }

    #[tokio::test]
    async fn each_task_started_is_counted_until_it_reports_back() {
        let progress = Arc::new(Progress::default());
        let mut tasks = InFlight::new(Arc::clone(&progress));
        let (a, b) = (tasks.start(), tasks.start());
        assert_eq!(tasks.count(), 2);
        assert_eq!(progress.in_flight.load(Ordering::Relaxed), 2);
        b.send(resolved(2)).ok().unwrap();
        a.send(resolved(1)).ok().unwrap();
        let first = tasks.finished().await;
        assert!(matches!(first, Some(TaskResult::Resolved { host: 2, .. })));
        assert_eq!(tasks.count(), 1);
        tasks.finished().await.unwrap();
        assert_eq!(
            (tasks.count(), progress.in_flight.load(Ordering::Relaxed)),
            (0, 0)
        );
    }
}
