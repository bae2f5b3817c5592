//! Architecture: data flows one way, `cli`/`lsp`/`acp` → `session` → `agent` → `tools`
//! → `providers`, with `text` used by all. This test reads the sources and fails when a
//! module reaches against that direction, or when LSP types, ACP types or HTTP leak out
//! of the layers that own them.

use std::path::{Path, PathBuf};

/// Layers in order; each may use the ones after it (and `text`), never those before.
/// `lsp` and `acp` are peers: neither uses the other (checked apart).
const ORDER: &[&str] = &[
    "cli",
    "lsp",
    "acp",
    "session",
    "agent",
    "tools",
    "providers",
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
        let own = ORDER.iter().position(|l| *l == layer);
        for (number, line) in code_lines(&text) {
            for (index, other) in ORDER.iter().enumerate() {
                let used = line.contains(&format!("crate::{other}::"))
                    || line.contains(&format!("crate::{other};"))
                    || line.contains(&format!("crate::{other},"))
                    || line.contains(&format!("crate::{{{other}"));
                if !used || *other == layer {
                    continue;
                }
                let allowed = match own {
                    Some(own) => index > own,
                    // `text` uses nothing; `main.rs`/`lib.rs` wire everything.
                    None => layer != "text",
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
            let peers = (layer == "lsp" && line.contains("crate::acp"))
                || (layer == "acp" && line.contains("crate::lsp"));
            if peers {
                violations.push(format!(
                    "{}:{number}: `lsp` and `acp` are peers and never use each other: {}",
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

/// What no tool (and nothing in `acp/`, which writes only through its client) may do.
const WRITES_RUNS_OR_CONNECTS: &[&str] = &[
    "fs::write",
    "File::create",
    "OpenOptions",
    "fs::create_dir",
    "fs::remove_",
    "fs::rename",
    "fs::copy",
    "fs::hard_link",
    "fs::symlink",
    "set_permissions",
    "Command::new",
    "process::Command",
    "TcpStream",
    "TcpListener",
    "UdpSocket",
    "reqwest",
];

fn writes_runs_or_connects(dir: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(!files.is_empty(), "no sources under {dir}");
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        // Unit tests inside a tool file may set up fixtures on disk.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (number, line) in code_lines(code) {
            for needle in WRITES_RUNS_OR_CONNECTS {
                if line.contains(needle) {
                    found.push(format!("{}:{number}: {}", file.display(), line.trim()));
                }
            }
        }
    }
    found
}

#[test]
fn no_tool_writes_runs_or_connects() {
    let found = writes_runs_or_connects("src/tools");
    assert!(
        found.is_empty(),
        "tools must not write, run or connect:\n{}",
        found.join("\n")
    );
}

#[test]
fn acp_writes_only_through_its_client() {
    let found = writes_runs_or_connects("src/acp");
    assert!(
        found.is_empty(),
        "acp/ writes only with fs/write_text_file, after a permission:\n{}",
        found.join("\n")
    );
}
