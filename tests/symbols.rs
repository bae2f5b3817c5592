//! End-to-end: `file_outline` and `find_symbol` through the real binary, in every
//! language `syntax/` knows (`fixtures/symbols/`: one realistic file per language):
//! through `copilot-ls tool` (the persistent index in a temporary cache dir), and
//! through an LSP ask whose scripted model calls them on unsaved editor text and on
//! paths the sandbox refuses.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use copilot_ls_test_support::fake_provider::FakeProvider;
use copilot_ls_test_support::lsp_client::{copy_dir, file_uri, LspClient};
use copilot_ls_test_support::workspace::fixtures_dir;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");
const WAIT: Duration = Duration::from_secs(30);

/// A fresh copy of `fixtures/symbols`, with a canary outside it that a symlink inside
/// points at.
struct Fixture {
    _outer: tempfile::TempDir,
    root: std::path::PathBuf,
    cache: tempfile::TempDir,
}

fn fixture() -> Fixture {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    copy_dir(&fixtures_dir().join("symbols"), &root);
    let outside = outer.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("canary.rs"), "pub fn outside_canary() {}\n").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&outside, root.join("linked")).unwrap();
    Fixture {
        _outer: outer,
        root,
        cache: tempfile::tempdir().unwrap(),
    }
}

fn tool(fixture: &Fixture, name: &str, args: Value) -> (bool, String) {
    let output: Output = Command::new(BIN)
        .args([
            "tool",
            name,
            &args.to_string(),
            "--workspace",
            fixture.root.to_str().unwrap(),
        ])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("COPILOT_LS_CACHE_DIR", fixture.cache.path())
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

fn ok(fixture: &Fixture, name: &str, args: Value) -> String {
    let (success, out) = tool(fixture, name, args.clone());
    assert!(success, "{name} {args}: {out}");
    out
}

fn error(fixture: &Fixture, name: &str, args: Value) -> String {
    let (success, out) = tool(fixture, name, args.clone());
    assert!(
        !success && out.starts_with("Error: "),
        "{name} {args}: {out}"
    );
    out
}

/// Expected text: the lines without the indentation of the test source.
fn lines(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        out.push_str(line.strip_prefix("        ").unwrap_or(line));
        out.push('\n');
    }
    out
}

#[test]
fn file_outline_in_every_language_through_the_cli() {
    let f = fixture();
    let cases = [
        (
            "src/rate_limit.rs",
            "
        5-5 const MAX_TOKENS
        9-12 struct TokenBucket
        14-29 impl TokenBucket
          16-19 fn refill
          21-28 fn try_acquire
        31-33 trait Limiter
          32-32 fn check
        ",
        ),
        (
            "py/bucket.py",
            "
        4-4 constant DEFAULT_RATE
        7-19 class TokenBucket
          10-12 def __init__
          15-16 def create
          18-19 def refill
        22-24 def acquire
        ",
        ),
        (
            "js/bucket.js",
            "
        1-1 const MAX_RATE
        4-12 class TokenBucket
          5-7 method constructor
          9-11 method refill
        14-16 function createBucket
        ",
        ),
        (
            "ts/limiter.ts",
            "
        2-4 interface Limiter
          3-3 method tryAcquire
        6-6 type Rate
        8-11 enum Mode
        13-23 class TokenBucket
          16-18 method refill
          20-22 method tryAcquire
        ",
        ),
        (
            "ts/button.tsx",
            "
        3-3 type Props
        6-8 function RefillButton
        10-12 function App
        ",
        ),
        (
            "go/bucket.go",
            "
        4-4 const MaxTokens
        7-9 struct TokenBucket
        12-14 interface Limiter
          13-13 method TryAcquire
        17-19 func (TokenBucket) Refill
        21-24 func (TokenBucket) TryAcquire
        26-28 func NewTokenBucket
        ",
        ),
        (
            "java/RateLimiter.java",
            "
        4-26 class RateLimiter
          5-5 constant MAX_TOKENS
          8-14 class TokenBucket
            11-13 method refill
          16-16 enum Mode
          18-20 interface Clock
            19-19 method now
          23-25 method toString
        ",
        ),
        (
            "c/bucket.h",
            "
        5-7 struct token_bucket
        9-9 function bucket_refill
        ",
        ),
        (
            "c/bucket.c",
            "
        3-3 #define MAX_TOKENS
        6-9 function bucket_refill
        11-15 function bucket_try_acquire
        ",
        ),
        (
            "cpp/bucket.cpp",
            "
        3-20 namespace limits
          6-13 class TokenBucket
            8-8 method refill
            9-9 method tryAcquire
          16-18 method TokenBucket::refill
        ",
        ),
    ];
    for (path, expected) in cases {
        assert_eq!(
            ok(&f, "file_outline", json!({ "path": path })),
            lines(expected),
            "{path}"
        );
    }
    // An absolute path inside the root is a path like any other.
    let absolute = f.root.canonicalize().unwrap().join("go/bucket.go");
    assert!(ok(&f, "file_outline", json!({ "path": absolute })).contains("func NewTokenBucket"));

    // No outline: the extension is named. The sandbox refuses what it always refuses.
    let out = error(&f, "file_outline", json!({"path": "notes.md"}));
    assert!(out.contains("notes.md (extension .md)"), "{out}");
    assert!(error(&f, "file_outline", json!({"path": ".env"})).contains("secret"));
    assert!(error(&f, "file_outline", json!({"path": "secret.key"})).contains("secret"));
    let out = error(&f, "file_outline", json!({"path": "../outside/canary.rs"}));
    assert!(
        out.starts_with("Error: path is outside the workspace"),
        "{out}"
    );
    let out = error(&f, "file_outline", json!({"path": "linked/canary.rs"}));
    assert!(
        out.starts_with("Error: path is outside the workspace"),
        "{out}"
    );
    assert!(!out.contains("outside_canary"));
    assert!(error(&f, "file_outline", json!({"path": "src"})).contains("is a directory"));
    assert!(error(&f, "file_outline", json!({"path": "src/nope.rs"})).contains("no such file"));
    assert!(error(&f, "file_outline", json!({})).contains("invalid arguments"));
}

