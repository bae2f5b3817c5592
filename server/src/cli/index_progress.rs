//! What the command line shows on stderr while it waits for the index: nothing for a
//! wait under half a second; on a terminal, `indexing 2,310/6,712 files…` once a second,
//! rewritten in place; then, terminal or not, one final line saying what the wait was.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::index::{Progress, WorkspaceIndex};
use crate::session::IndexEvent;
use crate::text::thousands;

/// Below this, a wait is not worth a line.
const QUIET_FOR: Duration = Duration::from_millis(500);
const EVERY: Duration = Duration::from_secs(1);

pub struct IndexProgress {
    started: Instant,
    terminal: bool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    last_line: Option<Instant>,
    /// A progress line is on screen without its newline.
    open_line: bool,
    files: (usize, usize),
    /// Files read from disk by this run, once the refresh said (`IndexEvent::Done`).
    read: Option<usize>,
}

impl IndexProgress {
    pub fn new() -> IndexProgress {
        IndexProgress {
            started: Instant::now(),
            terminal: std::io::stderr().is_terminal(),
            state: Mutex::new(State::default()),
        }
    }

    pub fn event(&self, event: &IndexEvent) {
        match event {
            IndexEvent::Progress(progress) => self.progress(progress),
            IndexEvent::InMemory(why) => self.line(&format!(
                "copilot-ls: the index is kept in memory only: {why}"
            )),
            IndexEvent::NotIndexed(why) => {
                self.line(&format!("copilot-ls: {why}; searching files on demand"))
            }
            IndexEvent::Done(report) => {
                let mut state = crate::session::lock(&self.state);
                *state.read.get_or_insert(0) += report.files_read;
            }
        }
    }

    pub fn progress(&self, progress: &Progress) {
        match progress {
            Progress::Truncated(why) => self.line(&format!("copilot-ls: {why}")),
            Progress::Definitions { done, total } => self.show(&format!(
                "indexing definitions {}/{} files…",
                thousands(*done),
                thousands(*total)
            )),
            Progress::Files { done, total } => {
                crate::session::lock(&self.state).files = (*done, *total);
                self.show(&format!(
                    "indexing {}/{} files…",
                    thousands(*done),
                    thousands(*total)
                ));
            }
        }
    }

    /// A progress line, on a terminal only, at most once a second, after half a second.
    fn show(&self, text: &str) {
        let mut state = crate::session::lock(&self.state);
        if !self.terminal || self.started.elapsed() < QUIET_FOR {
            return;
        }
        if state.last_line.is_some_and(|at| at.elapsed() < EVERY) {
            return;
        }
        state.last_line = Some(Instant::now());
        state.open_line = true;
        let mut stderr = std::io::stderr().lock();
        let _ = write!(stderr, "\r\x1b[Kcopilot-ls: {text}");
        let _ = stderr.flush();
    }

    /// The final line, after a wait of more than half a second: the files the index
    /// holds (`files`, the number `copilot-ls index` shows; the progress counted the
    /// walk's) and those this run read (`filesRead`), in `index --json`'s words.
    pub fn finish(&self, index: Option<&WorkspaceIndex>) {
        let read = crate::session::lock(&self.state).read;
        self.finish_read(index, read);
    }

    /// `finish`, with the files read by this run given.
    pub fn finish_read(&self, index: Option<&WorkspaceIndex>, read: Option<usize>) {
        let elapsed = self.started.elapsed();
        if elapsed < QUIET_FOR {
            let state = crate::session::lock(&self.state);
            if state.open_line {
                eprintln!();
            }
            return;
        }
        let (_, walked) = crate::session::lock(&self.state).files;
        let files = index.map_or(walked, WorkspaceIndex::file_count);
        let read = match read {
            Some(read) => format!(", {} read by this run", thousands(read)),
            None => String::new(),
        };
        self.line(&format!(
            "copilot-ls: {} indexed{read}, in {:.1} s",
            crate::text::count(files, "file", "files"),
            elapsed.as_secs_f64()
        ));
    }

    /// A line of its own, after any progress line on screen.
    fn line(&self, text: &str) {
        let mut state = crate::session::lock(&self.state);
        let mut stderr = std::io::stderr().lock();
        if std::mem::take(&mut state.open_line) {
            let _ = write!(stderr, "\r\x1b[K");
        }
        let _ = writeln!(stderr, "{text}");
    }
}
