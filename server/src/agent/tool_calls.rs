//! Running one turn's tool calls: the built-in ones at once on the blocking pool (they
//! do file I/O), the external ones (an ACP client's MCP servers, which may ask the user
//! first) one at a time in call order, and the refusal of the edit tool in a read-only
//! ask. Outputs come back in call order.

use std::sync::Arc;

use super::Agent;
use crate::providers::{ToolCall, ToolSpec};
use crate::tools::external::{self, ExternalCall, ExternalTool};
use crate::tools::{self, ToolError, ToolOutput};

/// The tools a read-only ask does not offer.
const EDIT_TOOLS: &[&str] = &["propose_edit"];

impl Agent<'_> {
    /// Every tool the model is offered in this ask: ours (without the edit tool when
    /// read-only), then the external ones.
    pub(super) fn tool_specs(&self) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> = tools::schemas::all()
            .into_iter()
            .filter(|spec| !(self.options.read_only && EDIT_TOOLS.contains(&spec.name.as_str())))
            .collect();
        specs.extend(self.options.external_tools.iter().map(|tool| tool.spec()));
        specs
    }

    pub(super) fn external(&self, name: &str) -> Option<&Arc<ExternalTool>> {
        self.options
            .external_tools
            .iter()
            .find(|tool| tool.name == name)
    }

    /// The progress line of a call: an external tool's title, else ours.
    pub(super) fn label(&self, call: &ToolCall) -> String {
        match self.external(&call.name) {
            Some(tool) => tool.title.clone(),
            None => tools::progress_label(&call.name, &call.arguments),
        }
    }

    /// Runs the calls of one turn, returning their outputs in call order.
    pub(super) async fn run_tools(&self, calls: Vec<ToolCall>) -> Vec<ToolOutput> {
        // Built-in calls start at once; external ones wait their turn below.
        let handles: Vec<_> = calls
            .iter()
            .map(|call| {
                if self.external(&call.name).is_some() || self.refused(&call.name) {
                    return None;
                }
                let call = call.clone();
                let workspace = self.workspace.clone();
                let index = self.index.clone();
                Some(tokio::task::spawn_blocking(move || {
                    tools::run_with_index(&call.name, &call.arguments, &workspace, index.as_ref())
                }))
            })
            .collect();
        let mut outputs = Vec::with_capacity(calls.len());
        for (call, handle) in calls.into_iter().zip(handles) {
            let output = match handle {
                Some(handle) => handle.await.unwrap_or_else(|e| ToolOutput {
                    text: format!("Error: the tool failed unexpectedly: {e}"),
                    ok: false,
                    summary: "tool failed".to_string(),
                    edit: None,
                    places: Vec::new(),
                }),
                None => match self.external(&call.name) {
                    Some(tool) => {
                        let reply = (tool.call)(ExternalCall {
                            call_id: call.id.clone(),
                            arguments: super::arguments_object(&call.arguments),
                        })
                        .await;
                        external::output(&tool.title, reply)
                    }
                    None => ToolOutput::error(&ToolError::Invalid(format!(
                        "{} is not available in this read-only session (ask mode): describe the change in your answer instead",
                        call.name
                    ))),
                },
            };
            outputs.push(output);
        }
        outputs
    }

    fn refused(&self, name: &str) -> bool {
        self.options.read_only && EDIT_TOOLS.contains(&name)
    }
}
