//! One file → its index documents: chunks around definitions (`chunk.rs`; at the
//! definitions `syntax/` parses for the languages it knows), each tokenized into body
//! terms, doc comment lines and definition names, the file's symbol document
//! (`symbol_table.rs`), and the file document with the set of the file's terms and
//! its disk stamp.

use rustc_hash::FxHashSet;
use tantivy::schema::Term;
use tantivy::TantivyDocument;

use super::build_profile::thread_cpu_ns;
use super::chunk::{chunk_at_definitions, chunk_file, ChunkSpan, DefinitionStart};
use super::definition_line::Definition;
use super::schema::{Fields, KIND_CHUNK, KIND_FILE};
use super::symbol_table;
use super::tokenizer::WordCache;
use crate::embed::{self, Accumulator, Packed, Tower};
use crate::syntax::{self, Symbol, SymbolKind};

/// What tells whether a file on disk changed since it was indexed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileStamp {
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime: u64,
    /// When the file was read for the index, nanoseconds since the epoch: a file
    /// modified within the same moment may have changed without its mtime changing.
    pub seen: u64,
    /// xxh3 of the content.
    pub hash: u64,
    pub chunks: u64,
    /// Definitions found by `syntax/`.
    pub symbols: u64,
    /// Indexed as text (false: binary or too large; remembered so it is not read again).
    pub text: bool,
    /// Indexed by its words only, its definitions not parsed yet: the first phase of a
    /// cold build by version 0.4 or before, which parsed in a second phase. A build that
    /// finds such a stamp parses the file (`build.rs`); this version never writes one.
    pub lexical_only: bool,
}

/// A stamp's size when the indexed text is the editor's, not the disk's: never equal to
/// a file's size, so the next start reads that file again.
pub const EDITOR_SIZE: u64 = u64::MAX;

/// The documents of one file.
pub struct AnalyzedFile {
    pub path: String,
    pub stamp: FileStamp,
    pub documents: Vec<TantivyDocument>,
    /// Time spent parsing its definitions: wall and this thread's CPU, nanoseconds.
    pub parse_nanos: (u64, u64),
}

