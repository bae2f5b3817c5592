//! End-to-end: the `git_*` tools (PROTOCOL.md section 10, "History") through the real
//! binary (`copilot-ls tool git_log|git_blame|git_diff ARGS --workspace DIR`), on
//! repositories each test makes with the `git` CLI: fixed names, e-mail addresses and
//! dates, HOME pointed at a temp dir so no developer configuration interferes, and a
//! cache dir of the test's own.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use copilot_ls_test_support::git_repo::{GitRepo, EMAIL, EPOCH};
use copilot_ls_test_support::process::{run_bounded, Run};
use copilot_ls_test_support::secrets::Gen;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");
/// A hang fails the test after this long instead of blocking the suite.
const LIMIT: Duration = Duration::from_secs(120);

/// A test's temp dir: a HOME for git and the binary, a cache dir, room for repositories.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix("copilot-ls-git-tools-")
            .tempdir()
            .unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        std::fs::create_dir_all(dir.path().join("cache")).unwrap();
        Scratch { dir }
    }

    fn path(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    /// A new repository at `name` (branch `main`, no commit yet).
    fn repo(&self, name: &str) -> GitRepo {
        GitRepo::init(self.path().join(name), self.path().join("home"))
    }

    /// `copilot-ls tool NAME ARGS --workspace ROOT` in a clean environment plus `env`.
    fn tool_env(&self, root: &Path, name: &str, args: Value, env: &[(&str, &str)]) -> Run {
        let mut command = Command::new(BIN);
        command
            .args(["tool", name, &args.to_string(), "--workspace"])
            .arg(root)
            .current_dir(self.dir.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.path().join("home"))
            .env("COPILOT_LS_CACHE_DIR", self.path().join("cache"));
        for (key, value) in env {
            command.env(key, value);
        }
        let run = run_bounded(command, LIMIT).expect("copilot-ls exits");
        // No tool ever shows an author's e-mail address.
        assert!(
            !run.stdout.contains(EMAIL) && !run.stderr.contains(EMAIL),
            "{name} {args} showed an e-mail address: {}",
            run.stdout
        );
        run
    }

    fn tool(&self, root: &Path, name: &str, args: Value) -> Run {
        self.tool_env(root, name, args, &[])
    }

    /// A call that must succeed: its stdout.
    fn ok(&self, root: &Path, name: &str, args: Value) -> String {
        let run = self.tool(root, name, args.clone());
        assert_eq!(
            run.code,
            Some(0),
            "{name} {args}: {}{}",
            run.stdout,
            run.stderr
        );
        run.stdout
    }

    /// A call that must fail: its stdout, which starts with `Error: `.
    fn error(&self, root: &Path, name: &str, args: Value) -> String {
        let run = self.tool(root, name, args.clone());
        assert_eq!(run.code, Some(1), "{name} {args}: {}", run.stdout);
        assert!(
            run.stdout.starts_with("Error: "),
            "{name} {args}: {}",
            run.stdout
        );
        run.stdout
    }
}

/// The subjects `git_log` printed, in order (commit lines are not indented).
fn subjects(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|line| !line.starts_with(' ') && !line.starts_with('('))
        .filter_map(|line| line.split_once(": ").map(|(_, subject)| subject))
        .collect()
}

fn numbered(lines: usize, word: &str) -> String {
    (1..=lines).map(|n| format!("{word} {n}\n")).collect()
}

