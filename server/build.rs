//! Build script: the commit the binary is built from, for `copilot-ls --version`
//! (`copilot-ls 0.4.0 (0123456789)`), read from the checkout's `.git` files. It starts
//! no `git` (a repository's configuration can make git run programs) and reads nothing
//! outside the checkout; a build outside a git checkout (a crate tarball) says
//! `unknown`.

use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let commit = manifest
        .parent()
        .and_then(git_dir)
        .and_then(|git| {
            // Rebuild when HEAD moves: HEAD, the ref it names, the packed refs. Only
            // files that exist are watched: cargo reruns a script for a missing one at
            // every build.
            let (commit, common) = head_commit(&git)?;
            let head = std::fs::read_to_string(git.join("HEAD")).unwrap_or_default();
            let reference = head
                .trim()
                .strip_prefix("ref:")
                .map(|r| common.join(r.trim()));
            let watched = [git.join("HEAD"), common.join("packed-refs")];
            for path in watched.into_iter().chain(reference) {
                if path.exists() {
                    println!("cargo:rerun-if-changed={}", path.display());
                }
            }
            Some(commit)
        })
        .map_or_else(|| "unknown".to_string(), |c| c[..10].to_string());
    println!("cargo:rustc-env=COPILOT_LS_COMMIT={commit}");
}

/// The checkout's git directory: `.git`, or where a worktree's `.git` file points.
fn git_dir(root: &Path) -> Option<PathBuf> {
    let dot_git = root.join(".git");
    if dot_git.is_dir() {
        return Some(dot_git);
    }
    let text = std::fs::read_to_string(&dot_git).ok()?;
    let target = text.strip_prefix("gitdir:")?.trim();
    Some(root.join(target))
}

/// HEAD's commit (40 hex), and the directory holding the refs (a worktree keeps them
/// in the common directory).
fn head_commit(git: &Path) -> Option<(String, PathBuf)> {
    let common = std::fs::read_to_string(git.join("commondir"))
        .ok()
        .map_or_else(|| git.to_path_buf(), |dir| git.join(dir.trim()));
    let head = std::fs::read_to_string(git.join("HEAD")).ok()?;
    let head = head.trim();
    let Some(reference) = head.strip_prefix("ref:").map(str::trim) else {
        return is_commit(head).then(|| (head.to_string(), common));
    };
    let loose = std::fs::read_to_string(common.join(reference)).ok();
    let commit = loose.map(|c| c.trim().to_string()).or_else(|| {
        let packed = std::fs::read_to_string(common.join("packed-refs")).ok()?;
        packed.lines().find_map(|line| {
            let (commit, name) = line.split_once(' ')?;
            (name == reference).then(|| commit.to_string())
        })
    })?;
    is_commit(&commit).then_some((commit, common))
}

fn is_commit(text: &str) -> bool {
    text.len() == 40 && text.bytes().all(|b| b.is_ascii_hexdigit())
}
