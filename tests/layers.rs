//! Architecture: data flows one way, `cli`/`lsp`/`acp`/`mcp` → `session` → `agent` → `tools` →
//! `index` → `history` → `workspace`, the agent also calling `providers`, the index `syntax` and
//! `embed`, with `text` used by all;
//! `acp` starts its sessions' MCP servers through `mcp::client` (the one place rmcp's
//! client side lives).
//! This test reads the sources and fails when a module reaches against that direction,
//! when LSP types, ACP types, MCP types or HTTP leak out of the layers that own them, when the
//! index or the workspace layer writes where it must not (acp/ writes only through its
//! client), when tantivy is used outside `index/` and `history/`, when gix is used outside
//! `history/` or `history/` runs a program or writes outside the cache, when `syntax/` (pure: text in,
//! definitions out) touches the disk or tree-sitter is used outside it, or when a
//! source file grows past 600 lines.

use std::path::{Path, PathBuf};

/// Each layer and the layers it may use (besides `text`, which everyone may use and
/// which uses nothing). A layer missing from this table is only wiring (`main.rs`,
/// `lib.rs`) and may use anything.
const MAY_USE: &[(&str, &[&str])] = &[
    // `syntax` for `copilot-ls dev symbols`, the training pipeline's parser.
    (
        "cli",
        &[
            "syntax",
            "lsp",
            "acp",
            "mcp",
            "session",
            "agent",
            "tools",
            "index",
            "history",
            "workspace",
            "providers",
        ],
    ),
    (
        "lsp",
        &[
            "session",
            "agent",
            "tools",
            "index",
            "history",
            "workspace",
            "providers",
        ],
    ),
    (
        "acp",
        &[
            "mcp",
            "session",
            "agent",
            "tools",
            "index",
            "history",
            "workspace",
            "providers",
        ],
    ),
    // The MCP server front end, and the client (mcp/client.rs) an ACP session's MCP
    // servers are started with: plain tools out, rmcp inside.
    (
        "mcp",
        &[
            "session",
            "agent",
            "tools",
            "index",
            "history",
            "workspace",
            "providers",
        ],
    ),
    (
        "session",
        &[
            "agent",
            "tools",
            "index",
            "history",
            "workspace",
            "providers",
        ],
    ),
    (
        "agent",
        &[
            "tools",
            "index",
            "history",
            "workspace",
            "providers",
            "syntax",
        ],
    ),
    // `providers` only for `ToolSpec`, the plain schema type both sides share.
    (
        "tools",
        &["index", "history", "workspace", "providers", "syntax"],
    ),
    ("index", &["history", "workspace", "syntax", "embed"]),
    // Pure: terms in, vectors out (the shipped model).
    ("embed", &[]),
    // The repository's commits, blame and uncommitted changes, through gix.
    ("history", &["workspace"]),
    ("workspace", &[]),
    // Pure: text and a language in, definitions out.
    ("syntax", &[]),
    ("providers", &[]),
    ("text", &[]),
];

const LAYERS: &[&str] = &[
    "cli",
    "lsp",
    "acp",
    "mcp",
    "session",
    "agent",
    "tools",
    "index",
    "history",
    "workspace",
    "syntax",
    "embed",
    "providers",
    "text",
];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn layer_of(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).ok()?;
    let first = relative.components().next()?.as_os_str().to_str()?;
    Some(first.trim_end_matches(".rs").to_string())
}

/// Code lines only: comments and doc comments may mention any layer.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
        .map(|(i, line)| (i + 1, line))
}