#[test]
fn the_log_finds_commits_by_words_by_path_through_a_rename_and_newest_first() {
    let scratch = Scratch::new();
    let repo = scratch.repo("log");
    repo.commit(
        "src/parser.rs",
        "fn parse() {}\n",
        "Add the tokenizer for config files",
    );
    repo.commit("README.md", "# Tollbooth\n", "Document the install steps");
    repo.commit(
        "src/parser.rs",
        "fn parse() { refill(); }\n",
        "Fix overflow when the refill rate is zero",
    );
    repo.git(&["mv", "src/parser.rs", "src/lexer.rs"]);
    repo.commit_all("Rename the parser module");
    repo.commit("Cargo.toml", "[package]\n", "Bump the version");
    let root = &repo.path;

    // Neither: the newest, each `<id> <date> <author>: <subject>` and its files.
    let newest = scratch.ok(root, "git_log", json!({}));
    assert_eq!(
        subjects(&newest),
        [
            "Bump the version",
            "Rename the parser module",
            "Fix overflow when the refill rate is zero",
            "Document the install steps",
            "Add the tokenizer for config files"
        ],
        "{newest}"
    );
    let first = newest.lines().next().unwrap();
    assert_eq!(
        first,
        format!(
            "{} 2023-11-19 Ada Lovelace: Bump the version",
            repo.short("HEAD")
        )
    );
    assert!(
        newest.contains("  src/lexer.rs (renamed from src/parser.rs)\n"),
        "{newest}"
    );
    assert!(newest.contains("\n  Cargo.toml\n"), "{newest}");

    // Words: the best match first.
    let found = scratch.ok(root, "git_log", json!({"query": "refill overflow"}));
    assert_eq!(
        subjects(&found).first(),
        Some(&"Fix overflow when the refill rate is zero"),
        "{found}"
    );
    let none = scratch.ok(root, "git_log", json!({"query": "zebra quantum"}));
    assert!(none.starts_with("No commits match"), "{none}");

    // A path: the commits that changed it, newest first, through its rename.
    let file = scratch.ok(root, "git_log", json!({"path": "src/lexer.rs"}));
    assert_eq!(
        subjects(&file),
        [
            "Rename the parser module",
            "Fix overflow when the refill rate is zero",
            "Add the tokenizer for config files"
        ],
        "{file}"
    );
    let folder = scratch.ok(root, "git_log", json!({"path": "src"}));
    assert_eq!(subjects(&folder).len(), 3, "{folder}");
    // A deleted file still has its history.
    let old = scratch.ok(root, "git_log", json!({"path": "src/parser.rs"}));
    assert!(
        subjects(&old).contains(&"Add the tokenizer for config files"),
        "{old}"
    );
    // Words and a path together.
    let both = scratch.ok(
        root,
        "git_log",
        json!({"query": "install", "path": "src/lexer.rs"}),
    );
    assert!(both.starts_with("No commits that changed"), "{both}");

    // The limit, and a note that more follow.
    let two = scratch.ok(root, "git_log", json!({"limit": 2}));
    assert_eq!(subjects(&two).len(), 2, "{two}");
    assert!(two.contains("(more commits follow"), "{two}");

    // Paths go through the sandbox.
    assert!(scratch
        .error(root, "git_log", json!({"path": ".env"}))
        .contains("secret files"));
    assert!(scratch
        .error(root, "git_log", json!({"path": "../elsewhere"}))
        .contains("outside the workspace"));
    assert!(scratch
        .error(root, "git_log", json!({"path": ".git/config"}))
        .contains(".git"));
    assert!(scratch
        .error(root, "git_log", json!({"since": "yesterday"}))
        .contains("invalid arguments"));
}

#[test]
fn blame_names_the_commit_of_each_run_and_the_uncommitted_lines() {
    let scratch = Scratch::new();
    let repo = scratch.repo("blame");
    repo.commit("a.py", "one = 1\ntwo = 2\nthree = 3\n", "Start the module");
    repo.commit("a.py", "one = 1\nTWO = 2\nthree = 3\n", "Rename two");
    // Edited on disk, not committed: line 3 changed, line 4 added.
    repo.write("a.py", "one = 1\nTWO = 2\nthree = 33\nfour = 4\n");
    let root = &repo.path;

    let blamed = scratch.ok(root, "git_blame", json!({"path": "a.py"}));
    assert_eq!(
        blamed,
        format!(
            "1-1 {} 2023-11-15 Ada Lovelace: Start the module\n\
             2-2 {} 2023-11-16 Ada Lovelace: Rename two\n\
             3-4 uncommitted\n",
            repo.short("HEAD~1"),
            repo.short("HEAD")
        )
    );
    let part = scratch.ok(
        root,
        "git_blame",
        json!({"path": "a.py", "start_line": 2, "end_line": 3}),
    );
    assert_eq!(
        part,
        format!(
            "2-2 {} 2023-11-16 Ada Lovelace: Rename two\n3-3 uncommitted\n(lines 2-3 of 4)\n",
            repo.short("HEAD")
        )
    );

    // A file HEAD does not hold is uncommitted throughout.
    repo.write("new.py", "x = 1\ny = 2\n");
    assert_eq!(
        scratch.ok(root, "git_blame", json!({"path": "new.py"})),
        "1-2 uncommitted\n"
    );

    // At most 200 lines a call, with a note on how to read on.
    repo.commit("long.txt", &numbered(250, "line"), "Add a long file");
    let long = scratch.ok(root, "git_blame", json!({"path": "long.txt"}));
    assert!(long.starts_with("1-200 "), "{long}");
    assert!(
        long.ends_with(
            "(showing lines 1-200 of 250; call git_blame with start_line=201 to read on)\n"
        ),
        "{long}"
    );
    let rest = scratch.ok(
        root,
        "git_blame",
        json!({"path": "long.txt", "start_line": 201}),
    );
    assert!(rest.starts_with("201-250 "), "{rest}");

    assert!(scratch
        .error(root, "git_blame", json!({"path": "missing.py"}))
        .contains("no such file"));
    assert!(scratch
        .error(root, "git_blame", json!({"path": "a.py", "start_line": 9}))
        .contains("past the end"));
}

