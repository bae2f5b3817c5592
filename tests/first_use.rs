//! End-to-end: what a new user meets before the index is built (PROTOCOL.md section 9,
//! "First use"). The command line waits for the index and never answers from half of
//! it; an editor's ask during the build says how much it saw, in `AskResult.index` and
//! in the answer's first line; a cold build reads source before tests; a process shares
//! one index per root among its sessions, and a second process reads the index the
//! first writes instead of building its own; roots that are not projects are refused.
//!
//! Builds in progress are held with `COPILOT_LS_TEST_INDEX_HOLD=N:GATE` (the build
//! commits after N files and waits for the file GATE), so nothing depends on timing.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use copilot_ls_test_support::git_repo::GitRepo;
use copilot_ls_test_support::lsp_client::LspClient;
use copilot_ls_test_support::process::{run_bounded, Run};
use copilot_ls_test_support::workspace::snapshot;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");
const LIMIT: Duration = Duration::from_secs(120);

/// A workspace of `sources` source files and `tests` test files, each defining a
/// function named after its number; the source file `src/m{k}/answer.rs` alone holds
/// the word `zanzibar`, which the questions ask about.
fn workspace(sources: usize, tests: usize) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("copilot-ls-first-")
        .tempdir()
        .unwrap();
    for i in 0..sources {
        let path = dir.path().join(format!("src/m{}/file_{i}.rs", i % 50));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            format!("/// Helper {i}.\npub fn helper_{i}(x: u32) -> u32 {{\n    x + {i}\n}}\n"),
        )
        .unwrap();
    }
    for i in 0..tests {
        let path = dir.path().join(format!("tests/t{}/test_{i}.rs", i % 50));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        // The tests mention the answer's words too: a cold build that read the tests
        // first would answer from them.
        std::fs::write(
            &path,
            format!("#[test]\nfn checks_zanzibar_route_{i}() {{\n    assert_eq!(zanzibar_route({i}), {i});\n}}\n"),
        )
        .unwrap();
    }
    let answer = dir.path().join("src/answer.rs");
    std::fs::create_dir_all(answer.parent().unwrap()).unwrap();
    std::fs::write(
        answer,
        "/// Picks the zanzibar route for a parcel.\npub fn zanzibar_route(parcel: u32) -> u32 {\n    parcel * 2\n}\n",
    )
    .unwrap();
    dir
}

