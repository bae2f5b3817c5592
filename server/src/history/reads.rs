//! How far this process's reads of the history have come: reads ended, and the pace of
//! the one under way, by which an ask decides whether waiting for it can pay
//! (`History::wait_first_read`).

use std::time::{Duration, Instant};

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
