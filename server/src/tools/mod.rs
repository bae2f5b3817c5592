//! Tools the model can call: one file per tool, the schemas, and the sandbox.

pub mod retrieval;
pub mod sandbox;
pub mod walk;