#[test]
fn a_definition_whose_whole_qualified_name_matches_comes_first() {
    // A method `TokenBucket::refill` above a free `fn refill` in the same module: asked
    // for `rate_limit::refill`, the free function is the whole qualified name.
    let f = fixture();
    let text = "pub struct TokenBucket;\n\nimpl TokenBucket {\n    pub fn refill(&mut self) {}\n}\n\npub fn refill(bucket: &mut TokenBucket) {\n    bucket.refill();\n}\n";
    std::fs::create_dir_all(f.root.join("lib")).unwrap();
    std::fs::write(f.root.join("lib/rate_limit.rs"), text).unwrap();
    assert_eq!(
        ok(
            &f,
            "find_symbol",
            json!({"name": "lib::rate_limit::refill"})
        ),
        lines(
            "
        lib/rate_limit.rs:7: function refill  pub fn refill(bucket: &mut TokenBucket) {
        lib/rate_limit.rs:4: method TokenBucket::refill  pub fn refill(&mut self) {}
        "
        )
    );
}

#[test]
fn find_symbol_in_every_language_through_the_cli_and_the_index() {
    let f = fixture();
    // Exact names first; every language's own notation for the qualified name.
    assert_eq!(
        ok(&f, "find_symbol", json!({"name": "refill"})),
        lines(
            "
        cpp/bucket.cpp:8: method limits::TokenBucket::refill  void refill();
        cpp/bucket.cpp:16: method limits::TokenBucket::refill  void TokenBucket::refill() {
        go/bucket.go:17: method TokenBucket.Refill  func (b *TokenBucket) Refill() {
        java/RateLimiter.java:11: method RateLimiter.TokenBucket.refill  public void refill() {
        js/bucket.js:9: method TokenBucket.refill  refill(now) {
        py/bucket.py:18: method TokenBucket.refill  def refill(self, now=None):
        src/rate_limit.rs:16: method TokenBucket::refill  pub fn refill(&mut self) {
        ts/limiter.ts:16: method TokenBucket.refill  refill(rate: Rate): void {
        ts/button.tsx:6: function RefillButton  export const RefillButton = ({ label }: Props) => {
        "
        )
    );
    // A container written either way, matched at any depth by its start.
    for query in ["TokenBucket.refill", "tokenbucket::REFILL", "Token.ref"] {
        let out = ok(&f, "find_symbol", json!({ "name": query }));
        assert_eq!(out.lines().count(), 8, "{query}: {out}");
        assert!(!out.contains("RefillButton"), "{query}: {out}");
    }
    assert_eq!(
        ok(
            &f,
            "find_symbol",
            json!({"name": "limits::TokenBucket::re"})
        ),
        lines(
            "
        cpp/bucket.cpp:8: method limits::TokenBucket::refill  void refill();
        cpp/bucket.cpp:16: method limits::TokenBucket::refill  void TokenBucket::refill() {
        "
        )
    );
    // A file's module is a container too (its folders and its stem).
    assert_eq!(
        ok(&f, "find_symbol", json!({"name": "rate_limit::refill"})),
        "src/rate_limit.rs:16: method TokenBucket::refill  pub fn refill(&mut self) {\n"
    );
    assert_eq!(
        ok(
            &f,
            "find_symbol",
            json!({"name": "py.bucket.TokenBucket.refill"})
        ),
        "py/bucket.py:18: method TokenBucket.refill  def refill(self, now=None):\n"
    );
    let out = ok(&f, "find_symbol", json!({"name": "bucket.refill"}));
    assert_eq!(out.lines().count(), 5, "{out}");
    assert!(out.lines().all(|l| l.contains("/bucket.")), "{out}");
    let out = ok(&f, "find_symbol", json!({"name": "no_such_module::refill"}));
    assert!(out.starts_with("No definitions found"), "{out}");
    assert_eq!(
        ok(&f, "find_symbol", json!({"name": "RateLimiter.TokenBucket"})),
        "java/RateLimiter.java:8: class RateLimiter.TokenBucket  public static class TokenBucket {\n"
    );
    // Kinds.
    let out = ok(
        &f,
        "find_symbol",
        json!({"name": "TokenBucket", "kind": "struct"}),
    );
    assert_eq!(
        out,
        lines(
            "
        go/bucket.go:7: struct TokenBucket  type TokenBucket struct {
        src/rate_limit.rs:9: struct TokenBucket  pub struct TokenBucket {
        "
        )
    );
    let interfaces = ok(&f, "find_symbol", json!({"name": "l", "kind": "interface"}));
    assert_eq!(
        interfaces,
        lines(
            "
        go/bucket.go:12: interface Limiter  type Limiter interface {
        ts/limiter.ts:2: interface Limiter  export interface Limiter {
        "
        )
    );
    for (name, kind, expected) in [
        ("Limiter", "trait", "src/rate_limit.rs:31: trait Limiter  pub trait Limiter {"),
        ("RateLimiter.Mode", "enum", "java/RateLimiter.java:16: enum RateLimiter.Mode  enum Mode { FIXED, BURST }"),
        ("Rate", "type", "ts/limiter.ts:6: type Rate  export type Rate = { perSecond: number };"),
        ("limits", "module", "cpp/bucket.cpp:3: module limits  namespace limits {"),
        ("acquire", "function", "py/bucket.py:22: function acquire  def acquire(bucket):"),
        ("bucket_try", "function", "c/bucket.c:11: function bucket_try_acquire  int bucket_try_acquire(struct token_bucket *b)"),
        ("App", "function", "ts/button.tsx:10: function App  export function App() {"),
        ("MAX_RATE", "constant", "js/bucket.js:1: constant MAX_RATE  const MAX_RATE = 10;"),
        ("NewToken", "function", "go/bucket.go:26: function NewTokenBucket  func NewTokenBucket() *TokenBucket {"),
    ] {
        let out = ok(&f, "find_symbol", json!({"name": name, "kind": kind}));
        assert_eq!(out, format!("{expected}\n"), "{name} {kind}");
    }
    let out = error(&f, "find_symbol", json!({"name": "x", "kind": "widget"}));
    assert!(out.contains("unknown kind `widget`"), "{out}");
    assert!(error(&f, "find_symbol", json!({"name": " "})).contains("name must be"));
    assert!(ok(&f, "find_symbol", json!({"name": "zzz"})).starts_with("No definitions found"));

    // The sandbox: secret files and what a symlink reaches outside are never indexed.
    assert!(ok(&f, "find_symbol", json!({"name": "leaked"})).starts_with("No definitions"));
    assert!(ok(&f, "find_symbol", json!({"name": "outside"})).starts_with("No definitions"));

    // The persistent index holds the symbols; a changed file is taken in at the next
    // call, which reads only it.
    let report = index(&f);
    assert_eq!(report["symbols"], 53, "{report}");
    assert_eq!(
        report["filesRead"], 0,
        "the tool already built it: {report}"
    );
    let go = f.root.join("go/bucket.go");
    let text = std::fs::read_to_string(&go).unwrap();
    std::fs::write(&go, format!("{text}\nfunc Drain(b *TokenBucket) {{}}\n")).unwrap();
    assert_eq!(
        ok(&f, "find_symbol", json!({"name": "drain"})),
        "go/bucket.go:30: function Drain  func Drain(b *TokenBucket) {}\n"
    );
    assert_eq!(index(&f)["symbols"], 54);
}

fn index(f: &Fixture) -> Value {
    let output = Command::new(BIN)
        .args(["index", "--json", "--workspace", f.root.to_str().unwrap()])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("COPILOT_LS_CACHE_DIR", f.cache.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
}

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"id": id, "name": name, "arguments": arguments})
}

/// The tool results the model got back in the fake's n-th request, by call id.
fn tool_results(fake: &FakeProvider, n: usize) -> std::collections::HashMap<String, String> {
    let requests = fake.wait_for_requests(n + 1, WAIT);
    requests[n].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn an_ask_sees_unsaved_editor_text_and_the_sandbox() {
    let f = fixture();
    let calls = vec![
        call("o1", "file_outline", json!({"path": "src/rate_limit.rs"})),
        call("o2", "file_outline", json!({"path": "py/bucket.py"})),
        call("s1", "find_symbol", json!({"name": "drain"})),
        call("s2", "find_symbol", json!({"name": "TokenBucket.try"})),
        call("s3", "find_symbol", json!({"name": "unsaved_helper"})),
        call(
            "x1",
            "file_outline",
            json!({"path": "../outside/canary.rs"}),
        ),
        call("x2", "file_outline", json!({"path": ".env"})),
        call("x3", "find_symbol", json!({"name": "outside_canary"})),
    ];
    let steps = vec![
        json!({ "tool_calls": calls }),
        json!({"tool_calls": [call("a", "answer", json!({"answer": "done"}))]}),
    ];
    let fake = FakeProvider::start(json!({ "steps": steps }));
    let mut client = LspClient::spawn(
        Path::new(BIN),
        &f.root,
        &[("COPILOT_LS_CACHE_DIR", f.cache.path().to_str().unwrap())],
    );
    client.initialize(
        &f.root,
        json!({}),
        json!({"provider": "openai", "baseUrl": fake.openai_base_url(), "model": "fake-model"}),
    );
    let root = f.root.canonicalize().unwrap();

    // A Rust file open with unsaved text: a method added at the top of the impl (so
    // every line below moves), then changed again incrementally.
    let rust_uri = file_uri(&root.join("src/rate_limit.rs"));
    let disk = std::fs::read_to_string(root.join("src/rate_limit.rs")).unwrap();
    let edited = disk.replace(
        "impl TokenBucket {\n",
        "impl TokenBucket {\n    pub fn drain(&mut self) {\n        self.tokens = 0;\n    }\n\n",
    );
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": rust_uri, "languageId": "rust", "version": 1, "text": edited}}),
    );
    // A Python file never saved with its new function.
    let py_uri = file_uri(&root.join("py/bucket.py"));
    let py = std::fs::read_to_string(root.join("py/bucket.py")).unwrap();
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": py_uri, "languageId": "python", "version": 1, "text": py}}),
    );
    let lines = py.lines().count() as u32;
    client.notify(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": py_uri, "version": 2},
            "contentChanges": [{
                "range": {"start": {"line": lines, "character": 0}, "end": {"line": lines, "character": 0}},
                "text": "\n\ndef unsaved_helper():\n    return 1\n"
            }]
        }),
    );

    let result = client
        .request(
            "copilot/ask",
            json!({"question": "Where are tokens drained?"}),
        )
        .unwrap();
    assert_eq!(result["stopReason"], "answered", "{result}");
    let results = tool_results(&fake, 1);

    assert_eq!(
        results["o1"],
        lines_of(
            "
        5-5 const MAX_TOKENS
        9-12 struct TokenBucket
        14-33 impl TokenBucket
          15-17 fn drain
          20-23 fn refill
          25-32 fn try_acquire
        35-37 trait Limiter
          36-36 fn check
        "
        )
    );
    assert!(
        results["o2"].ends_with("22-24 def acquire\n27-28 def unsaved_helper\n"),
        "{}",
        results["o2"]
    );
    assert_eq!(
        results["s1"],
        "src/rate_limit.rs:15: method TokenBucket::drain  pub fn drain(&mut self) {\n"
    );
    // The open document's entries replace the index's (the disk says line 21).
    let s2 = &results["s2"];
    assert!(
        s2.contains("src/rate_limit.rs:25: method TokenBucket::try_acquire  pub fn try_acquire(&mut self) -> bool {"),
        "{s2}"
    );
    assert!(!s2.contains("src/rate_limit.rs:21:"), "{s2}");
    assert!(
        s2.contains("go/bucket.go:21: method TokenBucket.TryAcquire"),
        "{s2}"
    );
    assert_eq!(
        results["s3"],
        "py/bucket.py:27: function unsaved_helper  def unsaved_helper():\n"
    );
    assert!(
        results["x1"].starts_with("Error: path is outside the workspace"),
        "{}",
        results["x1"]
    );
    assert!(
        results["x2"].starts_with("Error: access to secret files is not allowed"),
        "{}",
        results["x2"]
    );
    assert!(
        results["x3"].starts_with("No definitions found"),
        "{}",
        results["x3"]
    );

    let steps = result["steps"].as_array().unwrap();
    let failed: Vec<&str> = steps
        .iter()
        .filter(|s| s["ok"] == false)
        .map(|s| s["arguments"]["path"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(failed, ["../outside/canary.rs", ".env"]);
    // Nothing was written into the workspace.
    assert_eq!(
        std::fs::read_to_string(root.join("src/rate_limit.rs")).unwrap(),
        disk
    );
    client.shutdown();
}

fn lines_of(text: &str) -> String {
    lines(text)
}