fn run(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Run {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", std::env::var("HOME").unwrap_or_default())
        .env("COPILOT_LS_PROVIDER", "none");
    for (key, value) in env {
        command.env(key, value);
    }
    run_bounded(command, LIMIT)
        .unwrap_or_else(|| panic!("copilot-ls {args:?} did not exit within {LIMIT:?}"))
}

/// Waits for the end of an editor's indexing progress; the notification.
fn indexing_ended(client: &mut LspClient) -> Value {
    client.notification("$/progress", |p| {
        p["token"] == "copilot-ls/indexing" && p["value"]["kind"] == "end"
    })
}

/// An editor's `copilot/ask` of `question`; its `AskResult`.
fn editor_ask(client: &mut LspClient, question: &str) -> Value {
    client
        .request("copilot/ask", json!({ "question": question }))
        .expect("an answer")
}

fn cited_paths(result: &Value) -> Vec<String> {
    result["citations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["path"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn the_command_line_waits_for_the_index_before_it_answers() {
    let ws = workspace(3_000, 0);
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap();
    let out = run(
        &["ask", "--json", "where is the zanzibar route picked?"],
        ws.path(),
        &[("COPILOT_LS_CACHE_DIR", cache_dir)],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let result: Value = serde_json::from_str(&out.stdout).expect("one AskResult");
    assert_eq!(
        result["index"],
        json!({"complete": true, "filesIndexed": 3_001, "filesTotal": 3_001}),
        "{result}"
    );
    assert_eq!(
        cited_paths(&result).first().map(String::as_str),
        Some("src/answer.rs")
    );
    assert!(
        !result["answer"]
            .as_str()
            .unwrap()
            .starts_with("Indexing is"),
        "{result}"
    );
    // Not a terminal: no progress lines, at most the final one.
    assert!(!out.stderr.contains('\r'), "{}", out.stderr);
    assert!(
        out.stderr
            .lines()
            .filter(|l| l.contains("indexing "))
            .count()
            == 0,
        "{}",
        out.stderr
    );
}

#[test]
fn no_wait_answers_from_a_held_build_and_says_how_much_it_saw() {
    let ws = workspace(400, 400);
    let cache = tempfile::tempdir().unwrap();
    let gate = cache.path().join("gate");
    let hold = format!("300:{}", gate.display());
    let out = run(
        &[
            "ask",
            "--json",
            "--no-wait",
            "where is the zanzibar route picked?",
        ],
        ws.path(),
        &[
            ("COPILOT_LS_CACHE_DIR", cache.path().to_str().unwrap()),
            ("COPILOT_LS_TEST_INDEX_HOLD", &hold),
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let result: Value = serde_json::from_str(&out.stdout).expect("one AskResult");
    assert_eq!(result["index"]["complete"], false, "{result}");
    assert_eq!(result["index"]["filesTotal"], 801, "{result}");
    assert_eq!(result["index"]["filesIndexed"], 300, "{result}");
    let answer = result["answer"].as_str().unwrap();
    assert!(
        answer
            .starts_with("Indexing is 37% done (300 of 801 files); this answer may miss places.\n"),
        "{answer}"
    );
    // Source is read before tests: the 300 files indexed are source files, so the answer
    // is there although 400 tests mention its words too.
    let cited = cited_paths(&result);
    assert_eq!(
        cited.first().map(String::as_str),
        Some("src/answer.rs"),
        "{result}"
    );
    assert!(cited.iter().all(|p| p.starts_with("src/")), "{cited:?}");
}

/// Section 11: the command line's wait ends when the files are indexed; the history is
/// read after, and an answer given before it is read says so (its first line, and
/// `AskResult.index.history`). The history's read is held (`COPILOT_LS_TEST_HISTORY_HOLD`)
/// so the ask comes before it on any machine; once the gate is open the next ask has it.
#[test]
fn the_command_line_answers_before_the_history_is_read_and_says_so() {
    let scratch = tempfile::tempdir().unwrap();
    let repo = GitRepo::init(scratch.path().join("repo"), scratch.path().join("home"));
    repo.commit(
        "src/answer.rs",
        "/// Picks the zanzibar route for a parcel.\npub fn zanzibar_route(parcel: u32) -> u32 {\n    parcel * 2\n}\n",
        "Pick the zanzibar route by the parcel's weight",
    );
    repo.commit(
        "src/other.rs",
        "pub fn other() -> u32 {\n    1\n}\n",
        "Add another helper",
    );
    let cache = scratch.path().join("cache");
    let gate = scratch.path().join("gate");
    let env = [
        ("COPILOT_LS_CACHE_DIR", cache.to_str().unwrap()),
        ("COPILOT_LS_TEST_HISTORY_HOLD", gate.to_str().unwrap()),
    ];
    let question = "where is the zanzibar route picked?";
    let notice = "The repository's history is still being read; this answer does not draw on past changes yet.";

    let out = run(&["ask", "--json", question], &repo.path, &env);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let result: Value = serde_json::from_str(&out.stdout).expect("one AskResult");
    assert_eq!(
        result["index"],
        json!({"complete": true, "filesIndexed": 2, "filesTotal": 2,
               "history": {"complete": false, "commits": 0}}),
        "{result}"
    );
    // The process ended with the read still held: it says the history is unread and
    // how to read it, on stderr (stdout is the AskResult alone).
    assert!(
        out.stderr.contains(
            "copilot-ls: the repository's history was not read before this process ended; \
             `copilot-ls index` reads it once, and later asks draw on past changes"
        ),
        "{}",
        out.stderr
    );
    let answer = result["answer"].as_str().unwrap();
    assert!(answer.starts_with(&format!("{notice}\n")), "{answer}");
    assert_eq!(
        cited_paths(&result).first().map(String::as_str),
        Some("src/answer.rs"),
        "{result}"
    );
    // The text form says it on its first line too.
    let out = run(&["ask", question], &repo.path, &env);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout.lines().next(), Some(notice), "{}", out.stdout);

    // The history read (by `index`, which waits for it), the next answer draws on it
    // and says nothing of it.
    std::fs::write(&gate, "").unwrap();
    let out = run(&["index"], &repo.path, &env);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let out = run(&["ask", "--json", question], &repo.path, &env);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let result: Value = serde_json::from_str(&out.stdout).expect("one AskResult");
    assert_eq!(
        result["index"]["history"],
        json!({"complete": true, "commits": 2}),
        "{result}"
    );
    assert!(
        !result["answer"].as_str().unwrap().contains(notice),
        "{result}"
    );
}

/// The segments of the files' index under `cache` (not the history's).
fn index_segments(cache: &Path) -> usize {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(cache).unwrap() {
        let dir = entry.unwrap().path();
        let meta = dir.join("meta.json");
        let is_history = dir.extension().is_some_and(|e| e == "history");
        if meta.exists() && !is_history {
            let meta: Value = serde_json::from_slice(&std::fs::read(meta).unwrap()).unwrap();
            found.push(meta["segments"].as_array().unwrap().len());
        }
    }
    assert_eq!(found.len(), 1, "one index under {}", cache.display());
    found[0]
}

/// A workspace indexed once, then given a thousand new files, so that the next refresh
/// is a bulk build whose segments sit beside the first one's; its cache dir.
fn indexed_then_grown(ws: &Path, cache_dir: &Path) {
    let env = [("COPILOT_LS_CACHE_DIR", cache_dir.to_str().unwrap())];
    let out = run(&["index"], ws, &env);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert_eq!(index_segments(cache_dir), 1);
    for i in 0..1_000 {
        let path = ws.join(format!("lib/l{}/more_{i}.rs", i % 20));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("pub fn more_{i}() -> u32 {{\n    {i}\n}}\n")).unwrap();
    }
}

/// Starts `copilot-ls ARGS` in `ws` with its bulk build's merge held by `gate`; the
/// lines it printed up to the first for which `last` is true, read while the merge was
/// held, the index's segments then, and the process, still merging.
fn printed_before_the_merge(
    ws: &Path,
    cache_dir: &Path,
    gate: &Path,
    args: &[&str],
    last: fn(&str) -> bool,
) -> (String, usize, std::process::Child) {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .current_dir(ws)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", std::env::var("HOME").unwrap_or_default())
        .env("COPILOT_LS_PROVIDER", "none")
        .env("COPILOT_LS_CACHE_DIR", cache_dir)
        .env("COPILOT_LS_TEST_MERGE_HOLD", gate)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = command.spawn().unwrap();
    let (lines, received) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if lines.send(line.unwrap_or_default()).is_err() {
                break;
            }
        }
    });
    let mut text = String::new();
    loop {
        let line = received
            .recv_timeout(LIMIT)
            .unwrap_or_else(|_| panic!("{args:?} printed nothing before the held merge"));
        text.push_str(&line);
        text.push('\n');
        if last(&line) {
            break;
        }
    }
    (text, index_segments(cache_dir), child)
}

