//! End-to-end: secrets in ordinary workspace files never reach the provider, the answer
//! or the log: tool results, the retrieved context of the first message and the
//! no-provider answer's excerpts carry markers instead.

use std::path::Path;

use copilot_ls_test_support::fake_provider::FakeProvider;
use copilot_ls_test_support::lsp_client::LspClient;
use copilot_ls_test_support::secrets::cases;
use copilot_ls_test_support::workspace::temp_workspace;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");

/// Secret-shaped values, assembled so this source holds none of them whole.
fn secrets() -> Vec<String> {
    vec![
        ["AKIA", "Z7QXW2PLMN4RT8VB"].concat(),
        ["ghp_", "wWPw5k4aXcaT4fNP0UcnZwJUVFk6LO0pINUx"].concat(),
        ["sk-", "proj-", "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXyZ0aBcD"].concat(),
        ["MIIEvQIBADANBgkqhkiG9w0BAQEF", "AASCBKcwggSjAgEAAoIBAQC7"].concat(),
    ]
}

/// A workspace with a config file full of secrets next to the fixture's code.
fn workspace_with_secrets() -> tempfile::TempDir {
    let ws = temp_workspace();
    let s = secrets();
    let config = format!(
        "# Deployment settings for the rate limiter service\nregion: eu-west-1\naccess_key_id: {}\ngithub_token: {}\nopenai: {}\ntls_key: |\n  -----BEGIN PRIVATE KEY-----\n  {}\n  -----END PRIVATE KEY-----\n",
        s[0], s[1], s[2], s[3]
    );
    std::fs::create_dir_all(ws.path().join("deploy")).unwrap();
    std::fs::write(ws.path().join("deploy/settings.yaml"), config).unwrap();
    ws
}

fn assert_clean(what: &str, text: &str) {
    for secret in secrets() {
        assert!(!text.contains(&secret), "{what} holds {secret}: {text}");
    }
}

#[test]
fn secrets_in_files_reach_neither_the_provider_nor_the_answer_nor_the_log() {
    let read =
        json!({"id": "c1", "name": "read_file", "arguments": {"path": "deploy/settings.yaml"}});
    let search = json!({"id": "c2", "name": "search_code", "arguments": {"pattern": "token|key"}});
    let fake = FakeProvider::start(json!({"steps": [
        {"tool_calls": [read, search]},
        {"text": "The deployment settings are in deploy/settings.yaml:1."},
    ]}));
    let ws = workspace_with_secrets();
    let mut client = LspClient::spawn(Path::new(BIN), ws.path(), &[("TEST_PROVIDER_KEY", "k")]);
    let options = json!({
        "provider": "openai", "baseUrl": fake.openai_base_url(), "model": "m",
        "apiKeyEnv": "TEST_PROVIDER_KEY",
    });
    client.initialize(ws.path(), json!({}), options);
    let result = client
        .request(
            "copilot/ask",
            json!({"question": "what deployment settings, tokens and keys are there?"}),
        )
        .unwrap();
    let requests = fake.requests();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    let second = requests[1].body.to_string();
    assert!(second.contains("[redacted: private key]"), "{second}");
    assert!(second.contains("[redacted: aws access key]"), "{second}");
    assert!(second.contains("[redacted: github token]"), "{second}");
    assert!(second.contains("[redacted: openai key]"), "{second}");
    for request in &requests {
        assert_clean("a provider request", &request.body.to_string());
    }
    assert_clean("the result", &result.to_string());
    let (_, stderr, log) = client.shutdown();
    assert_clean("the log", &stderr);
    assert_clean("the messages", &Value::Array(log).to_string());
}

#[test]
fn the_no_provider_answer_shows_excerpts_with_secrets_redacted() {
    let ws = workspace_with_secrets();
    let mut client = LspClient::spawn(Path::new(BIN), ws.path(), &[]);
    client.initialize(ws.path(), json!({}), json!({"provider": "none"}));
    let result = client
        .request(
            "copilot/ask",
            json!({"question": "deployment settings access key github token tls key"}),
        )
        .unwrap();
    let answer = result["answer"].as_str().unwrap();
    assert!(answer.contains("deploy/settings.yaml"), "{answer}");
    assert!(answer.contains("[redacted: "), "{answer}");
    assert_clean("the answer", &result.to_string());
    client.shutdown();
}

/// `copilot-ls tool search_code ARGS` in `ws`: its text.
fn search(ws: &Path, args: Value) -> String {
    tool(ws, "search_code", args)
}

