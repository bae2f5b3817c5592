//! Tools the model can call: one file per tool, the schemas it sees, and the registry
//! below that dispatches a call by name. Paths go through `workspace/`'s sandbox.
//!
//! Invariants: no tool writes to disk, runs a program or opens a connection; every
//! failure is an `Error: ` string for the model, never a panic.

pub mod answer;
pub mod error;
pub mod external;
pub mod file_outline;
pub mod find_files;
pub mod find_references;
pub mod find_related;
pub mod find_symbol;
pub mod git_blame;
pub mod git_diff;
pub mod git_log;
mod in_root;
pub mod list_directory;
pub mod list_open_buffers;
pub mod propose_edit;
pub mod read_file;
pub mod read_open_buffer;
mod references_scope;
pub mod schemas;
pub mod search_code;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::index::WorkspaceIndex;
use crate::workspace::Workspace;

pub use error::ToolError;
pub use propose_edit::ProposedEdit;

/// The result of one tool call.
#[derive(Clone, Debug)]
pub struct ToolOutput {
    /// What the model reads. Starts with `Error: ` when the call failed.
    pub text: String,
    pub ok: bool,
    /// One line for people: the step list and progress.
    pub summary: String,
    /// Set by `propose_edit`.
    pub edit: Option<ProposedEdit>,
    /// The places the text lists, for front ends that show them as data (MCP's
    /// `structuredContent`): set by the finders (`search_code`, `find_symbol`,
    /// `find_references`, `file_outline`); empty for the other tools and for errors.
    pub places: Vec<Place>,
}

/// One place a finder's result names (the same place as its text line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// Workspace-relative, `/` separators.
    pub path: String,
    /// 1-based, inclusive.
    pub line: usize,
    pub end_line: usize,
    /// The definition there, in the language's notation.
    pub symbol: Option<String>,
    /// The line (or signature) the text shows.
    pub excerpt: Option<String>,
}

impl ToolOutput {
    pub fn ok(text: String, summary: String) -> ToolOutput {
        ToolOutput {
            text,
            ok: true,
            summary,
            edit: None,
            places: Vec::new(),
        }
    }

    pub fn error(error: &ToolError) -> ToolOutput {
        ToolOutput {
            text: format!("Error: {error}"),
            ok: false,
            summary: error.to_string(),
            edit: None,
            places: Vec::new(),
        }
    }

    fn with_places(mut self, places: Vec<Place>) -> ToolOutput {
        self.places = places;
        self
    }

    fn with_edit(mut self, edit: ProposedEdit) -> ToolOutput {
        self.edit = Some(edit);
        self
    }
}

/// One line per item, at most `max`, then `more(n)` when `n` items were left out.
fn capped_lines(items: Vec<String>, max: usize, more: impl Fn(usize) -> String) -> String {
    let total = items.len();
    let mut out = items.into_iter().take(max).collect::<Vec<_>>().join("\n");
    out.push('\n');
    if total > max {
        out.push_str(&more(total - max));
        out.push('\n');
    }
    out
}

/// Appends the walk's note on what it could not reach, when it missed anything.
fn push_unreached(out: &mut String, unreached: &crate::workspace::walk::Unreached) {
    if let Some(note) = unreached.note_line() {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&note);
        out.push('\n');
    }
}

/// Names of every tool the model can call.
pub fn names() -> Vec<String> {
    schemas::all().into_iter().map(|spec| spec.name).collect()
}

/// Runs one tool call. `arguments` is the JSON text the model produced. The `answer`
/// tool is not run here: the agent ends its loop on it (see `parse_answer`).
pub fn run(name: &str, arguments: &str, workspace: &Workspace) -> ToolOutput {
    run_with_index(name, arguments, workspace, None)
}

/// Whether a tool answers from the workspace index (the others never touch it).
pub fn uses_index(name: &str) -> bool {
    matches!(name, "find_symbol" | "find_references" | "find_related")
}

/// `run`, with the workspace index for the tools that use it (`find_symbol` answers
/// from its symbol table; without one it parses the workspace itself; `git_log` reads
/// the index's history, or one of its own in memory).
pub fn run_with_index(
    name: &str,
    arguments: &str,
    workspace: &Workspace,
    index: Option<&WorkspaceIndex>,
) -> ToolOutput {
    run_with_data(name, arguments, workspace, index).0
}

