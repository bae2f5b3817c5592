//! A tool's `structuredContent` (the shapes `tool_list.rs` declares), built beside its
//! text: the finders' places from `ToolOutput::places`; the `git_*` tools' own structure
//! (`tools::run_with_data`); `read_file`, `list_directory`
//! and `find_files` from their text, whose formats the tools fix (section 4); and in
//! every one the text's notes, because some clients (Claude Code, Codex) hand the model
//! the structure instead of the text, and a note is what says how to narrow a cut list,
//! that the index was still building, or why nothing was found.

use serde_json::{json, Value};

use crate::agent::LocatedPlace;
use crate::tools::{Place, ToolOutput};

/// The structure of a successful call of `tool` (not `locate`: see `located`); `data`
/// is what the tool built itself, when it does.
pub fn of(tool: &str, arguments: &Value, output: &ToolOutput, data: Option<Value>) -> Value {
    if let Some(data) = data {
        return data;
    }
    match tool {
        "read_file" => read_file(arguments, &output.text),
        "list_directory" => list_directory(arguments, &output.text),
        "find_files" => find_files(&output.text),
        _ => places(&output.places, complete(&output.text)),
    }
}

/// `structure` with the text's notes (`notes`): its lines in parentheses (`(… 30 more
/// uses; …)`, `(showing lines 1-400 of 912; …)`), and all of it when the structure
/// holds nothing else (`No definitions found for …; try a shorter name`).
pub fn with_notes(mut structure: Value, text: &str) -> Value {
    let empty = ["places", "entries", "files", "commits", "runs"]
        .iter()
        .any(|key| {
            structure
                .get(*key)
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
        });
    let notes: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && (empty || line.starts_with('(')))
        .collect();
    if !notes.is_empty() {
        structure["notes"] = json!(notes);
    }
    structure
}

/// `locate`'s places, with their excerpts.
pub fn located(places: &[LocatedPlace], complete: bool) -> Value {
    let places: Vec<Value> = places
        .iter()
        .map(|p| {
            let mut place = json!({
                "path": p.path,
                "line": p.line,
                "endLine": p.end_line.max(p.line),
                "excerpt": p.excerpt,
            });
            if let Some(symbol) = &p.symbol {
                place["symbol"] = json!(symbol);
            }
            place
        })
        .collect();
    json!({"places": places, "complete": complete})
}

fn places(places: &[Place], complete: bool) -> Value {
    let places: Vec<Value> = places
        .iter()
        .map(|p| {
            let mut place =
                json!({"path": p.path, "line": p.line, "endLine": p.end_line.max(p.line)});
            if let Some(symbol) = &p.symbol {
                place["symbol"] = json!(symbol);
            }
            if let Some(excerpt) = &p.excerpt {
                place["excerpt"] = json!(excerpt);
            }
            place
        })
        .collect();
    json!({"places": places, "complete": complete})
}

/// Whether a finder's text says it left something out (its closing notes are the lines
/// in parentheses: `(… 30 more uses …)`, `(the workspace index is still being built …)`).
fn complete(text: &str) -> bool {
    !text
        .lines()
        .any(|line| line.starts_with('(') && !line.starts_with("(no matches"))
}

fn read_file(arguments: &Value, text: &str) -> Value {
    let mut numbers = Vec::new();
    let mut lines = Vec::new();
    for line in text.lines() {
        if let Some((number, rest)) = line.split_once('\t') {
            if let Ok(number) = number.parse::<usize>() {
                numbers.push(number);
                lines.push(rest);
            }
        }
    }
    let start = numbers.first().copied().unwrap_or(1);
    let end = numbers.last().copied().unwrap_or(0);
    // `(showing lines 1-400 of 912; …)` or `(lines 3-9 of 40)` when not the whole file.
    let total = text
        .lines()
        .rev()
        .find_map(|line| {
            let (_, after) = line.strip_prefix('(')?.split_once(" of ")?;
            after
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse::<usize>()
                .ok()
        })
        .unwrap_or(end);
    let mut content = lines.join("\n");
    if !lines.is_empty() {
        content.push('\n');
    }
    json!({
        "path": arguments.get("path").and_then(Value::as_str).unwrap_or_default(),
        "startLine": start,
        "endLine": end,
        "totalLines": total,
        "text": content,
    })
}

