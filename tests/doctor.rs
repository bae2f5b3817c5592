//! End-to-end: `copilot-ls doctor` and the LSP's `copilot.doctor` (PROTOCOL.md section
//! 10). With no provider it warns and exits 0 (answers list places); it names where each
//! setting came from, checks the endpoint and the model against the fake provider's
//! listing, fails on an endpoint that refuses or never answers (within the 3 s probe)
//! and on a missing key, and never shows a key's value. Over LSP the checks are for the
//! settings the editor sent.

use std::path::Path;
use std::process::Command;

use copilot_ls_test_support::fake_provider::FakeProvider;
use copilot_ls_test_support::lsp_client::LspClient;
use copilot_ls_test_support::workspace::temp_workspace;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");
const KEY: &str = "sk-doctor-test-value-never-shown";

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn doctor(ws: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let cache = tempfile::tempdir().unwrap();
    let mut command = Command::new(BIN);
    command
        .arg("doctor")
        .args(["--workspace", ws.to_str().unwrap()])
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("COPILOT_LS_CACHE_DIR", cache.path());
    for (k, v) in env {
        command.env(k, v);
    }
    let output = command.output().unwrap();
    Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// `{name: (status, detail)}` of a `--json` run.
fn checks(run: &Run) -> Vec<(String, String, String)> {
    let value: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("one JSON object, not {:?}: {e}", run.stdout));
    checks_of(&value)
}

fn checks_of(value: &Value) -> Vec<(String, String, String)> {
    value["checks"]
        .as_array()
        .unwrap_or_else(|| panic!("{value}"))
        .iter()
        .map(|c| {
            let field = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            (field("name"), field("status"), field("detail"))
        })
        .collect()
}

fn find<'a>(checks: &'a [(String, String, String)], name: &str) -> &'a (String, String, String) {
    checks
        .iter()
        .find(|c| c.0 == name)
        .unwrap_or_else(|| panic!("no {name} check: {checks:#?}"))
}

