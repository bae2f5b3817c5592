//! Edit benchmark: 10,000 keystroke-like incremental edits applied to a 10 MB and a 10 KB
//! document, in process through `DocumentStore::change` and end to end over LSP stdio
//! to the real binary; reports per-edit cost and the large/small ratio.
//!
//! Run with `cargo bench -p copilot-ls --bench edits` (or `bench/run.sh`). Set
//! `BENCH_JSON=FILE` to also get the numbers as JSON, `BENCH_SKIP_LSP=1` to skip the
//! end-to-end part.

// This is a report for a person, not the LSP channel: stdout is the right place.
#![allow(clippy::print_stdout)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use copilot_ls::session::{DocumentStore, TextChange};
use copilot_ls::text::{self, PositionEncoding, Span};
use serde_json::{json, Value};

const EDITS: usize = 10_000;
/// In-process runs per document size; the median run is reported.
const RUNS: usize = 5;
/// End-to-end runs per document size (each spawns the server and opens the document).
const LSP_RUNS: usize = 3;
const LARGE: usize = 10 * 1024 * 1024;
const SMALL: usize = 10 * 1024;
const URI: &str = "file:///bench/copilot-ls-edits/doc.rs";

fn main() {
    // `cargo bench` passes `--bench`; there are no filters to honour.
    let skip_lsp = std::env::var_os("BENCH_SKIP_LSP").is_some();
    let mut results = Vec::new();
    for (label, size) in [("10 KB", SMALL), ("10 MB", LARGE)] {
        let doc = document(size);
        let script = edit_script(&doc);
        let direct = measure_direct(&doc, &script);
        let lsp = (!skip_lsp).then(|| measure_lsp(&doc, &script));
        results.push((label, doc.len(), direct, lsp));
    }
    report(&results);
}

/// Per-edit timings of one run, in nanoseconds.
struct Stats {
    mean_ns: f64,
    median_ns: f64,
    p99_ns: f64,
    total: Duration,
}

impl Stats {
    fn of(mut samples: Vec<u64>, total: Duration) -> Stats {
        samples.sort_unstable();
        let n = samples.len();
        Stats {
            mean_ns: samples.iter().sum::<u64>() as f64 / n as f64,
            median_ns: samples[n / 2] as f64,
            p99_ns: samples[(n * 99 / 100).min(n - 1)] as f64,
            total,
        }
    }

    /// The run whose median is the median of all runs.
    fn median_run(mut runs: Vec<Stats>) -> Stats {
        runs.sort_by(|a, b| a.median_ns.total_cmp(&b.median_ns));
        runs.swap_remove(runs.len() / 2)
    }
}

/// A source-like document of about `size` bytes: CRLF line endings, some emoji and CJK.
fn document(size: usize) -> String {
    let mut rng = fastrand::Rng::with_seed(7);
    let words = [
        "config", "request", "handler", "buffer", "token", "session", "index", "cache", "result",
        "value", "state", "reader", "parser", "symbol", "range", "offset",
    ];
    let extras = ["😀", "漢字", "café", "→", "🚀"];
    let mut out = String::with_capacity(size + 200);
    while out.len() < size {
        let indent = rng.usize(0..4) * 4;
        out.extend(std::iter::repeat_n(' ', indent));
        match rng.u8(0..4) {
            0 => out.push_str(&format!(
                "let {}_{} = {}.{}()?;",
                words[rng.usize(0..words.len())],
                rng.u16(..),
                words[rng.usize(0..words.len())],
                words[rng.usize(0..words.len())]
            )),
            1 => out.push_str(&format!(
                "// the {} keeps its {} {}",
                words[rng.usize(0..words.len())],
                words[rng.usize(0..words.len())],
                extras[rng.usize(0..extras.len())]
            )),
            2 => out.push_str(&format!(
                "fn {}(&self) -> Result<{}> {{",
                words[rng.usize(0..words.len())],
                rng.u32(..)
            )),
            _ => out.push('}'),
        }
        out.push_str("\r\n");
    }
    out
}

