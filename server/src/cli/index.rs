//! `copilot-ls index`: brings the workspace's persistent index up to date (reading only
//! the files changed since it was written) and prints what it holds and what that cost.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

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
    let cache = cache_dir_from_env();
    let index = RetrievalIndex::open(
        Workspace::new(sandbox, Arc::new(NoDocuments)),
        cache.as_deref(),
    );
    let report = index.refresh(Bounds::from_env(), &|_| {});
    let seconds = started.elapsed().as_secs_f64();
    if let Some(why) = &report.truncated {
        eprintln!("copilot-ls: {why}");
    }
    if let Location::Memory(reason) = index.location() {
        eprintln!("copilot-ls: the index was built in memory only: {reason}");
    }
    let (files, chunks, symbols, bytes) = (
        index.file_count(),
        index.chunk_count(),
        index.symbol_count(),
        index.bytes_on_disk(),
    );
    let mut stdout = std::io::stdout().lock();
    let written = if json {
        let result = serde_json::json!({
            "files": files,
            "chunks": chunks,
            "symbols": symbols,
            "filesRead": report.files_read,
            "seconds": seconds,
            "bytes": bytes,
        });
        writeln!(stdout, "{result}")
    } else {
        let location = match index.location() {
            Location::Disk(dir) => dir.display().to_string(),
            Location::Memory(_) => "memory".to_string(),
        };
        writeln!(
            stdout,
            "{files} files, {chunks} chunks, {symbols} symbols\n{} files read in {seconds:.2} s\n{bytes} bytes on disk at {location}",
            report.files_read
        )
    };
    if written.and_then(|()| stdout.flush()).is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