#[test]
fn with_no_provider_it_warns_and_an_ask_would_still_work() {
    let ws = temp_workspace();
    let run = doctor(ws.path(), &[], &[]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.starts_with("warn  provider: none"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("ok    cache: "), "{}", run.stdout);
    assert!(
        run.stdout.contains("ok    instructions: "),
        "{}",
        run.stdout
    );
    let json = doctor(ws.path(), &["--json"], &[]);
    assert_eq!(json.code, Some(0));
    let found = checks(&json);
    assert_eq!(find(&found, "provider").1, "warn");
    assert_eq!(find(&found, "index").1, "ok");
}

#[test]
fn it_names_each_settings_source_and_checks_the_model_against_the_listing() {
    let fake = FakeProvider::start(json!({"steps": []}));
    let ws = temp_workspace();
    let url = fake.openai_base_url();
    let env = [
        ("OPENAI_API_KEY", KEY),
        ("COPILOT_LS_BASE_URL", url.as_str()),
        ("COPILOT_LS_MODEL", "fake-model"),
    ];
    let run = doctor(ws.path(), &["--json"], &env);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    let found = checks(&run);
    assert_eq!(
        find(&found, "provider").2,
        "openai (detected: OPENAI_API_KEY is set)"
    );
    assert_eq!(find(&found, "model").2, "fake-model (COPILOT_LS_MODEL)");
    assert_eq!(
        find(&found, "baseUrl").2,
        format!("{url} (COPILOT_LS_BASE_URL)")
    );
    assert_eq!(find(&found, "apiKey").2, "OPENAI_API_KEY is set");
    assert_eq!(find(&found, "endpoint").1, "ok", "{found:#?}");
    // A model the server does not list: a warning naming the ones it does.
    let env = [
        ("OPENAI_API_KEY", KEY),
        ("COPILOT_LS_BASE_URL", url.as_str()),
        ("COPILOT_LS_MODEL", "gpt-nope"),
    ];
    let run = doctor(ws.path(), &[], &env);
    assert_eq!(run.code, Some(0), "{}", run.stdout);
    assert!(
        run.stdout.contains("warn  endpoint: ")
            && run
                .stdout
                .contains("gpt-nope is not among its models (fake-model, fake-model-large)"),
        "{}",
        run.stdout
    );
    for shown in [&run.stdout, &run.stderr] {
        assert!(!shown.contains(KEY), "the key's value was shown: {shown}");
    }
}

#[test]
fn an_endpoint_that_refuses_or_never_answers_fails_within_the_probe() {
    let ws = temp_workspace();
    // Bound and never accepted: the connection is made and no answer ever comes.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}/v1", silent.local_addr().unwrap());
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_url = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    for (url, expected) in [
        (&silent_url, "did not answer within 3 s"),
        (&closed_url, "cannot connect"),
    ] {
        let started = std::time::Instant::now();
        let env = [
            ("OPENAI_API_KEY", KEY),
            ("COPILOT_LS_BASE_URL", url.as_str()),
        ];
        let run = doctor(ws.path(), &["--json"], &env);
        assert_eq!(run.code, Some(1), "{}", run.stdout);
        let endpoint = find(&checks(&run), "endpoint").clone();
        assert_eq!(endpoint.1, "fail");
        assert!(endpoint.2.contains(expected), "{endpoint:?}");
        // The probe is bounded (a generous margin for a loaded machine).
        assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
    }
}

#[test]
fn a_missing_key_for_a_remote_endpoint_fails_without_probing_it() {
    let ws = temp_workspace();
    let env = [
        ("COPILOT_LS_PROVIDER", "anthropic"),
        ("COPILOT_LS_BASE_URL", "https://llm.example.invalid"),
    ];
    let run = doctor(ws.path(), &[], &env);
    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("FAIL  apiKey: ANTHROPIC_API_KEY is not set: export it with your key"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("warn  endpoint: not checked until the key is set"),
        "{}",
        run.stdout
    );
    // A setting with a typo is named first, with the value kept.
    let run = doctor(ws.path(), &[], &[("COPILOT_LS_MAX_STEPS", "many")]);
    assert!(
        run.stdout.starts_with("warn  settings: environment: "),
        "{}",
        run.stdout
    );
}

#[test]
fn the_lsp_server_checks_the_settings_the_editor_sent() {
    let fake = FakeProvider::start(json!({"steps": []}));
    let ws = temp_workspace();
    let mut client = LspClient::spawn(Path::new(BIN), ws.path(), &[("DOCTOR_TEST_KEY", KEY)]);
    let options = json!({
        "provider": "openai", "baseUrl": fake.openai_base_url(), "model": "fake-model-large",
        "apiKeyEnv": "DOCTOR_TEST_KEY", "maxSteps": "lots",
    });
    let init = client.initialize(ws.path(), json!({}), options);
    let commands = &init["capabilities"]["executeCommandProvider"]["commands"];
    assert!(
        commands
            .as_array()
            .unwrap()
            .contains(&json!("copilot.doctor")),
        "{init}"
    );
    let result = client
        .request(
            "workspace/executeCommand",
            json!({"command": "copilot.doctor", "arguments": []}),
        )
        .unwrap();
    let found = checks_of(&result);
    assert_eq!(
        find(&found, "baseUrl").2,
        format!("{} (the editor's settings)", fake.openai_base_url())
    );
    assert_eq!(
        find(&found, "model").2,
        "fake-model-large (the editor's settings)"
    );
    assert_eq!(find(&found, "apiKey").2, "DOCTOR_TEST_KEY is set");
    assert_eq!(find(&found, "endpoint").1, "ok", "{found:#?}");
    assert!(
        find(&found, "settings").2.contains("maxSteps"),
        "{found:#?}"
    );
    assert!(!result.to_string().contains(KEY));
    // Each check carries the editor's form of its advice too (issue 55 item 10).
    assert!(
        result["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["editorDetail"].is_string()),
        "{result}"
    );
    let (status, _, _) = client.shutdown();
    assert!(status.success());
}

/// A server answering every request with `status`, recording each request line: an
/// endpoint without a model listing (404) or refusing the key (401, 403).
fn answering(status: &'static str) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            record.lock().unwrap().push(line.trim().to_string());
            // The rest of the head (a GET has no body).
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                    break;
                }
            }
            let body = "{\"error\":{\"message\":\"no such route\"}}";
            let mut stream = stream;
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (url, seen)
}

