//! End-to-end: the repository's history (PROTOCOL.md section 10, "History") through the
//! real binary, on repositories each test makes with the `git` CLI (fixed names and
//! dates, HOME pointed at a temp dir so no developer configuration interferes).
//!
//! `copilot-ls index --json` reports `history: {commits, complete, reason}`; where the
//! `git_*` tools exist (`copilot-ls tool git_log`), what they show is checked too, and
//! where they do not yet, those checks are skipped at run time (a probe asks for the
//! tool and sees `Error: unknown tool`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use copilot_ls_test_support::git_repo::{GitRepo, EMAIL};
use copilot_ls_test_support::process::{run_bounded, Run};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");
/// A hang fails the test after this long instead of blocking the suite.
const LIMIT: Duration = Duration::from_secs(120);

/// A test's temp dir: a HOME for git and the binary, a cache dir, and room for
/// repositories.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix("copilot-ls-history-")
            .tempdir()
            .unwrap();
        let scratch = Scratch { dir };
        std::fs::create_dir_all(scratch.home()).unwrap();
        std::fs::create_dir_all(scratch.cache()).unwrap();
        scratch
    }

    fn path(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn cache(&self) -> PathBuf {
        self.dir.path().join("cache")
    }

    /// A new repository at `name` (branch `main`, no commit yet).
    fn repo(&self, name: &str) -> GitRepo {
        GitRepo::init(self.path().join(name), self.home())
    }

    /// The binary in a clean environment: PATH, HOME and the cache dir, then `env`.
    fn copilot(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut command = Command::new(BIN);
        command
            .args(args)
            .current_dir(self.dir.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("COPILOT_LS_CACHE_DIR", self.cache());
        for (key, value) in env {
            command.env(key, value);
        }
        run_bounded(command, LIMIT).expect("copilot-ls exits")
    }

    /// `copilot-ls index --json --workspace ROOT`, which must succeed; its `history`.
    fn history(&self, root: &Path, env: &[(&str, &str)]) -> Value {
        let run = self.copilot(
            &["index", "--json", "--workspace", root.to_str().unwrap()],
            env,
        );
        assert_eq!(run.code, Some(0), "index failed: {}", run.stderr);
        let report: Value = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("index --json printed {:?}: {e}", run.stdout));
        report["history"].clone()
    }

    /// `copilot-ls tool NAME ARGS --workspace ROOT`: `None` when the binary does not
    /// know the tool (yet).
    fn tool(&self, root: &Path, name: &str, args: Value) -> Option<Run> {
        let run = self.copilot(
            &[
                "tool",
                name,
                &args.to_string(),
                "--workspace",
                root.to_str().unwrap(),
            ],
            &[],
        );
        (!run.stdout.starts_with("Error: unknown tool")).then_some(run)
    }

    /// `git_log` with `args`, which must succeed: `None` when there is no such tool.
    fn git_log(&self, root: &Path, args: Value) -> Option<Log> {
        let run = self.tool(root, "git_log", args.clone())?;
        assert_eq!(
            run.code,
            Some(0),
            "git_log {args}: {}{}",
            run.stdout,
            run.stderr
        );
        Some(Log::parse(&run.stdout))
    }

    /// `copilot-ls ask --json` with no provider (the answer lists places), which must
    /// succeed.
    fn ask(&self, root: &Path, question: &str) -> Value {
        self.ask_with(root, question, &[])
    }

    /// `ask`, with `env` besides.
    fn ask_with(&self, root: &Path, question: &str, env: &[(&str, &str)]) -> Value {
        let mut all = vec![("COPILOT_LS_PROVIDER", "none")];
        all.extend_from_slice(env);
        let run = self.copilot(
            &[
                "ask",
                "--json",
                question,
                "--workspace",
                root.to_str().unwrap(),
            ],
            &all,
        );
        assert_eq!(run.code, Some(0), "ask failed: {}", run.stderr);
        serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("ask --json printed {:?}: {e}", run.stdout))
    }
}

/// What `git_log` printed: one commit a line (`<id> <date> <author>: <subject>`), then
/// its changed files indented.
struct Log {
    text: String,
    subjects: Vec<String>,
    files: Vec<String>,
}

