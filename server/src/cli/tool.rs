//! `copilot-ls tool NAME [JSON] [--workspace DIR]`: one tool call, as the model makes it.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use super::index_progress::IndexProgress;
use crate::index::{cache_dir_from_env, Bounds, RetrievalIndex};
use crate::tools;
use crate::workspace::project_root;
use crate::workspace::sandbox::Sandbox;
use crate::workspace::{NoDocuments, Workspace};

pub fn run(name: &str, arguments: &str, workspace: Option<PathBuf>, no_wait: bool) -> ExitCode {
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
    // the persistent one, brought up to date first (only changed files are read, with
    // progress on stderr) unless `--no-wait`. A root that is not a project (`/`, a home
    // directory) has no index: the tool searches on demand.
    let index = tools::uses_index(name)
        .then(|| {
            let home = project_root::home_dir();
            if let Some(why) = project_root::not_a_project(workspace.root(), home.as_deref()) {
                eprintln!("copilot-ls: {why}; searching files on demand");
                return None;
            }
            let index = RetrievalIndex::shared(workspace.clone(), cache_dir_from_env().as_deref());
            if !no_wait {
                let shown = IndexProgress::new();
                index.refresh_or_fall_back(Bounds::from_env(), &|p| shown.progress(&p));
                shown.finish();
            }
            Some(index)
        })
        .flatten();
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
