//! session layer.
