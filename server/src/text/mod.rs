//! text layer.
