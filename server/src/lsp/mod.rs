//! lsp layer.
