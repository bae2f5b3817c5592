//! The tools that work inside one root (the git tools: each root has a repository and
//! a history of its own) over a workspace of several roots: a path picks its root and
//! the tool runs in that root alone with the path inside it; no path runs it in every
//! root. Each run shows its paths under the root's name (`prefix`). With one root this
//! is the tool as it always ran.

use serde_json::Value;

use super::error::ToolError;
use super::ToolOutput;
use crate::index::WorkspaceIndex;
use crate::workspace::Workspace;

/// One root a tool runs in.
pub struct InRoot {
    /// The workspace narrowed to the root (`Workspace::only`): its paths are the root's.
    pub workspace: Workspace,
    /// The root's index, when the workspace has one.
    pub index: Option<WorkspaceIndex>,
    /// What the root's paths are shown under: `""` with one root, else `<name>/`.
    pub prefix: String,
    /// The tool's path inside the root (`None` when none was given).
    pub path: Option<String>,
}

/// The roots a call runs in: the one its `path` (as shown) lies in, with the path inside
/// it; every root when there is no path (or it is the whole workspace).
pub fn roots_for(
    workspace: &Workspace,
    index: Option<&WorkspaceIndex>,
    path: Option<&str>,
) -> Result<Vec<InRoot>, ToolError> {
    let sandbox = &workspace.sandbox;
    let path = path.map(str::trim).filter(|p| !p.is_empty());
    if !sandbox.several() {
        return Ok(vec![InRoot {
            workspace: workspace.clone(),
            index: index.cloned(),
            prefix: String::new(),
            path: path.map(str::to_string),
        }]);
    }
    let narrowed = |i: usize, path: Option<String>| {
        let prefix = sandbox.prefix(i);
        let index = index.and_then(|index| {
            index
                .prefixed()
                .find(|(p, _)| *p == prefix)
                .map(|(_, root)| WorkspaceIndex::one(root.clone()))
        });
        InRoot {
            workspace: workspace.only(i),
            index,
            prefix,
            path,
        }
    };
    match path {
        Some(path) if !matches!(path, "." | "./" | "/") => {
            let resolved = sandbox.resolve_allow_missing(path)?;
            let inside = sandbox
                .split_shown(&resolved.relative)
                .map(|(_, inside)| inside.to_string())
                .filter(|inside| inside != ".");
            // A path ending in `/` keeps saying it is a folder.
            let inside = inside.map(|inside| match path.ends_with('/') {
                true => format!("{inside}/"),
                false => inside,
            });
            Ok(vec![narrowed(resolved.root, inside)])
        }
        _ => Ok((0..sandbox.roots().len())
            .map(|i| narrowed(i, None))
            .collect()),
    }
}

/// `run` in each of `roots` (several roots, no path): each root's text under its name
/// (`api:` then its lines, or its error), and the data of the runs that answered.
pub fn in_each(
    roots: &[InRoot],
    run: impl Fn(&InRoot) -> Result<(ToolOutput, Value), ToolError>,
) -> (String, Vec<Value>) {
    let (mut text, mut data) = (String::new(), Vec::new());
    for root in roots {
        let name = root.prefix.trim_end_matches('/');
        match run(root) {
            Ok((output, value)) => {
                text.push_str(&format!("{name}:\n{}", output.text));
                data.push(value);
            }
            Err(error) => text.push_str(&format!("{name}: {error}\n")),
        }
    }
    (text, data)
}

/// The arrays under `key` of every run's data, one after the other.
pub fn joined(data: &[Value], key: &str) -> Vec<Value> {
    data.iter()
        .filter_map(|data| data[key].as_array())
        .flatten()
        .cloned()
        .collect()
}
