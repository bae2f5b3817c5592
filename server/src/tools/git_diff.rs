//! `git_diff`: the uncommitted changes of the work tree against HEAD, staged and
//! unstaged together, as a unified diff with 3 lines of context (at most 400 lines),
//! then the untracked files by name.
//!
//! HEAD's files and the git index come from `history::diff`; the work tree is walked
//! with the workspace's one walker (gitignore honoured) and read through the sandbox,
//! each text redacted whole before it is diffed. A file the sandbox refuses (`.env`,
//! keys, `.git/`) is never read, diffed or named.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;
use serde_json::{json, Value};

use super::error::ToolError;
use super::git_log::unavailable;
use super::in_root;
use super::ToolOutput;
use crate::history::diff::{unified, Baseline};
use crate::workspace::read::{looks_binary, read_bounded};
use crate::workspace::sandbox::{is_refused_path, Sandbox};
use crate::workspace::walk::{self, Unreached};
use crate::workspace::{redact, Workspace, MAX_READ_BYTES};

/// Diff lines shown; the rest are counted.
pub const MAX_DIFF_LINES: usize = 400;
/// Untracked names shown; the rest are counted.
const MAX_UNTRACKED: usize = 100;
const CONTEXT: u32 = 3;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub path: Option<String>,
}

/// One changed file and its part of the diff.
struct Changed {
    path: String,
    status: &'static str,
    lines: Vec<String>,
}

pub fn run(args: Args, workspace: &Workspace) -> Result<(ToolOutput, Value), ToolError> {
    let roots = in_root::roots_for(workspace, None, args.path.as_deref())?;
    if let [root] = &roots[..] {
        let args = Args {
            path: root.path.clone(),
        };
        return run_in(args, &root.workspace, &root.prefix);
    }
    // Several roots and no path: every root's changes, its paths under its name.
    let (text, data) = in_root::in_each(&roots, |root| {
        run_in(Args { path: None }, &root.workspace, &root.prefix)
    });
    let diff: String = data
        .iter()
        .filter_map(|data| data["diff"].as_str())
        .collect();
    let files = in_root::joined(&data, "files");
    let summary = format!("{} files changed or untracked", files.len());
    Ok((
        ToolOutput::ok(text, summary),
        json!({"diff": diff, "files": files}),
    ))
}

