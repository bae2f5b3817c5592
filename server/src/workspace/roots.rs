//! The workspace's roots and the names their paths are shown under (docs/protocol.md
//! section 10, "Several roots"): each root is the folder's own directory name, two of
//! one name are told apart as `<parent>-<name>`, and a folder inside another root is not
//! a root of its own (its files are the outer root's).
//!
//! With one root nothing is named: its paths are shown as they always were.
//!
//! Also the sandbox's view over several roots: which root a shown path is in, what a
//! workspace-wide tool walks (`Sandbox::scope`), a root alone (`Sandbox::only`).

use std::path::{Path, PathBuf};

use super::path_form;
use super::sandbox::{Resolved, Sandbox, SandboxError};

/// One root of the workspace: a canonical directory and its shown name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// What the root's paths start with when the workspace has several roots.
    pub name: String,
    /// Canonical, absolute.
    pub path: PathBuf,
}

/// `paths` (canonical directories, in the order the editor gave them) as roots: a path
/// given twice or lying inside another is dropped, and each root is named. The order of
/// what is kept is the given order.
pub fn named(paths: &[PathBuf]) -> Vec<Root> {
    let mut kept: Vec<&PathBuf> = Vec::new();
    for path in paths {
        let inside_another = paths
            .iter()
            .any(|other| other != path && path.starts_with(other));
        if !inside_another && !kept.contains(&path) {
            kept.push(path);
        }
    }
    let base = |path: &Path| {
        path.file_name()
            .map(path_form::shown)
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| "root".to_string())
    };
    let parented = |path: &Path| match path.parent().and_then(Path::file_name) {
        Some(parent) => format!("{}-{}", path_form::shown(parent), base(path)),
        None => base(path),
    };
    let mut names: Vec<String> = kept
        .iter()
        .map(|path| {
            let name = base(path);
            let shared = kept.iter().filter(|other| base(other) == name).count() > 1;
            if shared {
                parented(path)
            } else {
                name
            }
        })
        .collect();
    // Still alike (`/a/x/src` and `/b/x/src`): a number tells them apart, in order.
    for i in 0..names.len() {
        let first = names[i].clone();
        let mut n = 2;
        while names[..i].contains(&names[i]) {
            names[i] = format!("{first}-{n}");
            n += 1;
        }
    }
    kept.into_iter()
        .zip(names)
        .map(|(path, name)| Root {
            name,
            path: path.clone(),
        })
        .collect()
}

impl Sandbox {
    /// Every root, in the editor's order, with the names their paths are shown under.
    pub fn roots(&self) -> &[Root] {
        &self.roots
    }

    /// Every root's directory, for a walk over the whole workspace.
    pub fn root_paths(&self) -> Vec<&Path> {
        self.roots.iter().map(|root| root.path.as_path()).collect()
    }

    /// Whether paths carry their root's name (the workspace has several roots).
    pub fn several(&self) -> bool {
        self.roots.len() > 1
    }

    /// A sandbox of root `i` alone: its paths are shown without the root's name (what
    /// the root's own index and history keep).
    pub fn only(&self, i: usize) -> Sandbox {
        let root = self.roots.get(i).unwrap_or(&self.roots[0]).clone();
        Sandbox::of(vec![root])
    }

    /// What root `i`'s paths start with as shown: nothing with one root, else its name
    /// and a `/`.
    pub fn prefix(&self, i: usize) -> String {
        match (self.several(), self.roots.get(i)) {
            (true, Some(root)) => format!("{}/", root.name),
            _ => String::new(),
        }
    }

    /// The directories a workspace-wide tool covers for `user_path`: every root for the
    /// whole workspace (`""` or `.`) when there are several, else the path resolved.
    pub fn scope(&self, user_path: &str) -> Result<Vec<Resolved>, SandboxError> {
        let trimmed = user_path.trim();
        if self.several() && matches!(trimmed, "" | "." | "./" | "/") {
            return Ok(self
                .roots
                .iter()
                .enumerate()
                .map(|(i, root)| Resolved {
                    absolute: root.path.clone(),
                    relative: root.name.clone(),
                    root: i,
                })
                .collect());
        }
        Ok(vec![self.resolve(user_path)?])
    }

    /// The roots' names, for a message.
    pub(super) fn root_names(&self) -> String {
        self.roots
            .iter()
            .map(|r| r.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The absolute path of a shown path the sandbox gave out before (an index's or a
    /// walk's): its root joined with the path inside it, nothing resolved or checked.
    pub fn join_shown(&self, shown: &str) -> Option<PathBuf> {
        let (i, inside) = self.split_shown(shown)?;
        Some(self.roots[i].path.join(inside))
    }

    /// Root `i` and the path inside it of a shown path (`backend/src/a.rs` →
    /// `(1, "src/a.rs")`; with one root, `(0, path)`). Nothing is resolved or checked:
    /// this only splits what the sandbox showed.
    pub fn split_shown<'a>(&self, shown: &'a str) -> Option<(usize, &'a str)> {
        if !self.several() {
            return Some((0, shown));
        }
        self.roots.iter().enumerate().find_map(|(i, root)| {
            let rest = shown.strip_prefix(root.name.as_str())?;
            match rest {
                "" => Some((i, ".")),
                _ => rest.strip_prefix('/').map(|rest| (i, rest)),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(paths: &[&str]) -> Vec<String> {
        let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
        named(&paths).into_iter().map(|r| r.name).collect()
    }

    #[test]
    fn a_root_is_named_by_its_directory_and_twins_by_their_parent() {
        assert_eq!(
            names(&["/w/backend", "/w/frontend"]),
            ["backend", "frontend"]
        );
        assert_eq!(
            names(&["/a/service/src", "/b/lib/src", "/w/docs"]),
            ["service-src", "lib-src", "docs"]
        );
        assert_eq!(names(&["/a/x/src", "/b/x/src"]), ["x-src", "x-src-2"]);
        assert_eq!(names(&["/"]), ["root"]);
    }

    #[test]
    fn a_folder_inside_another_root_and_a_repeated_one_are_not_roots() {
        assert_eq!(
            names(&["/w/app/lib", "/w/app", "/w/other", "/w/app"]),
            ["app", "other"]
        );
        // A sibling whose name starts like a root's is a root of its own.
        assert_eq!(names(&["/w/app", "/w/app-backup"]), ["app", "app-backup"]);
    }
}
