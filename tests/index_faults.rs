//! End-to-end: an index the disk refuses (issue #20, PROTOCOL.md section 9). A full cache
//! filesystem makes `copilot-ls index` fail with the reason, and keep failing rather than
//! report an empty index; a server keeps its index in memory, says so once, and answers
//! from all of it; freeing space heals the next run.
//!
//! The full disk is a small tmpfs mounted by the test when it runs as root (CI does); as
//! another user, a cache dir without write permission stands in for it.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use copilot_ls_test_support::lsp_client::LspClient;
use copilot_ls_test_support::process::{run_bounded, Run};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_copilot-ls");
const LIMIT: Duration = Duration::from_secs(120);

fn index(root: &Path, cache: &Path) -> Run {
    let mut command = Command::new(BIN);
    command
        .args(["index", "--json", "--workspace", root.to_str().unwrap()])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("COPILOT_LS_CACHE_DIR", cache);
    run_bounded(command, LIMIT).expect("copilot-ls index exits")
}

/// A workspace whose index needs a few megabytes.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..1_500 {
        let path = dir.path().join(format!("src/m{}/file_{i}.rs", i % 30));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let body: String = (0..20)
            .map(|j| format!("    let value_{i}_{j} = compute_{j}(input_{i});\n"))
            .collect();
        std::fs::write(
            path,
            format!("/// Handler {i}.\npub fn handler_{i}(input_{i}: u32) {{\n{body}}}\n"),
        )
        .unwrap();
    }
    std::fs::write(
        dir.path().join("src/answer.rs"),
        "/// Picks the zanzibar route.\npub fn zanzibar_route() {}\n",
    )
    .unwrap();
    dir
}

/// A cache dir that refuses the index: a tmpfs of 256 KB (as root), else a directory
/// without write permission. `heal` makes room.
struct FullCache {
    dir: tempfile::TempDir,
    mounted: bool,
}

impl FullCache {
    fn new() -> FullCache {
        let dir = tempfile::tempdir().unwrap();
        let root = unsafe_is_root();
        if root {
            let status = Command::new("mount")
                .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
                .arg(dir.path())
                .status()
                .expect("mount runs");
            assert!(status.success(), "as root, the test mounts a small tmpfs");
        } else {
            set_mode(dir.path(), 0o555);
        }
        FullCache { dir, mounted: root }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn heal(&self) {
        if self.mounted {
            let status = Command::new("mount")
                .args(["-o", "remount,size=256m"])
                .arg(self.dir.path())
                .status()
                .unwrap();
            assert!(status.success());
        } else {
            set_mode(self.dir.path(), 0o755);
        }
    }
}

impl Drop for FullCache {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg(self.dir.path()).status();
        } else {
            set_mode(self.dir.path(), 0o755);
        }
    }
}

fn unsafe_is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_full_cache_disk_is_reported_never_hidden_and_heals() {
    let ws = workspace();
    let cache = FullCache::new();

    for attempt in 0..2 {
        let run = index(ws.path(), cache.path());
        assert_eq!(
            run.code,
            Some(1),
            "attempt {attempt}: {} {}",
            run.stdout,
            run.stderr
        );
        assert!(
            run.stdout.is_empty(),
            "no report of an index that is not there"
        );
        assert!(
            run.stderr.contains("index"),
            "the reason is given: {}",
            run.stderr
        );
    }

    // A server keeps the index in memory, tells the user once, and answers from all of it.
    let mut client = LspClient::spawn(
        Path::new(BIN),
        ws.path(),
        &[("COPILOT_LS_CACHE_DIR", cache.path().to_str().unwrap())],
    );
    client.initialize(
        ws.path(),
        json!({"window": {"workDoneProgress": true}}),
        json!({}),
    );
    let message = client.notification("window/showMessage", |m| {
        m["message"]
            .as_str()
            .unwrap_or("")
            .contains("kept in memory only")
    });
    assert_eq!(message["type"], 2, "{message}");
    client.notification("$/progress", |p| {
        p["token"] == "copilot-ls/indexing" && p["value"]["kind"] == "end"
    });
    let result = client
        .request(
            "copilot/ask",
            json!({"question": "where is the zanzibar route picked?"}),
        )
        .unwrap();
    assert_eq!(result["index"]["complete"], true, "{result}");
    assert_eq!(result["index"]["filesIndexed"], 1_501, "{result}");
    assert_eq!(result["citations"][0]["path"], "src/answer.rs", "{result}");
    let told = client
        .received("window/showMessage")
        .iter()
        .filter(|m| m["message"].as_str().unwrap_or("").contains("in memory"))
        .count();
    assert_eq!(told, 1, "told once");
    client.shutdown();

    cache.heal();
    let run = index(ws.path(), cache.path());
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["files"], 1_501, "{report}");
    let run = index(ws.path(), cache.path());
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["filesRead"], 0, "{report}");
}
