//! The index's schema: one document per chunk (what is searched) and one per file (what
//! reconciling with the disk and the file-level signals need).
//!
//! Chunk documents: the chunk's words (`body`), its definitions' names (`def`), its doc
//! comments (`doc`) and its file's path words (`path_words`), each with term
//! frequencies for BM25; the keys of its string literals (`quoted`, see `quoted.rs`);
//! stored: the path, the 0-based line range, the body length in
//! terms, the symbol, the definitions and whether it sits in a test module.
//! File documents: the path (`file_path`), the set of the file's terms (`file_words`,
//! for "how many of the question's words does this file hold"), its path words, and
//! the stamp that tells whether the disk changed (size, mtime, content hash) and how
//! many chunks and symbols it has.
//! Symbol documents (one per file with definitions, for the languages `syntax/` knows):
//! each definition's name, lowercased and whole (`symbol_key`, what `find_symbol`'s
//! prefix lookup walks in the term dictionary), and the file's symbol records, stored
//! (`symbol_records`, see `symbol_table.rs`), under the chunk documents' `path`.
//!
//! Every text field but the raw ones holds terms our tokenizer made (`analyze.rs`, with
//! `tokenizer.rs`'s cache), a space after each: tantivy only splits them there.

use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions, STORED,
    STRING,
};

use crate::embed::WORDS;

/// Bump when the schema, the tokenizer or the chunking changes: an index of another
/// format is rebuilt.
pub const FORMAT: u32 = 10;

pub const KIND_CHUNK: &str = "chunk";
pub const KIND_FILE: &str = "file";
pub const KIND_SYMBOLS: &str = "symbols";

#[derive(Clone, Copy, Debug)]
pub struct Fields {
    pub kind: Field,
    // Chunk documents.
    pub path: Field,
    pub body: Field,
    pub def: Field,
    pub doc: Field,
    pub path_words: Field,
    /// The keys of the chunk's string literals (`quoted.rs`): there or not.
    pub quoted: Field,
    pub start_line: Field,
    pub end_line: Field,
    pub len: Field,
    pub symbol: Field,
    pub definitions: Field,
    pub in_test: Field,
    /// 1 when the file says it was made by a tool (`analyze::generated_header`).
    pub generated: Field,
    /// 1 when the chunk is the head of a longer type (`analyze::type_heads`).
    pub head: Field,
    // File documents.
    pub file_path: Field,
    pub file_words: Field,
    pub file_path_words: Field,
    pub size: Field,
    pub mtime: Field,
    pub seen: Field,
    pub hash: Field,
    pub chunks: Field,
    pub text: Field,
    pub symbols: Field,
    /// 1 while the file's definitions are not parsed yet (`FileStamp::lexical_only`).
    pub lexical_only: Field,
    // Symbol documents.
    pub symbol_key: Field,
    pub symbol_records: Field,
    /// The chunk's (or the file's) vector by the code model (`embed::Packed`), one
    /// fast `u64` column per word; absent with no model or no known term.
    pub emb: [Field; WORDS],
}

/// Indexed as given (one value, one term), without frequencies or norms: a term is
/// there or not.
fn present_only() -> TextOptions {
    present_as("raw")
}

/// A file's set of terms, already made by our tokenizer, handed over as one text with a
/// space between terms (terms are letters and digits): one string per file document
/// while it waits in tantivy's queue, where a pre-tokenized list costs a token struct
/// and a string per term (on a cold build those queued lists were tens of megabytes).
fn term_set() -> TextOptions {
    present_as("whitespace")
}

fn present_as(tokenizer: &str) -> TextOptions {
    TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(tokenizer)
            .set_index_option(IndexRecordOption::Basic)
            .set_fieldnorms(false),
    )
}

/// Terms counted for BM25 (frequencies and the field's length), made by our tokenizer
/// in `analyze.rs` and handed over the same way as a term set: each line is tokenized
/// once, where tokenizing it again inside tantivy was an eighth of a cold build's CPU.
fn counted_terms() -> TextOptions {
    TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer("whitespace")
            .set_index_option(IndexRecordOption::WithFreqs)
            .set_fieldnorms(true),
    )
}

pub fn build() -> (Schema, Fields) {
    let mut schema = Schema::builder();
    let counted = counted_terms();
    let number = NumericOptions::default().set_stored();
    let fields = Fields {
        kind: schema.add_text_field("kind", STRING),
        path: schema.add_text_field("path", STRING | STORED),
        body: schema.add_text_field("body", counted.clone()),
        def: schema.add_text_field("def", counted.clone()),
        doc: schema.add_text_field("doc", counted.clone()),
        path_words: schema.add_text_field("path_words", counted),
        quoted: schema.add_text_field("quoted", term_set()),
        start_line: schema.add_u64_field("start_line", number.clone()),
        end_line: schema.add_u64_field("end_line", number.clone()),
        len: schema.add_u64_field("len", number.clone()),
        symbol: schema.add_text_field("symbol", STORED),
        definitions: schema.add_text_field("definitions", STORED),
        in_test: schema.add_u64_field("in_test", number.clone()),
        generated: schema.add_u64_field("generated", number.clone()),
        head: schema.add_u64_field("head", number.clone()),
        file_path: schema.add_text_field("file_path", STRING | STORED),
        file_words: schema.add_text_field("file_words", term_set()),
        file_path_words: schema.add_text_field("file_path_words", term_set()),
        size: schema.add_u64_field("size", number.clone()),
        mtime: schema.add_u64_field("mtime", number.clone()),
        seen: schema.add_u64_field("seen", number.clone()),
        hash: schema.add_u64_field("hash", number.clone()),
        chunks: schema.add_u64_field("chunks", number.clone()),
        text: schema.add_u64_field("text", number.clone()),
        symbols: schema.add_u64_field("symbols", number.clone()),
        lexical_only: schema.add_u64_field("lexical_only", number),
        symbol_key: schema.add_text_field("symbol_key", present_only()),
        symbol_records: schema.add_text_field("symbol_records", STORED),
        emb: std::array::from_fn(|w| {
            schema.add_u64_field(&format!("emb{w}"), NumericOptions::default().set_fast())
        }),
    };
    (schema.build(), fields)
}