/// Issue 55 item 11: an endpoint without `GET /models` is a warning (asks may still
/// work), not a failure; a refused key stays a failure. The doctor sends no chat request.
#[test]
fn an_endpoint_without_a_model_listing_warns_and_a_refused_key_fails() {
    let ws = temp_workspace();
    let (url, seen) = answering("404 Not Found");
    let env = [
        ("OPENAI_API_KEY", KEY),
        ("COPILOT_LS_BASE_URL", url.as_str()),
    ];
    let run = doctor(ws.path(), &[], &env);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(&format!(
            "warn  endpoint: {url} cannot list models (GET /models answered 404); asks may still work"
        )),
        "{}",
        run.stdout
    );
    let requests = seen.lock().unwrap().clone();
    assert!(
        !requests.is_empty()
            && requests
                .iter()
                .all(|r| r.starts_with("GET ") && r.contains("/models")),
        "{requests:?}"
    );
    for status in ["401 Unauthorized", "403 Forbidden"] {
        let (url, _) = answering(status);
        let env = [
            ("OPENAI_API_KEY", KEY),
            ("COPILOT_LS_BASE_URL", url.as_str()),
        ];
        let run = doctor(ws.path(), &["--json"], &env);
        assert_eq!(run.code, Some(1), "{status}: {}", run.stdout);
        assert_eq!(find(&checks(&run), "endpoint").1, "fail", "{}", run.stdout);
    }
}

/// Issue 55 item 10: each check's advice in both forms: `detail` names environment
/// variables (what the command line prints), `editorDetail` the editor's settings.
#[test]
fn each_check_carries_command_line_and_editor_advice() {
    let ws = temp_workspace();
    let json = doctor(ws.path(), &["--json"], &[]);
    let value: Value = serde_json::from_str(&json.stdout).unwrap();
    let provider = value["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "provider")
        .unwrap()
        .clone();
    let detail = provider["detail"].as_str().unwrap();
    let editor = provider["editorDetail"].as_str().unwrap();
    assert!(
        detail.contains("COPILOT_LS_PROVIDER with COPILOT_LS_BASE_URL"),
        "{detail}"
    );
    for setting in [
        "copilot-ls.provider",
        "copilot-ls.baseUrl",
        "copilot-ls.apiKeyEnv",
    ] {
        assert!(editor.contains(setting), "{setting} in {editor}");
    }
    assert!(!editor.contains("COPILOT_LS_PROVIDER"), "{editor}");
    // Every check has both; where nothing is to be set they are the same.
    for check in value["checks"].as_array().unwrap() {
        assert!(check["editorDetail"].is_string(), "{check}");
    }
    // The command line prints the command-line form.
    let text = doctor(ws.path(), &[], &[]);
    assert!(text.stdout.contains(detail), "{}", text.stdout);
    assert!(
        !text.stdout.contains("copilot-ls.apiKeyEnv"),
        "{}",
        text.stdout
    );
    // A missing key: export it (command line), or name it in copilot-ls.apiKeyEnv.
    let env = [
        ("COPILOT_LS_PROVIDER", "anthropic"),
        ("COPILOT_LS_BASE_URL", "https://llm.example.invalid"),
    ];
    let value: Value = serde_json::from_str(&doctor(ws.path(), &["--json"], &env).stdout).unwrap();
    let key = value["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "apiKey")
        .unwrap()
        .clone();
    assert!(
        key["editorDetail"]
            .as_str()
            .unwrap()
            .contains("copilot-ls.apiKeyEnv"),
        "{key}"
    );
}
