//! Which roots are not projects: the filesystem root, a home directory itself, and the
//! system's own directories. An editor opened on one of them (`cwd: "/"` from an agent
//! panel, a window on `~`) would otherwise index the whole machine in the background;
//! instead the index is not built there, the user is told why, and the tools still read
//! and search on demand.

use std::path::Path;

/// The directories that hold the system, not a project (their subdirectories may well
/// be projects: `/usr/src/linux`, `/opt/app`).
const SYSTEM_DIRS: &[&str] = &[
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/home",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/media",
    "/mnt",
    "/opt",
    "/proc",
    "/run",
    "/sbin",
    "/snap",
    "/srv",
    "/sys",
    "/tmp",
    "/usr",
    "/usr/bin",
    "/usr/lib",
    "/usr/local",
    "/usr/share",
    "/var",
    "/var/tmp",
    "/Users",
    "/Applications",
    "/Library",
    "/System",
    "/Volumes",
    "/private",
    "/private/tmp",
    "/private/var",
];

/// Why `root` (canonical) is not indexed, or `None` for a project. `home` is the user's
/// home directory, canonical, if known.
pub fn not_a_project(root: &Path, home: Option<&Path>) -> Option<String> {
    if root.parent().is_none() {
        return Some(format!(
            "copilot-ls does not index {} (the whole filesystem); open a project folder",
            root.display()
        ));
    }
    if home.is_some_and(|home| home == root) {
        return Some(format!(
            "copilot-ls does not index {} (your home directory); open a project folder",
            root.display()
        ));
    }
    if SYSTEM_DIRS.iter().any(|dir| root == Path::new(dir)) {
        return Some(format!(
            "copilot-ls does not index {} (a system directory); open a project folder",
            root.display()
        ));
    }
    None
}

/// The user's home directory from `HOME`, canonical.
pub fn home_dir() -> Option<std::path::PathBuf> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    std::fs::canonicalize(home).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_home_and_system_dirs_are_not_projects() {
        let home = Path::new("/home/ada");
        assert!(not_a_project(Path::new("/"), Some(home)).is_some());
        assert!(not_a_project(home, Some(home))
            .unwrap()
            .contains("home directory"));
        assert!(not_a_project(Path::new("/usr"), Some(home)).is_some());
        assert!(not_a_project(Path::new("/tmp"), Some(home)).is_some());
        assert!(not_a_project(Path::new("/home/ada/src/app"), Some(home)).is_none());
        assert!(not_a_project(Path::new("/tmp/project"), Some(home)).is_none());
        assert!(not_a_project(Path::new("/usr/src/linux"), None).is_none());
    }
}
