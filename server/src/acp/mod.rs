//! The Agent Client Protocol front end (`copilot-ls acp`): the same engine as the LSP
//! server, behind ACP (protocol version 1, newline-delimited JSON-RPC on stdio).
//!
//! Only this layer sees ACP types. Each ACP session is one `session::Session` whose root
//! (and sandbox) is the session's `cwd` and whose single conversation, named by the
//! session's random id, carries every prompt and is kept on disk so another process can
//! load it. The files here, one concern each: `transport` (stdio lines in front of the
//! SDK: bad input answered, long errors cut), `agent` (the handler table),
//! `session_start` (`session/new`, `session/load`, `session/list`), `sessions` (the
//! session map, modes, notices and running prompts), `config_options` (the mode and
//! model menus, `session/set_config_option`), `turn` (one prompt, start to
//! answer), `prompt` (prompt blocks → `AskRequest`), `commands` (slash commands),
//! `updates` (`AskEvent`s → `session/update`, and replaying a kept conversation),
//! `client_fs` (reading and writing through the client's `fs/*` methods),
//! `permissions` (asking the user at the tool call: suggested edits and MCP calls) and
//! `mcp_tools` (the session's MCP servers' tools as the agent's external tools).
//!
//! Invariant: nothing here writes to disk itself. A suggested edit reaches a file only
//! through the client's `fs/write_text_file`, and only after the user picked the allow
//! option of a `session/request_permission`.

mod agent;
mod client_fs;
mod commands;
mod config_options;
mod mcp_tools;
mod permissions;
mod prompt;
mod session_start;
mod sessions;
mod transport;
mod turn;
mod updates;

pub use agent::serve;
