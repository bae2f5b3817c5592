//! The MCP servers an ACP client names in `session/new` or `session/load`: started in
//! the background as the session begins (stdio ones; HTTP and SSE ones are reported,
//! as `mcpCapabilities` does not offer them), and their tools offered to the model as
//! `mcp__SERVER__TOOL`, each call asked about first and shown as a tool call of kind
//! `other` titled `SERVER: TOOL`. A server that fails to start, stops answering or
//! exits is reported once in the session and its tools are no longer offered.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use agent_client_protocol::v1::schema::McpServer;
use tokio::sync::watch;

use super::permissions::{self, ToolPermission};
use super::sessions::{AcpSession, McpTools, Notices};
use crate::mcp::client::{self, McpTool, ServerSpec};
use crate::tools::external::{ExternalCall, ExternalReply, ExternalTool};

/// Longest tool name the providers accept (OpenAI: `^[a-zA-Z0-9_-]{1,64}$`).
const MAX_NAME: usize = 64;
/// Most of a server's tool description the model is shown.
const MAX_DESCRIPTION: usize = 2048;

/// Starts the stdio servers in the background; the returned channel holds their
/// tools once all have started or failed. `failed` receives each failure.
pub fn start(servers: Vec<McpServer>, root: &Path, notices: Arc<Notices>) -> McpTools {
    let failed = move |server: &str, reason: &str| notices.server_failed(server, reason);
    let mut specs = Vec::new();
    for server in servers {
        match server {
            McpServer::Stdio(stdio) => specs.push(ServerSpec {
                name: stdio.name,
                command: stdio.command,
                args: stdio.args,
                env: stdio.env.into_iter().map(|v| (v.name, v.value)).collect(),
                cwd: root.to_path_buf(),
            }),
            McpServer::Http(http) => failed(
                &http.name,
                "HTTP MCP servers are not supported (only stdio)",
            ),
            McpServer::Sse(sse) => {
                failed(&sse.name, "SSE MCP servers are not supported (only stdio)")
            }
            _ => {}
        }
    }
    if specs.is_empty() {
        return watch::channel(Some(Vec::new())).1;
    }
    let (sender, tools) = watch::channel(None);
    tokio::spawn(async move {
        let (started, failures) = client::start(specs).await;
        for failure in failures {
            failed(&failure.server, &failure.reason);
        }
        let _ = sender.send(Some(started));
        // The sender stays alive as long as the session: dropping it is no signal.
        sender.closed().await;
    });
    tools
}

/// The session's MCP tools once its servers have started (or failed).
pub async fn ready(tools: &McpTools) -> Vec<McpTool> {
    let mut tools = tools.clone();
    let ready = match tools.wait_for(Option::is_some).await {
        Ok(ready) => ready.clone().unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    ready
}

/// The session's MCP tools as the agent's external tools: each call asks the user
/// first, then goes to its server; a server failure is reported once.
pub fn external_tools(session: &Arc<AcpSession>, tools: Vec<McpTool>) -> Vec<Arc<ExternalTool>> {
    let mut taken = HashSet::new();
    let mut external = Vec::new();
    for tool in tools {
        if session.notices.server_has_failed(&tool.server) {
            continue;
        }
        let name = unique(model_name(&tool.server, &tool.name), &mut taken);
        let title = format!("{}: {}", tool.server, tool.name);
        let description = crate::text::prefix_within(
            &format!(
                "(From the MCP server {}.) {}",
                tool.server, tool.description
            ),
            MAX_DESCRIPTION,
        )
        .to_string();
        let parameters = tool.input_schema.clone();
        let session = Arc::downgrade(session);
        let call_name = name.clone();
        let call_title = title.clone();
        let call = move |call: ExternalCall| {
            let session = session.clone();
            let tool = tool.clone();
            let name = call_name.clone();
            let title = call_title.clone();
            Box::pin(async move {
                let Some(session) = session.upgrade() else {
                    return failure("the session has ended");
                };
                call_tool(&session, &tool, &name, &title, call).await
            }) as futures::future::BoxFuture<'static, ExternalReply>
        };
        external.push(Arc::new(ExternalTool {
            name,
            title,
            description,
            parameters,
            call: Arc::new(call),
        }));
    }
    external
}

async fn call_tool(
    session: &AcpSession,
    tool: &McpTool,
    name: &str,
    title: &str,
    call: ExternalCall,
) -> ExternalReply {
    if session.notices.server_has_failed(&tool.server) {
        return failure(&format!("the MCP server {} is not available", tool.server));
    }
    let permission = permissions::ask_tool_call(
        &session.updates,
        &session.always_allowed,
        name,
        &call.call_id,
        title,
        &call.arguments,
    )
    .await;
    match permission {
        ToolPermission::Allowed => {}
        ToolPermission::Rejected => return failure("the user rejected this call; it did not run"),
        ToolPermission::Cancelled => {
            return failure("the user cancelled this call; it did not run")
        }
        ToolPermission::Failed(reason) => {
            return failure(&format!(
                "the permission request failed ({reason}); the call did not run"
            ))
        }
    }
    match tool.call(call.arguments).await {
        Ok(reply) => ExternalReply {
            text: reply.text,
            ok: !reply.is_error,
        },
        Err(error) => {
            if error.server_failed {
                session.notices.server_failed(&tool.server, &error.message);
                // Inside a prompt: said now, once.
                for notice in session.notices.take() {
                    session.updates.message(format!("\n\n{notice}\n\n"));
                }
            }
            failure(&error.message)
        }
    }
}

fn failure(reason: &str) -> ExternalReply {
    ExternalReply {
        text: format!("Error: {reason}"),
        ok: false,
    }
}

/// `mcp__SERVER__TOOL`, with what a provider refuses in a tool name replaced, and cut
/// to the providers' limit (a hash of the whole keeps cut names apart).
fn model_name(server: &str, tool: &str) -> String {
    let clean = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let name = format!("mcp__{}__{}", clean(server), clean(tool));
    if name.len() <= MAX_NAME {
        return name;
    }
    let hash = xxhash_rust::xxh3::xxh3_64(name.as_bytes());
    format!("{}_{:08x}", &name[..MAX_NAME - 9], hash as u32)
}

fn unique(name: String, taken: &mut HashSet<String>) -> String {
    let mut candidate = name.clone();
    let mut n = 2;
    while !taken.insert(candidate.clone()) {
        let suffix = format!("_{n}");
        let keep = name.len().min(MAX_NAME - suffix.len());
        candidate = format!("{}{suffix}", &name[..keep]);
        n += 1;
    }
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_cleaned_bounded_and_unique() {
        assert_eq!(model_name("everything", "echo"), "mcp__everything__echo");
        assert_eq!(
            model_name("my server", "get.thing"),
            "mcp__my_server__get_thing"
        );
        let long = model_name(&"s".repeat(50), &"t".repeat(50));
        assert_eq!(long.len(), MAX_NAME);
        assert_ne!(long, model_name(&"s".repeat(50), &"u".repeat(50)));
        let mut taken = HashSet::new();
        assert_eq!(unique("mcp__a__b".into(), &mut taken), "mcp__a__b");
        assert_eq!(unique("mcp__a__b".into(), &mut taken), "mcp__a__b_2");
        // Never one of ours.
        assert!(crate::tools::names()
            .iter()
            .all(|ours| !ours.starts_with("mcp__")));
    }
}
