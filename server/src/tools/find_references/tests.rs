//! Unit tests of `find_references`, compiled only under `#[cfg(test)]` (declared so in
//! `find_references.rs`): they write fixture workspaces, which the tool never does.

use std::sync::Arc;

use super::*;
use crate::index::{RetrievalIndex, WorkspaceIndex};
use crate::workspace::sandbox::Sandbox;
use crate::workspace::{NoDocuments, OpenDocument, OpenDocuments};

fn workspace_of(files: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let workspace = Workspace::new(Sandbox::new(dir.path()).unwrap(), Arc::new(NoDocuments));
    (dir, workspace)
}

/// The tool's text, run with the index and without it (both must agree).
fn references(workspace: &Workspace, args: serde_json::Value) -> String {
    let index = WorkspaceIndex::one(RetrievalIndex::build(&workspace.sandbox));
    let with = crate::tools::run_with_index(
        "find_references",
        &args.to_string(),
        workspace,
        Some(&index),
    );
    let without = crate::tools::run("find_references", &args.to_string(), workspace);
    assert_eq!(with.text, without.text, "index and walk disagree");
    assert_eq!(with.places, without.places);
    with.text
}

const BUCKET: &str = "/// A bucket; refill() adds tokens.\npub struct Bucket;\n\nimpl Bucket {\n    pub fn refill(&mut self) {}\n\n    pub fn take(&mut self) {\n        self.refill();\n    }\n}\n";
const MAIN: &str = "fn main() {\n    let mut b = Bucket;\n    // refill first\n    b.refill();\n    println!(\"refill done\");\n    let refill_count = 1;\n}\n";

#[test]
fn uses_outside_definitions_comments_and_strings_definition_files_first() {
    let (_dir, workspace) = workspace_of(&[("src/bucket.rs", BUCKET), ("src/a_main.rs", MAIN)]);
    let text = references(&workspace, serde_json::json!({"name": "refill"}));
    assert_eq!(
        text, "src/bucket.rs:8: self.refill();\nsrc/a_main.rs:4: b.refill();\n",
        "{text}"
    );
}

#[test]
fn exact_and_case_sensitive() {
    let (_dir, workspace) = workspace_of(&[(
        "a.py",
        "def Refill():\n    pass\n\nRefill()\nrefill()\nRefillAll()\n",
    )]);
    let text = references(&workspace, serde_json::json!({"name": "Refill"}));
    assert_eq!(text, "a.py:4: Refill()\n");
}

const TWO_REFILLS: &str = "struct Bucket;\nstruct Cache;\nimpl Bucket {\n    fn refill(&self) {}\n    fn take(&self) { self.refill(); }\n}\nimpl Cache {\n    fn refill(&self) {}\n}\nfn main(b: Bucket, c: Cache) {\n    Bucket::refill(&b);\n    Cache::refill(&c);\n    b.refill();\n}\n";

#[test]
fn a_qualified_name_keeps_the_uses_that_resolve_to_that_container() {
    let (_dir, workspace) = workspace_of(&[("src/lib.rs", TWO_REFILLS)]);
    let text = references(&workspace, serde_json::json!({"name": "Bucket::refill"}));
    // `self.refill()` inside `impl Bucket` and `Bucket::refill`; `Cache::refill` is the
    // other one, `b.refill()` cannot be told apart.
    assert_eq!(
        text,
        "src/lib.rs:5: fn take(&self) { self.refill(); }\nsrc/lib.rs:11: Bucket::refill(&b);\n"
    );
    let text = references(&workspace, serde_json::json!({"name": "Cache.refill"}));
    assert_eq!(text, "src/lib.rs:12: Cache::refill(&c);\n");
    // Unqualified: every use.
    let text = references(&workspace, serde_json::json!({"name": "refill"}));
    assert_eq!(text.lines().count(), 4, "{text}");
}

#[test]
fn a_name_defined_once_keeps_uses_through_values() {
    let (_dir, workspace) = workspace_of(&[
        (
            "bucket.py",
            "class Bucket:\n    def refill(self):\n        \"\"\"refill it\"\"\"\n\n    def take(self):\n        self.refill()\n",
        ),
        ("main.py", "from bucket import Bucket\nb = Bucket()\nb.refill()\n"),
    ]);
    let text = references(&workspace, serde_json::json!({"name": "Bucket.refill"}));
    assert_eq!(
        text, "bucket.py:6: self.refill()\nmain.py:3: b.refill()\n",
        "{text}"
    );
}

