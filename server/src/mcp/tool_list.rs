//! The tools `copilot-ls mcp` offers: the read-only tools of the ask (same names, same
//! arguments, same text results: the finders, the readers and the `git_*` tools) plus
//! `locate`, each with an input schema (the ask's
//! own), an output schema for its `structuredContent`, and read-only annotations. The
//! descriptions are written for a model that already has grep and a file reader: they
//! say when one of these is the better call.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{json, Value};

use crate::tools::schemas;

/// The tools always offered, in the order they are listed (`names` adds
/// `find_related` when a code model is loaded).
pub const NAMES: [&str; 11] = [
    "locate",
    "find_symbol",
    "find_references",
    "file_outline",
    "search_code",
    "read_file",
    "list_directory",
    "find_files",
    "git_log",
    "git_blame",
    "git_diff",
];

/// The tools offered, in the order they are listed.
pub fn names() -> Vec<&'static str> {
    let mut names = NAMES.to_vec();
    if crate::tools::find_related::available() {
        // After the other finders.
        names.insert(4, "find_related");
    }
    names
}

fn description(name: &str) -> &'static str {
    match name {
        "locate" => "The places in this workspace that best answer a question in plain words (\"where are retries decided?\", \"how is the config file parsed?\"), ranked by copilot-ls's persistent index of the whole workspace: each with its file, the line defining it, its last line and a short excerpt. Use it first when you do not know which names or files to look for; grep needs the right word, this ranks definitions, docs and paths by the question's words. No model is called.",
        "find_symbol" => "Where a function, method, class, struct, enum, trait, interface, type, constant or module is defined, by name or name prefix (case-insensitive), from a parsed index of the whole workspace (Rust, Python, JavaScript, TypeScript/TSX, Go, Java, C, C++). `Container.name` or `Container::name` finds members of a type, impl or namespace. Prefer it to grepping for `def name`/`fn name`/`class Name`: it answers in milliseconds on large repositories, gives the signature and the full line range, and ignores comments and strings.",
        "find_references" => "Who uses an identifier: every line where it is used outside its definitions, exact and case-sensitive, with words in comments and strings left out (for the languages above); the files that define it come first. `Container.name` or `Container::name` keeps the uses that resolve to that container's definition as far as the text shows. Prefer it to grep when you want the callers of a function or the users of a type: candidate files come from the index, so it does not read the whole tree, and a name inside another identifier (`refill` in `refill_count`) is not a match.",
        "find_related" => "The places whose code is most like a definition's (give `path` and a `line` inside it), by a code model copilot-ls runs locally (no network): the definition, then at most 10 places, most alike first, as `path:line: kind name  signature`. Use it for \"is this done elsewhere?\", \"where else is this pattern?\", \"what else would this fix need?\": it finds code doing the same thing under other names, which grep and find_references cannot.",
        "file_outline" => "A source file's definitions by its syntax, nested, each with its line range (`14-33 impl TokenBucket`, `  25-33 fn try_acquire`). Use it before reading a large file, then read only the lines you need.",
        "search_code" => "Text search over the workspace (ripgrep's engine; git-ignored and binary files skipped; secret files and .git never searched): one `path:line: text` line per match, at most 100, then a count. Plain substring by default, `regex: true` for a Rust regex, case-insensitive unless `case_sensitive: true`. Use it for strings, messages and patterns that are not identifiers; for a name, find_symbol and find_references are more precise.",
        "read_file" => "Read lines of a workspace file, each prefixed by its number and a tab, at most 400 per call (`start_line`/`end_line`, 1-based). Paths are confined to the workspace; secret files (.env, keys) and .git internals are refused.",
        "list_directory" => "The entries of one workspace directory, sorted, directories with a trailing `/`, git-ignored entries left out.",
        "find_files" => "Workspace files by glob (`**/*.rs`, `src/**/test_*.py`; a pattern without `/` matches file names anywhere), sorted, at most 200, git-ignored files left out.",
        "git_log" => "The history of HEAD from copilot-ls's index of it, without running git: the commits that changed a file or directory (`path`, renames followed, newest first), whose messages best match words (`query`: \"why was the retry limit lowered?\", an error message), or the newest; one line per commit (`<id> <date> <author>: <subject>`) and the files it changed. Use it for \"why was this changed\", \"when did this start\", \"was this fixed before\": a message search ranks the commits by their words, which `git log --grep` cannot. Author e-mail addresses are never shown.",
        "git_blame" => "Who last changed each run of a file's lines and in which commit (`<start>-<end> <id> <date> <author>: <subject>`), for the file as it is now: lines edited since HEAD are `uncommitted`. At most 200 lines per call (`start_line`/`end_line`). Use it for \"who wrote this\", \"when was this line added\", \"which change introduced this\".",
        "git_diff" => "The uncommitted changes of the work tree against HEAD, staged and unstaged together, as a unified diff with 3 lines of context (at most 400 lines, then a count), then the untracked files by name; `path` narrows it to a file or directory. Use it for \"what did I change\" and to review work in progress. Secret files (.env, keys) are never diffed and secrets in changed lines are redacted.",
        _ => "",
    }
}

