//! End-to-end: the persistent workspace index through `copilot-ls index` and the server.
//! It survives a restart (the second run reads nothing), follows changes, is rebuilt
//! when its files are garbage, stays valid with two writers at once, writes nothing
//! inside the workspace, indexes a file reached through symlinks once, and reports its
//! progress to the editor.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use copilot_ls_test_support::lsp_client::LspClient;
use copilot_ls_test_support::workspace::{snapshot, temp_workspace};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");
/// A hang fails the test after this long instead of blocking the suite.
const LIMIT: Duration = Duration::from_secs(60);

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Starts the binary in a clean environment with `cache` as its cache dir.
fn start(args: &[&str], cache: &Path) -> mpsc::Receiver<Run> {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("COPILOT_LS_CACHE_DIR", cache)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("spawn copilot-ls");
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut stdout, mut stderr) = (String::new(), String::new());
        let _ = out.read_to_string(&mut stdout);
        let _ = err.read_to_string(&mut stderr);
        let status = child.wait().ok();
        let _ = sender.send(Run {
            code: status.and_then(|s| s.code()),
            stdout,
            stderr,
        });
    });
    receiver
}

fn finish(receiver: mpsc::Receiver<Run>) -> Run {
    receiver
        .recv_timeout(LIMIT)
        .unwrap_or_else(|_| panic!("copilot-ls did not exit within {LIMIT:?}"))
}

/// A file written by a test is read by the index within its mtime-resolution window,
/// and the next run would rightly re-read it to be sure; dating it back a minute makes
/// "reads nothing" independent of timing (its size still tells it changed).
fn date_back(path: &Path) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(60))
        .unwrap();
}

/// `copilot-ls index --json --workspace ROOT`, which must succeed with one object.
fn index(root: &Path, cache: &Path) -> Value {
    let run = finish(start(
        &["index", "--json", "--workspace", root.to_str().unwrap()],
        cache,
    ));
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("one JSON object, not {:?}: {e}", run.stdout));
    // The key set is the contract, not its order (serde_json keeps insertion order
    // when a dependency turns on `preserve_order`).
    let mut keys: Vec<&String> = report.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "bytes",
            "chunks",
            "files",
            "filesRead",
            "history",
            "seconds",
            "symbols",
            "textFiles",
            "unreached"
        ],
        "{report}"
    );
    report
}

/// Sets every file's mtime a minute back. A file modified within milliseconds of being
/// indexed is read again at the next start (its mtime cannot be trusted yet, so its
/// content hash decides); tests that count the files read model files not just written.
fn age(root: &Path) {
    for file in files_in(root) {
        date_back(&file);
    }
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

#[test]
fn every_count_of_files_counts_the_same_files() {
    // A binary file is indexed by its path (find_files finds it), not by its words:
    // `index`, an ask's coverage and the build's progress all count it, once.
    let ws = temp_workspace();
    std::fs::write(ws.path().join("logo.png"), b"\x89PNG\r\n\x1a\n\0\0\0binary").unwrap();
    let cache = tempfile::tempdir().unwrap();
    let report = index(ws.path(), cache.path());
    let files = report["files"].as_u64().unwrap();
    assert_eq!(report["textFiles"], files - 1, "{report}");
    let text = finish(start(
        &["index", "--workspace", ws.path().to_str().unwrap()],
        cache.path(),
    ));
    assert!(
        text.stdout
            .starts_with(&format!("{files} files indexed (1 of them binary), ")),
        "{}",
        text.stdout
    );
    let ask = finish(start(
        &[
            "ask",
            "--json",
            "--workspace",
            ws.path().to_str().unwrap(),
            "where is the bucket refilled?",
        ],
        cache.path(),
    ));
    let result: Value = serde_json::from_str(&ask.stdout).expect("one AskResult");
    assert_eq!(
        result["index"],
        json!({"complete": true, "filesIndexed": files, "filesTotal": files}),
        "{result}"
    );
}

#[test]
fn the_index_survives_a_restart_and_reads_only_what_changed() {
    let ws = temp_workspace();
    age(ws.path());
    let cache = tempfile::tempdir().unwrap();
    let before = snapshot(ws.path());
    let first = index(ws.path(), cache.path());
    let files = first["files"].as_u64().unwrap();
    assert!(files >= 5, "{first}");
    assert_eq!(first["filesRead"], files, "{first}");
    assert!(first["chunks"].as_u64().unwrap() >= files, "{first}");
    assert!(first["bytes"].as_u64().unwrap() > 0, "{first}");
    // The fixture's Rust files' definitions, by their syntax.
    let symbols = first["symbols"].as_u64().unwrap();
    assert!(symbols >= 10, "{first}");

    let second = index(ws.path(), cache.path());
    assert_eq!(second["filesRead"], 0, "{second}");
    assert_eq!(second["files"], first["files"]);
    assert_eq!(second["chunks"], first["chunks"]);
    assert_eq!(second["symbols"], first["symbols"]);

    // One file changed: only it is read. One deleted: it is gone, nothing read.
    let config = ws.path().join("src/config.rs");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!("{text}\n/// Added later.\npub fn added() {{}}\n"),
    )
    .unwrap();
    date_back(&config);
    let third = index(ws.path(), cache.path());
    assert_eq!(third["filesRead"], 1, "{third}");
    assert_eq!(
        third["symbols"],
        symbols + 1,
        "one definition added: {third}"
    );
    std::fs::remove_file(ws.path().join("docs/notes.md")).unwrap();
    let fourth = index(ws.path(), cache.path());
    assert_eq!(fourth["filesRead"], 0, "{fourth}");
    assert_eq!(fourth["files"], files - 1, "{fourth}");

    // Everything lives in the cache dir; the workspace is as it was (but for our edits).
    let mut after = snapshot(ws.path());
    after.remove(&config);
    let mut expected = before;
    expected.remove(&config);
    expected.remove(&ws.path().join("docs/notes.md"));
    assert_eq!(after, expected, "nothing is written inside the workspace");
    assert!(!files_in(cache.path()).is_empty());
}

