//! A git repository made with the `git` CLI, for the end-to-end tests of the history and
//! the `git_*` tools: a fixed author and committer, commit n dated n days after `EPOCH`,
//! no system configuration, and HOME where the test says, so no developer's
//! configuration interferes.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::Command;

/// 2023-11-14 22:13:20 UTC.
pub const EPOCH: u64 = 1_700_000_000;
pub const AUTHOR: &str = "Ada Lovelace";
/// No tool may ever show it.
pub const EMAIL: &str = "ada@example.com";

pub struct GitRepo {
    pub path: PathBuf,
    home: PathBuf,
    commits: Cell<u64>,
}

impl GitRepo {
    /// A new repository at `path` (branch `main`, no commit yet), git's HOME at `home`.
    pub fn init(path: PathBuf, home: PathBuf) -> GitRepo {
        let repo = GitRepo {
            path,
            home,
            commits: Cell::new(0),
        };
        std::fs::create_dir_all(&repo.path).unwrap();
        repo.git(&["-c", "init.defaultBranch=main", "init", "-q"]);
        repo
    }

    /// Runs `git ARGS` in the repository, which must succeed; its stdout.
    pub fn git(&self, args: &[&str]) -> String {
        self.git_in(&self.path, args)
    }

    /// Runs `git ARGS` in `dir` (a linked worktree, a clone), dated as the next commit.
    pub fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        let date = format!("{} +0000", EPOCH + self.commits.get() * 86_400);
        let output = Command::new("git")
            .args(["-c", "gc.auto=0", "-c", "commit.gpgsign=false"])
            .args(args)
            .current_dir(dir)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", AUTHOR)
            .env("GIT_AUTHOR_EMAIL", EMAIL)
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_NAME", AUTHOR)
            .env("GIT_COMMITTER_EMAIL", EMAIL)
            .env("GIT_COMMITTER_DATE", &date)
            .output()
            .expect("git runs");
        assert!(
            output.status.success(),
            "git {args:?} in {}: {}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Writes `path` (folders made) in the work tree.
    pub fn write(&self, path: &str, text: &str) {
        let file = self.path.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }

    /// Writes `path` and commits everything with `subject`, a day after the last commit.
    pub fn commit(&self, path: &str, text: &str, subject: &str) {
        self.write(path, text);
        self.commit_all(subject);
    }

    pub fn commit_all(&self, subject: &str) {
        self.commit_all_in(&self.path.clone(), subject);
    }

    /// Commits everything in `dir` (a linked worktree) with `subject`, a day after the
    /// last commit.
    pub fn commit_all_in(&self, dir: &Path, subject: &str) {
        self.commits.set(self.commits.get() + 1);
        self.git_in(dir, &["add", "-A"]);
        self.git_in(dir, &["commit", "-q", "-m", subject]);
    }

    /// A revision's full id.
    pub fn rev(&self, rev: &str) -> String {
        self.git(&["rev-parse", rev]).trim().to_string()
    }

    /// The first 10 hex digits of a revision's id.
    pub fn short(&self, rev: &str) -> String {
        self.rev(rev)[..10].to_string()
    }

    /// The loose object file of `rev`.
    pub fn loose_object(&self, rev: &str) -> PathBuf {
        let id = self.rev(rev);
        let file = self.path.join(".git/objects").join(&id[..2]).join(&id[2..]);
        assert!(file.is_file(), "{rev} ({id}) is not a loose object");
        file
    }
}
