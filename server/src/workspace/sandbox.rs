//! The sandbox: the one function every tool path goes through.
//!
//! A path from the model is resolved against the workspace root with symlinks followed,
//! and refused when it lands outside the root, inside `.git/`, or on a secret file. The
//! root is canonicalized once, when the sandbox is made, so every later comparison is
//! between two canonical paths and `Path::starts_with` (component-wise, so `/repo-backup`
//! is not inside `/repo`) is enough.
//!
//! A workspace of several roots (`roots.rs`) shows each path as `<root name>/<path>`:
//! the first component picks the root, the rest is resolved inside that root alone, so
//! each root is admitted and nothing between them.

use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use super::path_form;
use super::roots::{self, Root};

/// Why a path was refused. The `Display` text is what the model sees after `Error: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    #[error("path is outside the workspace: {0}")]
    Outside(String),
    #[error("access to .git internals is not allowed: {0}")]
    GitInternals(String),
    #[error("access to secret files is not allowed: {0}")]
    Secret(String),
    #[error("path contains a NUL byte")]
    NulByte,
    #[error("no such file or directory: {0}")]
    NotFound(String),
    #[error("access to kernel pseudo files (/proc, /sys, /dev) is not allowed: {0}")]
    System(String),
    /// Several roots, and the path names none of them.
    #[error("path is outside the workspace: {0} (the workspace has several roots, and a path starts with its root's name: {1})")]
    NoRoot(String, String),
}

/// A path that passed the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Canonical absolute path (for a path that does not exist yet: its canonical
    /// existing ancestor joined with the remaining plain components).
    pub absolute: PathBuf,
    /// Workspace-relative with `/` separators; `.` for the root itself. With several
    /// roots it starts with the root's name (the root itself is its name alone).
    pub relative: String,
    /// Which of the sandbox's roots it lies in (0 with one root).
    pub root: usize,
}

#[derive(Debug, Clone)]
pub struct Sandbox {
    /// Every root and its name; one entry for one root, never none.
    pub(super) roots: Arc<[Root]>,
}

impl Sandbox {
    /// Canonicalizes `root` once; every tool call compares against this.
    pub fn new(root: &Path) -> io::Result<Sandbox> {
        let root = checked_root(root)?;
        Ok(Sandbox::of(roots::named(std::slice::from_ref(&root))))
    }

    /// A sandbox over several roots (the editor's workspace folders, in its order): each
    /// canonicalized once; one inside another or given twice is dropped (`roots.rs`).
    pub fn with_roots(paths: &[PathBuf]) -> io::Result<Sandbox> {
        let canonical = paths
            .iter()
            .map(|path| checked_root(path))
            .collect::<io::Result<Vec<_>>>()?;
        if canonical.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no workspace root",
            ));
        }
        Ok(Sandbox::of(roots::named(&canonical)))
    }

    pub(super) fn of(roots: Vec<Root>) -> Sandbox {
        Sandbox {
            roots: roots.into(),
        }
    }
}

/// A root as the sandbox keeps it: canonical, a directory, not a kernel pseudo
/// filesystem.
fn checked_root(root: &Path) -> io::Result<PathBuf> {
    let root = std::fs::canonicalize(root)?;
    if is_system_path(&root) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "workspace root is a kernel pseudo filesystem: {}",
                root.display()
            ),
        ));
    }
    if !root.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!("workspace root is not a directory: {}", root.display()),
        ));
    }
    Ok(root)
}

impl Sandbox {
    /// The first root (the only one, usually).
    pub fn root(&self) -> &Path {
        &self.roots[0].path
    }

    /// Resolves a path that must exist.
    pub fn resolve(&self, user_path: &str) -> Result<Resolved, SandboxError> {
        let resolved = self.resolve_allow_missing(user_path)?;
        if !resolved.absolute.exists() {
            return Err(SandboxError::NotFound(display_path(user_path)));
        }
        Ok(resolved)
    }