#[test]
fn a_corrupt_foreign_or_older_index_is_rebuilt() {
    let ws = temp_workspace();
    age(ws.path());
    let cache = tempfile::tempdir().unwrap();
    let files = index(ws.path(), cache.path())["files"].clone();

    // Garbage over every file of the index.
    for file in files_in(cache.path()) {
        std::fs::write(&file, b"\x00garbage\xff{not an index").unwrap();
    }
    let rebuilt = index(ws.path(), cache.path());
    assert_eq!(rebuilt["files"], files, "{rebuilt}");
    assert_eq!(
        rebuilt["filesRead"], files,
        "rebuilt from scratch: {rebuilt}"
    );
    assert_eq!(index(ws.path(), cache.path())["filesRead"], 0);

    // Files removed behind its back (a half-deleted cache).
    for file in files_in(cache.path()) {
        if file.extension().is_some_and(|e| e == "store" || e == "idx") {
            std::fs::remove_file(file).unwrap();
        }
    }
    let rebuilt = index(ws.path(), cache.path());
    assert_eq!(rebuilt["files"], files, "{rebuilt}");
    assert_eq!(index(ws.path(), cache.path())["filesRead"], 0);

    // An index of another format, or another workspace's: rebuilt too.
    let meta = files_in(cache.path())
        .into_iter()
        .find(|f| f.file_name().is_some_and(|n| n == "copilot-ls.json"))
        .expect("a meta file");
    let original = std::fs::read_to_string(&meta).unwrap();
    let mut value: Value = serde_json::from_str(&original).unwrap();
    value["format"] = json!(0);
    std::fs::write(&meta, value.to_string()).unwrap();
    assert_eq!(index(ws.path(), cache.path())["filesRead"], files);
    let mut value: Value = serde_json::from_str(&original).unwrap();
    value["root"] = json!("/somewhere/else");
    std::fs::write(&meta, value.to_string()).unwrap();
    assert_eq!(index(ws.path(), cache.path())["filesRead"], files);
    assert_eq!(index(ws.path(), cache.path())["filesRead"], 0);
}