fn title(name: &str) -> &'static str {
    match name {
        "locate" => "Locate code for a question",
        "find_symbol" => "Find definitions",
        "find_references" => "Find references",
        "find_related" => "Find code like a definition",
        "file_outline" => "Outline a file",
        "search_code" => "Search code",
        "read_file" => "Read a file",
        "list_directory" => "List a directory",
        "find_files" => "Find files",
        "git_log" => "Search the commit history",
        "git_blame" => "Blame a file's lines",
        "git_diff" => "Show uncommitted changes",
        _ => "",
    }
}

fn input_schema(name: &str) -> Value {
    if name == "locate" {
        return json!({
            "type": "object",
            "properties": {
                "question": {"type": "string", "description": "What you are looking for, in plain words or with names: \"where is the retry budget reset?\""}
            },
            "required": ["question"],
            "additionalProperties": false
        });
    }
    schemas::all()
        .into_iter()
        .find(|spec| spec.name == name)
        .map(|spec| spec.parameters)
        .unwrap_or_else(|| json!({"type": "object"}))
}

/// `{places: [{path, line, endLine, symbol?, excerpt?}]}`, the finders' structure.
fn places_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "places": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "Workspace-relative, `/` separators."},
                        "line": {"type": "integer", "minimum": 1, "description": "1-based."},
                        "endLine": {"type": "integer", "minimum": 1, "description": "1-based, inclusive."},
                        "symbol": {"type": "string"},
                        "excerpt": {"type": "string"}
                    },
                    "required": ["path", "line", "endLine"],
                    "additionalProperties": false
                }
            },
            "complete": {"type": "boolean", "description": "False when the index was still being built or the list was cut; the text says how."},
            "history": {
                "type": "object",
                "description": "`locate` in a git repository: the history the ranking drew on; `complete` is false while it is still being read (a first call may come before it).",
                "properties": {
                    "complete": {"type": "boolean"},
                    "commits": {"type": "integer", "minimum": 0}
                },
                "required": ["complete", "commits"],
                "additionalProperties": false
            }
        },
        "required": ["places"],
        "additionalProperties": false
    })
}

fn output_schema(name: &str) -> Value {
    match name {
        "read_file" => json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "startLine": {"type": "integer", "minimum": 1},
                "endLine": {"type": "integer", "minimum": 0},
                "totalLines": {"type": "integer", "minimum": 0},
                "text": {"type": "string", "description": "The lines read, without their numbers."}
            },
            "required": ["path", "startLine", "endLine", "totalLines", "text"],
            "additionalProperties": false
        }),
        "list_directory" => json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "entries": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "type": {"enum": ["file", "directory"]}
                        },
                        "required": ["name", "type"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["path", "entries"],
            "additionalProperties": false
        }),
        "find_files" => json!({
            "type": "object",
            "properties": {
                "files": {"type": "array", "items": {"type": "string"}},
                "complete": {"type": "boolean"}
            },
            "required": ["files"],
            "additionalProperties": false
        }),
        "git_log" => json!({
            "type": "object",
            "properties": {
                "commits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string", "description": "The full commit id (hex)."},
                            "date": {"type": "string", "description": "Author date, YYYY-MM-DD (UTC)."},
                            "author": {"type": "string", "description": "The author's name (never the e-mail address)."},
                            "subject": {"type": "string"},
                            "files": {"type": "array", "items": {"type": "string"}, "description": "Workspace-relative paths it changed."}
                        },
                        "required": ["id", "date", "author", "subject", "files"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["commits"],
            "additionalProperties": false
        }),
        "git_blame" => json!({
            "type": "object",
            "properties": {
                "runs": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "startLine": {"type": "integer", "minimum": 1},
                            "endLine": {"type": "integer", "minimum": 1},
                            "id": {"type": "string", "description": "The full commit id; absent for uncommitted lines, as are date, author and subject."},
                            "date": {"type": "string", "description": "Author date, YYYY-MM-DD (UTC)."},
                            "author": {"type": "string"},
                            "subject": {"type": "string"}
                        },
                        "required": ["startLine", "endLine"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["runs"],
            "additionalProperties": false
        }),
        "git_diff" => json!({
            "type": "object",
            "properties": {
                "diff": {"type": "string", "description": "The unified diff (as much as the text shows)."},
                "files": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "path": {"type": "string", "description": "Workspace-relative; an untracked folder ends with `/`."},
                            "status": {"enum": ["modified", "added", "deleted", "untracked"]}
                        },
                        "required": ["path", "status"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["diff", "files"],
            "additionalProperties": false
        }),
        _ => places_schema(),
    }
}