    /// Resolves a path that may not exist yet (a proposed new file). Its existing part is
    /// canonicalized (so a symlinked parent directory cannot point out of the root) and
    /// the missing rest may not contain `..`.
    pub fn resolve_allow_missing(&self, user_path: &str) -> Result<Resolved, SandboxError> {
        if user_path.contains('\0') {
            return Err(SandboxError::NulByte);
        }
        let trimmed = user_path.trim();
        let shown = display_path(trimmed);
        let requested = if trimmed.is_empty() { "." } else { trimmed };
        // Listings show names that are not valid UTF-8 or hold control characters in
        // an escaped form (`caf\xe9.txt`): it is accepted back here.
        let requested = path_form::decode(requested);
        if requested.as_os_str().as_encoded_bytes().contains(&0) {
            return Err(SandboxError::NulByte);
        }
        let requested = requested.as_path();
        if !self.several() {
            let (absolute, relative) = resolve_in(self.root(), requested, shown)?;
            return Ok(Resolved {
                relative: relative_string(&relative),
                absolute,
                root: 0,
            });
        }
        // An absolute path is in the root it lands in.
        if requested.is_absolute() {
            let mut refusal = SandboxError::Outside(shown.clone());
            for (i, root) in self.roots.iter().enumerate() {
                match resolve_in(&root.path, requested, shown.clone()) {
                    Ok((absolute, relative)) => return Ok(self.shown_in(i, absolute, &relative)),
                    Err(SandboxError::Outside(_)) => {}
                    Err(other) => refusal = other,
                }
            }
            return Err(refusal);
        }
        // Else the first component names the root; the rest is resolved inside it.
        let mut parts = requested
            .components()
            .skip_while(|c| matches!(c, Component::CurDir));
        let first = parts.next();
        let rest: PathBuf = parts.collect();
        let root = first.and_then(|first| {
            self.roots.iter().position(|root| {
                Path::new(&path_form::decode(&root.name)) == Path::new(first.as_os_str())
            })
        });
        let Some(i) = root else {
            return Err(SandboxError::NoRoot(shown, self.root_names()));
        };
        let (absolute, relative) = resolve_in(&self.roots[i].path, &rest, shown)?;
        Ok(self.shown_in(i, absolute, &relative))
    }

    /// A path resolved in root `i`, shown under the root's name.
    fn shown_in(&self, i: usize, absolute: PathBuf, relative: &Path) -> Resolved {
        Resolved {
            relative: self.under_name(i, relative),
            absolute,
            root: i,
        }
    }

    /// A path inside root `i` as shown: under the root's name (the root itself is its
    /// name alone).
    fn under_name(&self, i: usize, relative: &Path) -> String {
        let name = &self.roots[i].name;
        let inside = path_form::shown_path(relative);
        if inside.is_empty() {
            name.clone()
        } else {
            format!("{name}/{inside}")
        }
    }

    /// The workspace-relative form of an absolute path, if it lies inside the root.
    /// The path is compared as given (callers pass canonical paths or walker entries
    /// below the canonical root).
    pub fn relative(&self, absolute: &Path) -> Option<String> {
        if !self.several() {
            return below(absolute, self.root()).map(relative_string);
        }
        let (i, relative) = self.containing(absolute)?;
        Some(self.under_name(i, relative))
    }

    /// The root a path lies below, and the path inside it.
    fn containing<'a>(&self, path: &'a Path) -> Option<(usize, &'a Path)> {
        self.roots
            .iter()
            .enumerate()
            .find_map(|(i, root)| below(path, &root.path).map(|rel| (i, rel)))
    }

    /// Whether a walker entry may be shown: not refused by name, and, for a symlink,
    /// pointing at something inside its root that is not refused either.
    pub fn admits_entry(&self, path: &Path, is_symlink: bool) -> bool {
        let Some((i, relative)) = self.containing(path) else {
            return false;
        };
        if refusal_for(relative, "").is_some() || is_system_path(path) {
            return false;
        }
        if !is_symlink {
            return true;
        }
        match std::fs::canonicalize(path) {
            Ok(target) => match target.strip_prefix(&self.roots[i].path) {
                Ok(rel) => refusal_for(rel, "").is_none() && !is_system_path(&target),
                Err(_) => false,
            },
            Err(_) => false,
        }
    }
}

/// `requested` (relative to `root`, or absolute) resolved inside `root` alone: its
/// canonical absolute path and the path below the root. A name is refused by what the
/// user wrote as well as by where it resolves, so a symlink called `.env` is refused
/// even if it points at a harmless file.
fn resolve_in(
    root: &Path,
    requested: &Path,
    shown: String,
) -> Result<(PathBuf, PathBuf), SandboxError> {
    // The model sometimes writes workspace paths with a leading `./` or as absolute
    // paths inside the root; both are fine. Anything else absolute is checked below.
    let joined = if requested.is_absolute() {
        requested.to_path_buf()
    } else {
        root.join(requested)
    };
    if let Some(refusal) = refusal_for(requested, &shown) {
        return Err(refusal);
    }
    let absolute =
        canonicalize_allow_missing(&joined).ok_or_else(|| SandboxError::Outside(shown.clone()))?;
    let relative = match absolute.strip_prefix(root) {
        Ok(rel) => rel.to_path_buf(),
        Err(_) => return Err(SandboxError::Outside(shown)),
    };
    // With `/` as the root these are inside it, and reading them blocks or never ends.
    if is_system_path(&absolute) {
        return Err(SandboxError::System(shown));
    }
    if let Some(refusal) = refusal_for(&relative, &shown) {
        return Err(refusal);
    }
    Ok((absolute, relative))
}

