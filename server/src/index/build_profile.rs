//! Where a refresh spends its time, per phase, summed over threads, printed to stderr at
//! the end when `COPILOT_LS_INDEX_PROFILE` is set (for tuning the build; off, it costs
//! nothing). Each phase is counted twice: wall time, which a loaded machine inflates,
//! and the thread's CPU time, which it does not; the process's whole CPU time beside
//! them shows what tantivy's own indexing threads took.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::syntax::{cpu_ns, CpuClock};

pub struct Profile {
    on: bool,
    wall: [AtomicU64; PHASES],
    cpu: [AtomicU64; PHASES],
    process_cpu_at_start: u64,
    /// When every file was searchable by its words (the first phase's end), in
    /// nanoseconds since the refresh started.
    searchable_at: AtomicU64,
}

const PHASES: usize = 7;

#[derive(Clone, Copy)]
pub enum Phase {
    Walk,
    /// Reading and hashing.
    Read,
    /// Chunking and tokenizing (`analyze`) without parsing.
    Analyze,
    /// Parsing definitions with tree-sitter (`syntax/`), inside analyzing.
    Parse,
    /// Handing the documents to tantivy (waits when its indexing threads are behind).
    Add,
    Commit,
    /// Merging a bulk build's segments into one.
    Merge,
}

/// When a phase started, by both clocks.
#[derive(Clone, Copy)]
pub struct Mark {
    wall: Instant,
    cpu: u64,
}

impl Profile {
    pub fn from_env() -> Profile {
        let on = std::env::var_os("COPILOT_LS_INDEX_PROFILE").is_some_and(|v| !v.is_empty());
        Profile {
            on,
            wall: Default::default(),
            cpu: Default::default(),
            process_cpu_at_start: if on { process_cpu_ns() } else { 0 },
            searchable_at: AtomicU64::new(0),
        }
    }

    /// Notes that every file is searchable now.
    pub fn searchable(&self, started: Instant) {
        let at = started.elapsed().as_nanos() as u64;
        self.searchable_at.store(at, Ordering::Relaxed);
    }

    pub fn mark(&self) -> Mark {
        Mark {
            wall: Instant::now(),
            cpu: if self.on { thread_cpu_ns() } else { 0 },
        }
    }

    pub fn add(&self, phase: Phase, since: Mark) {
        if self.on {
            let wall = since.wall.elapsed().as_nanos() as u64;
            let cpu = thread_cpu_ns().saturating_sub(since.cpu);
            self.wall[phase as usize].fetch_add(wall, Ordering::Relaxed);
            self.cpu[phase as usize].fetch_add(cpu, Ordering::Relaxed);
        }
    }

    /// Moves `nanos` of CPU and wall time from one phase to another (parsing is timed
    /// inside analyzing).
    pub fn split(&self, from: Phase, to: Phase, wall: u64, cpu: u64) {
        if self.on {
            self.wall[from as usize].fetch_sub(wall, Ordering::Relaxed);
            self.cpu[from as usize].fetch_sub(cpu, Ordering::Relaxed);
            self.wall[to as usize].fetch_add(wall, Ordering::Relaxed);
            self.cpu[to as usize].fetch_add(cpu, Ordering::Relaxed);
        }
    }

    pub fn report(&self, started: Instant) {
        if !self.on {
            return;
        }
        let s =
            |n: &[AtomicU64; PHASES], p: Phase| n[p as usize].load(Ordering::Relaxed) as f64 / 1e9;
        let phase = |name: &str, p: Phase| {
            format!("{name} {:.2}/{:.2}s", s(&self.wall, p), s(&self.cpu, p))
        };
        let process = process_cpu_ns().saturating_sub(self.process_cpu_at_start) as f64 / 1e9;
        eprintln!(
            "index profile: wall {:.2}s (searchable after {:.2}s), process CPU {process:.2}s; per phase, wall/CPU thread seconds: {}, {}, {}, {}, {}, {}, {}",
            started.elapsed().as_secs_f64(),
            self.searchable_at.load(Ordering::Relaxed) as f64 / 1e9,
            phase("walk", Phase::Walk),
            phase("read+hash", Phase::Read),
            phase("analyze", Phase::Analyze),
            phase("parse", Phase::Parse),
            phase("add", Phase::Add),
            phase("commit", Phase::Commit),
            phase("merge", Phase::Merge),
        );
    }
}

/// CPU time of the calling thread.
pub fn thread_cpu_ns() -> u64 {
    cpu_ns(CpuClock::Thread)
}

fn process_cpu_ns() -> u64 {
    cpu_ns(CpuClock::Process)
}
