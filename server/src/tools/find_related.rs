//! `find_related`: the places whose code is most like the definition at a line, by a code
//! model's vectors in the workspace index (`index/related.rs`). Offered only with a model
//! (contract section 10): none ships, so it is listed only when `COPILOT_LS_CODE_MODEL`
//! names one (docs/retrieval.md, "The code model").

use serde::Deserialize;

use super::error::ToolError;
use super::in_root;
use super::{Place, ToolOutput};
use crate::index::{RelatedError, RelatedPlace, RetrievalIndex, WorkspaceIndex};
use crate::workspace::Workspace;

/// Places listed after the definition itself.
pub const MAX_RESULTS: usize = 10;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub path: String,
    pub line: u64,
}

/// Whether the tool is offered: a model ships and is not turned off.
pub fn available() -> bool {
    crate::index::model_available()
}

pub fn run(
    args: Args,
    workspace: &Workspace,
    index: Option<&WorkspaceIndex>,
) -> Result<ToolOutput, ToolError> {
    if args.line == 0 {
        return Err(ToolError::Invalid("line is 1-based: give 1 or more".into()));
    }
    // The path is checked before anything is read; with several roots it picks the
    // root whose index is searched (the places found are that root's).
    workspace.sandbox.resolve(&args.path)?;
    let roots = in_root::roots_for(workspace, index, Some(&args.path))?;
    let [root] = &roots[..] else {
        return Err(ToolError::Invalid("path must name a file".into()));
    };
    let relative = root.path.clone().unwrap_or_else(|| ".".to_string());
    let own;
    let index = match root.index.as_ref().and_then(|index| index.roots().next()) {
        Some(index) => index,
        None => {
            own = RetrievalIndex::open(root.workspace.clone(), None);
            own.refresh(crate::index::BOUNDS, &|_| {});
            &own
        }
    };
    let (mut itself, mut places) = index
        .related(&relative, args.line as usize, MAX_RESULTS)
        .map_err(|error: RelatedError| ToolError::Invalid(error.to_string()))?;
    for place in std::iter::once(&mut itself).chain(places.iter_mut()) {
        place.path.insert_str(0, &root.prefix);
    }
    let mut text = format!("{}\n", line_of(&itself));
    if places.is_empty() {
        text.push_str("No other code in the index is like it.\n");
    } else {
        text.push_str("Most like it:\n");
        for place in &places {
            text.push_str(&line_of(place));
            text.push('\n');
        }
    }
    let summary = format!(
        "{}: {} related place{}",
        itself.name.as_deref().unwrap_or(&itself.path),
        places.len(),
        if places.len() == 1 { "" } else { "s" }
    );
    let places = places.iter().map(place_of).collect();
    Ok(ToolOutput::ok(text, summary).with_places(places))
}

/// `path:line: kind name  signature`, as `find_symbol` lists a definition.
fn line_of(place: &RelatedPlace) -> String {
    let mut line = format!("{}:{}:", place.path, place.line);
    if let Some(kind) = place.kind {
        line.push(' ');
        line.push_str(kind.as_str());
    }
    if let Some(name) = &place.name {
        line.push(' ');
        line.push_str(name);
    }
    if let Some(excerpt) = &place.excerpt {
        line.push_str("  ");
        line.push_str(excerpt);
    }
    line
}

fn place_of(place: &RelatedPlace) -> Place {
    Place {
        path: place.path.clone(),
        line: place.line,
        end_line: place.end_line,
        symbol: place.name.clone(),
        excerpt: place.excerpt.clone(),
    }
}
