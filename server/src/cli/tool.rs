//! `copilot-ls tool NAME [JSON] [--workspace DIR]`: one tool call, as the model makes it.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use crate::index::{cache_dir_from_env, Bounds, RetrievalIndex};
use crate::tools;
use crate::workspace::sandbox::Sandbox;
use crate::workspace::{NoDocuments, Workspace};

pub fn run(name: &str, arguments: &str, workspace: Option<PathBuf>) -> ExitCode {
    let root = super::workspace_root(workspace);
    let sandbox = match Sandbox::new(&root) {
        Ok(sandbox) => sandbox,
        Err(error) => {
            eprintln!(
                "copilot-ls: cannot use {} as the workspace: {error}",
                root.display()
            );
            return ExitCode::from(2);
        }
    };
    let workspace = Workspace::new(sandbox, Arc::new(NoDocuments));
    // A tool that answers from the workspace index gets it as a server would have it:
    // the persistent one, brought up to date (only changed files are read).
    let index = tools::uses_index(name).then(|| {
        let index = RetrievalIndex::open(workspace.clone(), cache_dir_from_env().as_deref());
        index.refresh(Bounds::from_env(), &|_| {});
        index
    });
    let output = tools::run_with_index(name, arguments, &workspace, index.as_ref());
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(output.text.as_bytes());
    if !output.text.ends_with('\n') {
        let _ = stdout.write_all(b"\n");
    }
    let _ = stdout.flush();
    if output.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
