//! copilot-ls: a language server that answers questions about a codebase.
//!
//! Layers, each calling only those to its right (see README "Architecture"):
//! `cli`/`lsp`/`acp`/`mcp` → `session` → `agent` → `tools` → `index` → `workspace`, the agent also
//! calling `providers`, with `text` used by all.

pub mod acp;
pub mod agent;
pub mod cli;
pub mod embed;
pub mod history;
pub mod index;
pub mod lsp;
pub mod mcp;
pub mod providers;
pub mod session;
pub mod syntax;
pub mod text;
pub mod tools;
pub mod workspace;