/// `copilot-ls tool NAME ARGS` in `ws`: its text.
fn tool(ws: &Path, name: &str, args: Value) -> String {
    let cache = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(BIN)
        .args(["tool", name, &args.to_string(), "--workspace"])
        .arg(ws)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("COPILOT_LS_CACHE_DIR", cache.path())
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_search_neither_shows_nor_counts_a_match_inside_a_secret() {
    // A file of one-line secrets is redacted line by line (only the lines that
    // matched), one with a key block whole: either way a piece of a secret is found
    // nowhere, counts included, while the same search finds the ordinary lines.
    let ws = workspace_with_secrets();
    let s = secrets();
    let token_only = format!("# tokens\nGITHUB_TOKEN = \"{}\"\nconfig = load()\n", s[1]);
    std::fs::write(ws.path().join("deploy/tokens.py"), token_only).unwrap();
    for piece in [&s[1][4..20], &s[0][4..16], &s[3][10..30]] {
        let out = search(ws.path(), json!({"pattern": piece, "case_sensitive": true}));
        assert!(out.starts_with("(no matches"), "{piece}: {out}");
    }
    let out = search(ws.path(), json!({"pattern": "token", "path": "deploy"}));
    assert_clean("search_code", &out);
    assert!(
        out.contains("deploy/tokens.py:2: GITHUB_TOKEN = \"[redacted: github token]\""),
        "{out}"
    );
    assert!(
        out.contains("deploy/settings.yaml:4: github_token: [redacted"),
        "{out}"
    );
}

#[test]
fn a_file_past_the_read_limit_is_searched_as_a_stream_and_redacted_all_the_same() {
    // Over 16 MB (`MAX_READ_BYTES`): searched as a stream, each matching line redacted
    // alone, counted as shown.
    let ws = tempfile::tempdir().unwrap();
    let s = secrets();
    let mut text = String::with_capacity(18 << 20);
    let filler = "filler line with some words to pad the file out to its size\n";
    let mut expected = 0;
    for i in 0..300_000 {
        if i % 60_000 == 0 {
            text.push_str(&format!("needle {i}: github_token = \"{}\"\n", s[1]));
            expected += 1;
        } else if i % 50_000 == 7 {
            text.push_str(&format!("a plain needle {i}\n"));
            expected += 1;
        } else {
            text.push_str(filler);
        }
    }
    assert!(text.len() > 16 << 20);
    std::fs::write(ws.path().join("big.log"), &text).unwrap();
    let out = search(ws.path(), json!({"pattern": "needle"}));
    assert_clean("search_code", &out);
    assert_eq!(out.lines().count(), expected, "{out}");
    assert!(
        out.contains("big.log:60001: needle 60000: github_token = \"[redacted: github token]\""),
        "{out}"
    );
    assert!(out.contains("big.log:50008: a plain needle 50007"), "{out}");
    let piece = &s[1][4..20];
    let out = search(ws.path(), json!({"pattern": piece, "case_sensitive": true}));
    assert!(out.starts_with("(no matches"), "{out}");
}

#[test]
fn search_code_shows_each_line_as_read_file_does() {
    // A secret whose rule's keyword stands on another line of the file (discord.js
    // named at the top, the token on `client.login(…)`'s line), keys of a list spread
    // over lines, an HS256 key: every line a search shows reads as read_file shows it,
    // and holds no planted value.
    let ws = tempfile::tempdir().unwrap();
    let kinds = [
        "discord.js client.login token",
        "discord.py bot.run token",
        "hardhat accounts over several lines",
        "jwt.sign with an hs256 secret",
        "wireguard preshared key",
        "pgpass line",
        "nginx basic authorization header",
        "telegram bot token in an api url",
    ];
    let planted: Vec<_> = cases(5)
        .into_iter()
        .filter(|c| kinds.contains(&c.kind))
        .collect();
    assert_eq!(planted.len(), kinds.len());
    for (i, case) in planted.iter().enumerate() {
        let path = format!("case{i}.{}", case.ext);
        std::fs::write(ws.path().join(&path), &case.text).unwrap();
        let read = tool(ws.path(), "read_file", json!({"path": path}));
        let searched = search(
            ws.path(),
            json!({"pattern": ".", "regex": true, "path": path}),
        );
        for value in &case.values {
            assert!(
                !read.contains(value.as_str()),
                "read_file, {}: {read}",
                case.kind
            );
            assert!(
                !searched.contains(value.as_str()),
                "search_code, {}: {searched}",
                case.kind
            );
        }
        for line in searched.lines() {
            let prefix = format!("{path}:");
            let Some((number, text)) = line
                .strip_prefix(&prefix)
                .and_then(|rest| rest.split_once(": "))
            else {
                continue;
            };
            let shown = format!("{number}\t{text}");
            assert!(
                read.lines().any(|l| l.trim_end() == shown.trim_end()),
                "{}: search shows {line:?}, read_file:\n{read}",
                case.kind
            );
        }
    }
}
