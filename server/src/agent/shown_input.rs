//! What the model and the no-model answer are shown of an ask's input: the retrieved
//! chunks and the editor's selection, with secrets redacted from their whole files. A
//! chunk or a selection from the middle of a key block holds no BEGIN line of its own,
//! so redacting it alone would show the key's body.

use super::AskInput;
use crate::workspace::redact::redact;
use crate::workspace::Workspace;

/// `input` with its file text redacted; the question and the history are the user's
/// and the model's own words and stay.
pub fn redacted(workspace: &Workspace, mut input: AskInput) -> AskInput {
    for hit in &mut input.context {
        hit.text = workspace
            .redacted_lines(&hit.path, hit.start_line, hit.end_line)
            .filter(|text| !text.is_empty())
            // A file gone since it was indexed: the chunk alone, redacted as it stands.
            .unwrap_or_else(|| redact(&hit.text).into_owned());
    }
    if let Some(focus) = &mut input.focus {
        if let Some(selected) = &focus.selected_text {
            let near = focus.lines.map_or(1, |(first, _)| first);
            let shown = workspace
                .redacted_part(&focus.path, selected, near)
                .unwrap_or_else(|| redact(selected).into_owned());
            focus.selected_text = Some(shown);
        }
    }
    input
}