/// One edit as the editor sends it.
struct Edit {
    range: Span,
    text: String,
}

/// 10,000 edits like typing: mostly one char inserted at a cursor that moves along,
/// backspaces, Enter (CRLF), emoji, word replacements, and occasional jumps to a random
/// place in the document. Positions are computed against a shadow copy of the text, in
/// UTF-16 (the LSP default), so the script is valid for the document it was made for.
fn edit_script(doc: &str) -> Vec<Edit> {
    let mut rng = fastrand::Rng::with_seed(42);
    let mut rope = ropey::Rope::from_str(doc);
    let typed = "abcdefghijklmnopqrstuvwxyz_(){}.;:= 0123456789";
    let typed: Vec<char> = typed.chars().collect();
    let mut cursor = rng.usize(0..rope.len_chars());
    let mut script = Vec::with_capacity(EDITS);
    while script.len() < EDITS {
        if script.len() % 50 == 0 {
            cursor = rng.usize(0..=rope.len_chars());
        }
        // Never split a CRLF pair: the editor cannot put a cursor there.
        if cursor > 0
            && cursor < rope.len_chars()
            && rope.char(cursor - 1) == '\r'
            && rope.char(cursor) == '\n'
        {
            cursor -= 1;
        }
        let roll = rng.u8(0..100);
        let (start, end, text): (usize, usize, String) = if roll < 65 {
            (cursor, cursor, typed[rng.usize(0..typed.len())].to_string())
        } else if roll < 70 {
            (cursor, cursor, "\r\n".to_string())
        } else if roll < 73 {
            (
                cursor,
                cursor,
                ["😀", "漢", "é", "🚀"][rng.usize(0..4)].to_string(),
            )
        } else if roll < 90 {
            if cursor == 0 {
                continue;
            }
            // Backspace deletes a whole CRLF.
            let back =
                if cursor >= 2 && rope.char(cursor - 1) == '\n' && rope.char(cursor - 2) == '\r' {
                    2
                } else {
                    1
                };
            (cursor - back, cursor, String::new())
        } else {
            // Replace the next few chars (not across a line break) with an identifier.
            let line_end = {
                let line = rope.char_to_line(cursor);
                rope.line_to_char(line) + line_len(&rope, line)
            };
            let end = (cursor + rng.usize(1..8)).min(line_end);
            (cursor, end, format!("ident_{}", rng.u16(..)))
        };
        let range = Span {
            start: text::position_of(&rope, start, PositionEncoding::Utf16),
            end: text::position_of(&rope, end, PositionEncoding::Utf16),
        };
        rope.remove(start..end);
        rope.insert(start, &text);
        cursor = start + text.chars().count();
        script.push(Edit { range, text });
    }
    script
}

fn line_len(rope: &ropey::Rope, line: usize) -> usize {
    let slice = rope.line(line);
    let mut len = slice.len_chars();
    for end in ['\n', '\r'] {
        if len > 0 && slice.char(len - 1) == end {
            len -= 1;
        }
    }
    len
}

/// Each edit is one `change` call (one `didChange` per keystroke), timed alone.
fn measure_direct(doc: &str, script: &[Edit]) -> Stats {
    let expected = {
        let mut rope = ropey::Rope::from_str(doc);
        for edit in script {
            let start =
                text::char_index(&rope, edit.range.start, PositionEncoding::Utf16).unwrap_or(0);
            let end = text::char_index(&rope, edit.range.end, PositionEncoding::Utf16).unwrap_or(0);
            rope.remove(start..end);
            rope.insert(start, &edit.text);
        }
        rope
    };
    let mut runs = Vec::new();
    for _ in 0..RUNS {
        let store = DocumentStore::default();
        store.open(URI, "rust", 1, doc);
        let changes: Vec<[TextChange; 1]> = script
            .iter()
            .map(|edit| {
                [TextChange {
                    range: Some(edit.range),
                    text: edit.text.clone(),
                }]
            })
            .collect();
        let mut samples = Vec::with_capacity(script.len());
        let started = Instant::now();
        for (version, change) in changes.iter().enumerate() {
            let t = Instant::now();
            let applied = store.change(URI, version as i32 + 2, change, PositionEncoding::Utf16);
            samples.push(t.elapsed().as_nanos() as u64);
            applied.expect("every scripted edit fits the document");
        }
        let total = started.elapsed();
        let after = store.get(URI).expect("document is open").rope;
        assert!(
            after == expected,
            "the store's text differs from the script's shadow copy"
        );
        runs.push(Stats::of(samples, total));
    }
    Stats::median_run(runs)
}