#[test]
fn a_path_narrows_and_a_bad_path_or_name_is_an_error() {
    let (_dir, workspace) = workspace_of(&[("src/bucket.rs", BUCKET), ("src/a_main.rs", MAIN)]);
    let text = references(
        &workspace,
        serde_json::json!({"name": "refill", "path": "src/a_main.rs"}),
    );
    assert_eq!(text, "src/a_main.rs:4: b.refill();\n");
    for (args, needle) in [
        (
            serde_json::json!({"name": "refill", "path": "../x"}),
            "outside the workspace",
        ),
        (
            serde_json::json!({"name": "refill", "path": "nope"}),
            "no such file",
        ),
        (
            serde_json::json!({"name": "re fill"}),
            "must be an identifier",
        ),
        (serde_json::json!({"name": ""}), "must be an identifier"),
        (
            serde_json::json!({"name": "a", "kind": "x"}),
            "unknown field",
        ),
    ] {
        let output = crate::tools::run("find_references", &args.to_string(), &workspace);
        assert!(!output.ok && output.text.starts_with("Error: "), "{args}");
        assert!(output.text.contains(needle), "{args}: {}", output.text);
    }
}

#[test]
fn nothing_found_says_where_it_is_defined() {
    let (_dir, workspace) = workspace_of(&[("a.rs", "fn lonely() {}\n")]);
    let text = references(&workspace, serde_json::json!({"name": "lonely"}));
    assert_eq!(
        text,
        "No uses of `lonely` found outside its definitions (defined at a.rs:1).\n"
    );
}

#[test]
fn at_most_100_then_a_count() {
    let calls = "fn f() {}\n".to_string() + &"f();\n".repeat(130);
    let (_dir, workspace) = workspace_of(&[("a.rs", &calls)]);
    let text = references(&workspace, serde_json::json!({"name": "f"}));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 101);
    assert_eq!(lines[0], "a.rs:2: f();");
    assert!(
        lines[100].starts_with("(… 30 more uses; 130 in 1 files"),
        "{}",
        lines[100]
    );
}

#[test]
fn files_without_a_grammar_are_confirmed_by_their_text() {
    let (_dir, workspace) = workspace_of(&[("a.rb", "def refill; end\nrefill # refill\n")]);
    let text = references(&workspace, serde_json::json!({"name": "refill"}));
    assert_eq!(text, "a.rb:1: def refill; end\na.rb:2: refill # refill\n");
}

struct Editor(Vec<OpenDocument>);

impl OpenDocuments for Editor {
    fn open_documents(&self) -> Vec<OpenDocument> {
        self.0.clone()
    }
}

#[test]
fn open_documents_are_read_in_their_editor_text() {
    let (dir, _) = workspace_of(&[("src/a_main.rs", MAIN), ("src/bucket.rs", BUCKET)]);
    let root = dir.path().canonicalize().unwrap();
    let editor = Editor(vec![
        OpenDocument {
            path: root.join("src/a_main.rs"),
            language_id: "rust".into(),
            version: 2,
            rope: ropey::Rope::from_str("fn main() {\n    b.refill();\n    b.refill();\n}\n"),
        },
        OpenDocument {
            path: root.join("src/new.rs"),
            language_id: "rust".into(),
            version: 1,
            rope: ropey::Rope::from_str("fn g() { refill() }\n"),
        },
    ]);
    let workspace = Workspace::new(Sandbox::new(&root).unwrap(), Arc::new(editor));
    let text = references(&workspace, serde_json::json!({"name": "refill"}));
    assert_eq!(
        text,
        "src/bucket.rs:8: self.refill();\nsrc/a_main.rs:2: b.refill();\nsrc/a_main.rs:3: b.refill();\nsrc/new.rs:1: fn g() { refill() }\n"
    );
}

#[test]
fn whole_words_only() {
    let text = "refill refill_x x_refill $refill refill2 (refill)";
    assert_eq!(word_occurrences(text, "refill"), [0, 42]);
}

