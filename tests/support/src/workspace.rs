//! Fixture workspaces for tests: a fresh copy per test, and a snapshot of every file's
//! bytes to prove that nothing was written behind the user's back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The repository's `fixtures/` directory.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// A fresh copy of `fixtures/workspace` (the small `tollbooth` project).
pub fn temp_workspace() -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("copilot-ls-ws-")
        .tempdir()
        .unwrap();
    crate::lsp_client::copy_dir(&fixtures_dir().join("workspace"), dir.path());
    dir
}

/// Every file under `root` with its bytes.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    files
}
