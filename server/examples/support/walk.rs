//! The files under a checkout, `.git` left out and nothing else (no ignore rules: the
//! examples measure the grammars on every file a checkout holds), shared by the examples
//! that read one.

use std::path::{Path, PathBuf};

/// Every regular file under `dir`, depth first.
pub fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            if entry.file_name() != ".git" {
                walk(&path, out);
            }
        } else if kind.is_file() {
            out.push(path);
        }
    }
}
