//! Suggested edits: each is shown as a diff of the whole file, and when the client can
//! write files the user is asked (`session/request_permission`); only the allow option
//! sends `fs/write_text_file`. Rejected, cancelled, a failed request or a text that has
//! moved on: nothing is written.

use agent_client_protocol::v1::schema::{
    ContentBlock, Diff, PermissionOption, PermissionOptionKind, RequestPermissionOutcome,
    RequestPermissionRequest, TextContent, ToolCallContent, ToolCallLocation, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use tokio_util::sync::CancellationToken;

use super::client_fs::ClientFiles;
use super::updates::{diff_content, Updates};
use crate::agent::IdentifiedEdit;
use crate::tools::ProposedEdit;
use crate::workspace::read_disk_text;

const ALLOW: &str = "allow";
const REJECT: &str = "reject";

/// How offering the edits ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Offered {
    Done,
    /// The prompt was cancelled while the user was being asked.
    Cancelled,
}

/// The file's whole text before (`None` for a new file) and after the edit, from the
/// client's text when it offers reading, else the disk.
async fn texts(
    files: &ClientFiles,
    edit: &ProposedEdit,
) -> Result<(Option<String>, String), String> {
    let current = files.read(&edit.absolute).await;
    if edit.creates_file {
        if current.is_some() || edit.absolute.exists() {
            return Err(format!(
                "{} exists now; the new file was not created",
                edit.path
            ));
        }
        return Ok((None, edit.new_text.clone()));
    }
    let before = match current {
        Some(text) => text,
        None => read_disk_text(&edit.absolute, &edit.path).map_err(|e| e.to_string())?,
    };
    match before.matches(edit.old_text.as_str()).count() {
        1 => {
            let after = before.replacen(edit.old_text.as_str(), &edit.new_text, 1);
            Ok((Some(before), after))
        }
        count => Err(format!(
            "the text to replace now occurs {count} times in {}; the edit no longer applies",
            edit.path
        )),
    }
}

/// The edit as a diff of the whole file, or why it cannot be shown.
pub async fn diff(files: &ClientFiles, edit: &ProposedEdit) -> Result<Diff, String> {
    let (before, after) = texts(files, edit).await?;
    Ok(diff_content(&edit.absolute, before, after))
}

/// Asks the user about each edit in turn and writes the allowed ones through the
/// client. Does nothing when the client cannot write files (the diffs were shown).
pub async fn offer(
    updates: &Updates,
    edits: &[(String, IdentifiedEdit)],
    cancel: &CancellationToken,
) -> Offered {
    if !updates.files.capabilities().write {
        return Offered::Done;
    }
    for (call_id, edit) in edits {
        let edit = &edit.edit;
        // The user may have changed the file since the edit was proposed, or an
        // earlier edit of this prompt may have: offer it against the text of now.
        updates.files.forget();
        let location =
            ToolCallLocation::new(edit.absolute.clone()).line(edit.start_line.max(1) as u32);
        let (before, after) = match texts(&updates.files, edit).await {
            Ok(texts) => texts,
            Err(error) => {
                updates.tool_call_update(call_id, failed(error));
                continue;
            }
        };
        let fields = ToolCallUpdateFields::new()
            .kind(ToolKind::Edit)
            .status(ToolCallStatus::Pending)
            .title(format!("Edit {}: {}", edit.path, edit.title))
            .locations(vec![location])
            .content(vec![ToolCallContent::Diff(diff_content(
                &edit.absolute,
                before,
                after.clone(),
            ))]);
        // An edit of tool, editor or CI configuration can change what runs on the next
        // build: the choice says so, as the LSP side's quick fix is not preferred.
        let allow_label = if edit.protected {
            "Apply this edit (it changes tool or CI configuration)"
        } else {
            "Apply this edit"
        };
        let request = RequestPermissionRequest::new(
            updates.session_id.clone(),
            ToolCallUpdate::new(call_id.clone(), fields),
            vec![
                PermissionOption::new(ALLOW, allow_label, PermissionOptionKind::AllowOnce),
                PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
            ],
        );
        let reply = updates.connection.send_request(request).block_task();
        let reply = tokio::select! {
            _ = cancel.cancelled() => return Offered::Cancelled,
            reply = reply => reply,
        };
        let allowed = match reply {
            Ok(response) => match response.outcome {
                RequestPermissionOutcome::Selected(selected) => &*selected.option_id.0 == ALLOW,
                RequestPermissionOutcome::Cancelled => {
                    updates.tool_call_update(call_id, failed("cancelled; nothing was written"));
                    return Offered::Cancelled;
                }
                _ => false,
            },
            Err(error) => {
                updates.tool_call_update(
                    call_id,
                    failed(format!(
                        "permission request failed ({}); nothing was written",
                        error.message
                    )),
                );
                continue;
            }
        };
        if !allowed {
            updates.tool_call_update(call_id, failed("rejected; nothing was written"));
            continue;
        }
        match updates.files.write(&edit.absolute, after).await {
            Ok(()) => updates.tool_call_update(
                call_id,
                ToolCallUpdateFields::new().status(ToolCallStatus::Completed),
            ),
            Err(error) => {
                updates.tool_call_update(call_id, failed(format!("writing failed: {error}")))
            }
        }
    }
    Offered::Done
}

fn failed(reason: impl Into<String>) -> ToolCallUpdateFields {
    ToolCallUpdateFields::new()
        .status(ToolCallStatus::Failed)
        .content(vec![ToolCallContent::from(ContentBlock::Text(
            TextContent::new(reason),
        ))])
}