/// Every structure may carry the text's notes (see `structured::with_notes`).
fn with_notes(mut schema: Value) -> Value {
    schema["properties"]["notes"] = json!({
        "type": "array",
        "items": {"type": "string"},
        "description": "The text's notes: how a cut list goes on and how to narrow it, an index still being built, why nothing was found."
    });
    schema
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

/// Every tool, with its schemas and annotations.
pub fn tools() -> Vec<Tool> {
    names()
        .into_iter()
        .map(|name| {
            let mut annotations = ToolAnnotations::with_title(title(name))
                .read_only(true)
                .open_world(false);
            annotations.idempotent_hint = Some(true);
            annotations.destructive_hint = Some(false);
            Tool::new(name, description(name), object(input_schema(name)))
                .with_title(title(name))
                .with_raw_output_schema(object(with_notes(output_schema(name))))
                .with_annotations(annotations)
        })
        .collect()
}

/// Tools listed per page of `tools/list` (all of them fit one page today).
pub const PAGE: usize = 50;

/// One page of `items` from `cursor` (an offset we handed out), and the next cursor.
pub fn page<T: Clone>(
    items: &[T],
    cursor: Option<&str>,
    size: usize,
) -> Result<(Vec<T>, Option<String>), String> {
    let start = match cursor {
        None => 0,
        Some(cursor) => cursor
            .parse::<usize>()
            .ok()
            .filter(|&at| at <= items.len())
            .ok_or_else(|| format!("invalid cursor {cursor:?}"))?,
    };
    let end = (start + size).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    Ok((items[start..end].to_vec(), next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_is_read_only_with_both_schemas_and_the_asks_arguments() {
        let tools = tools();
        assert_eq!(tools.len(), names().len());
        // No code model ships: `find_related` needs one (COPILOT_LS_CODE_MODEL).
        assert_eq!(names(), NAMES);
        for tool in &tools {
            let annotations = tool.annotations.as_ref().unwrap();
            assert_eq!(annotations.read_only_hint, Some(true), "{}", tool.name);
            assert_eq!(annotations.open_world_hint, Some(false), "{}", tool.name);
            assert!(!description(&tool.name).is_empty());
            assert_eq!(tool.input_schema["type"], "object");
            assert_eq!(tool.output_schema.as_ref().unwrap()["type"], "object");
            if tool.name != "locate" {
                let ask = schemas::all()
                    .into_iter()
                    .find(|s| s.name == tool.name)
                    .unwrap();
                assert_eq!(Value::Object((*tool.input_schema).clone()), ask.parameters);
            }
        }
    }

    #[test]
    fn pages_follow_their_cursors() {
        let items: Vec<u32> = (0..5).collect();
        assert_eq!(
            page(&items, None, 2).unwrap(),
            (vec![0, 1], Some("2".into()))
        );
        assert_eq!(
            page(&items, Some("2"), 2).unwrap(),
            (vec![2, 3], Some("4".into()))
        );
        assert_eq!(page(&items, Some("4"), 2).unwrap(), (vec![4], None));
        assert_eq!(page(&items, None, 50).unwrap(), (items.clone(), None));
        assert!(page(&items, Some("9"), 2).is_err());
        assert!(page(&items, Some("x"), 2).is_err());
    }
}