/// `run_with_index`, with the structure the `git_*` tools build beside their text
/// (`{commits}`, `{runs}`, `{diff, files}`: MCP's `structuredContent`), redacted as the
/// text is; `None` for the other tools (their structure is `ToolOutput::places`) and
/// for errors.
pub fn run_with_data(
    name: &str,
    arguments: &str,
    workspace: &Workspace,
    index: Option<&WorkspaceIndex>,
) -> (ToolOutput, Option<Value>) {
    let mut data = None;
    let mut keep = |(output, value): (ToolOutput, Value)| {
        data = Some(value);
        output
    };
    let result = match name {
        "read_file" => parse(name, arguments).and_then(|a| read_file::run(a, workspace)),
        "list_directory" => parse(name, arguments).and_then(|a| list_directory::run(a, workspace)),
        "search_code" => parse(name, arguments).and_then(|a| search_code::run(a, workspace)),
        "find_files" => parse(name, arguments).and_then(|a| find_files::run(a, workspace)),
        "find_symbol" => parse(name, arguments).and_then(|a| find_symbol::run(a, workspace, index)),
        "find_references" => {
            parse(name, arguments).and_then(|a| find_references::run(a, workspace, index))
        }
        "file_outline" => parse(name, arguments).and_then(|a| file_outline::run(a, workspace)),
        "find_related" if find_related::available() => {
            parse(name, arguments).and_then(|a| find_related::run(a, workspace, index))
        }
        "list_open_buffers" => {
            parse::<Value>(name, arguments).map(|_| list_open_buffers::run(workspace))
        }
        "read_open_buffer" => {
            parse(name, arguments).and_then(|a| read_open_buffer::run(a, workspace))
        }
        "propose_edit" => parse(name, arguments).and_then(|a| propose_edit::run(a, workspace)),
        "git_log" => parse(name, arguments)
            .and_then(|a| git_log::run(a, workspace, index))
            .map(&mut keep),
        "git_blame" => parse(name, arguments)
            .and_then(|a| git_blame::run(a, workspace))
            .map(&mut keep),
        "git_diff" => parse(name, arguments)
            .and_then(|a| git_diff::run(a, workspace))
            .map(&mut keep),
        "answer" => Err(ToolError::Invalid(
            "answer ends the conversation and is handled by the agent".into(),
        )),
        _ => Err(ToolError::UnknownTool(name.to_string(), names().join(", "))),
    };
    let mut output = result.unwrap_or_else(|error| ToolOutput::error(&error));
    if !output.ok {
        data = None;
    }
    // The one place tool output is made: secrets in files never go further.
    if let std::borrow::Cow::Owned(redacted) = crate::workspace::redact::redact(&output.text) {
        output.text = redacted;
    }
    for place in &mut output.places {
        for text in [&mut place.excerpt, &mut place.symbol]
            .into_iter()
            .flatten()
        {
            if let std::borrow::Cow::Owned(redacted) = crate::workspace::redact::redact(text) {
                *text = redacted;
            }
        }
    }
    if let Some(data) = &mut data {
        redact_strings(data);
    }
    (output, data)
}

/// Every string in `value` redacted.
fn redact_strings(value: &mut Value) {
    match value {
        Value::String(text) => {
            if let std::borrow::Cow::Owned(redacted) = crate::workspace::redact::redact(text) {
                *text = redacted;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_strings),
        Value::Object(map) => map.values_mut().for_each(redact_strings),
        _ => {}
    }
}

/// Parses the `answer` tool's arguments.
pub fn parse_answer(arguments: &str) -> Result<answer::Args, ToolError> {
    parse("answer", arguments)
}

/// Arguments arrive as JSON text; an empty string means "no arguments" (some models send
/// that for parameterless tools).
fn parse<T: DeserializeOwned>(tool: &str, arguments: &str) -> Result<T, ToolError> {
    let text = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    serde_json::from_str(text).map_err(|e| ToolError::InvalidArguments {
        tool: tool.to_string(),
        reason: e.to_string(),
    })
}

/// The progress line for a call: the tool and its main argument, such as
/// `search_code: rate_limit` or `read_file: src/config.rs:1-80`.
pub fn progress_label(name: &str, arguments: &str) -> String {
    let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_string);
    let number = |key: &str| args.get(key).and_then(Value::as_u64);
    let main = match name {
        "search_code" => text("pattern"),
        "find_files" => text("pattern"),
        "list_directory" => Some(text("path").unwrap_or_else(|| ".".into())),
        "read_file" | "read_open_buffer" | "git_blame" => {
            text("path").map(|path| match (number("start_line"), number("end_line")) {
                (Some(s), Some(e)) => format!("{path}:{s}-{e}"),
                (Some(s), None) => format!("{path}:{s}"),
                (None, Some(e)) => format!("{path}:1-{e}"),
                (None, None) => path,
            })
        }
        "propose_edit" | "file_outline" => text("path"),
        "find_symbol" | "find_references" => text("name"),
        "git_log" => match (text("query"), text("path")) {
            (Some(query), Some(path)) => Some(format!("{query} in {path}")),
            (query, path) => query.or(path),
        },
        "git_diff" => text("path"),
        "find_related" => text("path").map(|path| match number("line") {
            Some(line) => format!("{path}:{line}"),
            None => path,
        }),
        _ => None,
    };
    match main {
        Some(main) => {
            let main: String = main.chars().take(80).collect();
            format!("{name}: {main}")
        }
        None => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_git_tools_have_progress_labels() {
        assert_eq!(
            progress_label("git_log", r#"{"query":"retry","path":"src/"}"#),
            "git_log: retry in src/"
        );
        assert_eq!(
            progress_label("git_log", r#"{"path":"a.rs"}"#),
            "git_log: a.rs"
        );
        assert_eq!(
            progress_label(
                "git_blame",
                r#"{"path":"a.rs","start_line":3,"end_line":9}"#
            ),
            "git_blame: a.rs:3-9"
        );
        assert_eq!(progress_label("git_diff", "{}"), "git_diff");
    }

    #[test]
    fn only_the_git_tools_carry_data_and_it_is_redacted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        let sandbox = crate::workspace::sandbox::Sandbox::new(dir.path()).unwrap();
        let workspace = Workspace::new(sandbox, std::sync::Arc::new(crate::workspace::NoDocuments));
        let (output, data) = run_with_data("list_directory", "{}", &workspace, None);
        assert!(output.ok && data.is_none());
        let (output, data) = run_with_data("git_diff", r#"{"path":"../x"}"#, &workspace, None);
        assert!(!output.ok && data.is_none());
        let key = ["AKIA", "Q3ZXN7RT2PLM6VWB"].concat();
        let mut value = serde_json::json!({"commits": [{"subject": format!("Rotate {key}")}]});
        redact_strings(&mut value);
        assert!(!value.to_string().contains(&key), "{value}");
    }
}
