//! The Agent Client Protocol front end (`copilot-ls acp`): the same engine as the LSP
//! server, behind ACP (protocol version 1, newline-delimited JSON-RPC on stdio).
//!
//! Only this layer sees ACP types. Each ACP session is one `session::Session` whose root
//! (and sandbox) is the session's `cwd` and whose single conversation carries every
//! prompt. The files here, one concern each: `agent` (the handler table), `sessions`
//! (the session map and running prompts), `prompt` (prompt blocks → `AskRequest`),
//! `updates` (`AskEvent`s → `session/update`), `client_fs` (reading and writing through
//! the client's `fs/*` methods) and `permissions` (suggested edits: diff, permission,
//! write).
//!
//! Invariant: nothing here writes to disk itself. A suggested edit reaches a file only
//! through the client's `fs/write_text_file`, and only after the user picked the allow
//! option of a `session/request_permission`.

mod agent;
mod client_fs;
mod permissions;
mod prompt;
mod sessions;
mod updates;

pub use agent::serve;