/// Whether an absolute path lies in a kernel pseudo filesystem (`/proc`, `/sys`,
/// `/dev`): files there block on read (`/proc/kmsg`), never end (`/dev/zero`) or are
/// not files at all, so neither the walk nor a tool ever goes there.
pub fn is_system_path(absolute: &Path) -> bool {
    const SYSTEM: [&str; 3] = ["/proc", "/sys", "/dev"];
    // Every walked file comes here: compare bytes, not components (a fifth of a
    // search's own time went to parsing paths), unless the path is not in normal form.
    #[cfg(unix)]
    if let Some(bytes) = normal_bytes(absolute) {
        return SYSTEM.iter().any(|dir| {
            bytes.starts_with(dir.as_bytes()) && matches!(bytes.get(dir.len()), None | Some(b'/'))
        });
    }
    SYSTEM.iter().any(|dir| absolute.starts_with(dir))
}

/// A path's bytes when splitting them at `/` gives its components exactly: no `//`,
/// no `.` component, no trailing `/`.
#[cfg(unix)]
fn normal_bytes(path: &Path) -> Option<&[u8]> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    // One pass: a `/` after `/` (`//`, or the end of a `.` component), or a path ending
    // in `/` or `/.`, or a first `.` component.
    let (mut before, mut last) = (b'/', 0u8);
    for &b in bytes {
        if b == b'/' && (last == b'/' || (last == b'.' && before == b'/')) {
            return None;
        }
        (before, last) = (last, b);
    }
    let odd = bytes.len() > 1 && last == b'/'
        || last == b'.' && before == b'/'
        || bytes.starts_with(b"./")
        || bytes == b".";
    (!odd).then_some(bytes)
}

/// `path` below `root`, as `Path::strip_prefix` gives it, by bytes when both are in
/// normal form.
fn below<'a>(path: &'a Path, root: &Path) -> Option<&'a Path> {
    #[cfg(unix)]
    if let (Some(bytes), Some(root_bytes)) = (normal_bytes(path), normal_bytes(root)) {
        use std::os::unix::ffi::OsStrExt;
        let rest = bytes.strip_prefix(root_bytes)?;
        let rest = match rest {
            [] => rest,
            [b'/', rest @ ..] => rest,
            _ if root_bytes == b"/" => rest,
            _ => return None,
        };
        return Some(Path::new(std::ffi::OsStr::from_bytes(rest)));
    }
    path.strip_prefix(root).ok()
}

/// `.git` anywhere in the path, or a secret file name as its last component.
fn refusal_for(path: &Path, shown: &str) -> Option<SandboxError> {
    let git = |name: &std::ffi::OsStr| name == ".git";
    #[cfg(unix)]
    let is_git = match normal_bytes(path) {
        Some(bytes) => bytes.split(|b| *b == b'/').any(|part| part == b".git"),
        None => path
            .components()
            .any(|c| matches!(c, Component::Normal(n) if git(n))),
    };
    #[cfg(not(unix))]
    let is_git = path
        .components()
        .any(|c| matches!(c, Component::Normal(n) if git(n)));
    if is_git {
        return Some(SandboxError::GitInternals(shown.to_string()));
    }
    let name = path.file_name()?.to_str()?;
    if is_secret_file_name(name) {
        return Some(SandboxError::Secret(shown.to_string()));
    }
    None
}