/// End to end: the real binary over stdio. `didOpen`, one request to know it is applied,
/// then the clock runs over 10,000 `didChange` notifications and one request after them
/// (answered only once every change before it was applied).
fn measure_lsp(doc: &str, script: &[Edit]) -> Stats {
    let root = std::env::temp_dir().join("copilot-ls-bench-edits");
    std::fs::create_dir_all(&root).expect("temp dir");
    let mut runs = Vec::new();
    for _ in 0..LSP_RUNS {
        let mut server = Server::spawn(&root);
        server.send(&json!({
            "jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": URI, "languageId": "rust", "version": 1, "text": doc}}
        }));
        server.request(2, "textDocument/codeAction", code_action_params());

        let mut frames = Vec::with_capacity(script.len() * 256);
        for (i, edit) in script.iter().enumerate() {
            frame(
                &mut frames,
                &json!({
                    "jsonrpc": "2.0", "method": "textDocument/didChange",
                    "params": {
                        "textDocument": {"uri": URI, "version": i + 2},
                        "contentChanges": [{"range": range_json(edit.range), "text": edit.text}]
                    }
                }),
            );
        }
        frame(
            &mut frames,
            &json!({
                "jsonrpc": "2.0", "id": 3, "method": "textDocument/codeAction", "params": code_action_params()
            }),
        );
        let started = Instant::now();
        // A writer thread: the server may write while we write, and pipes are bounded.
        let mut stdin = server.stdin.take().expect("stdin");
        let writer = std::thread::spawn(move || {
            stdin.write_all(&frames).expect("write didChange frames");
            stdin.flush().expect("flush");
            stdin
        });
        server.wait_for(3);
        let total = started.elapsed();
        server.stdin = Some(writer.join().expect("writer thread"));
        server.shutdown();
        let per_edit = (total.as_nanos() / script.len() as u128) as u64;
        runs.push(Stats::of(vec![per_edit], total));
    }
    Stats::median_run(runs)
}

fn code_action_params() -> Value {
    json!({
        "textDocument": {"uri": URI},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": []}
    })
}

fn range_json(span: Span) -> Value {
    json!({
        "start": {"line": span.start.line, "character": span.start.character},
        "end": {"line": span.end.line, "character": span.end.character}
    })
}