#[test]
fn modules_only_use_layers_to_their_right() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut violations = Vec::new();
    for file in &files {
        let Some(layer) = layer_of(&src, file) else {
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        let may_use = MAY_USE
            .iter()
            .find(|(name, _)| *name == layer)
            .map(|(_, uses)| *uses);
        for (number, line) in code_lines(&text) {
            for other in LAYERS {
                let used = line.contains(&format!("crate::{other}::"))
                    || line.contains(&format!("crate::{other};"))
                    || line.contains(&format!("crate::{other},"))
                    || line.contains(&format!("crate::{{{other}"));
                if !used || *other == layer {
                    continue;
                }
                let allowed = match may_use {
                    // Everyone but `text` itself may use `text`.
                    Some(_) if *other == "text" => layer != "text",
                    Some(uses) => uses.contains(other),
                    // `main.rs`/`lib.rs` wire everything.
                    None => true,
                };
                if !allowed {
                    violations.push(format!(
                        "{}:{number}: `{layer}` uses `{other}`: {}",
                        file.display(),
                        line.trim()
                    ));
                }
            }
            let lsp_types = line.contains("tower_lsp_server") || line.contains("lsp_types");
            if lsp_types && layer != "lsp" {
                violations.push(format!(
                    "{}:{number}: LSP types outside lsp/: {}",
                    file.display(),
                    line.trim()
                ));
            }
            if line.contains("agent_client_protocol") && layer != "acp" {
                violations.push(format!(
                    "{}:{number}: ACP types outside acp/: {}",
                    file.display(),
                    line.trim()
                ));
            }
            // The agent and the ACP layer see MCP tools as plain tools, never rmcp's.
            if line.contains("rmcp") && layer != "mcp" {
                violations.push(format!(
                    "{}:{number}: MCP types outside mcp/: {}",
                    file.display(),
                    line.trim()
                ));
            }
            if line.contains("reqwest") && layer != "providers" {
                violations.push(format!(
                    "{}:{number}: HTTP outside providers/: {}",
                    file.display(),
                    line.trim()
                ));
            }
        }
    }
    assert!(files.len() > 30, "read the sources: {}", files.len());
    assert!(
        violations.is_empty(),
        "layering violations:\n{}",
        violations.join("\n")
    );
}

/// Writing to disk, in the spellings the standard library offers.
const WRITES: &[&str] = &[
    "fs::write",
    "File::create",
    ".write(true)",
    ".append(true)",
    ".create(true)",
    ".create_new(",
    ".truncate(true)",
    "fs::create_dir",
    "fs::remove_",
    "fs::rename",
    "fs::copy",
    "fs::hard_link",
    "fs::symlink",
    "set_permissions",
];

/// Running a program or opening a connection.
const RUNS_OR_CONNECTS: &[&str] = &[
    "Command::new",
    "process::Command",
    "TcpStream",
    "TcpListener",
    "UdpSocket",
    "reqwest",
];

/// `path:line: text` for every code line under `src/<dir>` (unit tests excluded: they
/// may set up fixtures on disk) that contains one of `needles`.
fn lines_containing(dir: &str, needles: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(!files.is_empty(), "no sources under {}", root.display());
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (number, line) in code_lines(code) {
            if needles.iter().any(|needle| mentions(line, needle)) {
                found.push(format!("{}:{number}: {}", file.display(), line.trim()));
            }
        }
    }
    found
}