/// `git_diff` in one root, its paths shown under `prefix`.
fn run_in(
    args: Args,
    workspace: &Workspace,
    prefix: &str,
) -> Result<(ToolOutput, Value), ToolError> {
    let sandbox = &workspace.sandbox;
    let resolved = args
        .path
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| sandbox.resolve_allow_missing(p))
        .transpose()?
        .filter(|resolved| resolved.relative != ".");
    let (under, start) = match &resolved {
        Some(resolved) => (resolved.relative.clone(), resolved.absolute.clone()),
        None => (String::new(), sandbox.root().to_path_buf()),
    };
    let baseline = Baseline::open(sandbox.root(), &under).map_err(unavailable)?;

    let mut changed: Vec<Changed> = Vec::new();
    for path in baseline.head_paths() {
        if shows(path) {
            changed.extend(compare(&baseline, sandbox, path, prefix));
        }
    }
    // The work tree: what HEAD does not hold is staged (the git index has it) or
    // untracked.
    let mut untracked = Vec::new();
    let unreached = Unreached::default();
    if start.exists() {
        for entry in walk::builder(&start).build() {
            let entry = match entry {
                Ok(entry) => entry,
                Err(error) => {
                    unreached.note(sandbox, &error);
                    continue;
                }
            };
            if !walk::is_file(&entry) || !walk::admits(sandbox, &entry) {
                continue;
            }
            let Some(path) = sandbox.relative(entry.path()) else {
                continue;
            };
            if baseline.in_head(&path) || baseline.in_other_entry(&path) || !shows(&path) {
                continue;
            }
            if baseline.in_index(&path) {
                let bytes = read(entry.path()).unwrap_or_default();
                changed.push(Changed {
                    lines: file_diff(&format!("{prefix}{path}"), None, Some(&bytes))
                        .unwrap_or_default(),
                    path,
                    status: "added",
                });
            } else {
                untracked.push(path);
            }
        }
    } else if !under.is_empty() && baseline.head_paths().next().is_none() {
        return Err(ToolError::NotFound(under));
    }
    changed.sort_by(|a, b| a.path.cmp(&b.path));
    let untracked: Vec<String> = collapse(&baseline, untracked)
        .into_iter()
        .map(|path| format!("{prefix}{path}"))
        .collect();
    for change in &mut changed {
        change.path.insert_str(0, prefix);
    }
    let under = match under.is_empty() {
        true => under,
        false => format!("{prefix}{under}"),
    };

    let mut diff = String::new();
    let mut shown = 0;
    for line in changed.iter().flat_map(|change| &change.lines) {
        if shown == MAX_DIFF_LINES {
            break;
        }
        diff.push_str(line);
        diff.push('\n');
        shown += 1;
    }
    let total: usize = changed.iter().map(|change| change.lines.len()).sum();
    let mut text = diff.clone();
    if total > shown {
        text.push_str(&format!(
            "(… {} more diff lines; call git_diff with a file's path to see its changes)\n",
            total - shown
        ));
    }
    if !untracked.is_empty() {
        text.push_str("Untracked:\n");
        for path in untracked.iter().take(MAX_UNTRACKED) {
            text.push_str(&format!("  {path}\n"));
        }
        if untracked.len() > MAX_UNTRACKED {
            text.push_str(&format!(
                "  … and {} more\n",
                untracked.len() - MAX_UNTRACKED
            ));
        }
    }
    if changed.is_empty() && untracked.is_empty() {
        text.push_str(&if under.is_empty() {
            "No uncommitted changes: the work tree matches HEAD.\n".to_string()
        } else {
            format!("No uncommitted changes in {under}: it matches HEAD.\n")
        });
    }
    super::push_unreached(&mut text, &unreached);

    let mut files: Vec<Value> = changed
        .iter()
        .map(|change| json!({"path": change.path, "status": change.status}))
        .collect();
    files.extend(
        untracked
            .iter()
            .map(|path| json!({"path": path, "status": "untracked"})),
    );
    let summary = format!("{} changed, {} untracked", changed.len(), untracked.len());
    Ok((
        ToolOutput::ok(text, summary),
        json!({"diff": diff, "files": files}),
    ))
}

/// A file HEAD holds, against the work tree: `None` when it is unchanged (or cannot be
/// reached through the sandbox).
fn compare(baseline: &Baseline, sandbox: &Sandbox, path: &str, prefix: &str) -> Option<Changed> {
    let shown = format!("{prefix}{path}");
    let resolved = sandbox.resolve_allow_missing(path).ok()?;
    let absolute = &resolved.absolute;
    let old = || baseline.head_bytes(path);
    if !absolute.exists() || absolute.is_dir() {
        return Some(Changed {
            path: path.to_string(),
            status: "deleted",
            lines: file_diff(&shown, Some(&old().unwrap_or_default()), None).unwrap_or_default(),
        });
    }
    if baseline.unchanged_by_stat(path, absolute) {
        return None;
    }
    let new = read(absolute)?;
    if baseline.same_as_head(path, &new) {
        return None;
    }
    Some(Changed {
        path: path.to_string(),
        status: "modified",
        lines: file_diff(&shown, Some(&old().unwrap_or_default()), Some(&new))?,
    })
}

/// A work tree file's bytes; `None` when it cannot be read (or is too large).
fn read(absolute: &Path) -> Option<Vec<u8>> {
    read_bounded(absolute, MAX_READ_BYTES).ok().flatten()
}

