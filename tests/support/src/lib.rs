//! Test harness for copilot-ls: an LSP client that drives the real binary over stdio,
//! and a scripted fake model provider speaking the real HTTP wire formats.

pub mod ask;
pub mod fake_provider;
pub mod git_repo;
pub mod lsp_client;
pub mod process;
pub mod secrets;
pub mod workspace;
