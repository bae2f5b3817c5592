//! End-to-end: the command line. `tool` runs each tool as the model would; `ask` runs
//! the same engine headless with the documented exit codes.

use std::path::Path;
use std::process::{Command, Output};

use copilot_ls_test_support::fake_provider::FakeProvider;
use copilot_ls_test_support::workspace::temp_workspace;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");

fn run(args: &[&str], cwd: &Path, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn every_tool_runs_from_the_command_line() {
    let ws = temp_workspace();
    let dir = ws.path().to_str().unwrap();
    let cases: Vec<(&str, Value, &str)> = vec![
        ("read_file", json!({"path": "src/config.rs", "start_line": 4, "end_line": 5}), "4\tpub struct Config {\n5\t    pub port: u16,\n(lines 4-5 of 23)\n"),
        ("list_directory", json!({}), ".gitignore\nCargo.toml\nREADME.md\ndocs/\nsrc/\n"),
        ("search_code", json!({"pattern": "TOLLBOOTH_PORT"}), "src/config.rs:11:     /// Reads `TOLLBOOTH_PORT`, `TOLLBOOTH_BURST` and `TOLLBOOTH_RPS`.\nsrc/config.rs:14:             port: read(\"TOLLBOOTH_PORT\", 8080),\n"),
        ("search_code", json!({"pattern": "fn (new|check)", "regex": true, "path": "src"}), "src/rate_limit.rs:15:     pub fn new(capacity: f64, refill_per_sec: f64) -> Self {\nsrc/rate_limit.rs:51:     pub fn new(capacity: f64, refill_per_sec: f64) -> Self {\nsrc/rate_limit.rs:56:     pub fn check(&mut self, client: &str) -> bool {\n"),
        ("search_code", json!({"pattern": "tokenbucket", "case_sensitive": true}), "(no matches for tokenbucket)"),
        ("find_files", json!({"pattern": "**/*.md"}), "README.md\ndocs/notes.md\n"),
        ("find_files", json!({"pattern": "*.rs"}), "src/config.rs\nsrc/main.rs\nsrc/rate_limit.rs\n"),
        ("list_open_buffers", json!({}), "(no documents are open in the editor)"),
    ];
    for (tool, args, expected) in cases {
        let output = run(
            &["tool", tool, &args.to_string(), "--workspace", dir],
            ws.path(),
            &[],
        );
        assert!(output.status.success(), "{tool}: {output:?}");
        assert_eq!(
            stdout(&output).trim_end(),
            expected.trim_end(),
            "{tool} {args}"
        );
    }
    // Errors are `Error: ` strings and a non-zero exit.
    let output = run(
        &[
            "tool",
            "read_open_buffer",
            r#"{"path":"src/main.rs"}"#,
            "--workspace",
            dir,
        ],
        ws.path(),
        &[],
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).starts_with("Error: src/main.rs is not open in the editor"));
    let output = run(&["tool", "read_file", r#"{"path":".env"}"#], ws.path(), &[]);
    assert!(
        stdout(&output).starts_with("Error: access to secret files is not allowed"),
        "{output:?}"
    );
    let output = run(&["tool", "nope"], ws.path(), &[]);
    assert!(stdout(&output).starts_with("Error: unknown tool `nope`"));
}

#[test]
fn the_tool_command_names_the_same_tools_in_its_help_and_its_error() {
    let ws = temp_workspace();
    let unknown = stdout(&run(&["tool", "nope"], ws.path(), &[]));
    let listed: Vec<&str> = unknown
        .trim()
        .split_once("the tools are: ")
        .map(|(_, names)| names.split(", ").collect())
        .unwrap_or_default();
    // MCP's headline tool runs here too; the ask's `answer` is not a lookup.
    assert!(listed.contains(&"locate"), "{unknown}");
    assert!(listed.contains(&"git_log"), "{unknown}");
    assert!(!listed.contains(&"answer"), "{unknown}");
    let help = stdout(&run(&["tool", "--help"], ws.path(), &[]));
    for name in &listed {
        assert!(
            help.contains(name),
            "`tool --help` leaves out {name}:\n{help}"
        );
    }
    let answer = run(&["tool", "answer", "{}"], ws.path(), &[]);
    assert_eq!(answer.status.code(), Some(1));
    assert!(stdout(&answer).starts_with("Error: unknown tool `answer`"));
}

#[test]
fn read_file_reads_long_files_in_windows_of_400_lines() {
    let ws = temp_workspace();
    let body: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(ws.path().join("long.txt"), body).unwrap();
    let output = run(
        &["tool", "read_file", r#"{"path":"long.txt"}"#],
        ws.path(),
        &[],
    );
    let text = stdout(&output);
    assert!(text.starts_with("1\tline 1\n"));
    assert!(text.contains("400\tline 400\n") && !text.contains("401\tline 401"));
    assert!(
        text.contains("call read_file with start_line=401 to read on"),
        "{text}"
    );
    let output = run(
        &[
            "tool",
            "read_file",
            r#"{"path":"long.txt","start_line":990}"#,
        ],
        ws.path(),
        &[],
    );
    assert!(stdout(&output).ends_with("1000\tline 1000\n(lines 990-1000 of 1000)\n"));
    // Very long lines: the window stops early (by bytes) and still says how to read on.
    let wide: String = (1..=400)
        .map(|i| format!("{i:04}{}\n", "x".repeat(996)))
        .collect();
    std::fs::write(ws.path().join("wide.txt"), wide).unwrap();
    let text = stdout(&run(
        &["tool", "read_file", r#"{"path":"wide.txt"}"#],
        ws.path(),
        &[],
    ));
    assert!(text.len() < 70 * 1024, "{}", text.len());
    assert!(
        text.contains("66\t0066") && !text.contains("\n67\t0067"),
        "cut after 64 KiB"
    );
    assert!(text.contains("call read_file with start_line=67 to read on"));
}

/// Runs the binary with `input` on stdin; once stdout holds the reply to request 1,
/// closes stdin and waits for the exit.
fn run_until_first_reply(args: &[&str], cwd: &Path, input: &str) -> Output {
    use std::io::{Read, Write};
    let cache = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("COPILOT_LS_CACHE_DIR", cache.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("\"id\":1") {
        match out.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
    drop(stdin);
    let mut output = child.wait_with_output().unwrap();
    output.stdout = seen;
    output
}

#[test]
fn every_protocol_mode_is_quiet_on_stderr_by_default() {
    let ws = temp_workspace();
    let frame = |body: Value| {
        let body = body.to_string();
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    };
    let lsp = [
        frame(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"capabilities": {}, "rootUri": null}})),
        frame(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}})),
    ]
    .concat();
    let mcp = format!(
        "{}\n{}\n",
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    );
    let acp = format!(
        "{}\n",
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": {}}})
    );
    for (args, input) in [
        (vec!["serve"], lsp),
        (vec!["mcp", "--workspace", ws.path().to_str().unwrap()], mcp),
        (vec!["acp"], acp),
    ] {
        let output = run_until_first_reply(&args, ws.path(), &input);
        let out = stdout(&output);
        assert!(out.contains("\"id\":1"), "{args:?} answered nothing: {out}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        // MCP and ACP clients show stderr to users as errors: warnings only.
        assert!(
            !stderr.contains("INFO") && !stderr.contains("DEBUG"),
            "{args:?} logged below warnings by default:\n{stderr}"
        );
    }
}

#[test]
fn version_help_and_usage_errors() {
    let ws = temp_workspace();
    // The version and the commit built from: this checkout's HEAD when it has one.
    let version = run(&["--version"], ws.path(), &[]);
    let shown = stdout(&version);
    let commit = shown
        .trim()
        .strip_prefix(&format!("copilot-ls {} (", env!("CARGO_PKG_VERSION")))
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{shown}"));
    assert!(
        commit == "unknown" || commit.len() == 10 && commit.bytes().all(|b| b.is_ascii_hexdigit()),
        "{shown}"
    );
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    if let Ok(head) = std::fs::read_to_string(repo.join(".git/HEAD")) {
        let id = match head.trim().strip_prefix("ref: ") {
            Some(name) => std::fs::read_to_string(repo.join(".git").join(name)).unwrap_or_default(),
            None => head.clone(),
        };
        if id.len() >= 10 {
            assert_eq!(commit, &id[..10], "{shown}");
        }
    }
    let help = run(&["--help"], ws.path(), &[]);
    assert!(
        help.status.success() && stdout(&help).contains("ask") && stdout(&help).contains("tool")
    );
    assert_eq!(
        run(&["ask"], ws.path(), &[]).status.code(),
        Some(2),
        "missing question"
    );
    assert_eq!(
        run(&["ask", "--bogus", "q"], ws.path(), &[]).status.code(),
        Some(2),
        "unknown flag"
    );
    assert_eq!(
        run(&["frobnicate"], ws.path(), &[]).status.code(),
        Some(2),
        "unknown subcommand"
    );
    assert_eq!(
        run(&["ask", "--max-steps", "0", "q"], ws.path(), &[])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn ask_without_keys_lists_places_and_json_prints_one_ask_result() {
    let ws = temp_workspace();
    let output = run(
        &["ask", "where is the rate limiter's token bucket?"],
        ws.path(),
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    let text = stdout(&output);
    assert!(text.starts_with("No model is configured"), "{text}");
    let output = run(
        &[
            "ask",
            "--json",
            "--workspace",
            ws.path().to_str().unwrap(),
            "where",
            "is",
            "the",
            "port",
            "read?",
        ],
        Path::new("/"),
        &[],
    );
    assert!(output.status.success());
    let result: Value = serde_json::from_slice(&output.stdout).expect("exactly one JSON object");
    assert_eq!(result["stopReason"], "no_provider");
    for key in ["conversationId", "answer", "citations", "edits", "steps"] {
        assert!(result.get(key).is_some(), "{key} in {result}");
    }
}

#[test]
fn a_no_model_answer_cites_defining_lines_with_an_excerpt_of_each_place() {
    let ws = temp_workspace();
    let output = run(
        &["ask", "--json", "How are tokens refilled?"],
        ws.path(),
        &[],
    );
    assert!(output.status.success(), "{output:?}");
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    let first = &result["citations"][0];
    // `fn refill` is on line 35 of the fixture; its chunk starts above it.
    assert_eq!(first["path"], "src/rate_limit.rs");
    assert_eq!(first["line"], 35, "{result:#}");
    let answer = result["answer"].as_str().unwrap();
    assert!(
        answer.contains("`src/rate_limit.rs:35`")
            && answer.contains("```rs\nfn refill(&mut self) {"),
        "{answer}"
    );
}

#[test]
fn ask_with_a_provider_prints_answer_and_citation_lines_or_fails_with_exit_1() {
    let fake = FakeProvider::start(json!({"steps": [
        {"tool_calls": [{"id": "1", "name": "answer", "arguments": {"answer": "The port comes from TOLLBOOTH_PORT.", "citations": [{"path": "src/config.rs", "line": 14, "note": "port"}]}}]},
        {"status": 401, "body": "{\"error\":{\"message\":\"bad key\"}}"}
    ]}));
    let ws = temp_workspace();
    let base_url = fake.openai_base_url();
    let env = [
        ("COPILOT_LS_PROVIDER", "openai"),
        ("COPILOT_LS_BASE_URL", base_url.as_str()),
        ("OPENAI_API_KEY", "sk-cli-secret"),
    ];
    let output = run(&["ask", "Where does the port come from?"], ws.path(), &env);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        stdout(&output),
        "The port comes from TOLLBOOTH_PORT.\n\nsrc/config.rs:14: port\n"
    );
    let output = run(&["ask", "again?"], ws.path(), &env);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("provider returned 401"), "{stderr}");
    assert!(!stderr.contains("sk-cli-secret") && !stdout(&output).contains("sk-cli-secret"));
}

/// Section 11: text-mode `ask` prints each suggested edit after the citation lines, as a
/// unified diff headed `edit <path>:<line>-<endLine>`, and never writes the file;
/// `--json` is unchanged (the edit is in `edits`).
#[test]
fn ask_prints_each_suggested_edit_as_a_diff_and_writes_nothing() {
    let script = json!({"steps": [
        {"tool_calls": [{"id": "1", "name": "propose_edit", "arguments": {
            "path": "src/config.rs",
            "old_text": "            burst: read(\"TOLLBOOTH_BURST\", 10),\n",
            "new_text": "            burst: read(\"TOLLBOOTH_BURST\", 20),\n",
            "title": "Raise the default burst"}}]},
        {"tool_calls": [{"id": "2", "name": "answer", "arguments": {"answer": "Raise the burst.", "citations": [{"path": "src/config.rs", "line": 15, "note": "the burst"}]}}]}
    ]});
    let ws = temp_workspace();
    let before = std::fs::read_to_string(ws.path().join("src/config.rs")).unwrap();
    let fake = FakeProvider::start(script.clone());
    let base_url = fake.openai_base_url();
    let env = [
        ("COPILOT_LS_PROVIDER", "openai"),
        ("COPILOT_LS_BASE_URL", base_url.as_str()),
        ("OPENAI_API_KEY", "sk-test"),
    ];
    let output = run(&["ask", "How big is a burst?"], ws.path(), &env);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        stdout(&output),
        "Raise the burst.\n\nsrc/config.rs:15: the burst\n\n\
         edit src/config.rs:15-15\n\
         Raise the default burst\n\
         --- a/src/config.rs\n\
         +++ b/src/config.rs\n\
         @@ -12,7 +12,7 @@\n\
         \x20    pub fn from_env() -> Config {\n\
         \x20        Config {\n\
         \x20            port: read(\"TOLLBOOTH_PORT\", 8080),\n\
         -            burst: read(\"TOLLBOOTH_BURST\", 10),\n\
         +            burst: read(\"TOLLBOOTH_BURST\", 20),\n\
         \x20            requests_per_second: read(\"TOLLBOOTH_RPS\", 5),\n\
         \x20        }\n\
         \x20    }\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("src/config.rs")).unwrap(),
        before,
        "the command line never writes"
    );
    // `--json`: the one AskResult, the edit in `edits`, no diff text around it.
    let fake = FakeProvider::start(script);
    let base_url = fake.openai_base_url();
    let env = [
        ("COPILOT_LS_PROVIDER", "openai"),
        ("COPILOT_LS_BASE_URL", base_url.as_str()),
        ("OPENAI_API_KEY", "sk-test"),
    ];
    let output = run(&["ask", "--json", "How big is a burst?"], ws.path(), &env);
    assert!(output.status.success(), "{output:?}");
    let result: Value = serde_json::from_slice(&output.stdout).expect("exactly one JSON object");
    assert_eq!(result["edits"][0]["title"], "Raise the default burst");
    assert_eq!(result["edits"][0]["path"], "src/config.rs");
}

/// Issue 55 item 13: a provider that cannot be reached is retried, and each retry is
/// said once on stderr in words (`copilot-ls: cannot connect to URL: connection refused;
/// retrying in 0.4 s`), never as a raw log line or an OS error number.
#[test]
fn provider_retries_are_said_in_words_once_each() {
    let ws = temp_workspace();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let env = [
        ("COPILOT_LS_PROVIDER", "openai"),
        ("COPILOT_LS_BASE_URL", url.as_str()),
        ("OPENAI_API_KEY", "sk-test"),
    ];
    let output = run(&["ask", "Where does the port come from?"], ws.path(), &env);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let retries: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("retrying in"))
        .collect();
    assert_eq!(retries.len(), 2, "two retries, one line each: {stderr}");
    let said = format!("copilot-ls: cannot connect to {url}: connection refused; retrying in ");
    for line in &retries {
        let seconds = line
            .strip_prefix(said.as_str())
            .and_then(|rest| rest.strip_suffix(" s"))
            .unwrap_or_else(|| panic!("{line:?} in {stderr}"));
        assert!(
            seconds.parse::<f64>().is_ok() && seconds.contains('.'),
            "{line}"
        );
    }
    assert!(
        stderr.contains(&format!(
            "copilot-ls: the ask failed: cannot connect to {url}: connection refused"
        )),
        "{stderr}"
    );
    for raw in ["WARN", "copilot_ls::", "os error", " ms"] {
        assert!(!stderr.contains(raw), "{raw:?} in {stderr}");
    }
}