/// Chunks and tokenizes `text`, the content of `path` (workspace-relative, `/`).
pub fn analyze(
    fields: &Fields,
    cache: &mut WordCache,
    path: &str,
    text: Option<&str>,
    mut stamp: FileStamp,
) -> AnalyzedFile {
    let mut documents = Vec::new();
    let mut file_terms: FxHashSet<String> = FxHashSet::default();
    let mut parse_nanos = (0, 0);
    stamp.lexical_only = false;
    // The file's vector: its chunks' vectors summed, so each chunk counts once.
    let model = embed::loaded();
    let mut file_vector = model.map(|model| Accumulator::new(model, Tower::Code));
    let mut path_words = String::new();
    cache.for_each_term(path, |term, _, _| push_term(&mut path_words, term));
    if let Some(text) = text {
        let lines = split_lines(text);
        // A parse that fails (too large, too slow) falls back to the line-based chunks.
        let generated = generated_header(text);
        let literal_keys = super::quoted::gives_keys(path);
        let (wall, cpu) = (std::time::Instant::now(), thread_cpu_ns());
        let symbols = syntax::symbols_for_path(path, text).and_then(Result::ok);
        parse_nanos = (
            wall.elapsed().as_nanos() as u64,
            thread_cpu_ns().saturating_sub(cpu),
        );
        let chunked = match &symbols {
            Some(symbols) => chunk_at_definitions(&lines, definition_starts(symbols)),
            None => chunk_file(&lines, is_markdown(path)),
        };
        let heads = match &symbols {
            Some(symbols) => type_heads(symbols, &chunked.chunks),
            None => vec![false; chunked.chunks.len()],
        };
        if let Some(symbols) = symbols.filter(|s| !s.is_empty()) {
            stamp.symbols = symbols.len() as u64;
            documents.push(symbol_table::document(fields, path, &symbols));
        }
        for (span, head) in chunked.chunks.iter().zip(heads) {
            let range = span.start_line..span.end_line;
            // Each line is tokenized once, here: its terms go to tantivy as one text
            // with a space after each term (split there by `whitespace`), and to the
            // chunk's length and the file's term set.
            let mut len = 0u64;
            let mut body = String::with_capacity(lines_text(text, &lines[range.clone()]).len());
            let mut doc = String::new();
            let mut quoted = String::new();
            let mut vector = model.map(|model| Accumulator::new(model, Tower::Code));
            for (line, &is_doc) in lines[range.clone()]
                .iter()
                .zip(&chunked.doc_lines[range.clone()])
            {
                // A test module's literals are the outputs it expects, as a test
                // file's are (`quoted::gives_keys`).
                if literal_keys && !span.in_test_module {
                    super::quoted::push_line_keys(line, &mut quoted);
                }
                cache.for_each_term(line, |term, _, _| {
                    len += 1;
                    push_term(&mut body, term);
                    if let Some(vector) = vector.as_mut() {
                        vector.add(term);
                    }
                    if is_doc {
                        push_term(&mut doc, term);
                    }
                    if !file_terms.contains(term) {
                        file_terms.insert(term.to_string());
                    }
                });
            }
            let mut def = String::new();
            for definition in &span.definitions {
                cache.for_each_term(&definition.name, |term, _, _| push_term(&mut def, term));
            }
            let mut document = TantivyDocument::default();
            document.add_text(fields.kind, KIND_CHUNK);
            document.add_text(fields.path, path);
            document.add_u64(fields.len, len);
            document.add_text(fields.body, body);
            document.add_text(fields.def, def);
            document.add_text(fields.doc, doc);
            document.add_text(fields.path_words, &path_words);
            if !quoted.is_empty() {
                document.add_text(fields.quoted, quoted);
            }
            document.add_u64(fields.start_line, span.start_line as u64);
            document.add_u64(fields.end_line, span.end_line as u64);
            if let Some(symbol) = &span.symbol {
                document.add_text(fields.symbol, symbol);
            }
            document.add_text(fields.definitions, encode_definitions(&span.definitions));
            document.add_u64(fields.in_test, u64::from(span.in_test_module));
            document.add_u64(fields.generated, u64::from(generated));
            document.add_u64(fields.head, u64::from(head));
            if let Some(vector) = vector.and_then(|v| v.finish()) {
                add_vector(fields, &mut document, &vector);
                if let Some(file_vector) = file_vector.as_mut() {
                    file_vector.add_vector(&vector);
                }
            }
            documents.push(document);
        }
        stamp.chunks = chunked.chunks.len() as u64;
    }
    stamp.text = text.is_some();
    let mut file = TantivyDocument::default();
    file.add_text(fields.kind, KIND_FILE);
    file.add_text(fields.file_path, path);
    let mut words = String::with_capacity(file_terms.iter().map(|t| t.len() + 1).sum());
    for term in &file_terms {
        push_term(&mut words, term);
    }
    file.add_text(fields.file_words, words);
    file.add_text(fields.file_path_words, path_words);
    file.add_u64(fields.size, stamp.size);
    file.add_u64(fields.mtime, stamp.mtime);
    file.add_u64(fields.seen, stamp.seen);
    file.add_u64(fields.hash, stamp.hash);
    file.add_u64(fields.chunks, stamp.chunks);
    file.add_u64(fields.text, u64::from(stamp.text));
    file.add_u64(fields.symbols, stamp.symbols);
    file.add_u64(fields.lexical_only, u64::from(stamp.lexical_only));
    if let Some(vector) = file_vector.and_then(|v| v.finish()) {
        add_vector(fields, &mut file, &vector);
    }
    documents.push(file);
    AnalyzedFile {
        path: path.to_string(),
        stamp,
        documents,
        parse_nanos,
    }
}

/// Stores a normalised vector in the document's `emb` columns.
fn add_vector(fields: &Fields, document: &mut TantivyDocument, vector: &[f32; embed::MAX_DIM]) {
    for (field, word) in fields.emb.iter().zip(Packed::pack(vector).0) {
        document.add_u64(*field, word);
    }
}

/// Appends a term to a field's text of terms (a space after each: see `schema.rs`).
fn push_term(text: &mut String, term: &str) {
    text.push_str(term);
    text.push(' ');
}

/// Where each definition's chunk starts: at its doc comment, attributes or decorators.
fn definition_starts(symbols: &[Symbol]) -> Vec<DefinitionStart> {
    symbols
        .iter()
        .map(|symbol| DefinitionStart {
            start_line: symbol.doc_line,
            line: symbol.line,
            definition: Definition {
                name: symbol.name.clone(),
                // What a hit shows: the name, or `impl Display for TokenBucket`.
                symbol: match symbol.kind {
                    SymbolKind::Impl => symbol.label.clone(),
                    _ => symbol.name.clone(),
                },
            },
        })
        .collect()
}

