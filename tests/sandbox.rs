//! The sandbox, adversarially: every tool, every escape we could think of, and a canary
//! file outside the workspace whose content must never appear in any tool result.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;

use copilot_ls::tools;
use copilot_ls::workspace::sandbox::Sandbox;
use copilot_ls::workspace::{OpenDocument, OpenDocuments, Workspace};
use serde_json::json;

const CANARY: &str = "CANARY-7f3a-must-never-be-read";

/// An editor that has a document open outside the workspace (and one inside).
struct Editor(Vec<OpenDocument>);

impl OpenDocuments for Editor {
    fn open_documents(&self) -> Vec<OpenDocument> {
        self.0.clone()
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// `base/outside/` holds the canary; `base/repo/` is the workspace; `base/repo-backup/`
/// is a prefix sibling of the root.
fn layout() -> (tempfile::TempDir, Workspace) {
    let base = tempfile::tempdir().unwrap();
    let base_path = base.path().canonicalize().unwrap();
    let outside = base_path.join("outside");
    let root = base_path.join("repo");
    write(&outside.join("canary.txt"), &format!("{CANARY}\n"));
    write(
        &base_path.join("repo-backup/canary.txt"),
        &format!("{CANARY}\n"),
    );
    write(&root.join("src/lib.rs"), "pub fn visible() {}\n");
    for secret in [
        ".env",
        ".env.production",
        "certs/server.pem",
        "tls.key",
        "id_rsa",
        "keys/id_ed25519.pub",
    ] {
        write(&root.join(secret), &format!("{CANARY} secret\n"));
    }
    write(
        &root.join(".git/config"),
        &format!("[remote] url = {CANARY}\n"),
    );
    write(&root.join(".git/HEAD"), "ref: refs/heads/main\n");
    symlink(&outside, root.join("link_out")).unwrap();
    symlink(outside.join("canary.txt"), root.join("link_canary.txt")).unwrap();
    symlink(root.join(".git/config"), root.join("git_config_link")).unwrap();
    symlink(root.join(".env"), root.join("innocent.txt")).unwrap();
    symlink(root.join("src/lib.rs"), root.join("lib_link.rs")).unwrap();
    let documents = Editor(vec![
        OpenDocument {
            path: outside.join("canary.txt"),
            language_id: "plaintext".into(),
            version: 1,
            rope: ropey::Rope::from_str(CANARY),
        },
        OpenDocument {
            path: root.join("src/lib.rs"),
            language_id: "rust".into(),
            version: 3,
            rope: ropey::Rope::from_str("pub fn visible() {}\npub fn unsaved() {}\n"),
        },
    ]);
    let workspace = Workspace::new(Sandbox::new(&root).unwrap(), Arc::new(documents));
    (base, workspace)
}

/// `layout()`'s workspace as the first of two roots: `repo` and `base/other`, a second
/// root with a link of its own out of the workspace.
fn two_roots(base: &Path, one: &Workspace) -> Workspace {
    let other = base.join("other");
    write(&other.join("src/main.rs"), "fn main() {}\n");
    symlink(base.join("outside/canary.txt"), other.join("peek.txt")).unwrap();
    let sandbox = Sandbox::with_roots(&[base.join("repo"), other]).unwrap();
    Workspace::new(sandbox, Arc::new(Editor(one.open_documents())))
}

/// A case's arguments in a workspace of several roots: a relative path starts with the
/// root's name, and a listing with no path lists that root.
fn in_root(tool: &str, args: &serde_json::Value, root: &str) -> serde_json::Value {
    let mut args = args.clone();
    match args.get("path").and_then(serde_json::Value::as_str) {
        Some(path) if !Path::new(path).is_absolute() => {
            args["path"] = json!(format!("{root}/{path}"));
        }
        None if tool == "list_directory" => args["path"] = json!(root),
        _ => {}
    }
    args
}

enum Expect {
    /// An `Error: ` result containing this text.
    Error(&'static str),
    /// A successful result that contains this text.
    Contains(&'static str),
    /// A successful result that does not contain this text.
    Lacks(&'static str),
}

#[test]
fn adversarial_paths_are_refused_and_the_canary_never_leaks() {
    let (base, workspace) = layout();
    let base = base.path().canonicalize().unwrap();
    let abs = |p: &str| base.join(p).to_string_lossy().into_owned();
    use Expect::*;
    let cases: Vec<(&str, serde_json::Value, Expect)> = vec![
        (
            "read_file",
            json!({"path": "../outside/canary.txt"}),
            Error("path is outside the workspace"),
        ),
        (
            "read_file",
            json!({"path": abs("outside/canary.txt")}),
            Error("path is outside the workspace"),
        ),
        (
            "read_file",
            json!({"path": abs("repo-backup/canary.txt")}),
            Error("path is outside the workspace"),
        ),
        (
            "read_file",
            json!({"path": "src/../../outside/canary.txt"}),
            Error("path is outside the workspace"),
        ),
        (
            "read_file",
            json!({"path": "./././../repo-backup/canary.txt"}),
            Error("path is outside the workspace"),
        ),
        (
            "read_file",
            json!({"path": "/etc/passwd"}),
            Error("path is outside the workspace"),
        ),
        (
            "read_file",
            json!({"path": "../../../../../../../../etc/passwd"}),
            Error("path is outside the workspace"),
        ),
        (
            "read_file",
            json!({"path": "link_canary.txt"}),
            Error("path is outside the workspace"),
        ),
        (
            "read_file",
            json!({"path": "link_out/canary.txt"}),
            Error("path is outside the workspace"),
        ),
        (
            "read_file",
            json!({"path": "src/lib.rs\u{0}../../outside/canary.txt"}),
            Error("NUL"),
        ),
        ("read_file", json!({"path": ".env"}), Error("secret files")),
        (
            "read_file",
            json!({"path": ".env.production"}),
            Error("secret files"),
        ),
        (
            "read_file",
            json!({"path": "certs/server.pem"}),
            Error("secret files"),
        ),
        (
            "read_file",
            json!({"path": "tls.key"}),
            Error("secret files"),
        ),
        (
            "read_file",
            json!({"path": "id_rsa"}),
            Error("secret files"),
        ),
        (
            "read_file",
            json!({"path": "keys/id_ed25519.pub"}),
            Error("secret files"),
        ),
        (
            "read_file",
            json!({"path": ".git/config"}),
            Error(".git internals"),
        ),
        (
            "read_file",
            json!({"path": "src/../.git/HEAD"}),
            Error(".git internals"),
        ),
        (
            "read_file",
            json!({"path": "git_config_link"}),
            Error(".git internals"),
        ),
        (
            "read_file",
            json!({"path": "innocent.txt"}),
            Error("secret files"),
        ),
        (
            "read_file",
            json!({"path": abs("repo/src/lib.rs")}),
            Contains("unsaved"),
        ),
        (
            "read_file",
            json!({"path": "lib_link.rs"}),
            Contains("visible"),
        ),
        (
            "read_open_buffer",
            json!({"path": "../outside/canary.txt"}),
            Error("path is outside the workspace"),
        ),
        (
            "read_open_buffer",
            json!({"path": abs("outside/canary.txt")}),
            Error("path is outside the workspace"),
        ),
        (
            "list_directory",
            json!({"path": "../outside"}),
            Error("path is outside the workspace"),
        ),
        (
            "list_directory",
            json!({"path": "link_out"}),
            Error("path is outside the workspace"),
        ),
        (
            "list_directory",
            json!({"path": ".git"}),
            Error(".git internals"),
        ),
        (
            "list_directory",
            json!({"path": abs("repo-backup")}),
            Error("path is outside the workspace"),
        ),
        ("list_directory", json!({}), Lacks("link_out")),
        ("list_directory", json!({}), Lacks(".env")),
        ("list_directory", json!({}), Lacks(".git")),
        ("list_directory", json!({}), Lacks("id_rsa")),
        ("list_directory", json!({}), Contains("src/")),
        (
            "search_code",
            json!({"pattern": "CANARY"}),
            Contains("no matches"),
        ),
        (
            "search_code",
            json!({"pattern": "canary", "path": "link_out"}),
            Error("path is outside the workspace"),
        ),
        (
            "search_code",
            json!({"pattern": "canary", "path": "../outside"}),
            Error("path is outside the workspace"),
        ),
        (
            "search_code",
            json!({"pattern": "remote", "path": ".git"}),
            Error(".git internals"),
        ),
        (
            "search_code",
            json!({"pattern": "secret", "path": ".env"}),
            Error("secret files"),
        ),
        (
            "search_code",
            json!({"pattern": "C.N.RY", "regex": true}),
            Contains("no matches"),
        ),
        (
            "search_code",
            json!({"pattern": "unsaved"}),
            Contains("src/lib.rs:2: pub fn unsaved() {}"),
        ),
        (
            "search_code",
            json!({"pattern": "unsaved"}),
            Contains("lib_link.rs:2: pub fn unsaved() {}"),
        ),
        (
            "find_references",
            json!({"name": "visible", "path": "../outside"}),
            Error("path is outside the workspace"),
        ),
        (
            "find_references",
            json!({"name": "visible", "path": "link_out"}),
            Error("path is outside the workspace"),
        ),
        (
            "find_references",
            json!({"name": "remote", "path": ".git"}),
            Error(".git internals"),
        ),
        (
            "find_references",
            json!({"name": "secret", "path": ".env"}),
            Error("secret files"),
        ),
        (
            "find_references",
            json!({"name": "CANARY"}),
            Contains("No uses of `CANARY`"),
        ),
        ("find_files", json!({"pattern": "**/*"}), Lacks("canary")),
        ("find_files", json!({"pattern": "**/*"}), Lacks(".env")),
        ("find_files", json!({"pattern": "**/*"}), Lacks(".git/")),
        ("find_files", json!({"pattern": "**/*"}), Lacks("id_rsa")),
        ("find_files", json!({"pattern": "../**"}), Lacks("canary")),
        (
            "find_files",
            json!({"pattern": "**/*.txt"}),
            Lacks("link_canary"),
        ),
        ("list_open_buffers", json!({}), Lacks("canary")),
        (
            "list_open_buffers",
            json!({}),
            Contains("src/lib.rs\trust\tversion 3\tmodified"),
        ),
        (
            "propose_edit",
            json!({"path": "../outside/new.txt", "old_text": "", "new_text": "x"}),
            Error("path is outside the workspace"),
        ),
        (
            "propose_edit",
            json!({"path": "link_out/new.txt", "old_text": "", "new_text": "x"}),
            Error("path is outside the workspace"),
        ),
        (
            "propose_edit",
            json!({"path": "link_canary.txt", "old_text": CANARY, "new_text": "x"}),
            Error("path is outside the workspace"),
        ),
        (
            "propose_edit",
            json!({"path": ".git/hooks/pre-commit", "old_text": "", "new_text": "x"}),
            Error(".git internals"),
        ),
        (
            "propose_edit",
            json!({"path": "new/../../outside/x.txt", "old_text": "", "new_text": "x"}),
            Error("path is outside the workspace"),
        ),
        (
            "propose_edit",
            json!({"path": ".env", "old_text": "", "new_text": "x"}),
            Error("secret files"),
        ),
    ];
    assert!(cases.len() >= 25);
    let mut failures = Vec::new();
    // Each case in the workspace alone, then with its root as the first of two: the
    // same refusals, and the second root's own link out refused as well.
    let several = two_roots(&base, &workspace);
    let mut runs: Vec<(&str, serde_json::Value, &Expect, &Workspace)> = Vec::new();
    for (tool, args, expect) in &cases {
        runs.push((tool, args.clone(), expect, &workspace));
        runs.push((tool, in_root(tool, args, "repo"), expect, &several));
    }
    let peek = Error("path is outside the workspace");
    runs.push((
        "read_file",
        json!({"path": "other/peek.txt"}),
        &peek,
        &several,
    ));
    runs.push((
        "read_file",
        json!({"path": "repo/../other/src/main.rs"}),
        &peek,
        &several,
    ));
    let nothing = Lacks("canary");
    runs.push(("find_files", json!({"pattern": "**/*"}), &nothing, &several));
    for (index, (tool, args, expect, workspace)) in runs.iter().enumerate() {
        let output = tools::run(tool, &args.to_string(), workspace);
        let text = &output.text;
        let ok = match expect {
            Error(needle) => text.starts_with("Error: ") && text.contains(needle) && !output.ok,
            Contains(needle) => output.ok && text.contains(needle),
            Lacks(needle) => output.ok && !text.contains(needle),
        };
        if !ok || text.contains(CANARY) {
            failures.push(format!("case {index}: {tool} {args} -> {text:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "sandbox failures:\n{}",
        failures.join("\n")
    );
}

#[test]
fn outside_paths_are_reported_as_outside_even_when_they_do_not_exist() {
    let (_base, workspace) = layout();
    let output = tools::run(
        "read_file",
        &json!({"path": "../no/such/file"}).to_string(),
        &workspace,
    );
    assert!(
        output
            .text
            .starts_with("Error: path is outside the workspace: ../no/such/file"),
        "{}",
        output.text
    );
    let output = tools::run(
        "read_file",
        &json!({"path": "src/nope.rs"}).to_string(),
        &workspace,
    );
    assert!(
        output
            .text
            .starts_with("Error: no such file or directory: src/nope.rs"),
        "{}",
        output.text
    );
}