/// Opens `gate` on `child`'s held merge: it exits successfully, the index merged into
/// one segment.
fn exits_merged(mut child: std::process::Child, gate: &Path, cache_dir: &Path) {
    let (done, exited) = mpsc::channel();
    std::thread::spawn(move || done.send(child.wait().unwrap()));
    std::fs::write(gate, "").unwrap();
    let status = exited
        .recv_timeout(LIMIT)
        .expect("the process exits once its merge is done");
    assert!(status.success(), "{status:?}");
    assert_eq!(index_segments(cache_dir), 1, "merged before it exited");
}

/// A bulk build's merge comes after the command line's answer: `ask` prints its answer,
/// and `tool` its result, while the index's segments are still apart (the merge held by
/// `COPILOT_LS_TEST_MERGE_HOLD`), and each merges them into one before it exits, so the
/// next call searches one segment and reads nothing again.
#[test]
fn the_command_line_answers_before_a_bulk_builds_merge_and_merges_before_it_exits() {
    let ws = workspace(10, 0);
    let scratch = tempfile::tempdir().unwrap();
    let cache_dir = scratch.path().join("cache");
    indexed_then_grown(ws.path(), &cache_dir);
    // The pretty-printed AskResult ends with a lone `}`.
    let gate = scratch.path().join("ask-gate");
    let (text, apart, ask) = printed_before_the_merge(
        ws.path(),
        &cache_dir,
        &gate,
        &["ask", "--json", "where is the zanzibar route picked?"],
        |line| line == "}",
    );
    assert!(
        apart > 1,
        "the answer came before the merge: {apart} segments"
    );
    exits_merged(ask, &gate, &cache_dir);
    let result: Value = serde_json::from_str(&text).expect("one AskResult");
    assert_eq!(result["index"]["filesIndexed"], json!(1_011), "{result}");
    assert_eq!(
        cited_paths(&result).first().map(String::as_str),
        Some("src/answer.rs"),
        "{result}"
    );
    let env = [("COPILOT_LS_CACHE_DIR", cache_dir.to_str().unwrap())];
    let out = run(&["index", "--json"], ws.path(), &env);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["filesRead"], json!(0), "{report}");

    // `tool` the same, on a workspace of its own.
    let ws = workspace(10, 0);
    let cache_dir = scratch.path().join("cache-tool");
    indexed_then_grown(ws.path(), &cache_dir);
    let gate = scratch.path().join("tool-gate");
    let (text, apart, tool) = printed_before_the_merge(
        ws.path(),
        &cache_dir,
        &gate,
        &["tool", "find_symbol", r#"{"name": "more_999"}"#],
        |line| line.contains("more_999"),
    );
    assert!(
        apart > 1,
        "the result came before the merge: {apart} segments"
    );
    assert!(text.contains("lib/l19/more_999.rs"), "{text}");
    exits_merged(tool, &gate, &cache_dir);
}