#[test]
fn two_writers_at_once_both_succeed_and_the_index_stays_valid() {
    let ws = temp_workspace();
    age(ws.path());
    let cache = tempfile::tempdir().unwrap();
    let root = ws.path().to_str().unwrap();
    let args = ["index", "--json", "--workspace", root];
    let (a, b) = (start(&args, cache.path()), start(&args, cache.path()));
    let (a, b) = (finish(a), finish(b));
    for run in [&a, &b] {
        assert_eq!(run.code, Some(0), "{}", run.stderr);
    }
    let (a, b): (Value, Value) = (
        serde_json::from_str(&a.stdout).unwrap(),
        serde_json::from_str(&b.stdout).unwrap(),
    );
    assert_eq!(a["files"], b["files"]);
    let after = index(ws.path(), cache.path());
    assert_eq!(after["files"], a["files"]);
    assert_eq!(after["filesRead"], 0, "{after}");

    // A server holds the index for its lifetime; the command line still succeeds
    // (building in memory) and the server's index is whole afterwards.
    let cache_dir = cache.path().to_str().unwrap().to_string();
    std::fs::write(ws.path().join("src/extra.rs"), "pub fn extra() {}\n").unwrap();
    date_back(&ws.path().join("src/extra.rs"));
    let mut client = LspClient::spawn(
        Path::new(BIN),
        ws.path(),
        &[("COPILOT_LS_CACHE_DIR", &cache_dir)],
    );
    client.initialize(
        ws.path(),
        json!({"window": {"workDoneProgress": true}}),
        json!({}),
    );
    client.notification("$/progress", |p| {
        p["token"] == "copilot-ls/indexing" && p["value"]["kind"] == "end"
    });
    let during = index(ws.path(), cache.path());
    assert_eq!(
        during["files"],
        a["files"].as_u64().unwrap() + 1,
        "{during}"
    );
    client.shutdown();
    let after = index(ws.path(), cache.path());
    assert_eq!(
        after["filesRead"], 0,
        "the server indexed extra.rs: {after}"
    );
    assert_eq!(after["files"], during["files"]);
}