/// One file's part of the diff: `--- a/path`, `+++ b/path` (`/dev/null` for a side that
/// does not exist), then its hunks, each text redacted whole first. `None` when both
/// sides exist and differ only in their line ends being CRLF on one side and LF on the
/// other (a checkout with `core.autocrlf`: not a change).
fn file_diff(path: &str, old: Option<&[u8]>, new: Option<&[u8]>) -> Option<Vec<String>> {
    let a = old.map_or("/dev/null".to_string(), |_| format!("a/{path}"));
    let b = new.map_or("/dev/null".to_string(), |_| format!("b/{path}"));
    if old.is_some_and(looks_binary) || new.is_some_and(looks_binary) {
        return Some(vec![format!("Binary files {a} and {b} differ")]);
    }
    let text =
        |bytes: Option<&[u8]>| String::from_utf8_lossy(bytes.unwrap_or_default()).into_owned();
    let (mut old_text, mut new_text) = (text(old), text(new));
    if old.is_some() && new.is_some() && old_text.contains('\r') != new_text.contains('\r') {
        for side in [&mut old_text, &mut new_text] {
            if side.contains("\r\n") {
                *side = side.replace("\r\n", "\n");
            }
        }
        if old_text == new_text {
            return None;
        }
    }
    let hunks = unified(
        &redact::redact(&old_text),
        &redact::redact(&new_text),
        CONTEXT,
    );
    let mut lines = vec![format!("--- {a}"), format!("+++ {b}")];
    if hunks.is_empty() {
        lines.push(
            if old.is_some_and(|o| !o.is_empty()) || new.is_some_and(|n| !n.is_empty()) {
                "(the change is not shown: it lies in redacted text or in bytes that are not UTF-8)"
            } else {
                "(empty file)"
            }
            .to_string(),
        );
    }
    lines.extend(hunks);
    Some(lines)
}

/// Untracked files, a folder with nothing tracked in it named once as `folder/`.
fn collapse(baseline: &Baseline, untracked: Vec<String>) -> Vec<String> {
    let tracked = baseline.tracked_folders();
    let mut shown = BTreeSet::new();
    for path in untracked {
        let folder = path
            .match_indices('/')
            .map(|(at, _)| &path[..at])
            .find(|folder| !tracked.contains(*folder));
        shown.insert(match folder {
            Some(folder) => format!("{folder}/"),
            None => path,
        });
    }
    shown.into_iter().collect()
}

/// Secret files and `.git/` are never diffed or named.
fn shows(path: &str) -> bool {
    !is_refused_path(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_diff_has_its_headers_and_redacted_hunks() {
        let lines = file_diff("src/a.rs", Some(b"fn a() {}\n"), Some(b"fn a() { b() }\n")).unwrap();
        assert_eq!(
            lines,
            [
                "--- a/src/a.rs",
                "+++ b/src/a.rs",
                "@@ -1,1 +1,1 @@",
                "-fn a() {}",
                "+fn a() { b() }"
            ]
        );
        // Split so no secret-shaped literal sits in the source.
        let token = ["gh", "p_", "Xq7RmZ2vLk9PwT4nBc8YhJ3sDf6GuE1aKo5N"].concat();
        let added = format!("const T: &str = \"{token}\";\n");
        let lines = file_diff("t.rs", None, Some(added.as_bytes())).unwrap();
        assert_eq!(lines[..2], ["--- /dev/null", "+++ b/t.rs"]);
        assert!(!lines.join("\n").contains(&token), "{lines:?}");
        assert_eq!(
            file_diff("b.bin", Some(b"\0\x01"), None).unwrap(),
            ["Binary files a/b.bin and /dev/null differ"]
        );
        // CRLF in the work tree against LF in git is no change; a real one still is.
        assert_eq!(
            file_diff("c.txt", Some(b"a\nb\n"), Some(b"a\r\nb\r\n")),
            None
        );
        assert_eq!(
            file_diff("c.txt", Some(b"a\nb\n"), Some(b"a\r\nB\r\n")).unwrap()[2..],
            ["@@ -1,2 +1,2 @@", " a", "-b", "+B"]
        );
    }
}