fn frame(out: &mut Vec<u8>, message: &Value) {
    let body = serde_json::to_vec(message).expect("json");
    out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(&body);
}

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    fn spawn(root: &std::path::Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_copilot-ls"))
            .arg("serve")
            .env("COPILOT_LS_PROVIDER", "none")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn copilot-ls");
        let mut server = Server {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().expect("stdout")),
            child,
        };
        let root_uri = text::file_uri(root);
        server.request(
            1,
            "initialize",
            json!({"processId": null, "rootUri": root_uri, "capabilities": {}}),
        );
        server.send(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
        server
    }

    fn send(&mut self, message: &Value) {
        let mut out = Vec::new();
        frame(&mut out, message);
        let stdin = self.stdin.as_mut().expect("stdin");
        stdin.write_all(&out).expect("write");
        stdin.flush().expect("flush");
    }

    fn request(&mut self, id: u64, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait_for(id);
    }

    /// Reads messages until the response to `id`; answers any server request with null.
    fn wait_for(&mut self, id: u64) {
        loop {
            let message = self.read();
            if message.get("method").is_some() {
                if let Some(request_id) = message.get("id") {
                    let reply = json!({"jsonrpc": "2.0", "id": request_id, "result": null});
                    if let Some(stdin) = self.stdin.as_mut() {
                        let mut out = Vec::new();
                        frame(&mut out, &reply);
                        stdin.write_all(&out).expect("write");
                    }
                }
                continue;
            }
            if message.get("id").and_then(Value::as_u64) == Some(id) {
                assert!(
                    message.get("error").is_none(),
                    "request {id} failed: {message}"
                );
                return;
            }
        }
    }

    fn read(&mut self) -> Value {
        let mut length = None;
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read header");
            assert!(n > 0, "server closed stdout");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(value) = line.strip_prefix("Content-Length:") {
                length = value.trim().parse::<usize>().ok();
            }
        }
        let mut body = vec![0; length.expect("Content-Length header")];
        self.stdout.read_exact(&mut body).expect("read body");
        serde_json::from_slice(&body).expect("json body")
    }

    fn shutdown(mut self) {
        self.request(99, "shutdown", Value::Null);
        self.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

fn report(results: &[(&str, usize, Stats, Option<Stats>)]) {
    println!("edit benchmark: {EDITS} incremental edits, one didChange each (median of {RUNS} runs in process, {LSP_RUNS} over LSP)");
    println!();
    println!("| document | bytes | in-process mean | median | p99 | total | LSP end-to-end per edit | total |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (label, bytes, direct, lsp) in results {
        let (lsp_per, lsp_total) = match lsp {
            Some(s) => (
                micros(s.mean_ns),
                format!("{:.0} ms", s.total.as_secs_f64() * 1e3),
            ),
            None => ("-".into(), "-".into()),
        };
        println!(
            "| {label} | {bytes} | {} | {} | {} | {:.1} ms | {lsp_per} | {lsp_total} |",
            micros(direct.mean_ns),
            micros(direct.median_ns),
            micros(direct.p99_ns),
            direct.total.as_secs_f64() * 1e3,
        );
    }
    let (small, large) = (&results[0], &results[1]);
    let ratio_median = large.2.median_ns / small.2.median_ns;
    let ratio_mean = large.2.mean_ns / small.2.mean_ns;
    let ratio_lsp = match (&large.3, &small.3) {
        (Some(l), Some(s)) => Some(l.mean_ns / s.mean_ns),
        _ => None,
    };
    println!();
    println!(
        "ratio 10 MB / 10 KB: in-process median {ratio_median:.2}x, mean {ratio_mean:.2}x{}",
        ratio_lsp
            .map(|r| format!(", LSP end-to-end {r:.2}x"))
            .unwrap_or_default()
    );
    println!("target: <= 1.5x");

    if let Some(path) = std::env::var_os("BENCH_JSON") {
        let rows: Vec<Value> = results
            .iter()
            .map(|(label, bytes, d, l)| {
                json!({
                    "document": label, "bytes": bytes,
                    "mean_ns": d.mean_ns, "median_ns": d.median_ns, "p99_ns": d.p99_ns,
                    "total_ms": d.total.as_secs_f64() * 1e3,
                    "lsp_per_edit_ns": l.as_ref().map(|s| s.mean_ns),
                    "lsp_total_ms": l.as_ref().map(|s| s.total.as_secs_f64() * 1e3),
                })
            })
            .collect();
        let out = json!({
            "edits": EDITS, "runs": RUNS, "lsp_runs": LSP_RUNS, "rows": rows,
            "ratio_median": ratio_median, "ratio_mean": ratio_mean, "ratio_lsp": ratio_lsp,
        });
        std::fs::write(path, serde_json::to_vec_pretty(&out).expect("json"))
            .expect("write BENCH_JSON");
    }
}

fn micros(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} µs", ns / 1e3)
    }
}
