//! `copilot-ls dev`: hidden commands for the training pipelines (`train/`), so they
//! learn on exactly what the binary makes: the index's terms for a text, the definitions
//! the parser finds in a file, and the learned ranker's features of the files a question
//! finds in a workspace (`index/features.rs`). Input is JSON lines on stdin, output one
//! JSON value per input line on stdout (a bad line gets `null` and a message on stderr,
//! and the rest go on), so a script can stream a whole repository through one process.

use std::io::{BufRead, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::index::{
    cache_dir_from_env, features, is_question, refresh_in_turn, terms, Bounds, WorkspaceIndex,
};
use crate::syntax::symbols_for_path;
use crate::workspace::{NoDocuments, Workspace};

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum DevCommand {
    /// Each line a JSON string → a JSON array of the index's terms for it.
    Terms,
    /// Each line `{"path", "text"}` → a JSON array of the definitions in it
    /// (`{name, qualifiedName, kind, line, docLine, endLine}`, 0-based lines), or `null`
    /// for a file without a grammar.
    Symbols,
    /// With `--workspace`: each line a question (a JSON string) → `{"featureSet",
    /// "names", "files": [{path, values}]}`, the ranker's features of every candidate
    /// file, the lexical ranking's order first.
    Features,
    /// Each line a question (a JSON string) → whether it is asked of the code
    /// (`ParsedQuestion::is_question`), which the learned ranker leaves to the hand-set
    /// order: for judging that on the mined queries (train/rank/judge.py).
    Asks,
}

pub fn run(command: DevCommand, workspace: Option<PathBuf>, limit: usize) -> ExitCode {
    let index = match command {
        DevCommand::Features => match open_indexed(workspace) {
            Ok(index) => Some(index),
            Err(why) => {
                eprintln!("copilot-ls dev features: {why}");
                return ExitCode::FAILURE;
            }
        },
        _ => None,
    };
    let stdin = std::io::stdin().lock();
    let mut out = BufWriter::new(std::io::stdout().lock());
    for (number, line) in stdin.lines().enumerate() {
        let line = match line {
            Ok(line) => line,
            Err(error) => {
                eprintln!("copilot-ls dev: stdin: {error}");
                return ExitCode::FAILURE;
            }
        };
        let value = match serde_json::from_str::<Value>(&line) {
            Ok(input) => match &index {
                Some(index) => file_features(index, &input, limit),
                None => answer(command, &input),
            },
            Err(error) => Err(error.to_string()),
        };
        let value = value.unwrap_or_else(|error| {
            eprintln!("copilot-ls dev: line {}: {error}", number + 1);
            Value::Null
        });
        if writeln!(out, "{value}").is_err() {
            return ExitCode::FAILURE;
        }
    }
    if out.flush().is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// The workspace's index brought up to date, its history read whole (training cuts the
/// history at a snapshot by checking the snapshot out: nothing after HEAD can vote).
fn open_indexed(workspace: Option<PathBuf>) -> Result<WorkspaceIndex, String> {
    let root = workspace.ok_or("--workspace is required")?;
    let sandbox = super::roots_sandbox(&super::workspace_roots(vec![root]))?;
    let workspace = Workspace::new(sandbox, Arc::new(NoDocuments));
    let index = WorkspaceIndex::open_roots(&workspace, cache_dir_from_env().as_deref(), true)?;
    refresh_in_turn(index.roots(), Bounds::from_env(), &|_| {});
    for root in index.roots() {
        root.history().refresh();
    }
    Ok(index)
}

fn file_features(index: &WorkspaceIndex, input: &Value, limit: usize) -> Result<Value, String> {
    let question = input
        .as_str()
        .ok_or("expected a JSON string (a question)")?;
    Ok(json!({
        "featureSet": features::FEATURE_SET,
        "names": &features::NAMES[..],
        "files": index.file_features(question, limit),
    }))
}

fn answer(command: DevCommand, input: &Value) -> Result<Value, String> {
    match command {
        DevCommand::Features => Err("features needs --workspace".to_string()),
        DevCommand::Terms => {
            let text = input.as_str().ok_or("expected a JSON string")?;
            Ok(json!(terms(text)))
        }
        DevCommand::Asks => {
            let text = input.as_str().ok_or("expected a JSON string")?;
            Ok(json!(is_question(text)))
        }
        DevCommand::Symbols => {
            let path = input["path"]
                .as_str()
                .ok_or("expected {\"path\", \"text\"}")?;
            let text = input["text"]
                .as_str()
                .ok_or("expected {\"path\", \"text\"}")?;
            let Some(found) = symbols_for_path(path, text) else {
                return Ok(Value::Null);
            };
            let symbols = found.map_err(|error| error.to_string())?;
            Ok(Value::Array(
                symbols
                    .iter()
                    .map(|symbol| {
                        json!({
                            "name": symbol.name,
                            "qualifiedName": symbol.qualified_name,
                            "kind": symbol.kind.as_str(),
                            "line": symbol.line,
                            "docLine": symbol.doc_line,
                            "endLine": symbol.end_line,
                        })
                    })
                    .collect(),
            ))
        }
    }
}
