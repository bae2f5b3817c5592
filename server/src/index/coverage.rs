//! How much of the workspace the index can answer from right now: files walked, files
//! indexed, whether the first build has finished. Asks report it
//! (`AskResult.index`, the answer's first line during a build) so an answer from a
//! half-built index never passes for a complete one.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// What an ask's search could see.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// The first build has finished: every file the walk found is searchable with its
    /// definitions.
    pub complete: bool,
    /// Files searchable (by their words at least).
    pub files_indexed: usize,
    /// Files the walk has found so far (never fewer than `files_indexed`).
    pub files_total: usize,
    /// While the files an index from 0.4 left unparsed are parsed (`build.rs`): (files
    /// whose definitions are read, files with a grammar to parse).
    pub definitions: Option<(usize, usize)>,
    /// The repository's history, read after the files: `None` when no root has one to
    /// read (not a repository, turned off, no commits yet).
    pub history: Option<HistoryCoverage>,
}

/// How much of the roots' history an ask could draw on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HistoryCoverage {
    /// Commits held, over every root.
    pub commits: usize,
    /// Every root's history is read in full (section 10's `complete`: false for a read
    /// only in part, a shallow clone or the bound, too).
    pub complete: bool,
    /// Some root's first read has not ended yet: an answer now draws on none of its
    /// past changes.
    pub pending: bool,
}

impl HistoryCoverage {
    /// One root's history as an ask sees it; `None` when it has none to read.
    pub fn of(history: &crate::history::History) -> Option<HistoryCoverage> {
        use crate::history::Reason;
        let pending = history.pending();
        let state = history.state();
        if matches!(
            state.reason,
            Some(Reason::Off | Reason::NoRepository | Reason::UnbornHead)
        ) && state.commits == 0
        {
            return None;
        }
        Some(HistoryCoverage {
            commits: state.commits,
            complete: state.complete && !pending,
            pending,
        })
    }

    /// Two roots' together.
    pub fn and(self, other: HistoryCoverage) -> HistoryCoverage {
        HistoryCoverage {
            commits: self.commits + other.commits,
            complete: self.complete && other.complete,
            pending: self.pending || other.pending,
        }
    }
}

impl Coverage {
    /// The share of the build done, in whole percent, never 100 while incomplete.
    pub fn percent(&self) -> usize {
        if self.complete {
            return 100;
        }
        let share = (self.files_indexed * 100)
            .checked_div(self.files_total)
            .unwrap_or(0);
        share.min(99)
    }
}

/// What the index holds, as `copilot-ls index` and the command line's wait report it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Every file the index knows (found by `find_files`): what "N files" counts
    /// wherever it is shown, as in the build's progress and an ask's coverage.
    pub files: usize,
    /// Of those, the text files: searched by their words (the rest are binary).
    pub text: usize,
    pub chunks: usize,
    pub symbols: usize,
}

/// The live counters a build updates and asks read, without a lock.
#[derive(Default)]
pub struct CoverageState {
    complete: AtomicBool,
    indexed: AtomicUsize,
    total: AtomicUsize,
    /// Parsing what an index from 0.4 left unparsed: files parsed, and files to parse (0:
    /// not running).
    parsed: AtomicUsize,
    to_parse: AtomicUsize,
}

impl CoverageState {
    pub fn snapshot(&self) -> Coverage {
        let complete = self.complete.load(Ordering::Acquire);
        let indexed = self.indexed.load(Ordering::Relaxed);
        let total = self.total.load(Ordering::Relaxed).max(indexed);
        let to_parse = self.to_parse.load(Ordering::Relaxed);
        let definitions = (!complete && to_parse > 0)
            .then(|| (self.parsed.load(Ordering::Relaxed).min(to_parse), to_parse));
        Coverage {
            complete,
            files_indexed: indexed,
            files_total: total,
            definitions,
            history: None,
        }
    }

    /// The walk found one more file.
    pub fn walked(&self, total: usize) {
        self.total.store(total, Ordering::Relaxed);
    }

    pub fn set_indexed(&self, indexed: usize) {
        self.indexed.store(indexed, Ordering::Relaxed);
    }

    pub fn start_parsing(&self, files: usize) {
        self.parsed.store(0, Ordering::Relaxed);
        self.to_parse.store(files, Ordering::Relaxed);
    }

    pub fn set_parsed(&self, parsed: usize) {
        self.parsed.store(parsed, Ordering::Relaxed);
    }

    pub fn finish(&self) {
        self.to_parse.store(0, Ordering::Relaxed);
        self.complete.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_is_never_100_before_the_end() {
        let state = CoverageState::default();
        assert_eq!(state.snapshot().percent(), 0);
        state.walked(3);
        state.set_indexed(1);
        let c = state.snapshot();
        assert_eq!((c.files_indexed, c.files_total, c.percent()), (1, 3, 33));
        state.set_indexed(3);
        state.start_parsing(2);
        let c = state.snapshot();
        assert_eq!(
            (c.percent(), c.definitions, c.complete),
            (99, Some((0, 2)), false)
        );
        state.finish();
        let c = state.snapshot();
        assert_eq!((c.percent(), c.definitions, c.complete), (100, None, true));
        // The walk's count never falls below what is indexed.
        state.walked(1);
        assert_eq!(state.snapshot().files_total, 3);
    }
}
