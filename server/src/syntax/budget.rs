//! How long a parse or a query may run, counted in the CPU time of the thread running
//! it: a loaded machine parses exactly what an idle one does. A wall-clock deadline
//! stopped parses whose thread was only waiting for a core, and then the index cut
//! those files by lines and `find_references` told their comments from code in some
//! runs and not in others.

use std::time::{Duration, Instant};

/// Which CPU clock to read.
#[derive(Clone, Copy, Debug)]
pub enum CpuClock {
    /// The calling thread's.
    Thread,
    /// The whole process's, all threads.
    Process,
}

/// CPU time on `clock` in nanoseconds (0 where the clock is not known).
pub fn cpu_ns(clock: CpuClock) -> u64 {
    #[cfg(unix)]
    {
        let id = match clock {
            CpuClock::Thread => libc::CLOCK_THREAD_CPUTIME_ID,
            CpuClock::Process => libc::CLOCK_PROCESS_CPUTIME_ID,
        };
        let mut time = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec to the pointer it is given.
        let ok = unsafe { libc::clock_gettime(id, &mut time) } == 0;
        if ok {
            return time.tv_sec as u64 * 1_000_000_000 + time.tv_nsec as u64;
        }
    }
    let _ = clock;
    0
}

/// A budget of the calling thread's CPU time (of wall time where no CPU clock is
/// known, so a parse is bounded there too).
pub struct Budget {
    start: Start,
    limit: Duration,
    checks: u32,
}

enum Start {
    Cpu(u64),
    Wall(Instant),
}

/// Reading a CPU clock is a system call; tree-sitter asks every 100 operations or so,
/// so the clock is read at every 16th question only.
const CHECK_EVERY: u32 = 16;

impl Budget {
    pub fn start(limit: Duration) -> Budget {
        let start = match cpu_ns(CpuClock::Thread) {
            0 => Start::Wall(Instant::now()),
            cpu => Start::Cpu(cpu),
        };
        Budget {
            start,
            limit,
            checks: 0,
        }
    }

    /// Whether the budget is spent (known at most `CHECK_EVERY` questions late).
    pub fn spent(&mut self) -> bool {
        self.checks = self.checks.wrapping_add(1);
        if !self.checks.is_multiple_of(CHECK_EVERY) {
            return false;
        }
        let used = match self.start {
            Start::Cpu(start) => {
                Duration::from_nanos(cpu_ns(CpuClock::Thread).saturating_sub(start))
            }
            Start::Wall(start) => start.elapsed(),
        };
        used > self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting_spends_no_budget_and_working_does() {
        let mut budget = Budget::start(Duration::from_millis(20));
        std::thread::sleep(Duration::from_millis(60));
        assert!(
            !(0..CHECK_EVERY).any(|_| budget.spent()),
            "a sleep is not work"
        );
        let mut spin = 0u64;
        let mut spent = false;
        for _ in 0..100_000_000u64 {
            spin = spin.wrapping_add(std::hint::black_box(1));
            if budget.spent() {
                spent = true;
                break;
            }
        }
        assert!(spent, "spun {spin} times within a 20 ms budget");
    }
}
