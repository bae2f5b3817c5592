//! One handler per LSP method (or family of notifications).

pub mod ask;
pub mod code_action;
pub mod configuration;
pub mod diagnostics;
pub mod editor_models;
pub mod execute_command;
pub mod indexing;
pub mod initialize;
pub mod text_sync;
pub mod workspace_folders;
