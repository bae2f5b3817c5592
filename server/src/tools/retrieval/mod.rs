//! Lexical retrieval (BM25) over chunks of workspace files.
