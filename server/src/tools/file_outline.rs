//! `file_outline`: a file's definitions by its syntax, nested two spaces per level, each
//! with its 1-based lines from the defining line to the end of its body
//! (`14-33 impl TokenBucket`, `  25-33 fn try_acquire`); the editor's text when open.

use serde::Deserialize;

use super::error::ToolError;
use super::{Place, ToolOutput};
use crate::syntax::{self, Language};
use crate::workspace::Workspace;

/// Lines of one outline; a generated file with thousands of definitions gets a note.
const MAX_LINES: usize = 1000;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Args {
    pub path: String,
}

pub fn run(args: Args, workspace: &Workspace) -> Result<ToolOutput, ToolError> {
    let workspace = &workspace.asking_editor();
    let resolved = workspace.resolve_readable(&args.path)?;
    if resolved.absolute.is_dir() {
        return Err(ToolError::IsDirectory(resolved.relative));
    }
    let path = resolved.relative.clone();
    Language::from_path(&path).ok_or_else(|| no_outline(&path))?;
    // Through the workspace: the editor's (or the ACP client's) text when open,
    // redacted, so a signature never shows a secret.
    let file = workspace.read_redacted(&resolved)?;
    let language = Language::of_file(&path, &file.text).ok_or_else(|| no_outline(&path))?;
    let symbols = syntax::symbols(&file.text, language)
        .map_err(|error| ToolError::Invalid(format!("cannot outline {path}: {error}")))?;
    if symbols.is_empty() {
        return Ok(ToolOutput::ok(
            format!("(no definitions found in {path})\n"),
            format!("{path}: no definitions"),
        ));
    }
    let count = symbols.len();
    let lines: Vec<String> = symbols
        .iter()
        .map(|symbol| {
            format!(
                "{}{}-{} {}",
                "  ".repeat(symbol.depth),
                symbol.line + 1,
                symbol.end_line + 1,
                symbol.label
            )
        })
        .collect();
    let places = symbols
        .iter()
        .take(MAX_LINES)
        .map(|symbol| Place {
            path: path.clone(),
            line: symbol.line + 1,
            end_line: symbol.end_line + 1,
            symbol: Some(symbol.label.clone()),
            excerpt: Some(symbol.signature.clone()),
        })
        .collect();
    let text = super::capped_lines(lines, MAX_LINES, |more| {
        format!("(… {more} more definitions; read_file the part you need)")
    });
    Ok(ToolOutput::ok(
        text,
        format!(
            "{path}: {count} definition{}",
            if count == 1 { "" } else { "s" }
        ),
    )
    .with_places(places))
}

/// The error for a file whose language has no outline: names its extension and the
/// ones that have one.
fn no_outline(path: &str) -> ToolError {
    let name = path.rsplit('/').next().unwrap_or(path);
    let what = match name.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() => format!("extension .{extension}"),
        _ => "no extension".to_string(),
    };
    ToolError::Invalid(format!(
        "file_outline has no outline for {path} ({what}); it knows {}. Use read_file or search_code instead",
        known_languages()
    ))
}

/// `Rust (.rs), Python (.py .pyi), …` for error messages.
pub fn known_languages() -> String {
    let extensions = [
        "rs", "py", "pyi", "js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx", "go", "java", "c",
        "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx",
    ];
    let mut parts: Vec<String> = Vec::new();
    for language in Language::ALL {
        let own: Vec<String> = extensions
            .iter()
            .filter(|e| Language::from_extension(e) == Some(language))
            .map(|e| format!(".{e}"))
            .collect();
        parts.push(format!("{} ({})", language.name(), own.join(" ")));
    }
    parts.join(", ")
}