#[test]
fn the_server_indexes_in_the_background_with_progress() {
    let ws = temp_workspace();
    for i in 0..300 {
        std::fs::write(
            ws.path().join(format!("src/generated_{i}.rs")),
            format!("/// Generated helper number {i}.\npub fn helper_{i}() -> u32 {{ {i} }}\n"),
        )
        .unwrap();
    }
    let mut client = LspClient::spawn(Path::new(BIN), ws.path(), &[]);
    client.initialize(
        ws.path(),
        json!({"window": {"workDoneProgress": true}}),
        json!({}),
    );
    let end = client.notification("$/progress", |p| {
        p["token"] == "copilot-ls/indexing" && p["value"]["kind"] == "end"
    });
    assert_eq!(end["value"]["kind"], "end");
    let create = client
        .log
        .iter()
        .find(|m| m["method"] == "window/workDoneProgress/create")
        .expect("a server-created token");
    assert_eq!(create["params"]["token"], "copilot-ls/indexing");
    let values: Vec<Value> = client
        .received("$/progress")
        .into_iter()
        .filter(|p| p["token"] == "copilot-ls/indexing")
        .map(|p| p["value"].clone())
        .collect();
    assert_eq!(values[0]["kind"], "begin", "{values:?}");
    assert_eq!(values[0]["title"], "Indexing");
    let total = 300 + 7;
    for value in &values[..values.len() - 1] {
        let message = value["message"].as_str().unwrap();
        let (done, of) = message
            .strip_suffix(" files")
            .and_then(|m| m.split_once('/'))
            .unwrap_or_else(|| panic!("`n/N files`: {message}"));
        assert!(done.parse::<usize>().unwrap() <= total);
        assert_eq!(of.parse::<usize>().unwrap(), total, "{message}");
    }
    assert_eq!(
        values[values.len() - 2]["message"],
        format!("{total}/{total} files"),
        "{values:?}"
    );
    // And an ask finds what was indexed.
    let result = client
        .request(
            "copilot/ask",
            json!({"question": "generated helper number 123"}),
        )
        .unwrap();
    let cited: Vec<&str> = result["citations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["path"].as_str())
        .collect();
    assert!(cited.contains(&"src/generated_123.rs"), "{result}");
    client.shutdown();
}

#[test]
fn a_workspace_past_the_bounds_is_indexed_up_to_them_with_a_warning() {
    // (A root of `/` or a home directory is not indexed at all: tests/first_use.rs.)
    let ws = temp_workspace();
    for i in 0..300 {
        std::fs::write(
            ws.path().join(format!("src/generated_{i}.rs")),
            format!("pub fn helper_{i}() -> u32 {{ {i} }}\n"),
        )
        .unwrap();
    }
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap().to_string();
    let mut client = LspClient::spawn(
        Path::new(BIN),
        ws.path(),
        &[
            ("COPILOT_LS_CACHE_DIR", &cache_dir),
            ("COPILOT_LS_INDEX_MAX_FILES", "100"),
        ],
    );
    client.initialize(ws.path(), json!({}), json!({}));
    let message = client.notification("window/showMessage", |m| {
        m["message"]
            .as_str()
            .unwrap_or("")
            .contains("too large to index fully")
    });
    assert_eq!(message["type"], 2, "a warning: {message}");
    let result = client
        .request(
            "copilot/ask",
            json!({"question": "How are tokens refilled?"}),
        )
        .expect("an answer");
    assert_eq!(result["index"]["filesTotal"], 100, "{result}");
    client.shutdown();
}

#[test]
fn a_file_reached_through_a_symlink_is_indexed_under_one_path() {
    use std::os::unix::fs::symlink;
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    std::fs::create_dir_all(root.join("lib")).unwrap();
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::create_dir_all(root.join("generated")).unwrap();
    std::fs::write(root.join(".gitignore"), "generated/\n").unwrap();
    std::fs::write(
        root.join("lib/vault.py"),
        "def decrypt_vault_blob(data):\n    return data[::-1]\n",
    )
    .unwrap();
    // A command that is the library file under another name (ansible's
    // `bin/ansible-vault`), by a relative link and by an absolute one.
    symlink("../lib/vault.py", root.join("bin/vault-tool")).unwrap();
    symlink(root.join("lib/vault.py"), root.join("vault_alias.py")).unwrap();
    // A file under an ignored folder that the workspace reaches only through links:
    // indexed once, under a link's name.
    std::fs::write(
        root.join("generated/made.py"),
        "def made_by_codegen():\n    return 1\n",
    )
    .unwrap();
    symlink("generated/made.py", root.join("made.py")).unwrap();
    symlink("generated/made.py", root.join("made_again.py")).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let report = index(root, cache.path());
    // .gitignore, lib/vault.py, and one of the two links to generated/made.py.
    assert_eq!(report["files"], 3, "{report}");

    let dir = root.to_str().unwrap();
    let find = |name: &str| {
        let args = json!({ "name": name }).to_string();
        let run = finish(start(
            &["tool", "find_symbol", &args, "--workspace", dir],
            cache.path(),
        ));
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        run.stdout
    };
    assert_eq!(
        find("decrypt_vault_blob"),
        "lib/vault.py:1: function decrypt_vault_blob  def decrypt_vault_blob(data):\n"
    );
    let made = find("made_by_codegen");
    assert_eq!(made.lines().count(), 1, "{made}");
    assert!(
        made.starts_with("made.py:1: ") || made.starts_with("made_again.py:1: "),
        "{made}"
    );

    // The answer with no model cites the library file once, under its own path.
    let run = finish(start(
        &[
            "ask",
            "--json",
            "--workspace",
            dir,
            "where is the vault blob decrypted",
        ],
        cache.path(),
    ));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let answer: Value = serde_json::from_str(&run.stdout).unwrap();
    let cited: Vec<&str> = answer["citations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(cited.first(), Some(&"lib/vault.py"), "{answer}");
    assert_eq!(
        cited.iter().filter(|p| **p == "lib/vault.py").count(),
        1,
        "{answer}"
    );
}

/// The human lines name the numbers of `--json` in its words: `files` indexed,
/// `filesRead` read by this run (a second run after one change reads one file of the
/// many it holds), and the size on disk in KB or MB, not raw bytes.
#[test]
fn the_human_lines_say_files_indexed_and_files_read_as_the_json_does() {
    let ws = temp_workspace();
    let cache = tempfile::tempdir().unwrap();
    let root = ws.path().to_str().unwrap();
    let cold = finish(start(&["index", "--workspace", root], cache.path()));
    assert_eq!(cold.code, Some(0), "{}", cold.stderr);
    let config = ws.path().join("src/config.rs");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{text}// one more line\n")).unwrap();
    date_back(&config);
    let warm = finish(start(&["index", "--workspace", root], cache.path()));
    assert_eq!(warm.code, Some(0), "{}", warm.stderr);
    let report = index(ws.path(), cache.path());
    assert_eq!(report["filesRead"], 0, "{report}");
    let lines: Vec<&str> = warm.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", warm.stdout);
    assert!(
        lines[0].starts_with(&format!(
            "{} files indexed, {} chunks, {} symbols, ",
            report["files"], report["chunks"], report["symbols"]
        )),
        "{}\n{report}",
        warm.stdout
    );
    assert!(
        lines[1].starts_with("1 file read by this run in "),
        "{}",
        warm.stdout
    );
    let cold_read = cold.stdout.lines().nth(1).unwrap_or_default().to_string();
    assert!(
        cold_read.starts_with(&format!("{} files read by this run in ", report["files"])),
        "{}",
        cold.stdout
    );
    // `703.1 KB on disk at …`: a number with one decimal and a unit.
    let (size, unit) = lines[2]
        .split_once(" on disk at ")
        .and_then(|(size, _)| size.split_once(' '))
        .unwrap_or_else(|| panic!("{}", warm.stdout));
    assert!(
        ["KB", "MB"].contains(&unit) && size.parse::<f64>().is_ok() && size.contains('.'),
        "{}",
        warm.stdout
    );
}
