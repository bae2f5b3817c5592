//! `copilot-ls index`: brings the workspace's persistent index up to date (reading only
//! the files changed since it was written) and prints what it holds and what that cost.
//! It exits 1, saying why, when the index could not be written to disk.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use super::index_progress::IndexProgress;
use crate::index::{
    cache_dir_from_env, Bounds, Location, Progress, RefreshReport, RetrievalIndex, WorkspaceIndex,
};
use crate::text::{count, size, thousands};
use crate::workspace::{NoDocuments, Workspace};

pub fn run(workspace: Vec<PathBuf>, json: bool) -> ExitCode {
    let sandbox = match super::roots_sandbox(&super::workspace_roots(workspace)) {
        Ok(sandbox) => sandbox,
        Err(why) => {
            eprintln!("{why}");
            return ExitCode::FAILURE;
        }
    };
    let Some(cache) = cache_dir_from_env() else {
        eprintln!("copilot-ls: no cache directory to keep the index in: set COPILOT_LS_CACHE_DIR (an absolute path) or HOME");
        return ExitCode::FAILURE;
    };
    let workspace = Workspace::new(sandbox, Arc::new(NoDocuments));
    // Each root keeps an index of its own; each is brought up to date in turn.
    let shown = IndexProgress::new();
    let mut roots = Vec::new();
    for i in 0..workspace.sandbox.roots().len() {
        match index_root(&workspace.only(i), &cache, &shown) {
            Ok(root) => roots.push(root),
            Err(code) => return code,
        }
    }
    let indexes: Vec<(String, RetrievalIndex)> = roots
        .iter()
        .enumerate()
        .map(|(i, root)| (workspace.sandbox.prefix(i), root.index.clone()))
        .collect();
    let read = roots.iter().map(|root| root.report.files_read).sum();
    shown.finish_read(Some(&WorkspaceIndex::of_roots(indexes)), Some(read));
    let mut stdout = std::io::stdout().lock();
    let written = if json {
        let result = match &roots[..] {
            [one] => one.json(),
            several => {
                // Each root's report once: its size on disk is a walk of its directory.
                let reports: Vec<serde_json::Value> = several
                    .iter()
                    .map(|root| {
                        let mut json = root.json();
                        json["root"] = serde_json::json!(root.index.root().display().to_string());
                        json
                    })
                    .collect();
                // `roots` first, the totals after it.
                let mut total = serde_json::json!({ "roots": [] });
                for key in [
                    "files",
                    "chunks",
                    "symbols",
                    "filesRead",
                    "textFiles",
                    "bytes",
                    "unreached",
                ] {
                    let sum: u64 = reports.iter().map(|r| r[key].as_u64().unwrap_or(0)).sum();
                    total[key] = serde_json::json!(sum);
                }
                total["roots"] = serde_json::Value::Array(reports);
                let seconds: f64 = several.iter().map(|root| root.seconds).sum();
                total["seconds"] = serde_json::json!(seconds);
                total
            }
        };
        writeln!(stdout, "{result}")
    } else {
        let several = roots.len() > 1;
        roots.iter().try_for_each(|root| {
            if several {
                writeln!(stdout, "{}:", root.index.root().display())?;
            }
            writeln!(stdout, "{}", root.text())
        })
    };
    if written.and_then(|()| stdout.flush()).is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// One root's index, brought up to date, and what that cost.
struct Indexed {
    index: RetrievalIndex,
    report: RefreshReport,
    seconds: f64,
}

/// Opens one root's index on disk and brings it up to date; the exit code when it cannot
/// be kept on disk or its refresh failed (said on stderr).
fn index_root(
    workspace: &Workspace,
    cache: &Path,
    shown: &IndexProgress,
) -> Result<Indexed, ExitCode> {
    let started = Instant::now();
    let index = RetrievalIndex::open(workspace.clone(), Some(cache));
    if let Location::Memory(reason) = index.location() {
        eprintln!("copilot-ls: cannot keep the index on disk: {reason}");
        return Err(ExitCode::FAILURE);
    }
    // Nothing here answers before both are done, so the history is read as soon as every
    // file is analyzed, beside the build's last commit and its merge, which leave a core
    // idle. Not sooner: beside the whole build the two held their memory at once (rails:
    // a peak of 237 MB against 137), past what the history may add (docs/history.md,
    // "Cost"). An ask reads it after the files are committed (section 11), never beside.
    let (analyzed, start_history) = std::sync::mpsc::sync_channel::<()>(1);
    let history = index.history();
    let report = std::thread::scope(|scope| {
        scope.spawn(move || {
            // The files' message, or the build's end without one (the sender dropped).
            let _ = start_history.recv();
            history.refresh();
        });
        let report = index.refresh(Bounds::from_env(), &|p| {
            if let Progress::Files { done, total } = &p {
                if done == total {
                    let _ = analyzed.try_send(());
                }
            }
            shown.progress(&p)
        });
        drop(analyzed);
        report
    });
    let seconds = started.elapsed().as_secs_f64();
    if let Some(note) = &report.unreached_example {
        let note = note.trim_start_matches('(').trim_end_matches(')');
        eprintln!("copilot-ls: not indexed: {note}");
    }
    if let Some(why) = &report.failed {
        eprintln!("copilot-ls: {why}; the index on disk keeps what it held before, and the next run reads the rest");
        return Err(ExitCode::FAILURE);
    }
    Ok(Indexed {
        index,
        report,
        seconds,
    })
}

impl Indexed {
    fn json(&self) -> serde_json::Value {
        let (counts, index) = (self.index.counts(), &self.index);
        let history = index.history().state();
        serde_json::json!({
            "files": counts.files,
            "chunks": counts.chunks,
            "symbols": counts.symbols,
            "filesRead": self.report.files_read,
            // Of `files`, those searched by their words (the rest are binary).
            "textFiles": counts.text,
            "seconds": self.seconds,
            "bytes": index.bytes_on_disk(),
            // Paths the walk or the reads could not reach (permissions, PATH_MAX).
            "unreached": self.report.unreached,
            "history": {
                "commits": history.commits,
                "complete": history.complete,
                "reason": history.reason.map(|reason| reason.as_str()),
            },
        })
    }

    fn text(&self) -> String {
        let (counts, index) = (self.index.counts(), &self.index);
        let (files, chunks, symbols) = (counts.files, counts.chunks, counts.symbols);
        let location = match index.location() {
            Location::Disk(dir) => dir.display().to_string(),
            Location::Memory(_) => "memory".to_string(),
        };
        let history = index.history().state();
        let history = match history.reason {
            None => format!("{} commits of history", thousands(history.commits)),
            Some(reason) => format!(
                "{} commits of history (incomplete: {})",
                thousands(history.commits),
                reason.as_str()
            ),
        };
        let binary = match files - counts.text {
            0 => String::new(),
            n => format!(" ({} of them binary)", thousands(n)),
        };
        // The numbers of `--json`, in its words: `files` indexed, `filesRead` read by
        // this run, `bytes` on disk.
        format!(
            "{} indexed{binary}, {} chunks, {} symbols, {history}\n{} read by this run in {:.2} s\n{} on disk at {location}",
            count(files, "file", "files"),
            thousands(chunks),
            thousands(symbols),
            count(self.report.files_read, "file", "files"),
            self.seconds,
            size(index.bytes_on_disk())
        )
    }
}