#[test]
fn the_diff_shows_staged_and_unstaged_changes_and_untracked_names_but_no_secret() {
    let scratch = Scratch::new();
    let repo = scratch.repo("diff");
    let secret = ["gh", "p_", &Gen::new(7).alnum(36)].concat();
    repo.write(".gitignore", "*.log\n");
    repo.write("a.py", &numbered(10, "a ="));
    repo.write("b.py", &numbered(10, "b ="));
    repo.write("docs/gone.md", "# Gone\n");
    repo.write("same.py", "unchanged = True\n");
    repo.write(".env", "TOKEN=old\n");
    repo.commit_all("Start");

    // Staged: a change to a.py and a new file.
    repo.write(
        "a.py",
        &numbered(10, "a =").replace("a = 5\n", "a = five\n"),
    );
    repo.write("c.py", "c = 1\n");
    repo.git(&["add", "a.py", "c.py"]);
    // Unstaged: b.py changed (with a secret in it), docs/gone.md deleted, .env changed.
    repo.write(
        "b.py",
        &numbered(10, "b =").replace("b = 9\n", &format!("b = 9\nTOKEN = \"{secret}\"\n")),
    );
    std::fs::remove_file(repo.path.join("docs/gone.md")).unwrap();
    repo.write(".env", &format!("TOKEN={secret}\n"));
    // Untracked: a file, a folder, an ignored file.
    repo.write("d.py", "d = 1\n");
    repo.write("newdir/e.py", "e = 1\n");
    repo.write("newdir/deep/f.py", "f = 1\n");
    repo.write("debug.log", "noise\n");
    let root = &repo.path;

    let diff = scratch.ok(root, "git_diff", json!({}));
    assert!(
        diff.contains("--- a/a.py\n+++ b/a.py\n@@ -2,7 +2,7 @@\n a = 2\n a = 3\n a = 4\n-a = 5\n+a = five\n a = 6\n"),
        "{diff}"
    );
    assert!(
        diff.contains("--- a/b.py\n+++ b/b.py\n@@ -7,4 +7,5 @@\n b = 7\n b = 8\n b = 9\n+TOKEN = "),
        "{diff}"
    );
    assert!(
        diff.contains("--- /dev/null\n+++ b/c.py\n@@ -0,0 +1,1 @@\n+c = 1\n"),
        "{diff}"
    );
    assert!(
        diff.contains("--- a/docs/gone.md\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-# Gone\n"),
        "{diff}"
    );
    assert!(diff.ends_with("Untracked:\n  d.py\n  newdir/\n"), "{diff}");
    // Never the secret file, never a secret, nothing unchanged or ignored.
    for absent in [".env", secret.as_str(), "TOKEN=old", "same.py", "debug.log"] {
        assert!(!diff.contains(absent), "{absent} in {diff}");
    }
    assert!(diff.contains("[redacted"), "{diff}");

    // One file.
    let one = scratch.ok(root, "git_diff", json!({"path": "a.py"}));
    assert!(one.starts_with("--- a/a.py\n"), "{one}");
    assert!(!one.contains("b.py") && !one.contains("Untracked"), "{one}");
    assert_eq!(
        scratch.ok(root, "git_diff", json!({"path": "same.py"})),
        "No uncommitted changes in same.py: it matches HEAD.\n"
    );
    assert!(scratch
        .error(root, "git_diff", json!({"path": ".env"}))
        .contains("secret files"));

    // Once everything is committed, nothing is left.
    repo.commit_all("Everything");
    assert_eq!(
        scratch.ok(root, "git_diff", json!({})),
        "No uncommitted changes: the work tree matches HEAD.\n"
    );
}

