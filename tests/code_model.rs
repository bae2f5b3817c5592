//! End-to-end: a code model (PROTOCOL.md section 10, `find_related`; docs/retrieval.md,
//! "The code model") through the real binary. No model ships, so each test writes one in
//! `train/`'s artifact format, with vectors made to order (a "waiting" direction and a
//! "formatting" one, over the terms `copilot-ls dev terms` makes of chosen words), and
//! names it with `COPILOT_LS_CODE_MODEL`: `copilot-ls tool find_related` on a workspace
//! the test writes, the tool absent without a model, and an ask whose words are nowhere
//! in the code answered through the model.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use copilot_ls_test_support::process::{run_bounded, Run};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");
const LIMIT: Duration = Duration::from_secs(120);

/// `copilot-ls dev COMMAND` with `lines` on stdin: one JSON value per line, and stderr.
fn dev(command: &str, lines: &[String]) -> (Vec<Value>, String) {
    use std::io::Write;
    let mut child = Command::new(BIN)
        .args(["dev", command])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("copilot-ls dev");
    let input: String = lines.iter().map(|line| format!("{line}\n")).collect();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let values = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    (values, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The terms the binary makes of `words` (`copilot-ls dev terms`), sorted, once each.
fn terms_of(words: &[&str]) -> Vec<String> {
    let lines: Vec<String> = words.iter().map(|w| json!(w).to_string()).collect();
    let mut terms: Vec<String> = dev("terms", &lines)
        .0
        .into_iter()
        .flat_map(|value| serde_json::from_value::<Vec<String>>(value).unwrap())
        .collect();
    terms.sort();
    terms.dedup();
    terms
}

/// A model in `train/`'s format (docs/retrieval.md): 8 dimensions, one tower; the
/// waiting words point one way, the formatting words another.
fn model(dir: &Path) -> std::path::PathBuf {
    let waiting = terms_of(&[
        "wait",
        "waiting",
        "lock",
        "mutex",
        "condition",
        "timeout",
        "acquire",
        "release",
        "notify",
        "free",
        "take",
        "hang",
        "hangs",
        "stuck",
        "forever",
        "threading",
    ]);
    let formatting = terms_of(&[
        "format", "table", "width", "widths", "rows", "column", "cell", "join", "lines",
    ]);
    let mut vocab: Vec<(String, [i8; 8])> = Vec::new();
    for term in &waiting {
        vocab.push((term.clone(), [127, 10, 0, 0, 0, 0, 0, 0]));
    }
    for term in formatting.iter().filter(|t| !waiting.contains(t)) {
        vocab.push((term.clone(), [0, 127, 10, 0, 0, 0, 0, 0]));
    }
    let header = json!({"dim": 8, "vocab": vocab.len(), "towers": 1, "max_terms": 256}).to_string();
    let mut bytes = b"CLSEMB01".to_vec();
    bytes.extend((header.len() as u32).to_le_bytes());
    bytes.extend(header.as_bytes());
    for (term, _) in &vocab {
        bytes.push(term.len() as u8);
        bytes.extend(term.as_bytes());
    }
    for _ in &vocab {
        bytes.extend(1.0f32.to_le_bytes());
    }
    for _ in &vocab {
        bytes.extend((1.0f32 / 127.0).to_le_bytes());
    }
    for (_, row) in &vocab {
        bytes.extend(row.iter().map(|v| *v as u8));
    }
    let path = dir.join("code-embed.bin");
    std::fs::write(&path, bytes).unwrap();
    path
}

fn copilot(root: &Path, cache: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let model = model(cache);
    let mut command = Command::new(BIN);
    command
        .args(args)
        .arg("--workspace")
        .arg(root)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", cache)
        .env("COPILOT_LS_CACHE_DIR", cache)
        .env("COPILOT_LS_PROVIDER", "none")
        .env("COPILOT_LS_HISTORY", "off")
        .env("COPILOT_LS_CODE_MODEL", &model);
    for (key, value) in env {
        command.env(key, value);
    }
    run_bounded(command, LIMIT).expect("copilot-ls exits")
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Three modules: two that take a lock and wait, one that formats text.
fn workspace() -> (tempfile::TempDir, tempfile::TempDir) {
    let root = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    write(
        root.path(),
        "src/pool.py",
        "import threading\n\n\nclass Pool:\n    def __init__(self, size):\n        self.lock = threading.Lock()\n        self.free = size\n        self.ready = threading.Condition(self.lock)\n\n    def acquire(self, timeout=None):\n        with self.ready:\n            while self.free == 0:\n                if not self.ready.wait(timeout):\n                    raise TimeoutError('no connection became free')\n            self.free -= 1\n\n    def release(self):\n        with self.ready:\n            self.free += 1\n            self.ready.notify()\n",
    );
    write(
        root.path(),
        "src/queue.py",
        "import threading\n\n\nclass JobQueue:\n    def __init__(self):\n        self.items = []\n        self.mutex = threading.Lock()\n        self.not_empty = threading.Condition(self.mutex)\n\n    def take(self, timeout=None):\n        with self.not_empty:\n            while not self.items:\n                if not self.not_empty.wait(timeout):\n                    raise TimeoutError('no job arrived')\n            return self.items.pop(0)\n",
    );
    write(
        root.path(),
        "src/report.py",
        "def format_table(rows):\n    widths = [max(len(str(cell)) for cell in column) for column in zip(*rows)]\n    lines = []\n    for row in rows:\n        lines.append('  '.join(str(cell).ljust(width) for cell, width in zip(row, widths)))\n    return '\\n'.join(lines)\n",
    );
    (root, cache)
}

#[test]
fn find_related_lists_the_definition_then_code_like_it_elsewhere() {
    let (root, cache) = workspace();
    let args = json!({"path": "src/pool.py", "line": 12}).to_string();
    let run = copilot(
        root.path(),
        cache.path(),
        &["tool", "find_related", &args],
        &[],
    );
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    // The definition the line is in, as find_symbol names it.
    assert_eq!(
        lines[0], "src/pool.py:10: method Pool.acquire  def acquire(self, timeout=None):",
        "{}",
        run.stdout
    );
    assert_eq!(lines[1], "Most like it:");
    let places = &lines[2..];
    assert!(!places.is_empty());
    // Other files come first; the definition's own file only when nothing else matches.
    assert!(
        places.iter().all(|line| !line.starts_with("src/pool.py:")),
        "{}",
        run.stdout
    );
    // The other waiting loop is closer to it than the text formatting is.
    let position = |needle: &str| places.iter().position(|line| line.contains(needle));
    let take = position("JobQueue.take").expect("JobQueue.take listed");
    if let Some(table) = position("format_table") {
        assert!(take < table, "{}", run.stdout);
    }
}

#[test]
fn find_related_says_why_it_cannot_answer() {
    let (root, cache) = workspace();
    let cases = [
        (
            json!({"path": "src/pool.py", "line": 2}),
            "no function, method or type is defined at line 2 of src/pool.py",
        ),
        (
            json!({"path": "../outside.py", "line": 1}),
            "outside the workspace",
        ),
        (json!({"path": "src/pool.py", "line": 0}), "line is 1-based"),
        (json!({"path": "src/pool.py"}), "missing field `line`"),
    ];
    for (args, expected) in cases {
        let run = copilot(
            root.path(),
            cache.path(),
            &["tool", "find_related", &args.to_string()],
            &[],
        );
        assert!(run.stdout.starts_with("Error: "), "{args}: {}", run.stdout);
        assert!(run.stdout.contains(expected), "{args}: {}", run.stdout);
    }
}

#[test]
fn an_ask_whose_words_are_not_in_the_code_is_answered_through_the_model() {
    let (root, cache) = workspace();
    let question = ["ask", "--json", "why does it hang forever?"];
    let run = copilot(root.path(), cache.path(), &question, &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let answer: Value = serde_json::from_str(&run.stdout).unwrap();
    let cited: Vec<&str> = answer["citations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert!(
        matches!(cited.first(), Some(&"src/pool.py" | &"src/queue.py")),
        "{cited:?}"
    );
    assert!(!cited.contains(&"src/report.py"), "{cited:?}");
    // Without the model no word of it matches anything.
    let off = [("COPILOT_LS_CODE_MODEL", "off")];
    let run = copilot(root.path(), cache.path(), &question, &off);
    let answer: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(answer["citations"], json!([]), "{}", run.stdout);
}

#[test]
fn without_a_model_find_related_is_not_offered() {
    let (root, cache) = workspace();
    let off = [("COPILOT_LS_CODE_MODEL", "off")];
    let args = json!({"path": "src/pool.py", "line": 12}).to_string();
    let run = copilot(
        root.path(),
        cache.path(),
        &["tool", "find_related", &args],
        &off,
    );
    assert_ne!(run.code, Some(0));
    assert!(
        run.stdout.contains("unknown tool `find_related`"),
        "{}",
        run.stdout
    );
    // A model that cannot be read: the same, and a warning that says why.
    let bad = cache.path().join("not-a-model.bin");
    std::fs::write(&bad, b"nothing").unwrap();
    let bad_env = [("COPILOT_LS_CODE_MODEL", bad.to_str().unwrap())];
    let run = copilot(
        root.path(),
        cache.path(),
        &["tool", "find_related", &args],
        &bad_env,
    );
    assert!(
        run.stdout.contains("unknown tool `find_related`"),
        "{}",
        run.stdout
    );
    // Asks still answer, lexically.
    let run = copilot(
        root.path(),
        cache.path(),
        &[
            "ask",
            "--json",
            "where does the pool wait for a free connection?",
        ],
        &off,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let answer: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(answer["citations"][0]["path"], "src/pool.py");
}

#[test]
fn the_training_pipelines_commands_answer_each_line_and_survive_bad_ones() {
    let input = [
        json!({"path": "a.py", "text": "class A:\n    def f(self):\n        return 1\n"})
            .to_string(),
        "not json".to_string(),
        json!({"path": "notes.txt", "text": "plain"}).to_string(),
    ];
    let (lines, stderr) = dev("symbols", &input);
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0][1]["qualifiedName"], "A.f");
    assert_eq!(lines[0][1]["kind"], "method");
    assert_eq!(lines[0][1]["line"], 1);
    assert_eq!(lines[1], Value::Null);
    assert_eq!(lines[2], Value::Null);
    assert!(stderr.contains("line 2"), "{stderr}");
    assert_eq!(terms_of(&["RopeBuilder"]), ["build", "rop", "ropbuild"]);
}