/// `.env`, `.env.*`, `*.pem`, `*.key`, `id_rsa*`, `id_ed25519*`.
/// Case-insensitive and allocation-free: it runs for every file the walkers visit.
pub fn is_secret_file_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    let starts = |prefix: &str| {
        bytes.len() >= prefix.len() && bytes[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
    };
    let ends = |suffix: &str| {
        bytes.len() >= suffix.len()
            && bytes[bytes.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
    };
    name.eq_ignore_ascii_case(".env")
        || starts(".env.")
        || ends(".pem")
        || ends(".key")
        || starts("id_rsa")
        || starts("id_ed25519")
}

/// Whether a file or directory name is one the walkers must never descend into or show.
pub fn is_refused_name(name: &str) -> bool {
    name == ".git" || is_secret_file_name(name)
}

/// Whether a workspace-relative path (`/` separators) passes through a refused name:
/// `.git/` or a secret file, at any depth.
pub fn is_refused_path(path: &str) -> bool {
    path.split('/').any(is_refused_name)
}

/// Canonicalizes the longest existing ancestor and appends the rest, refusing `..`
/// in the part that does not exist (it cannot be resolved safely).
fn canonicalize_allow_missing(path: &Path) -> Option<PathBuf> {
    if let Ok(canonical) = std::fs::canonicalize(path) {
        return Some(canonical);
    }
    let mut missing = Vec::new();
    let mut current = path.to_path_buf();
    loop {
        let name = current.file_name()?.to_os_string();
        missing.push(name);
        if !current.pop() {
            return None;
        }
        if let Ok(canonical) = std::fs::canonicalize(&current) {
            let mut result = canonical;
            for name in missing.iter().rev() {
                let component = Path::new(name);
                match component.components().next() {
                    Some(Component::Normal(_)) => result.push(name),
                    Some(Component::CurDir) => {}
                    _ => return None,
                }
            }
            return Some(result);
        }
        // `file_name` is None for a trailing `..`: that path cannot be resolved.
        current.file_name()?;
    }
}

/// The shown form (path_form.rs): `/`-separated, odd bytes escaped; `.` for the root.
fn relative_string(relative: &Path) -> String {
    let shown = path_form::shown_path(relative);
    if shown.is_empty() {
        ".".to_string()
    } else {
        shown
    }
}

/// The user's path, shortened so a huge argument cannot flood the model's context.
fn display_path(path: &str) -> String {
    const MAX: usize = 200;
    if path.len() <= MAX {
        return path.to_string();
    }
    let mut end = MAX;
    while !path.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &path[..end])
}

#[cfg(test)]
mod tests {
    use super::{below, is_secret_file_name, is_system_path, refusal_for};
    use std::path::Path;

    #[test]
    fn the_byte_comparisons_agree_with_the_component_ones() {
        let paths = [
            "/",
            "/proc",
            "/proc/1/maps",
            "/process/x",
            "/sys",
            "/sysroot/a",
            "/dev/null",
            "/devices",
            "//proc/x",
            "/./proc/x",
            "/w/ws",
            "/w/ws/",
            "/w/ws/a.rs",
            "/w/wsx/a",
            "/w/ws/.git/config",
            "/w/ws/a/.git",
            "/w/ws/.github/x",
            "/w/ws//a",
            "/w/ws/./a",
            "/w/ws/a/../b",
            "relative/.git/x",
            ".",
            "./a",
            "a/.",
            "/w/ws/.",
            "/w/.ws/a",
            "/w/ws./a",
            "/w/ws/..",
            "/w/ws/a.",
            "/w/ws/.a",
        ];
        for path in paths.map(Path::new) {
            let std_system = ["/proc", "/sys", "/dev"]
                .iter()
                .any(|d| path.starts_with(d));
            assert_eq!(is_system_path(path), std_system, "{path:?}");
            for root in ["/", "/w/ws", "/w/ws/"].map(Path::new) {
                assert_eq!(
                    below(path, root),
                    path.strip_prefix(root).ok(),
                    "{path:?} {root:?}"
                );
            }
            let std_git = path
                .components()
                .any(|c| matches!(c, std::path::Component::Normal(n) if n == ".git"));
            assert_eq!(refusal_for(path, "").is_some(), std_git, "{path:?}");
        }
    }

    #[test]
    fn secret_names_match_case_insensitively_and_nothing_else() {
        for secret in [
            ".env",
            ".ENV",
            ".env.local",
            "Server.PEM",
            "tls.key",
            "ID_RSA",
            "id_rsa.pub",
            "id_ed25519",
        ] {
            assert!(is_secret_file_name(secret), "{secret}");
        }
        for ordinary in [
            "env.rs",
            ".envrc",
            "environment.md",
            "keyboard.rs",
            "key.rs",
            "pem.txt",
            "my_id_rsa_notes",
            "monkey",
        ] {
            assert!(!is_secret_file_name(ordinary), "{ordinary}");
        }
    }
}