#[test]
fn without_history_each_tool_says_why() {
    let scratch = Scratch::new();
    let plain = scratch.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::write(plain.join("a.py"), "a = 1\n").unwrap();
    let inside = Command::new("git")
        .args(["rev-parse", "--git-dir"])
        .current_dir(&plain)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        !inside.status.success(),
        "the temp dir {} lies inside a git repository; set TMPDIR elsewhere",
        plain.display()
    );
    for (tool, args) in [
        ("git_log", json!({})),
        ("git_blame", json!({"path": "a.py"})),
        ("git_diff", json!({})),
    ] {
        let error = scratch.error(&plain, tool, args);
        assert!(
            error.contains("not inside a git repository"),
            "{tool}: {error}"
        );
    }

    let unborn = scratch.repo("unborn");
    unborn.write("a.py", "a = 1\n");
    for (tool, args) in [
        ("git_log", json!({})),
        ("git_blame", json!({"path": "a.py"})),
        ("git_diff", json!({})),
    ] {
        let error = scratch.error(&unborn.path, tool, args);
        assert!(error.contains("no commits yet"), "{tool}: {error}");
    }

    unborn.commit_all("First");
    let off = scratch.tool_env(
        &unborn.path,
        "git_log",
        json!({}),
        &[("COPILOT_LS_HISTORY", "off")],
    );
    assert!(
        off.stdout
            .starts_with("Error: history is turned off (COPILOT_LS_HISTORY=off)"),
        "{}",
        off.stdout
    );
    assert_eq!(
        subjects(&scratch.ok(&unborn.path, "git_log", json!({}))),
        ["First"]
    );
}

#[test]
fn a_root_inside_a_repository_sees_only_its_own_paths() {
    let scratch = Scratch::new();
    let repo = scratch.repo("mono");
    repo.commit("app/src/main.rs", "fn main() {}\n", "Start the app");
    repo.commit("lib/other.rs", "pub fn other() {}\n", "Start the library");
    repo.write("app/src/main.rs", "fn main() {\n    run();\n}\n");
    repo.write("lib/other.rs", "pub fn other() { changed() }\n");
    repo.commit_all("Change both");
    repo.commit("lib/other.rs", "pub fn other() {}\n", "Only the library");
    repo.write("app/src/main.rs", "fn main() {\n    run_all();\n}\n");
    repo.write("lib/other.rs", "pub fn other() { again() }\n");
    repo.write("lib/untracked.rs", "x\n");
    repo.write("app/notes.txt", "todo\n");
    let root = repo.path.join("app");

    let log = scratch.ok(&root, "git_log", json!({}));
    assert_eq!(subjects(&log), ["Change both", "Start the app"], "{log}");
    assert!(log.contains("\n  src/main.rs\n"), "{log}");
    assert!(!log.contains("lib/") && !log.contains("app/"), "{log}");
    let file = scratch.ok(&root, "git_log", json!({"path": "src/main.rs"}));
    assert_eq!(subjects(&file), ["Change both", "Start the app"], "{file}");
    assert!(scratch
        .error(&root, "git_log", json!({"path": "../lib/other.rs"}))
        .contains("outside the workspace"));

    let blame = scratch.ok(&root, "git_blame", json!({"path": "src/main.rs"}));
    assert_eq!(
        blame,
        format!(
            "1-1 {} 2023-11-17 Ada Lovelace: Change both\n2-2 uncommitted\n3-3 {} 2023-11-17 Ada Lovelace: Change both\n",
            repo.short("HEAD~1"),
            repo.short("HEAD~1")
        )
    );

    let diff = scratch.ok(&root, "git_diff", json!({}));
    assert!(
        diff.starts_with("--- a/src/main.rs\n+++ b/src/main.rs\n"),
        "{diff}"
    );
    assert!(diff.ends_with("Untracked:\n  notes.txt\n"), "{diff}");
    assert!(!diff.contains("lib/") && !diff.contains("other"), "{diff}");
}

/// Commits `path` with a subject and a body, a day after the last commit.
fn commit_with_body(repo: &GitRepo, path: &str, text: &str, subject: &str, body: &str) {
    repo.write(path, text);
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", subject, "-m", body]);
}