#[test]
fn past_the_uses_shown_files_are_counted_by_text_and_the_defining_file_still_leads() {
    // 60 files of 3 uses each (and a comment naming it), then the definition in a file
    // that sorts last by path: it is listed first, the first 100 lines are the walk's
    // (parsed: no comments), and the files past them are only counted, comments too.
    let user = "fn run() {\n    // drain_all first\n    drain_all();\n    drain_all();\n    drain_all();\n}\n";
    let mut files: Vec<(String, &str)> = (0..60)
        .map(|i| (format!("src/user_{i:02}.rs"), user))
        .collect();
    files.push((
        "src/zz_queue.rs".to_string(),
        "pub fn drain_all() {}\nfn again() { drain_all(); }\n",
    ));
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
    let (_dir, workspace) = workspace_of(&files);
    let index = WorkspaceIndex::one(RetrievalIndex::build(&workspace.sandbox));
    // A parse budget no loaded machine runs out of: what is parsed here is decided by
    // the uses shown, never by the clock.
    let call = |index: Option<&WorkspaceIndex>| {
        let args = Args {
            name: "drain_all".to_string(),
            path: None,
        };
        run_within(args, &workspace, index, Duration::from_secs(600))
            .unwrap()
            .text
    };
    let with = call(Some(&index));
    let without = call(None);
    let first = |text: &str| {
        text.lines()
            .take(100)
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(first(&with), first(&without));
    assert_eq!(
        with.lines().next(),
        Some("src/zz_queue.rs:2: fn again() { drain_all(); }")
    );
    assert!(!first(&with).iter().any(|l| l.contains("//")), "{with}");
    // The walk parsed everything: 181 uses. The index counted the files past the first
    // 100 lines by their text: their comment lines count too.
    assert!(
        without.contains("(… 81 more uses; 181 in 61 files"),
        "{without}"
    );
    let counted = with
        .lines()
        .find_map(|l| l.strip_prefix("(the uses in the last "))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or_else(|| panic!("no counted note: {with}"));
    assert!((20..60).contains(&counted), "{with}");
    assert!(
        with.contains(&format!("{} in 61 files", 181 + counted)),
        "{with}"
    );
}

#[test]
fn source_comes_before_docs_and_data_whatever_their_paths() {
    let (_dir, workspace) = workspace_of(&[
        ("a_notes.md", "Call `drain` before exit.\n"),
        ("a_data.json", "{\"drain\": null}\n"),
        ("src/z.py", "def drain():\n    pass\n\ndrain()\n"),
        ("src/m.py", "from z import drain\ndrain()\n"),
    ]);
    let text = references(&workspace, serde_json::json!({"name": "drain"}));
    let paths: Vec<&str> = text.lines().map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!(
        paths,
        [
            "src/z.py",
            "src/m.py",
            "src/m.py",
            "a_data.json",
            "a_notes.md"
        ],
        "{text}"
    );
}

#[test]
fn jsx_text_is_told_apart_by_a_parse_and_the_rest_by_the_lexer() {
    // The lexer cannot tell an element's text from code, so a file with one is parsed;
    // the other files are lexed. Both ways leave out the same words.
    let (_dir, workspace) = workspace_of(&[
        (
            "src/a.jsx",
            "function refill() {}\nconst e = <p>refill</p>;\n// refill\nrefill();\n",
        ),
        (
            "src/b.ts",
            "let s: string = `refill ${refill()}`;\nconst r = /refill/; // refill\n",
        ),
    ]);
    let text = references(&workspace, serde_json::json!({"name": "refill"}));
    assert_eq!(
        text,
        "src/a.jsx:4: refill();\nsrc/b.ts:1: let s: string = `refill ${refill()}`;\nsrc/b.ts:2: const r = /refill/; // refill\n",
        "{text}"
    );
}

#[test]
fn every_defining_file_is_classified_past_the_uses_shown() {
    // 40 files define the name and use it three times, with a comment naming it: past
    // the first 100 lines they are still classified (by the lexer, the definitions from
    // the index), so the count holds neither comments nor definitions and is exact.
    let text = "def drain():\n    # drain it\n    drain()\n    drain()\n    drain()\n";
    let files: Vec<(String, &str)> = (0..40)
        .map(|i| (format!("src/d_{i:02}.py"), text))
        .collect();
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
    let (_dir, workspace) = workspace_of(&files);
    let text = references(&workspace, serde_json::json!({"name": "drain"}));
    assert!(text.contains("(… 20 more uses; 120 in 40 files"), "{text}");
    assert!(!text.contains("counted by their text"), "{text}");
    assert!(!text.contains('#'), "{text}");
}
