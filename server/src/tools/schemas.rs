//! What the model is told about each tool: name, description, JSON Schema. The
//! description is the API, so it states limits, defaults and an example. All tool
//! descriptions live here, in one place, so they can be read and improved together.

use serde_json::{json, Value};

use crate::providers::ToolSpec;

fn spec(name: &str, description: &str, parameters: Value) -> ToolSpec {
    ToolSpec {
        name: name.to_string(),
        description: description.trim().to_string(),
        parameters,
    }
}

/// Every tool, in the order the model sees them (`find_related` only with a code model).
pub fn all() -> Vec<ToolSpec> {
    let mut all = every();
    if !super::find_related::available() {
        all.retain(|spec| spec.name != "find_related");
    }
    all
}

fn every() -> Vec<ToolSpec> {
    vec![
        spec(
            "search_code",
            r#"
Search the text of every file in the workspace (git-ignored and binary files skipped) and
return one `path:line: text` line per matching line, at most 100, then how many more there
were. Files open in the editor are searched in their current, unsaved text. The pattern is
a plain substring by default; set `regex: true` for a Rust regular expression. Matching is
case-insensitive unless `case_sensitive: true`. Use it to find where something is defined or
used, e.g. {"pattern": "fn refill"} or {"pattern": "struct \\w+Config", "regex": true,
"path": "src"}. Narrow with `path` when there are too many matches."#,
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Text (or regex when regex is true) to find."},
                    "path": {"type": "string", "description": "File or directory to search, relative to the workspace root. Default: the whole workspace."},
                    "regex": {"type": "boolean", "description": "Treat pattern as a regular expression. Default false."},
                    "case_sensitive": {"type": "boolean", "description": "Match case exactly. Default false."}
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
        ),
        spec(
            "read_file",
            r#"
Read a text file of the workspace. Returns its lines, each prefixed by its 1-based line
number and a tab, at most 400 lines per call; a closing note says how to read on. Give
`start_line`/`end_line` (1-based, inclusive) to read a part, e.g. {"path": "src/main.rs",
"start_line": 120, "end_line": 180}. For a file open in the editor you get the editor's
current text, which may have unsaved changes (the first line says so). Paths are relative
to the workspace root."#,
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path relative to the workspace root."},
                    "start_line": {"type": "integer", "minimum": 1, "description": "First line to read (1-based). Default 1."},
                    "end_line": {"type": "integer", "minimum": 1, "description": "Last line to read (1-based, inclusive). Default: 400 lines after start_line."}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        ),
        spec(
            "list_directory",
            r#"
List one directory of the workspace: sorted entries, one per line, directories with a
trailing `/`. Git-ignored entries are left out. Example: {"path": "src"}; omit `path` for
the workspace root."#,
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Directory relative to the workspace root. Default \".\"."}
                },
                "additionalProperties": false
            }),
        ),
        spec(
            "find_files",
            r#"
Find files by glob over workspace-relative paths; returns matching paths, sorted, at most
200. `*` does not cross `/`; `**` does. A pattern without `/` matches file names in any
directory. Examples: {"pattern": "**/*.rs"}, {"pattern": "Cargo.toml"},
{"pattern": "src/**/test_*.py"}."#,
            json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Glob such as **/*.rs"}
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
        ),
        spec(
            "find_symbol",
            r#"
Find where something is defined, by name, across the workspace (from its index of
definitions, parsed by syntax in Rust, Python, JavaScript, TypeScript/TSX, Go, Java, C and
C++; open documents in their current, unsaved text). `name` is a name or its start,
case-insensitive; `Container.name` or `Container::name` finds `name` inside a class,
struct, impl, trait, interface, namespace or Go receiver whose name starts with
`Container`, at any depth; a file's module counts as a container (`rate_limit::refill`
for `refill` in `src/rate_limit.rs`). Optional `kind`: function, method, class, struct, enum, trait,
interface, type, constant or module. One line per definition, exact names first, at most
50: `path:line: kind qualified_name  signature`. Use it whenever you know a name, before
search_code. Examples: {"name": "TokenBucket"}, {"name": "TokenBucket.refill"},
{"name": "parse_", "kind": "function"}."#,
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "A definition's name or its start, optionally after its container: refill, TokenBucket.refill, TokenBucket::re."},
                    "kind": {"type": "string", "enum": ["function", "method", "class", "struct", "enum", "trait", "interface", "type", "constant", "module"], "description": "Only definitions of this kind."}
                },
                "required": ["name"],
                "additionalProperties": false
            }),
        ),
        spec(
            "find_references",
            r#"
Find the uses of an identifier outside its definitions: who calls a function, who
constructs or names a type, who reads a constant. `name` is the exact identifier,
case-sensitive (no prefix matching); a qualified form `Container.name` or
`Container::name` keeps the uses that resolve to that container's definition as far as
the text shows (`Container::name`, `self.name` inside it; a use through a value only when
no other container defines the name). Words in comments and strings are left out in
Rust, Python, JavaScript, TypeScript/TSX, Go, Java, C and C++; files open in the editor are
read in their current text. Optional `path` (a file or directory) narrows the search. One
`path:line: text` line per use, files that define the name first, then source before
docs and data, at most 100, then a count. Use it instead of search_code when you know the name and want its callers or
users. Examples: {"name": "refill"}, {"name": "TokenBucket.refill"},
{"name": "parse_config", "path": "src"}."#,
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The identifier, exact and case-sensitive, optionally after its container: refill, TokenBucket.refill, TokenBucket::refill."},
                    "path": {"type": "string", "description": "File or directory to search, relative to the workspace root. Default: the whole workspace."}
                },
                "required": ["name"],
                "additionalProperties": false
            }),
        ),
        spec(
            "file_outline",
            r#"
The definitions in one source file, by its syntax: one per line, nested by two spaces per
level, each with its 1-based line range from the defining line to the end of its body,
e.g. `14-33 impl TokenBucket` then `  25-33 fn try_acquire`. Use it before reading a
large file, then read_file just the lines you need. For a file open in the editor it
outlines the current, unsaved text. Knows Rust, Python, JavaScript, TypeScript/TSX, Go,
Java, C and C++; other files are an error. Example: {"path": "src/rate_limit.rs"}."#,
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path relative to the workspace root."}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        ),
        spec(
            "find_related",
            r#"
The places whose code is most like a definition's, by copilot-ls's code model (run
locally): give a file and a line inside a function, method or type,
and get that definition, then at most 10 places, most alike first, each as
`path:line: kind name  signature`. Its own file's other definitions are left out unless
nothing else is alike. Use it for "is this done elsewhere?", "where else is this pattern?",
"what else would a fix here need?": it finds code that does the same thing under other
names, which a text search cannot. Example: {"path": "src/rate_limit.rs", "line": 25}."#,
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path relative to the workspace root."},
                    "line": {"type": "integer", "minimum": 1, "description": "A line (1-based) inside the definition: its name's line or any line of its body."}
                },
                "required": ["path", "line"],
                "additionalProperties": false
            }),
        ),
        spec(
            "git_log",
            r#"
The repository's history (the commits reachable from HEAD): one line per commit,
`<id> <YYYY-MM-DD> <author>: <subject>`, then the files it changed, indented (at most 10).
Use it for "why was this changed?", "when did this start?", "what changed in this file
lately?", "was this fixed before?". With `path` (a file or a directory): the commits that
changed it, newest first, following renames. With `query` (words, e.g. an error message or
the feature's name): the commits whose messages match best, best first; combine with
`path` to search one file's history. Neither: the newest commits. `limit` defaults to 20,
at most 100. Then git_blame or read_file to see the code. Examples: {"path":
"src/rate_limit.rs"}, {"query": "refill overflow"}, {"query": "timeout", "path": "src/"}."#,
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Words to match against commit messages. Default: none (newest first)."},
                    "path": {"type": "string", "description": "A file or directory relative to the workspace root: only commits that changed it (renames followed). A deleted file's history works too."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Commits to list. Default 20, at most 100."}
                },
                "additionalProperties": false
            }),
        ),
        spec(
            "git_blame",
            r#"
Who last changed each line of a file and in which commit: one line per run of lines
changed by one commit, `<start>-<end> <id> <YYYY-MM-DD> <author>: <subject>`, for the file
as it is now; lines changed since the last commit are `<start>-<end> uncommitted`. At
most 200 lines per call (`start_line`/`end_line`, 1-based; a closing note says how to read
on). Use it for "who wrote this?", "when was this line added?", "which change introduced
this?", then git_log with the file's path for the commits around it. Example: {"path":
"src/rate_limit.rs", "start_line": 20, "end_line": 40}."#,
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path relative to the workspace root."},
                    "start_line": {"type": "integer", "minimum": 1, "description": "First line (1-based). Default 1."},
                    "end_line": {"type": "integer", "minimum": 1, "description": "Last line (1-based, inclusive). Default: 200 lines after start_line."}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        ),
        spec(
            "git_diff",
            r#"
The uncommitted changes in the work tree: every file that differs from the last commit
(HEAD), staged or not, as a unified diff with 3 lines of context (at most 400 lines, then
how many more), then the untracked files by name under `Untracked:`. Use it for "what did
I change?", "review my changes", "why does it fail since my edit?". Give `path` (a file or
directory) to see only its changes, e.g. {"path": "src/config.rs"}; {} for everything."#,
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "A file or directory relative to the workspace root. Default: the whole workspace."}
                },
                "additionalProperties": false
            }),
        ),
        spec(
            "list_open_buffers",
            r#"
List the documents open in the user's editor: path, language, version, and `modified`
when the editor's text differs from the file on disk. The user is probably asking about
one of these."#,
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        ),
        spec(
            "read_open_buffer",
            r#"
Read a document open in the editor, with its unsaved changes. Same output and line
parameters as read_file; an error if the document is not open (see list_open_buffers)."#,
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Path of the open document relative to the workspace root."},
                    "start_line": {"type": "integer", "minimum": 1},
                    "end_line": {"type": "integer", "minimum": 1}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        ),
        spec(
            "propose_edit",
            r#"
Suggest a change to one file for the user to review and apply; nothing is written. Replace
`old_text` by `new_text`: `old_text` must be copied exactly from the file's current text
(read it first), including indentation, and must occur exactly once, so include enough
surrounding lines to make it unique. An empty `old_text` proposes a new file with
`new_text` as its content (the file must not exist). Give a short imperative `title`, e.g.
{"path": "src/config.rs", "old_text": "    port: u16,\n", "new_text": "    /// TCP port.\n    port: u16,\n", "title": "Document the port field"}."#,
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File path relative to the workspace root."},
                    "old_text": {"type": "string", "description": "Exact text to replace (occurring once), or empty to create a new file."},
                    "new_text": {"type": "string", "description": "Replacement text."},
                    "title": {"type": "string", "description": "Short imperative description shown to the user."}
                },
                "required": ["path", "old_text", "new_text"],
                "additionalProperties": false
            }),
        ),
        spec(
            "answer",
            r#"
Give your final answer and end. `answer` is markdown for the user; cite the code you
relied on as `path:line` in the text and list each place in `citations` with its 1-based
`line` (and `end_line` for a range) and a short `note`. Only cite lines you have read.
Example: {"answer": "Requests are limited by a token bucket (src/rate_limit.rs:26).",
"citations": [{"path": "src/rate_limit.rs", "line": 26, "end_line": 34, "note": "refill logic"}]}."#,
            json!({
                "type": "object",
                "properties": {
                    "answer": {"type": "string", "description": "The answer, in markdown."},
                    "citations": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "path": {"type": "string"},
                                "line": {"type": "integer", "minimum": 1},
                                "end_line": {"type": "integer", "minimum": 1},
                                "note": {"type": "string"}
                            },
                            "required": ["path", "line"],
                            "additionalProperties": false
                        }
                    }
                },
                "required": ["answer"],
                "additionalProperties": false
            }),
        ),
    ]
}