/// Issue 55 item 2: a long, descriptive message must not lose to a short old one for
/// being long. The words are ranked with BM25F: the subject's and the body's counts
/// weighted (the subject over the body) and each normalised by its own field's length.
#[test]
fn a_long_descriptive_message_outranks_a_short_old_one() {
    let scratch = Scratch::new();
    let repo = scratch.repo("requests");
    repo.commit("models.py", &numbered(3, "model"), "Add the request model");
    repo.commit(
        "sessions.py",
        &numbered(3, "session"),
        "header and cookie fixes for redirects",
    );
    for n in 1..=8 {
        repo.commit(
            &format!("util_{n}.py"),
            &numbered(n, "util"),
            &format!("Add utility number {n} for parsing"),
        );
    }
    repo.commit("docs.md", "# Headers\n", "Document the header casing rules");
    commit_with_body(
        &repo,
        "sessions.py",
        &numbered(5, "session"),
        "Strip Authorization header whenever root URL changes",
        "When a redirect sends the request to another host, or changes its scheme or \
         port, the Authorization header set for the original URL must not follow it: \
         credentials meant for one server would reach another. Keep the header for a \
         redirect within the same origin, as browsers do, and strip it otherwise. The \
         old rule compared host names only, so an https to http downgrade on the same \
         host kept the credentials; the new rule compares the whole origin. Tests cover \
         a redirect to another host, to another port and to another scheme.",
    );
    let text = scratch.ok(
        &repo.path,
        "git_log",
        json!({"query": "authorization header redirect"}),
    );
    let found = subjects(&text);
    let long = found
        .iter()
        .position(|s| *s == "Strip Authorization header whenever root URL changes");
    let short = found
        .iter()
        .position(|s| *s == "header and cookie fixes for redirects");
    assert_eq!(long, Some(0), "{text}");
    assert!(short.is_some_and(|short| short > 0), "{text}");
}

/// Issue 55 items 2 and 3: over several roots `limit` is the whole result's, the roots'
/// commits merged by date (no query) or by one ranking (query); an old path under a
/// root's name says it is old: `(then; now <root>/<new path>)` after a rename, `(then;
/// gone)` once deleted.
#[test]
fn git_log_over_two_roots_is_one_list_and_marks_old_paths() {
    let scratch = Scratch::new();
    let a = scratch.repo("alpha");
    let b = scratch.repo("beta");
    // One clock over both repositories: commit n is n hours after the epoch (each
    // repository's own counter would date them alike).
    let hour = std::cell::Cell::new(0u64);
    let commit = |repo: &GitRepo, path: &str, text: Option<&str>, subject: &str| {
        if let Some(text) = text {
            repo.write(path, text);
        }
        hour.set(hour.get() + 1);
        let date = format!("{} +0000", EPOCH + hour.get() * 3_600);
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", subject, "--date", &date]);
    };
    commit(&a, "one.py", Some(&numbered(1, "a")), "alpha one");
    commit(&b, "one.py", Some(&numbered(1, "b")), "beta warm-up");
    commit(&b, "one.py", Some(&numbered(2, "b")), "beta one");
    commit(&a, "two.py", Some(&numbered(2, "a")), "alpha two");
    commit(
        &a,
        "two.py",
        Some(&numbered(3, "a")),
        "alpha touches two again",
    );
    commit(&b, "two.py", Some(&numbered(2, "b")), "beta two");
    commit(
        &b,
        "gone.py",
        Some(&numbered(2, "g")),
        "beta adds a file it deletes",
    );
    a.git(&["mv", "one.py", "first.py"]);
    commit(&a, "", None, "alpha renames one to first");
    std::fs::remove_file(b.path.join("gone.py")).unwrap();
    commit(&b, "", None, "beta deletes the file");

    let two_roots = |args: Value| -> String {
        let mut command = Command::new(BIN);
        command
            .args(["tool", "git_log", &args.to_string()])
            .arg("--workspace")
            .arg(&a.path)
            .arg("--workspace")
            .arg(&b.path)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", scratch.path().join("home"))
            .env("COPILOT_LS_CACHE_DIR", scratch.path().join("cache"));
        let run = run_bounded(command, LIMIT).expect("copilot-ls exits");
        assert_eq!(run.code, Some(0), "{args}: {}{}", run.stdout, run.stderr);
        run.stdout
    };
    let text = two_roots(json!({"limit": 3}));
    assert_eq!(
        subjects(&text),
        [
            "beta deletes the file",
            "alpha renames one to first",
            "beta adds a file it deletes"
        ],
        "{text}"
    );
    let text = two_roots(json!({"limit": 20}));
    let commits = subjects(&text);
    assert_eq!(commits.len(), 9, "{text}");
    assert_eq!(commits.last(), Some(&"alpha one"), "{text}");
    // Old paths under a root's name say what became of them.
    assert!(
        text.contains("  alpha/one.py (then; now alpha/first.py)\n"),
        "{text}"
    );
    assert!(text.contains("  beta/gone.py (then; gone)\n"), "{text}");
    assert!(text.contains("  beta/two.py\n"), "{text}");
    // With words: one ranking over both roots, `limit` for the whole list.
    let text = two_roots(json!({"query": "two", "limit": 2}));
    assert_eq!(subjects(&text).len(), 2, "{text}");
    assert!(text.contains("(more commits match"), "{text}");
}