impl Log {
    fn parse(text: &str) -> Log {
        let mut subjects = Vec::new();
        let mut files = Vec::new();
        for line in text.lines() {
            if line.starts_with(char::is_whitespace) {
                files.push(line.trim().to_string());
            } else if let Some(subject) = Log::subject(line) {
                subjects.push(subject.to_string());
            }
        }
        Log {
            text: text.to_string(),
            subjects,
            files,
        }
    }

    /// The subject of a commit line, `None` for another line (a note).
    fn subject(line: &str) -> Option<&str> {
        let (id, rest) = line.split_once(' ')?;
        let (date, rest) = rest.split_once(' ')?;
        let id_ok = id.len() == 10 && id.bytes().all(|b| b.is_ascii_hexdigit());
        let date_ok = date.len() == 10
            && date.bytes().enumerate().all(|(i, b)| {
                if i == 4 || i == 7 {
                    b == b'-'
                } else {
                    b.is_ascii_digit()
                }
            });
        (id_ok && date_ok).then(|| rest.split_once(": ").map(|(_, subject)| subject))?
    }

    fn has(&self, subject: &str) -> bool {
        self.subjects.iter().any(|s| s == subject)
    }
}

fn complete(commits: usize) -> Value {
    json!({"commits": commits, "complete": true, "reason": null})
}

fn python(n: usize) -> String {
    format!("def handler_{n}(request):\n    return request.value + {n}\n")
}

#[test]
fn a_plain_repository_has_all_its_commits() {
    let scratch = Scratch::new();
    let repo = scratch.repo("plain");
    repo.commit("a.py", &python(1), "Add the first handler");
    repo.commit("b.py", &python(2), "Add the second handler");
    repo.commit("a.py", &python(3), "Rework the first handler");
    assert_eq!(scratch.history(&repo.path, &[]), complete(3));
    // The second run reads nothing new and says the same.
    assert_eq!(scratch.history(&repo.path, &[]), complete(3));
    if let Some(log) = scratch.git_log(&repo.path, json!({})) {
        assert_eq!(
            log.subjects,
            [
                "Rework the first handler",
                "Add the second handler",
                "Add the first handler"
            ],
            "{}",
            log.text
        );
        assert!(!log.text.contains(EMAIL), "an e-mail shown: {}", log.text);
    }
}

#[test]
fn a_branch_ahead_of_head_is_never_read() {
    let scratch = Scratch::new();
    let repo = scratch.repo("branch");
    repo.commit("a.py", &python(1), "Add the first handler");
    repo.commit("b.py", &python(2), "Add the second handler");
    repo.git(&["checkout", "-q", "-b", "feature"]);
    repo.commit(
        "zebra.py",
        &python(3),
        "Teach the zebra parser quantum mode",
    );
    repo.commit("zebra.py", &python(4), "Zebra quantum mode, part two");
    repo.git(&["checkout", "-q", "main"]);
    assert_eq!(scratch.history(&repo.path, &[]), complete(2));
    let zebra = |log: &Log| {
        log.subjects
            .iter()
            .any(|s| s.to_lowercase().contains("zebra"))
            || log.files.iter().any(|f| f.contains("zebra"))
    };
    if let Some(log) = scratch.git_log(&repo.path, json!({})) {
        assert!(!zebra(&log), "{}", log.text);
        assert_eq!(log.subjects.len(), 2, "{}", log.text);
    }
    if let Some(log) = scratch.git_log(&repo.path, json!({"query": "zebra quantum mode"})) {
        assert!(!zebra(&log), "{}", log.text);
        assert!(log.subjects.is_empty(), "{}", log.text);
    }
    if let Some(log) = scratch.git_log(&repo.path, json!({"path": "zebra.py"})) {
        assert!(log.subjects.is_empty(), "{}", log.text);
    }
    let answer = scratch.ask(&repo.path, "zebra parser quantum mode");
    assert!(
        !answer["answer"].as_str().unwrap().contains("quantum mode"),
        "{answer}"
    );
    // Checked out, the branch is HEAD: now it counts.
    repo.git(&["checkout", "-q", "feature"]);
    assert_eq!(scratch.history(&repo.path, &[]), complete(4));
}