/// An ask stopped after its answer, before its merge (the user's ^C), leaves the index
/// whole and unmerged; the next process that writes it merges it, reading nothing again.
#[test]
fn a_merge_an_interrupted_ask_left_is_done_by_the_next_process() {
    let ws = workspace(10, 0);
    let scratch = tempfile::tempdir().unwrap();
    let cache_dir = scratch.path().join("cache");
    indexed_then_grown(ws.path(), &cache_dir);
    let (_, apart, mut ask) = printed_before_the_merge(
        ws.path(),
        &cache_dir,
        &scratch.path().join("gate"),
        &["ask", "--json", "where is the zanzibar route picked?"],
        |line| line == "}",
    );
    assert!(apart > 1, "{apart} segments");
    ask.kill().unwrap();
    ask.wait().unwrap();
    assert_eq!(index_segments(&cache_dir), apart, "nothing merged");
    let env = [("COPILOT_LS_CACHE_DIR", cache_dir.to_str().unwrap())];
    let out = run(&["index", "--json"], ws.path(), &env);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["filesRead"], json!(0), "{report}");
    assert_eq!(report["files"], json!(1_011), "{report}");
    assert_eq!(index_segments(&cache_dir), 1, "merged by the next process");
}

#[test]
fn a_no_model_answer_during_a_build_never_says_nothing_matches() {
    let ws = workspace(200, 0);
    let cache = tempfile::tempdir().unwrap();
    let gate = cache.path().join("gate");
    // Nothing is committed before the hold: the index is empty when the ask runs.
    let hold = format!("0:{}", gate.display());
    let out = run(
        &[
            "ask",
            "--json",
            "--no-wait",
            "where is the zanzibar route picked?",
        ],
        ws.path(),
        &[
            ("COPILOT_LS_CACHE_DIR", cache.path().to_str().unwrap()),
            ("COPILOT_LS_TEST_INDEX_HOLD", &hold),
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let result: Value = serde_json::from_str(&out.stdout).unwrap();
    let answer = result["answer"].as_str().unwrap();
    assert!(
        answer.starts_with("Indexing is 0% done (0 of 201 files)"),
        "{answer}"
    );
    assert!(answer.contains("still being built"), "{answer}");
    assert!(!answer.contains("found nothing"), "{answer}");
}

#[test]
fn an_editor_ask_during_the_build_says_so_and_the_next_one_is_complete() {
    let ws = workspace(400, 400);
    let cache = tempfile::tempdir().unwrap();
    let gate = cache.path().join("gate");
    let hold = format!("300:{}", gate.display());
    let mut client = LspClient::spawn(
        Path::new(BIN),
        ws.path(),
        &[
            ("COPILOT_LS_CACHE_DIR", cache.path().to_str().unwrap()),
            ("COPILOT_LS_TEST_INDEX_HOLD", &hold),
        ],
    );
    client.initialize(
        ws.path(),
        json!({"window": {"workDoneProgress": true}}),
        json!({}),
    );
    let result = editor_ask(&mut client, "where is the zanzibar route picked?");
    assert_eq!(
        result["index"],
        json!({"complete": false, "filesIndexed": 300, "filesTotal": 801}),
        "{result}"
    );
    let answer = result["answer"].as_str().unwrap();
    assert!(
        answer.starts_with("Indexing is 37% done (300 of 801 files)"),
        "{answer}"
    );
    assert_eq!(
        cited_paths(&result).first().map(String::as_str),
        Some("src/answer.rs")
    );

    std::fs::write(&gate, "").unwrap();
    indexing_ended(&mut client);
    let result = editor_ask(&mut client, "where is the zanzibar route picked?");
    assert_eq!(
        result["index"],
        json!({"complete": true, "filesIndexed": 801, "filesTotal": 801}),
        "{result}"
    );
    assert!(!result["answer"].as_str().unwrap().starts_with("Indexing"));
    client.shutdown();
}

/// An editor's first build is ready at its last commit: its end of progress and an ask
/// that says the index is complete come while the merge of its segments is still to
/// come (held by `COPILOT_LS_TEST_MERGE_HOLD`).
#[test]
fn an_editors_first_build_is_complete_before_its_merge() {
    let ws = workspace(1_000, 0);
    let cache = tempfile::tempdir().unwrap();
    let gate = cache.path().join("merge");
    let mut client = LspClient::spawn(
        Path::new(BIN),
        ws.path(),
        &[
            ("COPILOT_LS_CACHE_DIR", cache.path().to_str().unwrap()),
            ("COPILOT_LS_TEST_MERGE_HOLD", gate.to_str().unwrap()),
        ],
    );
    client.initialize(
        ws.path(),
        json!({"window": {"workDoneProgress": true}}),
        json!({}),
    );
    indexing_ended(&mut client);
    let result = editor_ask(&mut client, "where is the zanzibar route picked?");
    assert_eq!(
        result["index"],
        json!({"complete": true, "filesIndexed": 1_001, "filesTotal": 1_001}),
        "{result}"
    );
    assert_eq!(
        cited_paths(&result).first().map(String::as_str),
        Some("src/answer.rs")
    );
    std::fs::write(&gate, "").unwrap();
    client.shutdown();
}

/// VmRSS of a process, in kB.
fn resident_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// An ACP agent process driven with raw newline-delimited JSON-RPC.
struct Acp {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: mpsc::Receiver<Value>,
    next_id: u64,
}

impl Acp {
    fn spawn(cache: &Path) -> Acp {
        let mut child = Command::new(BIN)
            .arg("acp")
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", std::env::var("HOME").unwrap_or_default())
            .env("COPILOT_LS_PROVIDER", "none")
            .env("COPILOT_LS_CACHE_DIR", cache)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Ok(value) = serde_json::from_str::<Value>(&line) {
                    let _ = sender.send(value);
                }
            }
        });
        let stdin = child.stdin.take().unwrap();
        let mut acp = Acp {
            child,
            stdin,
            lines,
            next_id: 0,
        };
        acp.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        )
        .expect("initialize");
        acp
    }

    fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{message}").unwrap();
        loop {
            let value = self
                .lines
                .recv_timeout(LIMIT)
                .unwrap_or_else(|_| panic!("no reply to {method}"));
            if value["id"] == id && value.get("method").is_none() {
                return match value.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(value["result"].clone()),
                };
            }
        }
    }
}