/// Whether `line` holds `needle` as written, not as the tail of a longer name
/// (`AvailableCommand::new` is not `Command::new`).
fn mentions(line: &str, needle: &str) -> bool {
    line.match_indices(needle).any(|(at, _)| {
        let word = needle.starts_with(|c: char| c.is_alphanumeric() || c == '_');
        !word
            || !line[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

#[test]
fn mentions_reads_whole_names() {
    assert!(mentions("let c = Command::new(\"sh\");", "Command::new"));
    assert!(mentions("std::process::Command::new(x)", "Command::new"));
    assert!(!mentions("AvailableCommand::new(name, d)", "Command::new"));
    assert!(mentions("file.write(true)", ".write(true)"));
}

#[test]
fn no_tool_writes_runs_or_connects() {
    // Tools do not even open files with options: they read through `workspace/`.
    let mut needles = vec!["OpenOptions"];
    needles.extend(WRITES);
    needles.extend(RUNS_OR_CONNECTS);
    let found = lines_containing("tools", &needles);
    assert!(
        found.is_empty(),
        "tools must not write, run or connect:\n{}",
        found.join("\n")
    );
}

#[test]
fn acp_writes_only_through_its_client() {
    // A suggested edit reaches a file only as `fs/write_text_file`, after a permission.
    let mut needles = vec!["OpenOptions"];
    needles.extend(WRITES);
    needles.extend(RUNS_OR_CONNECTS);
    let found = lines_containing("acp", &needles);
    assert!(
        found.is_empty(),
        "acp/ writes only through its client:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_mcp_server_writes_runs_and_connects_nothing() {
    // Its tools are read-only; an MCP client (for an ACP session's servers) would run
    // programs, and lives in mcp/client.rs, which this check then leaves out.
    let mut needles = vec!["OpenOptions"];
    needles.extend(WRITES);
    needles.extend(RUNS_OR_CONNECTS);
    let found: Vec<String> = lines_containing("mcp", &needles)
        .into_iter()
        .filter(|line| !line.contains("mcp/client.rs"))
        .collect();
    assert!(
        found.is_empty(),
        "mcp/ (the server) must not write, run or connect:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_workspace_layer_never_writes_runs_or_connects() {
    let mut needles = WRITES.to_vec();
    needles.extend(RUNS_OR_CONNECTS);
    let found = lines_containing("workspace", &needles);
    assert!(
        found.is_empty(),
        "workspace/ must not write, run or connect:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_index_runs_nothing_and_connects_nowhere() {
    // It writes, but only its cache (tests/index*.rs check nothing lands in the
    // workspace).
    let found = lines_containing("index", RUNS_OR_CONNECTS);
    assert!(
        found.is_empty(),
        "index/ must not run programs or open connections:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_history_runs_nothing_and_connects_nowhere() {
    // It reads the repository with a library and writes only its store in the cache:
    // nothing a repository's configuration names (a filter, a hook, textconv) can run.
    let found = lines_containing("history", RUNS_OR_CONNECTS);
    assert!(
        found.is_empty(),
        "history/ must not run programs or open connections:\n{}",
        found.join("\n")
    );
}

#[test]
fn only_the_history_uses_gix() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut found = Vec::new();
    for file in &files {
        if layer_of(&src, file).as_deref() == Some("history") {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for (number, line) in code_lines(&text) {
            if mentions(line, "gix::") || mentions(line, "use gix") {
                found.push(format!("{}:{number}: {}", file.display(), line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "gix outside history/:\n{}",
        found.join("\n")
    );
}

#[test]
fn only_the_index_uses_tantivy() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut found = Vec::new();
    for file in &files {
        // The history keeps its commits in a tantivy index of its own.
        if matches!(layer_of(&src, file).as_deref(), Some("index" | "history")) {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for (number, line) in code_lines(&text) {
            if line.contains("tantivy") {
                found.push(format!("{}:{number}: {}", file.display(), line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "tantivy outside index/:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_syntax_layer_touches_no_disk_and_owns_tree_sitter() {
    // Text in, definitions out: no file, no program, no connection.
    let mut needles = vec!["std::fs", "File::", "OpenOptions", "std::env", "std::net"];
    needles.extend(WRITES);
    needles.extend(RUNS_OR_CONNECTS);
    let found = lines_containing("syntax", &needles);
    assert!(
        found.is_empty(),
        "syntax/ must not touch the disk, run or connect:\n{}",
        found.join("\n")
    );
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut outside = Vec::new();
    for file in &files {
        if layer_of(&src, file).as_deref() == Some("syntax") {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for (number, line) in code_lines(&text) {
            if line.contains("tree_sitter") {
                outside.push(format!("{}:{number}: {}", file.display(), line.trim()));
            }
        }
    }
    assert!(
        outside.is_empty(),
        "tree-sitter outside syntax/:\n{}",
        outside.join("\n")
    );
}

/// The longest a source file may be: past it, a file holds several concerns (split it).
const MAX_LINES: usize = 600;

#[test]
fn no_source_file_is_over_600_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut long = Vec::new();
    for file in &files {
        let relative = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let lines = std::fs::read_to_string(file).unwrap().lines().count();
        if lines > MAX_LINES {
            long.push(format!("{relative}: {lines} lines"));
        }
    }
    assert!(
        long.is_empty(),
        "over {MAX_LINES} lines, split by concern: {long:#?}"
    );
}
