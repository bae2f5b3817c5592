//! Asking the user, at the tool call: a suggested edit is shown as a diff of the whole
//! file and, when the client can write files, the user is asked
//! (`session/request_permission`); only the allow option sends `fs/write_text_file`.
//! Each call of an MCP server's tool is asked about first (allow once, allow always for
//! that tool in this session, reject). What the user decided is what the tool result
//! tells the model.

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    ToolKind,
};
use futures::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::client_fs::{client_reason, ClientFiles};
use super::updates::{diff_content, Updates};
use crate::agent::{EditDecision, EditReview, IdentifiedEdit};
use crate::tools::ProposedEdit;
use crate::workspace::read_disk_text;

const ALLOW: &str = "allow";
const ALLOW_ALWAYS: &str = "allow-always";
const REJECT: &str = "reject";

/// The file's whole text before (`None` for a new file) and after the edit, from the
/// client's text when it offers reading, else the disk.
async fn texts(
    files: &ClientFiles,
    edit: &ProposedEdit,
) -> Result<(Option<String>, String), String> {
    let current = files.read(&edit.absolute).await;
    if edit.creates_file {
        // A client may answer a missing file with empty text: that is not a file.
        let exists = edit.absolute.exists() || current.as_deref().is_some_and(|t| !t.is_empty());
        if exists {
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

/// The reviewer of one prompt's suggested edits.
pub struct EditReviewer {
    pub updates: Updates,
    /// The prompt's: the user cancelling the permission cancels the prompt.
    pub cancel: CancellationToken,
}

impl EditReview for EditReviewer {
    fn review<'a>(
        &'a self,
        call_id: &'a str,
        edit: &'a IdentifiedEdit,
    ) -> BoxFuture<'a, EditDecision> {
        Box::pin(review(&self.updates, call_id, &edit.edit, &self.cancel))
    }
}

/// Shows the edit as a diff on its tool call, asks the user when the client can write,
/// and writes what they allowed.
async fn review(
    updates: &Updates,
    call_id: &str,
    edit: &ProposedEdit,
    cancel: &CancellationToken,
) -> EditDecision {
    // The user may have changed the file since the model read it, or an earlier edit
    // of this prompt may have: the diff is against the text of now.
    updates.files.forget();
    let (before, after) = match texts(&updates.files, edit).await {
        Ok(texts) => texts,
        Err(error) => return EditDecision::Failed(error),
    };
    let writable = updates.files.capabilities().write;
    let location = ToolCallLocation::new(edit.absolute.clone()).line(edit.start_line.max(1) as u32);
    let fields = ToolCallUpdateFields::new()
        .kind(ToolKind::Edit)
        .status(if writable {
            ToolCallStatus::Pending
        } else {
            ToolCallStatus::InProgress
        })
        .title(format!("Edit {}: {}", edit.path, edit.title))
        .locations(vec![location])
        .content(vec![ToolCallContent::Diff(diff_content(
            &edit.absolute,
            before,
            after.clone(),
        ))]);
    updates.tool_call_update(call_id, fields.clone());
    if !writable {
        return EditDecision::Shown;
    }
    // An edit of tool, editor or CI configuration can change what runs on the next
    // build: the choice says so, as the LSP side's quick fix is not preferred.
    let allow_label = if edit.protected {
        "Apply this edit (it changes tool or CI configuration)"
    } else {
        "Apply this edit"
    };
    let options = vec![
        PermissionOption::new(ALLOW, allow_label, PermissionOptionKind::AllowOnce),
        PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
    ];
    match ask(updates, call_id, fields, options).await {
        Answer::Selected(option) if option == ALLOW => {
            match updates.files.write(&edit.absolute, after).await {
                Ok(()) => EditDecision::Applied,
                Err(reason) => {
                    EditDecision::Failed(format!("the editor could not write it: {reason}"))
                }
            }
        }
        Answer::Selected(_) => EditDecision::Rejected,
        Answer::Cancelled => {
            // The client answers so when the user cancels the turn.
            cancel.cancel();
            EditDecision::Cancelled
        }
        Answer::Failed(reason) => {
            EditDecision::Failed(format!("the permission request failed: {reason}"))
        }
    }
}

/// What the user decided about a call of an external tool.
#[derive(Debug, PartialEq, Eq)]
pub enum ToolPermission {
    Allowed,
    Rejected,
    Cancelled,
    Failed(String),
}

/// Asks about one call of an MCP tool (`title` is `SERVER: TOOL`) unless the user
/// allowed that tool for the session; "allow always" adds it to `always`.
pub async fn ask_tool_call(
    updates: &Updates,
    always: &std::sync::Mutex<std::collections::HashSet<String>>,
    tool: &str,
    call_id: &str,
    title: &str,
    arguments: &Value,
) -> ToolPermission {
    if crate::session::lock(always).contains(tool) {
        return ToolPermission::Allowed;
    }
    let fields = ToolCallUpdateFields::new()
        .kind(ToolKind::Other)
        .status(ToolCallStatus::Pending)
        .title(title.to_string())
        .raw_input(arguments.clone());
    let options = vec![
        PermissionOption::new(ALLOW, "Allow once", PermissionOptionKind::AllowOnce),
        PermissionOption::new(
            ALLOW_ALWAYS,
            format!("Always allow {title} in this session"),
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
    ];
    match ask(updates, call_id, fields, options).await {
        Answer::Selected(option) if option == ALLOW => ToolPermission::Allowed,
        Answer::Selected(option) if option == ALLOW_ALWAYS => {
            crate::session::lock(always).insert(tool.to_string());
            ToolPermission::Allowed
        }
        Answer::Selected(_) => ToolPermission::Rejected,
        Answer::Cancelled => ToolPermission::Cancelled,
        Answer::Failed(reason) => ToolPermission::Failed(reason),
    }
}

enum Answer {
    Selected(String),
    Cancelled,
    Failed(String),
}

async fn ask(
    updates: &Updates,
    call_id: &str,
    fields: ToolCallUpdateFields,
    options: Vec<PermissionOption>,
) -> Answer {
    let request = RequestPermissionRequest::new(
        updates.session_id.clone(),
        ToolCallUpdate::new(call_id.to_string(), fields),
        options,
    );
    match updates.connection.send_request(request).block_task().await {
        Ok(response) => match response.outcome {
            RequestPermissionOutcome::Selected(selected) => {
                Answer::Selected(selected.option_id.0.to_string())
            }
            RequestPermissionOutcome::Cancelled => Answer::Cancelled,
            _ => Answer::Cancelled,
        },
        Err(error) => Answer::Failed(client_reason(&error)),
    }
}