fn list_directory(arguments: &Value, text: &str) -> Value {
    let entries: Vec<Value> = text
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with('('))
        .map(|line| match line.strip_suffix('/') {
            Some(name) => json!({"name": name, "type": "directory"}),
            None => json!({"name": line, "type": "file"}),
        })
        .collect();
    json!({
        "path": arguments.get("path").and_then(Value::as_str).unwrap_or("."),
        "entries": entries,
    })
}

fn find_files(text: &str) -> Value {
    let files: Vec<&str> = text
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with('('))
        .collect();
    json!({"files": files, "complete": complete(text) || text.starts_with("(no files")})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_file_text_becomes_lines_and_counts() {
        let text = "3\tfn a() {}\n4\t\tlet b = 1;\n(lines 3-4 of 40)\n";
        assert_eq!(
            read_file(&json!({"path": "src/a.rs"}), text),
            json!({"path": "src/a.rs", "startLine": 3, "endLine": 4, "totalLines": 40, "text": "fn a() {}\n\tlet b = 1;\n"})
        );
        let text = "1\tx\n2\ty\n";
        assert_eq!(read_file(&json!({"path": "b"}), text)["totalLines"], 2);
        let text = "(b is open in the editor; this is its current text, version 3)\n1\tx\n(showing lines 1-1 of 900; call read_file with start_line=2 to read on)\n";
        let value = read_file(&json!({"path": "b"}), text);
        assert_eq!(
            (value["endLine"].clone(), value["totalLines"].clone()),
            (json!(1), json!(900))
        );
    }

    #[test]
    fn directory_entries_and_files() {
        assert_eq!(
            list_directory(&json!({}), "src/\nCargo.toml\n"),
            json!({"path": ".", "entries": [{"name": "src", "type": "directory"}, {"name": "Cargo.toml", "type": "file"}]})
        );
        assert_eq!(
            find_files("a.rs\nb.rs\n(3 more files match; use a narrower pattern)\n"),
            json!({"files": ["a.rs", "b.rs"], "complete": false})
        );
        assert_eq!(
            find_files("(no files match *.zz)"),
            json!({"files": [], "complete": true})
        );
    }

    #[test]
    fn a_tools_own_structure_is_used_as_it_is() {
        let output = ToolOutput::ok("No commits match `x`.\n".into(), String::new());
        let data = json!({"commits": []});
        let structure = of("git_log", &json!({}), &output, Some(data.clone()));
        assert_eq!(structure, data);
        assert_eq!(
            with_notes(structure, &output.text)["notes"],
            json!(["No commits match `x`."])
        );
    }

    #[test]
    fn the_texts_notes_ride_with_the_structure() {
        let cut = with_notes(
            json!({"places": [{"path": "a.rs", "line": 1, "endLine": 1}]}),
            "a.rs:1: x\n(… 30 more uses; 31 in 9 files: give a path or a qualified name to narrow)\n",
        );
        assert_eq!(
            cut["notes"],
            json!(["(… 30 more uses; 31 in 9 files: give a path or a qualified name to narrow)"])
        );
        let none = with_notes(
            json!({"places": []}),
            "No definitions found for `x`. Try a shorter name.\n",
        );
        assert_eq!(
            none["notes"],
            json!(["No definitions found for `x`. Try a shorter name."])
        );
        let plain = with_notes(
            json!({"places": [{"path": "a.rs", "line": 1, "endLine": 1}]}),
            "a.rs:1: x\n",
        );
        assert!(plain.get("notes").is_none());
    }
}