/// The terms that delete every document of `path`, chunks and file.
pub fn path_terms(fields: &Fields, path: &str) -> [Term; 2] {
    [
        Term::from_field_text(fields.path, path),
        Term::from_field_text(fields.file_path, path),
    ]
}

/// The text of `lines`, consecutive lines of `text` (from `split_lines`), from the start
/// of the first to the end of the last.
fn lines_text<'a>(text: &'a str, lines: &[&str]) -> &'a str {
    let (Some(first), Some(last)) = (lines.first(), lines.last()) else {
        return "";
    };
    let base = text.as_ptr() as usize;
    let from = first.as_ptr() as usize - base;
    let to = last.as_ptr() as usize + last.len() - base;
    &text[from..to]
}

/// Lines without their terminators (a `\r` before the `\n` is not part of the line).
/// Lines `start..=end` (1-based) of `text`.
pub fn excerpt(text: &str, start: usize, end: usize) -> Option<String> {
    let lines = split_lines(text);
    if start == 0 || start > lines.len() {
        return None;
    }
    Some(lines[start - 1..end.min(lines.len())].join("\n"))
}

pub fn split_lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n')
        .map(|raw| {
            let line = raw.strip_suffix('\n').unwrap_or(raw);
            line.strip_suffix('\r').unwrap_or(line)
        })
        .collect()
}

/// Per chunk: whether it is the head of a type whose body goes on past it (a class's
/// doc comment, fields and constructor, with no method of its own). The head stands
/// for the whole type: what a bug report is about is usually one of its members.
fn type_heads(symbols: &[Symbol], chunks: &[ChunkSpan]) -> Vec<bool> {
    chunks
        .iter()
        .map(|chunk| {
            let defined: Vec<&Symbol> = symbols
                .iter()
                .filter(|s| chunk.start_line <= s.line && s.line < chunk.end_line)
                .collect();
            let longer_type = defined
                .iter()
                .any(|s| s.kind.is_type_like() && s.end_line >= chunk.end_line);
            // A constructor is named as its type: part of the head.
            let has_member = defined.iter().any(|s| {
                matches!(s.kind, SymbolKind::Function | SymbolKind::Method)
                    && s.container
                        .as_deref()
                        .is_none_or(|c| !c.ends_with(s.name.as_str()))
            });
            longer_type && !has_member
        })
        .collect()
}

/// Lines of a file's head searched for a generator's mark.
const HEADER_LINES: usize = 10;

/// Whether the file's first lines say a tool made it: Go's `// Code generated … DO NOT
/// EDIT.`, `@generated`, "auto-generated", a Bison or protobuf compiler's banner. Its
/// source (the grammar, the `.proto`) is what a fix changes; a path cannot tell
/// (`parser.c`, `lib/marked.cjs`).
fn generated_header(text: &str) -> bool {
    const MARKS: &[&str] = &[
        "code generated",
        "do not edit",
        "@generated",
        "autogenerated",
        "auto-generated",
        "automatically generated",
        "generated automatically",
        "this file was generated",
        "this file is generated",
        "generated by the",
        "made by gnu bison",
    ];
    text.lines()
        .take(HEADER_LINES)
        .map(|line| crate::text::prefix_within(line, 300).to_ascii_lowercase())
        .any(|line| MARKS.iter().any(|mark| line.contains(mark)))
}

fn is_markdown(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".md") || lower.ends_with(".markdown") || lower.ends_with(".mdx")
}

/// Definitions as stored: `name\tsymbol` lines (neither contains a tab or a newline:
/// names are identifiers, symbols one trimmed line).
fn encode_definitions(definitions: &[Definition]) -> String {
    let mut out = String::new();
    for definition in definitions {
        out.push_str(&definition.name.replace(['\t', '\n'], " "));
        out.push('\t');
        out.push_str(&definition.symbol.replace(['\t', '\n'], " "));
        out.push('\n');
    }
    out
}