impl Acp {
    /// The text a prompt's answer streamed (its `agent_message_chunk`s).
    fn answer(&mut self, session: &Value, text: &str) -> String {
        self.next_id += 1;
        let id = self.next_id;
        let params = json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]});
        let message =
            json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": params});
        writeln!(self.stdin, "{message}").unwrap();
        let mut answer = String::new();
        loop {
            let value = self
                .lines
                .recv_timeout(LIMIT)
                .expect("a reply to the prompt");
            if value["id"] == id && value.get("method").is_none() {
                return answer;
            }
            let update = &value["params"]["update"];
            if value["method"] == "session/update"
                && value["params"]["sessionId"] == *session
                && update["sessionUpdate"] == "agent_message_chunk"
            {
                answer.push_str(update["content"]["text"].as_str().unwrap_or_default());
            }
        }
    }

    /// Until the session's index is built (`/index` says so), so that what is measured
    /// is the built index, not a moment of its build.
    fn wait_for_the_index(&mut self, session: &Value) {
        let deadline = Instant::now() + LIMIT;
        loop {
            let report = self.answer(session, "/index");
            if report.contains("It is complete") {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the index was never complete: {report}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Acp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn twenty_acp_sessions_on_one_root_share_one_index() {
    let ws = workspace(3_000, 0);
    let cache = tempfile::tempdir().unwrap();
    let cwd = ws.path().to_str().unwrap().to_string();
    let prompt = |acp: &mut Acp, session: &Value| {
        let reply = acp
            .request(
                "session/prompt",
                json!({"sessionId": session, "prompt": [{"type": "text", "text": "where is the zanzibar route picked?"}]}),
            )
            .expect("a prompt reply");
        assert_eq!(reply["stopReason"], "end_turn", "{reply}");
    };
    let mut one = Acp::spawn(cache.path());
    let session = one
        .request("session/new", json!({"cwd": cwd, "mcpServers": []}))
        .unwrap()["sessionId"]
        .clone();
    prompt(&mut one, &session);
    one.wait_for_the_index(&session);
    let alone = resident_kb(one.child.id());
    drop(one);

    let mut many = Acp::spawn(cache.path());
    let mut ids = Vec::new();
    for _ in 0..20 {
        let id = many
            .request("session/new", json!({"cwd": cwd, "mcpServers": []}))
            .unwrap()["sessionId"]
            .clone();
        assert!(!ids.contains(&id), "session ids are unique: {id}");
        ids.push(id);
    }
    for id in &ids {
        prompt(&mut many, id);
    }
    many.wait_for_the_index(&ids[0]);
    let twenty = resident_kb(many.child.id());
    assert!(
        twenty * 2 <= alone * 3,
        "20 sessions take {twenty} kB, one takes {alone} kB"
    );
}

#[test]
fn a_second_server_reads_the_first_ones_index_with_its_own_changes_on_top() {
    let ws = workspace(1_500, 0);
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap().to_string();
    let env = [("COPILOT_LS_CACHE_DIR", cache_dir.as_str())];
    let capabilities = json!({"window": {"workDoneProgress": true}});
    let mut first = LspClient::spawn(Path::new(BIN), ws.path(), &env);
    first.initialize(ws.path(), capabilities.clone(), json!({}));
    indexing_ended(&mut first);

    // A file changes on disk behind both servers' backs (no watcher event).
    std::fs::write(
        ws.path().join("src/m3/late.rs"),
        "/// Weighs the quokka parcel.\npub fn quokka_weight() -> u32 {\n    7\n}\n",
    )
    .unwrap();
    let mut second = LspClient::spawn(Path::new(BIN), ws.path(), &env);
    second.initialize(ws.path(), capabilities, json!({}));
    let end = indexing_ended(&mut second);
    // It read only the file that changed, not the workspace.
    assert_eq!(end["value"]["message"], "1 files read", "{end}");
    let result = editor_ask(&mut second, "how is the quokka parcel weighed?");
    assert_eq!(result["index"]["complete"], true, "{result}");
    assert_eq!(
        cited_paths(&result).first().map(String::as_str),
        Some("src/m3/late.rs")
    );
    let result = editor_ask(&mut second, "where is the zanzibar route picked?");
    assert_eq!(
        cited_paths(&result).first().map(String::as_str),
        Some("src/answer.rs")
    );

    // The command line beside them reads the same index too, and sees the change.
    let out = run(
        &["ask", "--json", "how is the quokka parcel weighed?"],
        ws.path(),
        &env,
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let result: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(
        cited_paths(&result).first().map(String::as_str),
        Some("src/m3/late.rs")
    );
    let out = run(&["index", "--json"], ws.path(), &env);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let report: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(report["filesRead"], 1, "{report}");
    assert_eq!(report["files"], 1_502, "{report}");
    second.shutdown();
    first.shutdown();
}

#[test]
fn a_root_that_is_not_a_project_is_not_indexed_and_the_user_is_told() {
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap().to_string();
    let mut client = LspClient::spawn(
        Path::new(BIN),
        Path::new("/"),
        &[("COPILOT_LS_CACHE_DIR", &cache_dir)],
    );
    client.initialize(Path::new("/"), json!({}), json!({}));
    let message = client.notification("window/showMessage", |m| {
        m["message"]
            .as_str()
            .unwrap_or("")
            .contains("does not index /")
    });
    assert_eq!(message["type"], 2, "a warning: {message}");
    let result = editor_ask(&mut client, "where is the kernel log read?");
    assert_eq!(result["index"]["complete"], false);
    assert!(
        result["answer"]
            .as_str()
            .unwrap()
            .starts_with("copilot-ls does not index /"),
        "{result}"
    );
    client.shutdown();
    // Nothing was indexed: the cache holds no index.
    let entries: Vec<_> = std::fs::read_dir(cache.path()).unwrap().collect();
    assert!(entries.is_empty(), "{entries:?}");

    let mut acp = Acp::spawn(cache.path());
    let refused = acp
        .request("session/new", json!({"cwd": "/", "mcpServers": []}))
        .expect_err("a refusal");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("does not index /"),
        "{refused}"
    );
}

#[test]
fn a_relative_cache_dir_is_refused_and_nothing_is_written_in_the_workspace() {
    let ws = workspace(20, 0);
    let home = tempfile::tempdir().unwrap();
    let before = snapshot(ws.path());
    let out = run(
        &["ask", "--json", "where is the zanzibar route picked?"],
        ws.path(),
        &[
            ("COPILOT_LS_CACHE_DIR", ".cache/copilot"),
            ("HOME", home.path().to_str().unwrap()),
        ],
    );
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("COPILOT_LS_CACHE_DIR must be an absolute path"),
        "{}",
        out.stderr
    );
    assert_eq!(
        snapshot(ws.path()),
        before,
        "nothing written in the workspace"
    );
    // The default was used instead.
    assert!(home.path().join(".cache/copilot-ls").is_dir());
}
