//! Paths as the tools show them (workspace/path_form.rs): names that are not valid
//! UTF-8 or hold control characters are listed in an escaped form, on one line, that
//! every tool accepts back; what the walk cannot reach (a path past PATH_MAX) is
//! counted in listings and in `copilot-ls index --json`; citations name such files by
//! their own bytes.

#![cfg(unix)]

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use copilot_ls::tools;
use copilot_ls::workspace::sandbox::Sandbox;
use copilot_ls::workspace::{NoDocuments, Workspace};
use copilot_ls_test_support::lsp_client::LspClient;
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");

/// Names the walk finds, as raw bytes: Latin-1, lone and overlong UTF-8 bytes, a
/// surrogate, control characters, a bidirectional override, and backslashes.
const NAMES: &[&[u8]] = &[
    b"caf\xe9.rs",
    b"\xff\xfe.rs",
    b"lone\xc3.rs",
    b"overlong\xc0\xaf.rs",
    b"surrogate\xed\xa0\x80.rs",
    b"line\nbreak.rs",
    b"carriage\rreturn.rs",
    b"tab\there.rs",
    b"esc\x1b[31mred.rs",
    b"del\x7f.rs",
    "rtl\u{202e}txt.rs".as_bytes(),
    "sep\u{2028}arator.rs".as_bytes(),
    b"back\\slash.rs",
    b"looks\\x41escaped.rs",
];

fn name(bytes: &[u8]) -> PathBuf {
    PathBuf::from(OsString::from_vec(bytes.to_vec()))
}

/// A workspace whose `odd/` directory holds a file of each name, each file's text
/// naming its index.
fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("odd/n\u{e9}sted")).unwrap();
    for (i, bytes) in NAMES.iter().enumerate() {
        std::fs::write(
            dir.path().join("odd").join(name(bytes)),
            format!("fn marker_{i}() {{}}\n"),
        )
        .unwrap();
    }
    let sandbox = Sandbox::new(dir.path()).unwrap();
    (dir, Workspace::new(sandbox, Arc::new(NoDocuments)))
}

fn run(workspace: &Workspace, tool: &str, args: Value) -> String {
    let output = tools::run(tool, &args.to_string(), workspace);
    assert!(output.ok, "{tool} {args}: {}", output.text);
    output.text
}

/// Every listed name of `odd/` (the lines ending in `.rs`).
fn listed(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| line.split(": ").next().unwrap_or(line))
        .map(|line| line.rsplit_once(':').map_or(line, |(path, _)| path))
        .filter(|line| line.ends_with(".rs"))
        .map(|line| line.trim_start_matches("odd/").to_string())
        .collect()
}

#[test]
fn every_listed_name_is_one_line_and_reads_back() {
    let (_dir, ws) = workspace();
    let listing = run(&ws, "list_directory", json!({"path": "odd"}));
    let names = listed(&listing);
    assert_eq!(names.len(), NAMES.len(), "one line per file: {listing}");
    for shown in &names {
        assert!(!shown.contains('\u{fffd}'), "no lossy name: {shown}");
        assert!(!shown.chars().any(char::is_control), "{shown:?}");
        let read = run(&ws, "read_file", json!({"path": format!("odd/{shown}")}));
        assert!(read.contains("fn marker_"), "{shown}: {read}");
    }
    // The other listings show the same forms.
    let found = run(&ws, "find_files", json!({"pattern": "odd/*"}));
    let mut from_find = listed(&found);
    from_find.sort();
    let mut from_list = names.clone();
    from_list.sort();
    assert_eq!(from_find, from_list, "{found}");
    let searched = run(&ws, "search_code", json!({"pattern": "fn marker_"}));
    let mut from_search = listed(&searched);
    from_search.sort();
    assert_eq!(from_search, from_list, "{searched}");
    let symbols = run(&ws, "find_symbol", json!({"name": "marker_"}));
    for shown in &from_list {
        assert!(symbols.contains(shown.as_str()), "{shown} in {symbols}");
    }
    // Each file's own text, read through the name search_code showed.
    for (i, bytes) in NAMES.iter().enumerate() {
        let shown = copilot_ls::workspace::path_form::shown(name(bytes).as_os_str());
        let read = run(&ws, "read_file", json!({"path": format!("odd/{shown}")}));
        assert!(
            read.contains(&format!("fn marker_{i}()")),
            "{shown}: {read}"
        );
    }
    assert!(listing.contains("caf\\xe9.rs"), "{listing}");
    assert!(listing.contains("line\\x0abreak.rs"), "{listing}");
    assert!(listing.contains("looks\\x5cx41escaped.rs"), "{listing}");
    assert!(
        listing.contains("n\u{e9}sted/"),
        "valid UTF-8 is shown as it is"
    );
}

