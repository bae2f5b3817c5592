//! How far this process's reads of the history have come: reads ended, and the pace of
//! the one under way, by which an ask decides whether waiting for it can pay
//! (`History::wait_first_read`) and a command-line process about to exit whether to
//! finish it first (`History::finish_first_read`).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::{lock, test_hold, History};

/// This process's reads of the history, and the pace of the one under way.
#[derive(Default)]
pub struct Reads {
    /// Reads finished (or given up).
    pub ended: u64,
    /// The read under way: the commits its walk listed, how many are written so far,
    /// and since when.
    pub total: usize,
    pub written: usize,
    pub since: Option<Instant>,
}

impl Reads {
    /// How long the read under way will take to end at its pace so far; `None` before
    /// its first batch is written.
    pub fn time_to_end(&self) -> Option<Duration> {
        let since = self.since.filter(|_| self.written > 0)?;
        let per_commit = since.elapsed().as_secs_f64() / self.written as f64;
        let left = self.total.saturating_sub(self.written) as f64;
        Some(Duration::from_secs_f64(per_commit * left))
    }
}

impl History {
    /// Waits at most `timeout` for the first read (`pending`) to end; whether it has.
    /// Once the read has written a batch, it is not waited for when its pace so far
    /// would end it after the timeout (rails: 50,000 commits in 6.4 s; flask's 5,531 in
    /// 0.35 s are waited for). A test's hold on the read (`COPILOT_LS_TEST_HISTORY_HOLD`) is not waited
    /// for: the ask then comes exactly before the history, whatever the machine's speed.
    pub fn wait_first_read(&self, timeout: Duration) -> bool {
        if test_hold().is_some_and(|gate| !gate.exists()) {
            return !self.pending();
        }
        let deadline = Instant::now().checked_add(timeout);
        let mut reads = lock(&self.reads);
        while self.pending() {
            let left = deadline.map_or(Duration::MAX, |d| {
                d.saturating_duration_since(Instant::now())
            });
            if left.is_zero() || reads.time_to_end().is_some_and(|end| end > left) {
                return false;
            }
            reads = self.wait_for_news(reads, left);
        }
        true
    }

    /// Says a read is coming (`refresh` on another thread, which may not have begun it
    /// yet), so a process about to exit waits for it rather than finding nothing under
    /// way (`finish_first_read`).
    pub fn expect_read(&self) {
        self.coming.store(true, Ordering::Relaxed);
    }

    /// For a process about to exit while the first read is coming or under way: waits
    /// for it while its pace says it ends within `bound` (and at most `cap` in all: its
    /// pace is unknown before its first batch), so the next process finds the history
    /// read; otherwise stops it, as the process's end would. `None` when the history is
    /// read (or needs no read: off, no repository); else the commits the stopped read
    /// listed and the time it had left at its pace, when known. Without this, every
    /// command-line ask on networkx (8,382 commits, 1.2 s to read) began the read again
    /// and stopped it at exit, and no ask ever drew on past changes. A read a test holds
    /// (`COPILOT_LS_TEST_HISTORY_HOLD`) is not waited for, as in `wait_first_read`.
    pub fn finish_first_read(
        &self,
        bound: Duration,
        cap: Duration,
    ) -> Option<(usize, Option<Duration>)> {
        let deadline = Instant::now().checked_add(cap);
        let mut reads = lock(&self.reads);
        let ended = reads.ended;
        while self.pending() {
            let under_way =
                self.coming.load(Ordering::Relaxed) || self.refreshing.try_lock().is_err();
            let left = deadline.map_or(Duration::MAX, |d| {
                d.saturating_duration_since(Instant::now())
            });
            // A read that ended without the history (stopped, another process's store),
            // none coming, or one a test holds: waiting gains nothing.
            if reads.ended != ended
                || !under_way
                || test_hold().is_some_and(|gate| !gate.exists())
                || left.is_zero()
                || reads.time_to_end().is_some_and(|end| end > bound)
            {
                let unread = (reads.total, reads.time_to_end());
                drop(reads);
                self.stop();
                return self.pending().then_some(unread);
            }
            reads = self.wait_for_news(reads, left);
        }
        None
    }

    /// Waits at most `left` for a batch written or a read ended (`read_ended`).
    fn wait_for_news<'a>(
        &self,
        reads: std::sync::MutexGuard<'a, Reads>,
        left: Duration,
    ) -> std::sync::MutexGuard<'a, Reads> {
        self.read_ended
            .wait_timeout(reads, left)
            .map(|(guard, _)| guard)
            .unwrap_or_else(|e| e.into_inner().0)
    }
}
