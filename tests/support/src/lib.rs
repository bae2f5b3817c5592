//! Test harness for copilot-ls: a scripted fake model provider (and, beside it, the other
//! helpers the integration tests share).

pub mod fake_provider;
