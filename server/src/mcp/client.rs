//! The MCP client: starts the stdio MCP servers an ACP client names in `session/new` or
//! `session/load` (with rmcp, the official Rust SDK), lists their tools and calls them.
//!
//! Only this file sees rmcp's client types. What leaves it is plain: a [`McpTool`] with
//! its server, name, description, JSON schema and an async `call` that returns text, so
//! the layers above (acp, and through it the agent) never learn what MCP is. A server
//! that cannot be started, does not answer in time or exits is an error value here,
//! never a panic; the caller reports it once and goes on without its tools.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

/// How long a server may take to start and list its tools, and one call to answer,
/// unless `COPILOT_LS_MCP_TIMEOUT_SECS` says otherwise (`npx` servers can take seconds
/// to start on a cold cache).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Most tools taken from one server: a model offered hundreds of tools chooses badly.
const MAX_TOOLS_PER_SERVER: usize = 64;

/// A stdio MCP server as the ACP client described it.
#[derive(Clone, Debug)]
pub struct ServerSpec {
    pub name: String,
    pub command: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// The session's workspace root: the server's working directory.
    pub cwd: PathBuf,
}

/// One tool of a running server.
#[derive(Clone)]
pub struct McpTool {
    pub server: String,
    pub name: String,
    pub description: String,
    /// The tool's `inputSchema` (a JSON Schema object).
    pub input_schema: Value,
    connection: Arc<Connection>,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("server", &self.server)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// What a tool call gave: its content as text, and whether the server called it an
/// error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolReply {
    pub text: String,
    pub is_error: bool,
}

/// Why a call got no reply from its server. `server_failed` is set when the server
/// itself is gone or stuck (not when it answered with an error), so the caller can
/// report the server once and stop offering its tools.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallFailure {
    pub message: String,
    pub server_failed: bool,
}

/// A server that could not be used, and why, in words for the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartFailure {
    pub server: String,
    pub reason: String,
}

struct Connection {
    server: String,
    service: RunningService<RoleClient, ClientConfig>,
    timeout: Duration,
    /// Set once the server has exited or stopped answering.
    failed: AtomicBool,
}

impl McpTool {
    /// Calls the tool with `arguments` (a JSON object; anything else is sent as no
    /// arguments).
    pub async fn call(&self, arguments: Value) -> Result<ToolReply, CallFailure> {
        let connection = &self.connection;
        if connection.failed.load(Ordering::Relaxed) || connection.service.is_closed() {
            connection.failed.store(true, Ordering::Relaxed);
            return Err(CallFailure {
                message: format!("the MCP server {} is no longer running", connection.server),
                server_failed: true,
            });
        }
        let mut params = CallToolRequestParams::new(self.name.clone());
        if let Value::Object(object) = arguments {
            params.arguments = Some(object);
        }
        let call = connection.service.call_tool(params);
        let result = match tokio::time::timeout(connection.timeout, call).await {
            Ok(result) => result,
            Err(_) => {
                connection.failed.store(true, Ordering::Relaxed);
                return Err(CallFailure {
                    message: format!(
                        "the MCP server {} did not answer within {} s",
                        connection.server,
                        connection.timeout.as_secs()
                    ),
                    server_failed: true,
                });
            }
        };
        match result {
            Ok(result) => {
                let value = serde_json::to_value(&result).unwrap_or(Value::Null);
                Ok(ToolReply {
                    text: reply_text(&value),
                    is_error: result.is_error.unwrap_or(false),
                })
            }
            Err(rmcp::ServiceError::McpError(error)) => Err(CallFailure {
                message: format!(
                    "the MCP server {} refused the call: {}",
                    connection.server, error.message
                ),
                server_failed: false,
            }),
            Err(error) => {
                connection.failed.store(true, Ordering::Relaxed);
                Err(CallFailure {
                    message: format!("the MCP server {} failed: {error}", connection.server),
                    server_failed: true,
                })
            }
        }
    }
}

/// Starts every server (at once) and lists their tools. Servers that fail are left
/// out, each with its reason.
pub async fn start(specs: Vec<ServerSpec>) -> (Vec<McpTool>, Vec<StartFailure>) {
    let timeout = timeout_from_env();
    let started = futures::future::join_all(specs.into_iter().map(|spec| async move {
        let name = spec.name.clone();
        match tokio::time::timeout(timeout, start_one(spec, timeout)).await {
            Ok(result) => result,
            Err(_) => Err(StartFailure {
                server: name,
                reason: format!("it did not start within {} s", timeout.as_secs()),
            }),
        }
    }))
    .await;
    let mut tools = Vec::new();
    let mut failures = Vec::new();
    for result in started {
        match result {
            Ok(mut server_tools) => tools.append(&mut server_tools),
            Err(failure) => failures.push(failure),
        }
    }
    (tools, failures)
}

