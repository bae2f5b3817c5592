//! Tools from outside copilot-ls (an ACP client's MCP servers), as the agent sees them:
//! a name, a title for people, a description, a JSON Schema and an async call. What a
//! call returns is bounded and redacted here exactly like a built-in tool's output.
//!
//! The call is given by the layer that owns the connection (`acp/`, over `mcp/`); this
//! file knows nothing of MCP or ACP and neither runs nor connects anything itself.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

use super::ToolOutput;
use crate::providers::ToolSpec;
use crate::workspace::redact;

/// One call of an external tool: the id of the model's tool call (the client shows it
/// and may ask the user about it) and the model's arguments, always an object.
#[derive(Clone, Debug)]
pub struct ExternalCall {
    pub call_id: String,
    pub arguments: Value,
}

/// What the call gave: text for the model, and whether it succeeded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExternalReply {
    pub text: String,
    pub ok: bool,
}

pub type ExternalCallFn = dyn Fn(ExternalCall) -> BoxFuture<'static, ExternalReply> + Send + Sync;

pub struct ExternalTool {
    /// The name the model calls it by (unique among all tools, ours included).
    pub name: String,
    /// For people: the progress line and the client's tool call title.
    pub title: String,
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: Value,
    pub call: Arc<ExternalCallFn>,
}

impl std::fmt::Debug for ExternalTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalTool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ExternalTool {
    pub fn spec(&self) -> ToolSpec {
        let mut parameters = self.parameters.clone();
        // Some providers refuse a schema that is not an object schema.
        if !parameters.is_object() {
            parameters = serde_json::json!({"type": "object"});
        }
        ToolSpec {
            name: self.name.clone(),
            description: self.description.clone(),
            parameters,
        }
    }
}

/// Most bytes of an external tool's result the model gets, as for `read_file`.
pub const MAX_OUTPUT_BYTES: usize = super::read_file::MAX_OUTPUT_BYTES;

/// Most characters of one line, as for `read_file`.
const MAX_LINE_CHARS: usize = 1000;

/// An external reply as a tool output: long lines cut, the whole bounded, secrets
/// redacted, and a failure marked `Error: ` like ours.
pub fn output(title: &str, reply: ExternalReply) -> ToolOutput {
    let mut text = String::with_capacity(reply.text.len().min(MAX_OUTPUT_BYTES + 128));
    let mut cut = false;
    for line in reply.text.split_inclusive('\n') {
        let (body, newline) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        let body = match body.char_indices().nth(MAX_LINE_CHARS) {
            Some((at, _)) => {
                cut = true;
                &body[..at]
            }
            None => body,
        };
        if text.len() + body.len() + newline.len() > MAX_OUTPUT_BYTES {
            let room = MAX_OUTPUT_BYTES.saturating_sub(text.len());
            text.push_str(crate::text::prefix_within(body, room));
            cut = true;
            break;
        }
        text.push_str(body);
        text.push_str(newline);
    }
    if cut {
        text.push_str(&format!(
            "\n(cut off: the result was longer than {} KiB or had lines over {MAX_LINE_CHARS} characters)",
            MAX_OUTPUT_BYTES / 1024
        ));
    }
    if !reply.ok && !text.starts_with("Error: ") {
        text = format!("Error: {text}");
    }
    if let std::borrow::Cow::Owned(redacted) = redact::redact(&text) {
        text = redacted;
    }
    let summary = if reply.ok {
        format!("{title}: done")
    } else {
        format!("{title}: failed")
    };
    ToolOutput {
        text,
        ok: reply.ok,
        summary,
        edit: None,
        places: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_bounded_redacted_and_marked() {
        let long = "x".repeat(3 * MAX_OUTPUT_BYTES);
        let out = output(
            "s: t",
            ExternalReply {
                text: long,
                ok: true,
            },
        );
        assert!(
            out.text.len() < MAX_OUTPUT_BYTES + 200,
            "{}",
            out.text.len()
        );
        assert!(out.text.contains("(cut off"));
        let key = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
        let out = output(
            "s: t",
            ExternalReply {
                text: format!("token {key}"),
                ok: false,
            },
        );
        assert!(!out.text.contains(key), "{}", out.text);
        assert!(out.text.starts_with("Error: "));
        assert!(!out.ok);
    }
}
