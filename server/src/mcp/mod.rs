//! The Model Context Protocol front end (`copilot-ls mcp`): the same engine as the LSP
//! server and the ACP agent, as an MCP server over stdio (newline-delimited JSON-RPC),
//! for coding agents that are MCP clients (Claude Code, Codex, Cursor, VS Code, Zed,
//! Continue).
//!
//! Only this layer sees rmcp types. The files, one concern each: `handler` (the
//! `ServerHandler` and `serve`), `lines` (the stdio transport that answers malformed
//! input), `engine` (the workspace root and its index: the one place they are opened
//! and waited for), `tool_list` (the tools, their schemas and annotations),
//! `tool_calls` (running one call: progress, cancellation, results), `structured`
//! (`structuredContent`) and `resources` (the instruction files). Beside them, `client`
//! is the MCP client that starts an ACP session's stdio MCP servers and hands `acp/`
//! their tools as plain tools (the one file here that runs programs).
//!
//! Invariants: every tool is read-only and goes through `tools::run_with_index` (one
//! sandbox, one redaction); nothing here writes to disk, runs a program or opens a
//! connection; malformed input is answered and the server reads on; input closing ends
//! the server.

pub mod client;
mod engine;
mod handler;
mod lines;
mod resources;
mod structured;
mod tool_calls;
mod tool_list;

pub use handler::serve;

/// The log filter's part for the MCP library: it warns of every error reply it sends
/// (an unknown tool), which the reply says already, on the stderr an MCP client shows
/// its user.
pub const QUIET_LIBRARY_LOGS: &str = "rmcp::service=error";