async fn start_one(spec: ServerSpec, timeout: Duration) -> Result<Vec<McpTool>, StartFailure> {
    let fail = |reason: String| StartFailure {
        server: spec.name.clone(),
        reason,
    };
    let mut command = tokio::process::Command::new(&spec.command);
    command
        .args(&spec.args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&spec.cwd)
        .kill_on_drop(true);
    // The server's own log goes to ours (stderr), never to the protocol's stdout.
    let (transport, _stderr) = TokioChildProcess::builder(command)
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .map_err(|error| fail(format!("cannot run {}: {error}", spec.command.display())))?;
    let config = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("copilot-ls", env!("CARGO_PKG_VERSION")),
    );
    let service = config
        .serve(transport)
        .await
        .map_err(|error| fail(format!("it did not complete the MCP handshake: {error}")))?;
    let listed = service
        .list_all_tools()
        .await
        .map_err(|error| fail(format!("it did not list its tools: {error}")))?;
    let connection = Arc::new(Connection {
        server: spec.name.clone(),
        service,
        timeout,
        failed: AtomicBool::new(false),
    });
    tracing::info!(server = %spec.name, tools = listed.len(), "MCP server started");
    Ok(listed
        .into_iter()
        .take(MAX_TOOLS_PER_SERVER)
        .map(|tool| McpTool {
            server: spec.name.clone(),
            name: tool.name.to_string(),
            description: tool
                .description
                .map(|d| d.to_string())
                .or(tool.title)
                .unwrap_or_default(),
            input_schema: Value::Object((*tool.input_schema).clone()),
            connection: connection.clone(),
        })
        .collect())
}

fn timeout_from_env() -> Duration {
    std::env::var("COPILOT_LS_MCP_TIMEOUT_SECS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|secs| *secs > 0)
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs)
}

/// A `CallToolResult` (as JSON, which keeps this independent of rmcp's content types
/// across versions) as text: text blocks as they are, embedded text resources with
/// their URI, other blocks named; the structured content when there is nothing else.
fn reply_text(result: &Value) -> String {
    let mut parts = Vec::new();
    for block in result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let field = |name: &str| block.get(name).and_then(Value::as_str);
        match field("type") {
            Some("text") => parts.push(field("text").unwrap_or_default().to_string()),
            Some("resource") => {
                let resource = block.get("resource");
                let get = |name: &str| {
                    resource
                        .and_then(|r| r.get(name))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                };
                match resource.and_then(|r| r.get("text")).and_then(Value::as_str) {
                    Some(text) => parts.push(format!("[resource {}]\n{text}", get("uri"))),
                    None => parts.push(format!("[binary resource {}]", get("uri"))),
                }
            }
            Some("resource_link") => parts.push(format!(
                "[resource link {}]",
                field("uri").unwrap_or_default()
            )),
            Some(other) => parts.push(format!(
                "[{other} content{} not shown]",
                field("mimeType")
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default()
            )),
            None => {}
        }
    }
    if parts.is_empty() {
        if let Some(structured) = result.get("structuredContent") {
            return structured.to_string();
        }
    }
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn replies_are_text_with_other_blocks_named() {
        let result = json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "body"}},
            {"type": "resource_link", "uri": "file:///b.txt", "name": "b"},
        ]});
        assert_eq!(
            reply_text(&result),
            "hello\n[image content (image/png) not shown]\n[resource file:///a.txt]\nbody\n[resource link file:///b.txt]"
        );
        assert_eq!(
            reply_text(&json!({"content": [], "structuredContent": {"sum": 3}})),
            "{\"sum\":3}"
        );
    }

    #[tokio::test]
    async fn a_server_that_cannot_run_is_a_failure_not_a_panic() {
        let spec = ServerSpec {
            name: "missing".into(),
            command: "/nonexistent/mcp-server".into(),
            args: vec![],
            env: vec![],
            cwd: std::env::temp_dir(),
        };
        let (tools, failures) = start(vec![spec]).await;
        assert!(tools.is_empty());
        assert_eq!(failures.len(), 1);
        assert!(failures[0].reason.contains("cannot run"), "{failures:?}");
    }

    #[tokio::test]
    async fn a_server_that_exits_at_once_is_a_failure() {
        let spec = ServerSpec {
            name: "exits".into(),
            command: "sh".into(),
            args: vec!["-c".into(), "exit 3".into()],
            env: vec![],
            cwd: std::env::temp_dir(),
        };
        let (tools, failures) = start(vec![spec]).await;
        assert!(tools.is_empty());
        assert_eq!(failures[0].server, "exits");
        assert!(failures[0].reason.contains("handshake"), "{failures:?}");
    }
}