pub fn decode_definitions(stored: &str) -> Vec<Definition> {
    stored
        .lines()
        .filter_map(|line| {
            let (name, symbol) = line.split_once('\t')?;
            Some(Definition {
                name: name.to_string(),
                symbol: symbol.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::generated_header;

    /// A chunk's text fields hold the tokenizer's terms, each once per occurrence and
    /// followed by a space (tantivy splits them there), and its length counts them.
    #[test]
    fn chunk_fields_hold_the_tokenizers_terms() {
        use tantivy::schema::Value;
        let (_, fields) = super::super::schema::build();
        let mut cache = super::WordCache::default();
        let text = "/// Parses a line break.\nfn parse_line_break(x: &str) {}\n";
        let analyzed = super::analyze(
            &fields,
            &mut cache,
            "src/LineBreaks.rs",
            Some(text),
            super::FileStamp::default(),
        );
        // The symbol document comes first; the file's one chunk after it.
        let chunk = analyzed
            .documents
            .iter()
            .find(|d| d.get_first(fields.kind).and_then(|v| v.as_str()) == Some(super::KIND_CHUNK))
            .unwrap();
        let field = |field| {
            chunk
                .get_first(field)
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        };
        let spaced = |text: &str| {
            super::super::tokenize::terms(text)
                .iter()
                .map(|t| format!("{t} "))
                .collect::<String>()
        };
        assert_eq!(field(fields.body), spaced(text));
        assert_eq!(field(fields.doc), spaced("/// Parses a line break."));
        assert_eq!(field(fields.def), spaced("parse_line_break"));
        assert_eq!(field(fields.path_words), spaced("src/LineBreaks.rs"));
        let len = chunk.get_first(fields.len).and_then(|v| v.as_u64());
        assert_eq!(len, Some(super::super::tokenize::terms(text).len() as u64));
        assert!(
            field(fields.body).contains("parslinbreak "),
            "{}",
            field(fields.body)
        );
    }

    /// A message printed by the code gives a quoted key; the same words in the file's
    /// test module, the output a test expects, give none.
    #[test]
    fn a_test_modules_literals_give_no_quoted_keys() {
        use tantivy::schema::Value;
        let (_, fields) = super::super::schema::build();
        let mut cache = super::WordCache::default();
        let text = "pub fn open() {\n    eprintln!(\"failed to open the output file\");\n}\n\n\
            #[cfg(test)]\nmod tests {\n    #[test]\n    fn message() {\n        \
            assert_eq!(run(), \"could not parse the config header\");\n    }\n}\n";
        let analyzed = super::analyze(
            &fields,
            &mut cache,
            "src/output.rs",
            Some(text),
            super::FileStamp::default(),
        );
        let keys: Vec<String> = analyzed
            .documents
            .iter()
            .filter_map(|d| d.get_first(fields.quoted)?.as_str().map(str::to_string))
            .collect();
        let keys = keys.join(" ");
        assert!(keys.contains("failed_to_open_the_output_file"), "{keys}");
        assert!(!keys.contains("config"), "{keys}");
    }

    #[test]
    fn the_head_of_a_longer_class_is_marked() {
        let text = "/** A connection. */\npublic class Connection {\n    private int timeout;\n    private String url;\n\n    public Connection(String url) {\n        this.url = url;\n    }\n\n    public void execute() {\n        open(url, timeout);\n        read();\n        close();\n    }\n}\n";
        let symbols = crate::syntax::symbols(text, crate::syntax::Language::Java).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let chunked = super::chunk_at_definitions(&lines, super::definition_starts(&symbols));
        let heads = super::type_heads(&symbols, &chunked.chunks);
        let marked: Vec<(Option<&str>, bool)> = chunked
            .chunks
            .iter()
            .map(|c| c.symbol.as_deref())
            .zip(heads)
            .collect();
        // The class's doc comment, fields and constructor are its head; the method is not.
        assert_eq!(
            marked.first(),
            Some(&(Some("Connection"), true)),
            "{marked:?}"
        );
        assert!(marked.contains(&(Some("execute"), false)), "{marked:?}");
    }

    #[test]
    fn generator_marks_in_the_head() {
        for text in [
            "// Code generated by protoc-gen-go. DO NOT EDIT.\npackage api\n",
            "/* A Bison parser, made by GNU Bison 3.0.2.  */\n",
            "# This file is automatically generated by build.py\n",
            "// @generated\nfn main() {}\n",
        ] {
            assert!(generated_header(text), "{text}");
        }
        // A mark far below the head, or none.
        let late = format!(
            "{}// do not edit below this line\n",
            "fn a() {}\n".repeat(20)
        );
        assert!(!generated_header(&late));
        assert!(!generated_header(
            "/// Keys generated for users.\npub fn keys() {}\n"
        ));
    }
}