#[test]
fn history_follows_head_forwards_backwards_and_sideways() {
    let scratch = Scratch::new();
    let repo = scratch.repo("moves");
    repo.commit("a.py", &python(1), "Add the first handler");
    repo.commit("b.py", &python(2), "Add the second handler");
    repo.commit("c.py", &python(3), "Add the third handler");
    assert_eq!(scratch.history(&repo.path, &[]), complete(3));

    // Forwards: two more commits are read.
    repo.commit("d.py", &python(4), "Add the fourth handler");
    repo.commit("e.py", &python(5), "Add the fifth handler");
    assert_eq!(scratch.history(&repo.path, &[]), complete(5));

    // Backwards: an older commit checked out drops the two newer ones.
    repo.git(&["checkout", "-q", "--detach", "HEAD~2"]);
    assert_eq!(scratch.history(&repo.path, &[]), complete(3));
    if let Some(log) = scratch.git_log(&repo.path, json!({})) {
        assert!(!log.has("Add the fourth handler"), "{}", log.text);
        assert!(!log.has("Add the fifth handler"), "{}", log.text);
    }

    // And forwards again.
    repo.git(&["checkout", "-q", "main"]);
    assert_eq!(scratch.history(&repo.path, &[]), complete(5));

    // Sideways (what a rebase does): the newest commit replaced by another one.
    repo.git(&["reset", "-q", "--hard", "HEAD~1"]);
    repo.commit("f.py", &python(6), "Add the sixth handler instead");
    assert_eq!(scratch.history(&repo.path, &[]), complete(5));
    if let Some(log) = scratch.git_log(&repo.path, json!({})) {
        assert!(!log.has("Add the fifth handler"), "{}", log.text);
        assert!(log.has("Add the sixth handler instead"), "{}", log.text);
        assert_eq!(log.subjects.len(), 5, "{}", log.text);
    }
    if let Some(log) = scratch.git_log(&repo.path, json!({"path": "e.py"})) {
        assert!(log.subjects.is_empty(), "{}", log.text);
    }
    // The files index agrees: e.py is gone, f.py is there.
    let answer = scratch.ask(&repo.path, "handler_6 handler_5");
    let cited: Vec<&str> = answer["citations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert!(cited.contains(&"f.py"), "{answer}");
    assert!(!cited.contains(&"e.py"), "{answer}");

    // A fresh cache reads it all from scratch to the same count.
    std::fs::remove_dir_all(scratch.cache()).unwrap();
    assert_eq!(scratch.history(&repo.path, &[]), complete(5));
}

#[test]
fn a_root_inside_a_larger_repository_gets_full_history_with_its_own_paths() {
    let scratch = Scratch::new();
    let repo = scratch.repo("mono");
    repo.commit("app/a.py", &python(1), "Add the app handler");
    repo.commit("lib/b.py", &python(2), "Add the library helper");
    repo.commit("app/a.py", &python(3), "Rework the app handler");
    repo.commit("lib/c.py", &python(4), "Add another library helper");
    let root = repo.path.join("app");
    // Every commit reachable from HEAD is kept, those that touched only other folders
    // too (they show no files of this root).
    assert_eq!(scratch.history(&root, &[]), complete(4));
    if let Some(log) = scratch.git_log(&root, json!({})) {
        // The commits that changed this root are shown; those that changed only other
        // folders may be left out, and show no files if they are not.
        assert!(log.has("Rework the app handler"), "{}", log.text);
        assert!(log.has("Add the app handler"), "{}", log.text);
        for file in &log.files {
            assert!(
                !file.contains("app/") && !file.contains("lib/") && !file.contains("b.py"),
                "a path outside the root or not root-relative: {}",
                log.text
            );
        }
        assert!(
            log.files.iter().any(|f| f.starts_with("a.py")),
            "{}",
            log.text
        );
    }
    if let Some(log) = scratch.git_log(&root, json!({"path": "a.py"})) {
        assert_eq!(
            log.subjects,
            ["Rework the app handler", "Add the app handler"],
            "{}",
            log.text
        );
    }
}

#[test]
fn a_shallow_clone_says_so_and_a_deepened_one_is_read_again() {
    let scratch = Scratch::new();
    let origin = scratch.repo("origin");
    for n in 1..=4 {
        origin.commit(&format!("m{n}.py"), &python(n), &format!("Add handler {n}"));
    }
    let url = format!("file://{}", origin.path.display());
    origin.git_in(
        &scratch.path(),
        &["clone", "-q", "--depth", "2", &url, "shallow"],
    );
    let clone = scratch.path().join("shallow");
    let history = scratch.history(&clone, &[]);
    assert_eq!(history["reason"], "shallow", "{history}");
    assert_eq!(history["complete"], false, "{history}");
    let commits = history["commits"].as_u64().unwrap();
    assert!((1..=2).contains(&commits), "{history}");
    if let Some(log) = scratch.git_log(&clone, json!({})) {
        assert!(log.has("Add handler 4"), "{}", log.text);
        assert!(!log.has("Add handler 1"), "{}", log.text);
    }

    // `git fetch --unshallow` gives the rest, HEAD unmoved: the next run reads it.
    origin.git_in(&clone, &["fetch", "-q", "--unshallow"]);
    assert_eq!(scratch.history(&clone, &[]), complete(4));
}

#[test]
fn a_partial_clone_without_blobs_keeps_every_commit() {
    let scratch = Scratch::new();
    let origin = scratch.repo("origin");
    origin.git(&["config", "uploadpack.allowFilter", "true"]);
    let lines = |word: &str, n: usize| -> String {
        (0..n)
            .map(|i| format!("{word}_{i} = compute_{word}({i})\n"))
            .collect()
    };
    origin.commit("a.py", &lines("alpha", 30), "Add alpha");
    // Renames with changes: telling them from a deletion and an addition needs the
    // blobs, which the clone does not have.
    origin.git(&["mv", "a.py", "b.py"]);
    origin.commit("b.py", &lines("alpha", 31), "Move alpha to b and extend it");
    origin.commit("c.py", &lines("gamma", 30), "Add gamma");
    origin.git(&["rm", "-q", "c.py"]);
    origin.commit("d.py", &lines("gamma", 29), "Move gamma to d and trim it");
    origin.commit("e.py", &python(5), "Add handler 5");
    let url = format!("file://{}", origin.path.display());
    origin.git_in(
        &scratch.path(),
        &["clone", "-q", "--filter=blob:none", &url, "partial"],
    );
    let clone = scratch.path().join("partial");
    assert_eq!(
        origin
            .git_in(&clone, &["config", "remote.origin.partialclonefilter"])
            .trim(),
        "blob:none",
        "the clone is not a partial one"
    );
    assert_eq!(scratch.history(&clone, &[]), complete(5));
    if let Some(log) = scratch.git_log(&clone, json!({"path": "d.py"})) {
        assert!(log.has("Move gamma to d and trim it"), "{}", log.text);
    }
    if let Some(log) = scratch.git_log(&clone, json!({"path": "b.py"})) {
        assert!(log.has("Move alpha to b and extend it"), "{}", log.text);
    }
}

/// A repository of four commits, all objects loose.
fn four_loose_commits(scratch: &Scratch, name: &str) -> GitRepo {
    let repo = scratch.repo(name);
    repo.commit("one.py", &python(1), "Add handler one");
    repo.commit("two.py", &python(2), "Add handler two");
    repo.commit("three.py", &python(3), "Add handler three");
    repo.commit("four.py", &python(4), "Add handler four");
    repo
}

/// The files index answers, history or not.
fn files_still_answer(scratch: &Scratch, root: &Path) {
    let answer = scratch.ask(root, "handler_3 request value");
    let cited: Vec<&str> = answer["citations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert!(cited.contains(&"three.py"), "{answer}");
}

#[test]
fn a_missing_tree_gives_what_could_be_read() {
    let scratch = Scratch::new();
    let repo = four_loose_commits(&scratch, "no-tree");
    std::fs::remove_file(repo.loose_object("HEAD~2^{tree}")).unwrap();
    let history = scratch.history(&repo.path, &[]);
    assert_eq!(history["reason"], "unreadable_objects", "{history}");
    assert_eq!(history["complete"], false, "{history}");
    // The commits are all there; at most the one with no tree is left out.
    let commits = history["commits"].as_u64().unwrap();
    assert!((3..=4).contains(&commits), "{history}");
    // Said again by the next run, which has nothing new to read.
    assert_eq!(scratch.history(&repo.path, &[]), history);
    files_still_answer(&scratch, &repo.path);
    if let Some(log) = scratch.git_log(&repo.path, json!({})) {
        assert!(log.has("Add handler four"), "{}", log.text);
    }
}

#[test]
fn a_missing_commit_stops_the_walk_there() {
    let scratch = Scratch::new();
    let repo = four_loose_commits(&scratch, "no-commit");
    std::fs::remove_file(repo.loose_object("HEAD~2")).unwrap();
    let history = scratch.history(&repo.path, &[]);
    assert_eq!(history["reason"], "unreadable_objects", "{history}");
    assert_eq!(history["complete"], false, "{history}");
    // HEAD and its parent are readable; nothing past the missing commit can be reached.
    assert_eq!(history["commits"], 2, "{history}");
    files_still_answer(&scratch, &repo.path);
}

#[test]
fn no_repository_and_an_unborn_head_say_so() {
    let scratch = Scratch::new();
    let plain = scratch.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::write(plain.join("a.py"), python(1)).unwrap();
    // The precondition: the temp dir lies in no repository.
    let found = Command::new("git")
        .args(["rev-parse", "--git-dir"])
        .current_dir(&plain)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", scratch.home())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        !found.status.success(),
        "the temp dir {} lies inside a git repository; set TMPDIR elsewhere",
        plain.display()
    );
    assert_eq!(
        scratch.history(&plain, &[]),
        json!({"commits": 0, "complete": false, "reason": "no_repository"})
    );
    if let Some(run) = scratch.tool(&plain, "git_log", json!({})) {
        assert!(run.stdout.starts_with("Error: "), "{}", run.stdout);
    }

    let repo = scratch.repo("unborn");
    repo.write("a.py", &python(1));
    repo.git(&["add", "-A"]);
    assert_eq!(
        scratch.history(&repo.path, &[]),
        json!({"commits": 0, "complete": false, "reason": "unborn_head"})
    );
    // The first commit is read by the next run.
    repo.commit_all("The first commit");
    assert_eq!(scratch.history(&repo.path, &[]), complete(1));
}

#[test]
fn history_off_reads_nothing() {
    let scratch = Scratch::new();
    let repo = scratch.repo("off");
    repo.commit("a.py", &python(1), "Add the first handler");
    repo.commit("b.py", &python(2), "Add the second handler");
    assert_eq!(
        scratch.history(&repo.path, &[("COPILOT_LS_HISTORY", "off")]),
        json!({"commits": 0, "complete": false, "reason": "off"})
    );
    // On again, it is read.
    assert_eq!(scratch.history(&repo.path, &[]), complete(2));
    assert_eq!(
        scratch.history(&repo.path, &[("COPILOT_LS_HISTORY", "off")]),
        json!({"commits": 0, "complete": false, "reason": "off"})
    );
}

#[test]
fn a_history_read_in_batches_keeps_every_commit_in_order() {
    let scratch = Scratch::new();
    let repo = scratch.repo("batches");
    for n in 1..=5 {
        repo.commit(&format!("m{n}.py"), &python(n), &format!("Add handler {n}"));
    }
    // Two commits a batch: three batches, each with a repository of its own; bounded
    // to five, so the oldest are dropped by the order the batches gave them.
    let batches = [
        ("COPILOT_LS_HISTORY_READ_BATCH", "2"),
        ("COPILOT_LS_HISTORY_MAX_COMMITS", "5"),
    ];
    assert_eq!(scratch.history(&repo.path, &batches), complete(5));
    repo.commit("m6.py", &python(6), "Add handler 6");
    repo.commit("m7.py", &python(7), "Add handler 7");
    repo.commit("m8.py", &python(8), "Add handler 8");
    let bounded = json!({"commits": 5, "complete": false, "reason": "bound"});
    assert_eq!(scratch.history(&repo.path, &batches), bounded);
    if let Some(log) = scratch.git_log(&repo.path, json!({})) {
        let expected: Vec<String> = (4..=8).rev().map(|n| format!("Add handler {n}")).collect();
        assert_eq!(log.subjects, expected, "{}", log.text);
    }
}

#[test]
fn the_bound_keeps_the_newest() {
    let scratch = Scratch::new();
    let repo = scratch.repo("bound");
    for n in 1..=4 {
        repo.commit(&format!("m{n}.py"), &python(n), &format!("Add handler {n}"));
    }
    let bound = [("COPILOT_LS_HISTORY_MAX_COMMITS", "2")];
    let bounded = json!({"commits": 2, "complete": false, "reason": "bound"});
    assert_eq!(scratch.history(&repo.path, &bound), bounded);
    // A new commit read incrementally: still two, the newest.
    repo.commit("m5.py", &python(5), "Add handler 5");
    assert_eq!(scratch.history(&repo.path, &bound), bounded);
    if let Some(log) = scratch.git_log(&repo.path, json!({})) {
        assert_eq!(
            log.subjects,
            ["Add handler 5", "Add handler 4"],
            "{}",
            log.text
        );
    }
}

#[test]
fn nothing_the_repository_configuration_names_is_run() {
    let scratch = Scratch::new();
    let canary = scratch.path().join("canary");
    let script = scratch.path().join("evil.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$0 $*\" >> '{}'\ncat >/dev/null 2>&1\nexit 0\n",
            canary.display()
        ),
    )
    .unwrap();
    make_executable(&script);
    let hooks = scratch.path().join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let evil = script.display().to_string();

    let repo = scratch.repo("hostile");
    // The attributes are committed before any driver is configured, so the test's own
    // `git` runs nothing.
    repo.write(".gitattributes", "* filter=evil diff=evil merge=evil\n");
    let body: String = (0..40)
        .map(|i| format!("    value_{i} = request.field_{i}\n"))
        .collect();
    repo.commit("a.py", &format!("def handle(request):\n{body}"), "Add a");
    repo.commit("b.py", &python(2), "Add b");
    // A rename (its blobs compared for similarity) and a modification.
    repo.git(&["mv", "a.py", "renamed.py"]);
    repo.commit("b.py", &python(3), "Rename a and change b");
    repo.commit("b.py", &python(4), "Change b again");

    for hook in [
        "pre-commit",
        "post-checkout",
        "post-commit",
        "post-index-change",
        "reference-transaction",
        "fsmonitor-watchman",
        "pre-push",
        "post-merge",
    ] {
        std::fs::copy(&script, hooks.join(hook)).unwrap();
        make_executable(&hooks.join(hook));
        let default = repo.path.join(".git/hooks").join(hook);
        std::fs::copy(&script, &default).unwrap();
        make_executable(&default);
    }
    let mut config = std::fs::read_to_string(repo.path.join(".git/config")).unwrap();
    config.push_str(&format!(
        "[core]\n\tfsmonitor = {evil}\n\thooksPath = {hooks}\n\tpager = {evil}\n\
         \teditor = {evil}\n\tsshCommand = {evil}\n\taskPass = {evil}\n\
         [filter \"evil\"]\n\tclean = {evil}\n\tsmudge = {evil}\n\tprocess = {evil}\n\
         \trequired = true\n\
         [diff \"evil\"]\n\ttextconv = {evil}\n\tcommand = {evil}\n\
         [diff]\n\texternal = {evil}\n\
         [merge \"evil\"]\n\tdriver = {evil}\n\
         [credential]\n\thelper = !{evil}\n\
         [gpg]\n\tprogram = {evil}\n",
        hooks = hooks.display()
    ));
    std::fs::write(repo.path.join(".git/config"), config).unwrap();
    // An uncommitted change for the diff and blame tools.
    repo.write("b.py", &format!("{}# changed\n", python(4)));

    assert_eq!(scratch.history(&repo.path, &[]), complete(4));
    let _ = scratch.ask(&repo.path, "what changed in b");
    if let Some(log) = scratch.git_log(&repo.path, json!({"path": "renamed.py"})) {
        assert!(log.has("Add a"), "{}", log.text);
    }
    let _ = scratch.git_log(&repo.path, json!({"query": "rename"}));
    // The tools read what they must (so the paths that could run a driver are taken).
    if let Some(run) = scratch.tool(&repo.path, "git_blame", json!({"path": "b.py"})) {
        assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
        assert!(run.stdout.contains("uncommitted"), "{}", run.stdout);
        assert!(run.stdout.contains("Change b again"), "{}", run.stdout);
    }
    if let Some(run) = scratch.tool(&repo.path, "git_blame", json!({"path": "renamed.py"})) {
        assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
        assert!(run.stdout.contains("Add a"), "{}", run.stdout);
    }
    for args in [json!({}), json!({"path": "b.py"})] {
        if let Some(run) = scratch.tool(&repo.path, "git_diff", args) {
            assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
            assert!(run.stdout.contains("+# changed"), "{}", run.stdout);
        }
    }
    assert!(
        !canary.exists(),
        "something the repository's configuration names was run: {}",
        std::fs::read_to_string(&canary).unwrap_or_default()
    );
    // The script works: run, it would have left the canary.
    let ran = Command::new(&script).output().unwrap();
    assert!(ran.status.success());
    assert!(canary.exists());
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_linked_worktree_gets_full_history_of_its_own_head() {
    let scratch = Scratch::new();
    let repo = scratch.repo("main-tree");
    repo.commit("a.py", &python(1), "Add the first handler");
    repo.commit("b.py", &python(2), "Add the second handler");
    repo.commit("c.py", &python(3), "Add the third handler");
    repo.git(&["worktree", "add", "-q", "../wt"]);
    let worktree = scratch.path().join("wt");
    assert!(worktree.join(".git").is_file());
    assert_eq!(scratch.history(&worktree, &[]), complete(3));
    // A commit in the worktree is its HEAD's, not the main work tree's.
    std::fs::write(worktree.join("d.py"), python(4)).unwrap();
    repo.commit_all_in(&worktree, "Add the worktree handler");
    assert_eq!(scratch.history(&worktree, &[]), complete(4));
    assert_eq!(scratch.history(&repo.path, &[]), complete(3));
    if let Some(log) = scratch.git_log(&worktree, json!({})) {
        assert!(log.has("Add the worktree handler"), "{}", log.text);
    }
    if let Some(log) = scratch.git_log(&repo.path, json!({})) {
        assert!(!log.has("Add the worktree handler"), "{}", log.text);
    }
}

#[test]
fn a_renamed_file_keeps_its_history() {
    let scratch = Scratch::new();
    let repo = scratch.repo("rename");
    let body: String = (0..30)
        .map(|i| format!("    total += request.field_{i}\n"))
        .collect();
    repo.commit(
        "a.py",
        &format!("def handle(request):\n    total = 0\n{body}    return total\n"),
        "Add the request handler",
    );
    repo.commit("other.py", &python(2), "Add an unrelated handler");
    repo.git(&["mv", "a.py", "b.py"]);
    repo.commit_all("Move the handler to b");
    repo.commit("b.py", &python(9), "Rewrite the handler");
    assert_eq!(scratch.history(&repo.path, &[]), complete(4));
    if let Some(log) = scratch.git_log(&repo.path, json!({"path": "b.py"})) {
        assert_eq!(
            log.subjects,
            [
                "Rewrite the handler",
                "Move the handler to b",
                "Add the request handler"
            ],
            "{}",
            log.text
        );
    }
    if let Some(log) = scratch.git_log(&repo.path, json!({"path": "other.py"})) {
        assert_eq!(log.subjects, ["Add an unrelated handler"], "{}", log.text);
    }
}

/// A workspace where the lexical ranking alone cannot tell two modules apart: both
/// hold the question's words once. Only the history says which one a past change about
/// the same thing touched.
fn two_equal_modules(scratch: &Scratch) -> GitRepo {
    let repo = scratch.repo("buckets");
    repo.commit(
        "refill.py",
        "def refill(bucket):\n    # tokens come back at the bucket's rate\n    bucket.tokens = bucket.rate\n",
        "Add the refill helper",
    );
    repo.commit(
        "drain.py",
        "def drain(bucket):\n    # tokens leave at the bucket's rate\n    bucket.tokens = 0\n",
        "Add the drain helper",
    );
    repo.commit(
        "refill.py",
        "def refill(bucket):\n    # tokens come back at the bucket's rate, lazily\n    bucket.tokens = bucket.rate\n",
        "Refill tokens lazily when the bucket runs empty",
    );
    repo.commit("README.md", "# buckets\n", "Write a readme");
    repo
}

#[test]
fn a_strong_past_change_is_shown_under_the_places_and_a_weak_one_is_not() {
    let scratch = Scratch::new();
    let repo = two_equal_modules(&scratch);
    let answer = scratch.ask(
        &repo.path,
        "tokens refill lazily when the bucket runs empty",
    );
    let text = answer["answer"].as_str().unwrap();
    assert!(
        text.contains("## Related past changes"),
        "no related changes: {text}"
    );
    let section = text.split("## Related past changes").nth(1).unwrap();
    assert!(
        section.contains("Refill tokens lazily when the bucket runs empty")
            && section.contains("`refill.py`"),
        "{section}"
    );
    // The commit's id (10 hex) and date are shown; the author's e-mail never is.
    let id = repo.rev("HEAD~1");
    assert!(section.contains(&id[..10]), "{section}");
    assert!(!text.contains(EMAIL));

    // One shared word is a weak match: nothing is shown.
    let weak = scratch.ask(&repo.path, "where is the drain defined");
    let text = weak["answer"].as_str().unwrap();
    assert!(!text.contains("## Related past changes"), "{text}");

    // With history off, nothing either.
    let off = scratch.ask_with(
        &repo.path,
        "tokens refill lazily when the bucket runs empty",
        &[("COPILOT_LS_HISTORY", "off")],
    );
    let text = off["answer"].as_str().unwrap();
    assert!(!text.contains("Related past changes"), "{text}");
}

#[test]
fn a_past_change_votes_for_the_file_it_changed() {
    let scratch = Scratch::new();
    let repo = scratch.repo("votes");
    // Two modules with the same words; the lexical ranking puts `a_pool.py` first (the
    // other is a comment line longer). Past changes about "stalls" changed `b_pool.py`.
    let body =
        "def take(pool):\n    # waits for a free slot in the pool\n    return pool.slots.pop()\n";
    repo.commit("a_pool.py", body, "Add the first pool");
    repo.commit("b_pool.py", body, "Add the second pool");
    for n in 0..3 {
        repo.commit(
            "b_pool.py",
            &format!("{body}# revision {n}\n"),
            &format!("Fix a stall when the pool has no free slot ({n})"),
        );
    }
    let question = "the pool stalls waiting for a free slot";
    let cited = |env: &[(&str, &str)]| -> Vec<String> {
        scratch.ask_with(&repo.path, question, env)["citations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["path"].as_str().unwrap().to_string())
            .collect()
    };
    let without = cited(&[("COPILOT_LS_HISTORY", "off")]);
    let with = cited(&[]);
    assert_eq!(
        without.first().map(String::as_str),
        Some("a_pool.py"),
        "{without:?}"
    );
    assert_eq!(
        with.first().map(String::as_str),
        Some("b_pool.py"),
        "{with:?}"
    );
}

#[test]
fn the_editors_history_setting_turns_it_off_and_on() {
    use copilot_ls_test_support::lsp_client::LspClient;

    let scratch = Scratch::new();
    let repo = two_equal_modules(&scratch);
    // The history is read once beforehand, so the server finds it on disk and what an
    // ask sees does not depend on when its background read ends.
    assert_eq!(scratch.history(&repo.path, &[])["commits"], 4);
    let home = scratch.home();
    let cache = scratch.cache();
    let mut client = LspClient::spawn(
        Path::new(BIN),
        &repo.path,
        &[
            ("HOME", home.to_str().unwrap()),
            ("COPILOT_LS_CACHE_DIR", cache.to_str().unwrap()),
            ("COPILOT_LS_PROVIDER", "none"),
        ],
    );
    client.initialize(&repo.path, json!({}), json!({"history": false}));
    let question = json!({"question": "tokens refill lazily when the bucket runs empty"});
    let related = |result: Value| {
        result["answer"]
            .as_str()
            .unwrap()
            .contains("## Related past changes")
    };
    let off = client.request("copilot/ask", question.clone()).unwrap();
    assert!(!related(off.clone()), "{off}");
    client.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"copilot-ls": {"history": true}}}),
    );
    let on = client.request("copilot/ask", question).unwrap();
    assert!(related(on.clone()), "{on}");
}
