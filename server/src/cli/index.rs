//! `copilot-ls index`: brings the workspace's persistent index up to date (reading only
//! the files changed since it was written) and prints what it holds and what that cost.
//! It exits 1, saying why, when the index could not be written to disk.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use super::index_progress::IndexProgress;
use crate::index::{cache_dir_from_env, Bounds, Location, RetrievalIndex};
use crate::workspace::sandbox::Sandbox;
use crate::workspace::{NoDocuments, Workspace};

pub fn run(workspace: Option<PathBuf>, json: bool) -> ExitCode {
    let root = super::workspace_root(workspace);
    let sandbox = match Sandbox::new(&root) {
        Ok(sandbox) => sandbox,
        Err(error) => {
            eprintln!(
                "copilot-ls: cannot use {} as the workspace: {error}",
                root.display()
            );
            return ExitCode::FAILURE;
        }
    };
    let started = Instant::now();
    let Some(cache) = cache_dir_from_env() else {
        eprintln!("copilot-ls: no cache directory to keep the index in: set COPILOT_LS_CACHE_DIR (an absolute path) or HOME");
        return ExitCode::FAILURE;
    };
    let index = RetrievalIndex::open(Workspace::new(sandbox, Arc::new(NoDocuments)), Some(&cache));
    if let Location::Memory(reason) = index.location() {
        eprintln!("copilot-ls: cannot keep the index on disk: {reason}");
        return ExitCode::FAILURE;
    }
    let shown = IndexProgress::new();
    let report = index.refresh(Bounds::from_env(), &|p| shown.progress(&p));
    index.history().refresh();
    shown.finish(Some(&index));
    let seconds = started.elapsed().as_secs_f64();
    if let Some(note) = &report.unreached_example {
        let note = note.trim_start_matches('(').trim_end_matches(')');
        eprintln!("copilot-ls: not indexed: {note}");
    }
    if let Some(why) = &report.failed {
        eprintln!("copilot-ls: {why}; the index on disk keeps what it held before, and the next run reads the rest");
        return ExitCode::FAILURE;
    }
    let (counts, bytes) = (index.counts(), index.bytes_on_disk());
    let (files, chunks, symbols) = (counts.files, counts.chunks, counts.symbols);
    let history = index.history().state();
    let history_json = serde_json::json!({
        "commits": history.commits,
        "complete": history.complete,
        "reason": history.reason.map(|reason| reason.as_str()),
    });
    let mut stdout = std::io::stdout().lock();
    let written = if json {
        let result = serde_json::json!({
            "files": files,
            "chunks": chunks,
            "symbols": symbols,
            "filesRead": report.files_read,
            // Of `files`, those searched by their words (the rest are binary).
            "textFiles": counts.text,
            "seconds": seconds,
            "bytes": bytes,
            // Paths the walk or the reads could not reach (permissions, PATH_MAX).
            "unreached": report.unreached,
            "history": history_json,
        });
        writeln!(stdout, "{result}")
    } else {
        let location = match index.location() {
            Location::Disk(dir) => dir.display().to_string(),
            Location::Memory(_) => "memory".to_string(),
        };
        let history = match history.reason {
            None => format!("{} commits of history", history.commits),
            Some(reason) => format!(
                "{} commits of history (incomplete: {})",
                history.commits,
                reason.as_str()
            ),
        };
        let binary = match files - counts.text {
            0 => String::new(),
            n => format!(" ({n} of them binary)"),
        };
        writeln!(
            stdout,
            "{files} files{binary}, {chunks} chunks, {symbols} symbols, {history}\n{} files read in {seconds:.2} s\n{bytes} bytes on disk at {location}",
            report.files_read
        )
    };
    if written.and_then(|()| stdout.flush()).is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