/// Makes `root/deep/d…/d…/…/leaf.rs` longer than PATH_MAX (4096): one directory at a
/// time, relative to the one before (no path that long can be named whole).
fn too_deep(root: &Path) {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let step = CString::new("d".repeat(200)).unwrap();
    let root = CString::new(root.join("deep").as_os_str().as_bytes()).unwrap();
    // SAFETY: valid NUL-terminated strings; every descriptor opened is closed.
    unsafe {
        assert_eq!(libc::mkdir(root.as_ptr(), 0o755), 0);
        let mut fd = libc::open(root.as_ptr(), libc::O_DIRECTORY | libc::O_RDONLY);
        assert!(fd >= 0);
        for _ in 0..24 {
            assert_eq!(libc::mkdirat(fd, step.as_ptr(), 0o755), 0);
            let next = libc::openat(fd, step.as_ptr(), libc::O_DIRECTORY | libc::O_RDONLY);
            assert!(next >= 0);
            libc::close(fd);
            fd = next;
        }
        let leaf = CString::new("leaf.rs").unwrap();
        let file = libc::openat(fd, leaf.as_ptr(), libc::O_CREAT | libc::O_WRONLY, 0o644);
        assert!(file >= 0);
        let text = b"fn unreachable_leaf() {}\n";
        assert_eq!(
            libc::write(file, text.as_ptr().cast(), text.len()),
            text.len() as isize
        );
        libc::close(file);
        libc::close(fd);
    }
}

#[test]
fn paths_past_path_max_are_counted_in_listings_and_in_the_index() {
    let (dir, ws) = workspace();
    too_deep(dir.path());
    let found = run(&ws, "find_files", json!({"pattern": "**/*.rs"}));
    assert!(found.contains("could not be read"), "{found}");
    assert!(found.contains("caf\\xe9.rs"), "the rest is listed: {found}");

    let cache = tempfile::tempdir().unwrap();
    let output = Command::new(BIN)
        .args(["index", "--json", "--workspace"])
        .arg(dir.path())
        .env("COPILOT_LS_CACHE_DIR", cache.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(report["unreached"].as_u64().unwrap() >= 1, "{report}");
    assert!(
        report["files"].as_u64().unwrap() >= NAMES.len() as u64,
        "{report}"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("not indexed"), "{stderr}");
}

#[test]
fn a_no_model_answer_cites_an_odd_name_by_its_own_bytes() {
    let (dir, _ws) = workspace();
    std::fs::write(
        dir.path().join(name(b"odd/r\xe9sum\xe9.py")),
        "def tollbooth_resume_marker():\n    return 1\n",
    )
    .unwrap();
    let mut client = LspClient::spawn(Path::new(BIN), dir.path(), &[]);
    client.initialize(dir.path(), json!({}), json!({"provider": "none"}));
    let result = client
        .request(
            "copilot/ask",
            json!({"question": "where is tollbooth_resume_marker defined?"}),
        )
        .unwrap();
    let answer = result["answer"].as_str().unwrap();
    assert!(answer.contains("odd/r\\xe9sum\\xe9.py"), "{answer}");
    let citation = result["citations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["uri"].as_str().unwrap_or("").contains("r%E9sum%E9.py"))
        .unwrap_or_else(|| panic!("a citation by the raw bytes: {result}"));
    assert_eq!(citation["verified"], json!(true), "{citation}");
    client.shutdown();
}
