//! Cutting a file into chunks around definitions: at the definitions its parser found
//! (`chunk_at_definitions`, for the languages `syntax/` knows) or, for other text,
//! language-agnostically from the lines (`chunk_file`, described below).
//!
//! A chunk starts at a definition line (`fn`, `struct`, `class`, `def`, `function`,
//! `interface`, …, or a Markdown heading) together with the comments and attributes
//! directly above it, so a function's doc comment and its name land in the same chunk.
//! Tiny neighbours (a run of constants, a one-line getter) are merged so the index is
//! not flooded with three-line chunks, and long bodies are cut into windows so a chunk
//! stays small enough to put in a prompt. Everything is line based: no parser per
//! language, just the shapes almost every language shares.

/// A chunk is cut when it reaches this many lines or bytes.
pub const MAX_CHUNK_LINES: usize = 60;
pub const MAX_CHUNK_BYTES: usize = 4096;
/// A chunk shorter than this absorbs the next segment (when that still fits).
const MIN_CHUNK_LINES: usize = 6;
/// Longer lines are minified or generated text; only their start is worth a chunk.
const MAX_HEADING_CHARS: usize = 80;

/// One chunk of a file; lines are 0-based and `end_line` is exclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkSpan {
    pub start_line: usize,
    pub end_line: usize,
    /// The definition the chunk is about: its first definition, or for a window in the
    /// middle of a long body, the definition that body belongs to.
    pub symbol: Option<String>,
    /// The definitions whose definition line is in this chunk.
    pub definitions: Vec<Definition>,
    /// Inside a `#[cfg(test)]` module of a source file.
    pub in_test_module: bool,
}

/// The chunks of a file, and which lines are documentation (doc comments anywhere,
/// plain comments directly above a definition).
#[derive(Debug, Default)]
pub struct ChunkedFile {
    pub chunks: Vec<ChunkSpan>,
    pub doc_lines: Vec<bool>,
}

/// What a line is, before any chunking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineKind {
    Blank,
    /// `///`, `//!`, `/** */`, a docstring: documentation wherever it is.
    DocComment,
    /// `//`, `#`, `/* */`, `--`: documentation only when it sits above a definition.
    Comment,
    /// `#[derive(..)]`, `@decorator`: travels with the definition below it.
    Attribute,
    Code,
}

/// Splits `text` (whose lines are `lines`) into chunks. `markdown` switches definition
/// detection to headings.
pub fn chunk_file(lines: &[&str], markdown: bool) -> ChunkedFile {
    let kinds = classify_lines(lines, markdown);
    let mut doc_lines: Vec<bool> = kinds.iter().map(|k| *k == LineKind::DocComment).collect();

    // Definitions, and where each one's chunk starts (its attached comments).
    let mut starts: Vec<(usize, usize, Definition)> = Vec::new(); // (chunk start, def line, def)
                                                                  // Inside a fenced example of a module doc, where `# ` hides a line of the doctest.
    let mut in_doc_fence = false;
    for (i, line) in lines.iter().enumerate() {
        let module_doc = line.trim_start().strip_prefix("//!");
        if let Some(doc) = module_doc {
            if doc.trim_start().starts_with("```") {
                in_doc_fence = !in_doc_fence;
            }
        }
        // Markdown headings are prose lines; elsewhere definitions are code lines, and
        // so are the headings of module docs (`//! # Line breaks`), which are often
        // long enough to need sections.
        let definition = match kinds[i] {
            LineKind::Comment if markdown => markdown_heading(line),
            LineKind::Code if !markdown => definition_on_line(line),
            LineKind::DocComment if !markdown && !in_doc_fence => {
                module_doc.and_then(markdown_heading)
            }
            _ => None,
        };
        let Some(definition) = definition else {
            continue;
        };
        if kinds[i] == LineKind::DocComment {
            starts.push((i, i, definition));
            continue;
        }
        let mut start = i;
        while !markdown
            && start > 0
            && matches!(
                kinds[start - 1],
                LineKind::DocComment | LineKind::Comment | LineKind::Attribute
            )
            && starts
                .last()
                .is_none_or(|(_, def_line, _)| start - 1 > *def_line)
        {
            start -= 1;
            if kinds[start] == LineKind::Comment {
                doc_lines[start] = true;
            }
        }
        starts.push((start, i, definition));
    }
    cut(lines, starts, doc_lines, markdown)
}

/// A definition found by its syntax (`syntax/`): the first line of its doc comment,
/// attributes or decorators, and its defining line (0-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefinitionStart {
    pub start_line: usize,
    pub line: usize,
    pub definition: Definition,
}

/// Splits a file into chunks at definitions its parser found, instead of guessing them
/// from the lines: each chunk starts at a definition's doc comment. Definitions
/// starting inside the previous one's doc comment or on its line share its chunk.
pub fn chunk_at_definitions(lines: &[&str], mut definitions: Vec<DefinitionStart>) -> ChunkedFile {
    let kinds = classify_lines(lines, false);
    let mut doc_lines: Vec<bool> = kinds.iter().map(|k| *k == LineKind::DocComment).collect();
    definitions.retain(|d| d.line < lines.len());
    definitions.sort_by_key(|d| (d.start_line, d.line));
    let mut starts: Vec<(usize, usize, Definition)> = Vec::new();
    // Definitions that share a chunk start with an earlier one, by defining line.
    let mut riders: Vec<(usize, Definition)> = Vec::new();
    for found in definitions {
        let start = found.start_line.min(found.line);
        match starts.last() {
            Some((_, last_line, _)) if start <= *last_line => {
                riders.push((found.line, found.definition));
            }
            _ => {
                // The comments between the doc start and the definition are its doc.
                for (offset, kind) in kinds[start..found.line].iter().enumerate() {
                    if *kind == LineKind::Comment {
                        doc_lines[start + offset] = true;
                    }
                }
                starts.push((start, found.line, found.definition));
            }
        }
    }
    let mut chunked = cut(lines, starts, doc_lines, false);
    for (line, definition) in riders {
        let chunk = chunked
            .chunks
            .iter_mut()
            .find(|c| c.start_line <= line && line < c.end_line);
        if let Some(chunk) = chunk {
            if chunk.symbol.is_none() {
                chunk.symbol = Some(definition.symbol.clone());
            }
            chunk.definitions.push(definition);
        }
    }
    chunked
}

/// Cuts the file into chunks at `starts` (chunk start, definition line, definition;
/// in order), merging tiny neighbours and windowing long bodies.
fn cut(
    lines: &[&str],
    starts: Vec<(usize, usize, Definition)>,
    doc_lines: Vec<bool>,
    markdown: bool,
) -> ChunkedFile {
    let test_ranges = if markdown {
        Vec::new()
    } else {
        test_module_ranges(lines)
    };

    // Segments: [start of definition k, start of definition k+1), plus the header.
    // (first line, end line, the definition line and definition it starts with)
    type Segment = (usize, usize, Option<(usize, Definition)>);
    let mut segments: Vec<Segment> = Vec::new();
    let first_start = starts.first().map_or(lines.len(), |s| s.0);
    if first_start > 0 {
        segments.push((0, first_start, None));
    }
    for (k, (start, def_line, definition)) in starts.iter().enumerate() {
        let end = starts.get(k + 1).map_or(lines.len(), |next| next.0);
        segments.push((*start, end, Some((*def_line, definition.clone()))));
    }

    let mut chunks: Vec<ChunkSpan> = Vec::new();
    let mut current: Option<ChunkSpan> = None;
    for (start, end, definition) in segments {
        let seg_len = end - start;
        if let Some(chunk) = current.as_mut() {
            let len = chunk.end_line - chunk.start_line;
            if len < MIN_CHUNK_LINES
                && len + seg_len <= MAX_CHUNK_LINES
                && byte_len(lines, chunk.start_line, end) <= MAX_CHUNK_BYTES
            {
                chunk.end_line = end;
                if let Some((_, def)) = definition {
                    if chunk.symbol.is_none() {
                        chunk.symbol = Some(def.symbol.clone());
                    }
                    chunk.definitions.push(def);
                }
                continue;
            }
        }
        if let Some(chunk) = current.take() {
            chunks.push(chunk);
        }
        // Long segments are cut into windows. The definition belongs to the window
        // holding its definition line and to those before it (a long doc comment is
        // about the definition below it); every window keeps the symbol.
        let symbol = definition.as_ref().map(|(_, d)| d.symbol.clone());
        let mut window_start = start;
        while window_start < end {
            let window_end = window_end(lines, window_start, end);
            let mut chunk = ChunkSpan {
                start_line: window_start,
                end_line: window_end,
                symbol: symbol.clone(),
                definitions: Vec::new(),
                in_test_module: false,
            };
            if let Some((def_line, def)) = &definition {
                if window_start <= *def_line {
                    chunk.definitions.push(def.clone());
                }
            }
            if window_end < end {
                chunks.push(chunk);
            } else {
                current = Some(chunk);
            }
            window_start = window_end;
        }
    }
    if let Some(chunk) = current.take() {
        chunks.push(chunk);
    }

    // Blank lines at either end of a chunk cost prompt bytes and say nothing.
    chunks.retain_mut(|chunk| {
        while chunk.start_line < chunk.end_line && lines[chunk.start_line].trim().is_empty() {
            chunk.start_line += 1;
        }
        while chunk.end_line > chunk.start_line && lines[chunk.end_line - 1].trim().is_empty() {
            chunk.end_line -= 1;
        }
        chunk.in_test_module = test_ranges
            .iter()
            .any(|range| range.contains(&chunk.start_line));
        chunk.start_line < chunk.end_line
    });
    ChunkedFile { chunks, doc_lines }
}

/// The end of a window starting at `start`: at most `MAX_CHUNK_LINES` lines and
/// `MAX_CHUNK_BYTES` bytes (but always at least one line), not past `end`.
fn window_end(lines: &[&str], start: usize, end: usize) -> usize {
    let mut bytes = 0;
    let mut i = start;
    while i < end && i - start < MAX_CHUNK_LINES {
        bytes += lines[i].len() + 1;
        if bytes > MAX_CHUNK_BYTES && i > start {
            break;
        }
        i += 1;
    }
    i
}

fn byte_len(lines: &[&str], start: usize, end: usize) -> usize {
    lines[start..end].iter().map(|l| l.len() + 1).sum()
}

fn classify_lines(lines: &[&str], markdown: bool) -> Vec<LineKind> {
    let mut kinds = Vec::with_capacity(lines.len());
    // Inside `/* ... */` (and whether it is a doc block), or a `"""` docstring.
    let mut block: Option<LineKind> = None;
    let mut docstring: Option<&str> = None;
    let mut fence = false;
    for line in lines {
        let t = line.trim();
        if markdown {
            // Prose is a mention, not documentation of a definition, so it is a plain
            // comment; fenced code is code; headings are found among the prose.
            if t.starts_with("```") || t.starts_with("~~~") {
                fence = !fence;
            }
            kinds.push(if t.is_empty() {
                LineKind::Blank
            } else if fence || t.starts_with("```") {
                LineKind::Code
            } else {
                LineKind::Comment
            });
            continue;
        }
        if let Some(kind) = block {
            kinds.push(kind);
            if t.contains("*/") {
                block = None;
            }
            continue;
        }
        if let Some(quote) = docstring {
            kinds.push(LineKind::DocComment);
            if t.contains(quote) {
                docstring = None;
            }
            continue;
        }
        let kind = if t.is_empty() {
            LineKind::Blank
        } else if t.starts_with("///") || t.starts_with("//!") {
            LineKind::DocComment
        } else if let Some(rest) = t.strip_prefix("/**").or_else(|| t.strip_prefix("/*!")) {
            if !rest.contains("*/") {
                block = Some(LineKind::DocComment);
            }
            LineKind::DocComment
        } else if let Some(rest) = t.strip_prefix("/*") {
            if !rest.contains("*/") {
                block = Some(LineKind::Comment);
            }
            LineKind::Comment
        } else if t.starts_with("\"\"\"") || t.starts_with("'''") {
            let quote = &t[..3];
            if !t[3..].contains(quote) {
                docstring = Some(quote);
            }
            LineKind::DocComment
        } else if t.starts_with("#[") || t.starts_with("#![") || t.starts_with('@') {
            LineKind::Attribute
        } else if t.starts_with("//")
            || t.starts_with("# ")
            || t == "#"
            || t.starts_with("-- ")
            || t.starts_with(";;")
        {
            LineKind::Comment
        } else {
            LineKind::Code
        };
        kinds.push(kind);
    }
    kinds
}

/// A definition found on a line: the name whose words are indexed, and the symbol
/// shown to the user (they differ for `impl Trait for Type`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    pub name: String,
    pub symbol: String,
}

/// Words that introduce a definition in one language or another.
const DEFINITION_KEYWORDS: &[&str] = &[
    "fn",
    "struct",
    "enum",
    "trait",
    "union",
    "type",
    "mod",
    "macro_rules",
    "impl",
    "class",
    "def",
    "function",
    "func",
    "fun",
    "interface",
    "module",
    "object",
    "record",
    "namespace",
    "typedef",
    "const",
    "static",
    "let",
    "var",
];

/// Words that may precede a definition keyword without changing what it defines.
const MODIFIERS: &[&str] = &[
    "pub",
    "export",
    "default",
    "async",
    "unsafe",
    "extern",
    "public",
    "private",
    "protected",
    "internal",
    "abstract",
    "final",
    "override",
    "virtual",
    "inline",
    "open",
    "sealed",
    "data",
    "declare",
    "readonly",
];

/// The definition on a line of code, if the line starts one.
pub fn definition_on_line(line: &str) -> Option<Definition> {
    let mut rest = line.trim_start();
    let mut saw_modifier = false;
    loop {
        let word = leading_word(rest);
        if word.is_empty() {
            return None;
        }
        let after = &rest[word.len()..];
        if word == "pub" && after.starts_with('(') {
            // `pub(crate)`, `pub(in some::path)`.
            let close = after.find(')')?;
            rest = after[close + 1..].trim_start();
            saw_modifier = true;
            continue;
        }
        if word == "extern" && after.trim_start().starts_with('"') {
            // `extern "C" fn`.
            let after = after.trim_start();
            let close = after[1..].find('"')? + 1;
            rest = after[close + 1..].trim_start();
            saw_modifier = true;
            continue;
        }
        if MODIFIERS.contains(&word) {
            rest = after.trim_start();
            saw_modifier = true;
            continue;
        }
        if (word == "const" || word == "static") && !is_declaration(after) {
            // `const fn`, `static void main(`: a modifier here, not a constant.
            rest = after.trim_start();
            saw_modifier = true;
            continue;
        }
        if !DEFINITION_KEYWORDS.contains(&word) {
            if saw_modifier {
                return c_like_method(rest);
            }
            return None;
        }
        if !after.is_empty() && !after.starts_with([' ', '\t', '!', '<', '*']) {
            return None;
        }
        return definition_after_keyword(word, after);
    }
}

fn definition_after_keyword(keyword: &str, after: &str) -> Option<Definition> {
    let mut rest = after.trim_start_matches(['!', '*']).trim_start();
    match keyword {
        "impl" => return impl_definition(rest),
        "func" if rest.starts_with('(') => {
            // Go methods: `func (r *Reader) Read(p []byte)`.
            let close = rest.find(')')?;
            rest = rest[close + 1..].trim_start();
        }
        "static" | "let" | "var" => {
            rest = rest.strip_prefix("mut ").unwrap_or(rest).trim_start();
        }
        _ => {}
    }
    let name = leading_word(rest);
    if name.is_empty() || name.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        return None;
    }
    let after_name = rest[name.len()..].trim_start();
    match keyword {
        // A constant with a declared type (`const MAX: usize`) is a definition; a
        // binding is one only when its value is a function or class (`const handler =
        // async (req) =>`), since a local variable is not what a question is about.
        "const" | "static" | "let" | "var" => {
            let typed_constant =
                after_name.starts_with(':') && matches!(keyword, "const" | "static");
            let function_value = after_name.starts_with('=')
                && (after_name.contains("=>")
                    || after_name.contains("function")
                    || after_name.contains("class"));
            if !(typed_constant || function_value) {
                return None;
            }
        }
        // `mod foo;` is a declaration of a file elsewhere, not content.
        "mod" if after_name.starts_with(';') => return None,
        _ => {}
    }
    Some(Definition {
        name: name.to_string(),
        symbol: name.to_string(),
    })
}

/// Whether `NAME: T` or `NAME =` (with an optional `mut`) follows a `const`/`static`.
fn is_declaration(after_keyword: &str) -> bool {
    let rest = after_keyword.trim_start();
    let rest = rest.strip_prefix("mut ").unwrap_or(rest).trim_start();
    let name = leading_word(rest);
    let after_name = rest[name.len()..].trim_start();
    !name.is_empty() && (after_name.starts_with(':') || after_name.starts_with('='))
}

/// `impl<T> Trait<T> for Type<T> where ...` → `Type` (and `Trait`), shown as
/// `impl Trait for Type`.
fn impl_definition(rest: &str) -> Option<Definition> {
    let rest = skip_generics(rest).trim_start();
    let header = rest
        .split(['{', '\n'])
        .next()
        .unwrap_or(rest)
        .split(" where")
        .next()
        .unwrap_or(rest);
    let (trait_part, type_part) = match header.split_once(" for ") {
        Some((t, ty)) => (Some(t.trim()), ty.trim()),
        None => (None, header.trim()),
    };
    let type_name = last_path_segment(type_part)?;
    match trait_part.and_then(last_path_segment) {
        Some(trait_name) => Some(Definition {
            name: format!("{type_name} {trait_name}"),
            symbol: format!("impl {trait_name} for {type_name}"),
        }),
        None => Some(Definition {
            name: type_name.to_string(),
            symbol: format!("impl {type_name}"),
        }),
    }
}

/// `&'a mut dyn foo::Bar<T>` → `Bar`.
fn last_path_segment(ty: &str) -> Option<&str> {
    let ty = ty.split('<').next().unwrap_or(ty);
    let name = ty
        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
        .find(|w| !w.is_empty() && !matches!(*w, "mut" | "dyn" | "const"))?;
    if name.chars().next().is_some_and(|c| c.is_ascii_digit()) {
        return None;
    }
    Some(name)
}

/// Skips a leading `<...>`, nested brackets included.
fn skip_generics(s: &str) -> &str {
    if !s.starts_with('<') {
        return s;
    }
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return &s[i + 1..];
                }
            }
            _ => {}
        }
    }
    ""
}

/// After Java/C#-style modifiers: `static void main(String[] args) {` → `main`.
fn c_like_method(rest: &str) -> Option<Definition> {
    let open = rest.find('(')?;
    let before = rest[..open].trim_end();
    if before.contains('=') || rest.trim_end().ends_with(';') {
        return None;
    }
    let name = before
        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()?;
    // There must be a return type (or class name) before the method name.
    if name.is_empty() || name.len() == before.len() {
        return None;
    }
    Some(Definition {
        name: name.to_string(),
        symbol: name.to_string(),
    })
}

/// `## Some heading` → `Some heading`.
fn markdown_heading(line: &str) -> Option<Definition> {
    let t = line.trim_start();
    let hashes = t.bytes().take_while(|&b| b == b'#').count();
    if hashes == 0 || hashes > 6 || !t[hashes..].starts_with(' ') {
        return None;
    }
    let text: String = t[hashes..].trim().chars().take(MAX_HEADING_CHARS).collect();
    if text.is_empty() {
        return None;
    }
    Some(Definition {
        name: text.clone(),
        symbol: text,
    })
}

/// The identifier at the start of `s` (letters, digits, `_`).
fn leading_word(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// Line ranges of `#[cfg(test)] mod name {` blocks: from the attribute to the closing
/// brace at the module's own indentation.
fn test_module_ranges(lines: &[&str]) -> Vec<std::ops::Range<usize>> {
    let mut ranges = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() == "#[cfg(test)]" {
            // The module line is the next non-attribute line.
            let mut j = i + 1;
            while j < lines.len() && lines[j].trim_start().starts_with("#[") {
                j += 1;
            }
            if let Some(line) = lines.get(j) {
                let t = line.trim_start();
                let is_mod = t.starts_with("mod ") || t.starts_with("pub mod ");
                if is_mod && t.trim_end().ends_with('{') {
                    let indent = line.len() - t.len();
                    let mut end = j + 1;
                    while end < lines.len() {
                        let l = lines[end];
                        let lt = l.trim_start();
                        if lt.starts_with('}') && l.len() - lt.len() <= indent {
                            break;
                        }
                        end += 1;
                    }
                    ranges.push(i..(end + 1).min(lines.len()));
                    i = end;
                }
            }
        }
        i += 1;
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(line: &str) -> Option<String> {
        definition_on_line(line).map(|d| d.symbol)
    }

    fn start(start_line: usize, line: usize, name: &str) -> DefinitionStart {
        DefinitionStart {
            start_line,
            line,
            definition: Definition {
                name: name.to_string(),
                symbol: name.to_string(),
            },
        }
    }

    #[test]
    fn chunks_start_at_parsed_definitions_with_their_doc_comments() {
        let mut lines = vec!["import os", "", "# Helper.", "@cache", "def helper():"];
        lines.extend(["    pass"; 8]);
        lines.extend(["", "class A: x = 1; y = 2", "    def f(self): pass"]);
        lines.extend(["    # body"; 8]);
        let chunked = chunk_at_definitions(
            &lines,
            vec![
                start(2, 4, "helper"),
                start(14, 14, "A"),
                // On the class's line: rides in its chunk.
                start(14, 14, "x"),
                start(15, 15, "f"),
                // Past the end: dropped.
                start(99, 99, "ghost"),
            ],
        );
        let spans: Vec<(usize, usize, Option<&str>, Vec<&str>)> = chunked
            .chunks
            .iter()
            .map(|c| {
                (
                    c.start_line,
                    c.end_line,
                    c.symbol.as_deref(),
                    c.definitions.iter().map(|d| d.name.as_str()).collect(),
                )
            })
            .collect();
        assert_eq!(
            spans,
            // The two-line header is too small for a chunk of its own, and so is the
            // class's first line: each joins the chunk after it.
            [
                (0, 13, Some("helper"), vec!["helper"]),
                (14, 24, Some("A"), vec!["A", "f", "x"]),
            ]
        );
        // The comment above the decorator is documentation of `helper`.
        assert!(chunked.doc_lines[2]);
        assert!(!chunked.doc_lines[16]);
    }

    #[test]
    fn finds_definitions_across_languages() {
        assert_eq!(
            def("pub fn spawn_blocking<F, R>(f: F)").as_deref(),
            Some("spawn_blocking")
        );
        assert_eq!(
            def("    pub(crate) async unsafe fn go()").as_deref(),
            Some("go")
        );
        assert_eq!(def("pub const fn new() -> Self").as_deref(), Some("new"));
        assert_eq!(
            def("pub struct RopeBuilder {").as_deref(),
            Some("RopeBuilder")
        );
        assert_eq!(def("const MAX: usize = 4;").as_deref(), Some("MAX"));
        assert_eq!(def("static mut COUNT: u32 = 0;").as_deref(), Some("COUNT"));
        assert_eq!(def("macro_rules! json {").as_deref(), Some("json"));
        assert_eq!(
            def("impl<T: Clone> fmt::Display for Wrapper<T> where T: X {").as_deref(),
            Some("impl Display for Wrapper")
        );
        assert_eq!(def("impl<'a> Parser<'a> {").as_deref(), Some("impl Parser"));
        assert_eq!(def("class Walker(Base):").as_deref(), Some("Walker"));
        assert_eq!(
            def("    async def fetch(self, url):").as_deref(),
            Some("fetch")
        );
        assert_eq!(
            def("export default function render() {").as_deref(),
            Some("render")
        );
        assert_eq!(
            def("export const handler = async (req) => {").as_deref(),
            Some("handler")
        );
        assert_eq!(
            def("func (r *Reader) Read(p []byte) (int, error) {").as_deref(),
            Some("Read")
        );
        assert_eq!(
            def("    public static void main(String[] args) {").as_deref(),
            Some("main")
        );
        assert_eq!(def("interface Props {").as_deref(), Some("Props"));
    }

    #[test]
    fn ignores_lines_that_are_not_definitions() {
        for line in [
            "let x = compute();",
            "    return foo(bar);",
            "mod tests;",
            "fnord(1)",
            "type_of(x)",
            "const x = 3;",
            "public int count;",
            "",
        ] {
            assert_eq!(def(line), None, "{line}");
        }
    }

    fn names(chunk: &ChunkSpan) -> Vec<&str> {
        chunk.definitions.iter().map(|d| d.name.as_str()).collect()
    }

    fn chunk(text: &str) -> ChunkedFile {
        let lines: Vec<&str> = text.lines().collect();
        chunk_file(&lines, false)
    }

    #[test]
    fn a_chunk_starts_with_the_comments_above_its_definition() {
        let text = "\
//! Module docs.
use std::fmt;

/// Adds one.
///
/// Long explanation.
#[inline]
pub fn add_one(x: u32) -> u32 {
    let y = x + 1;
    let z = y;
    let w = z;
    w
}

// A plain comment above a definition is documentation too.
pub fn sub_one(x: u32) -> u32 {
    // A comment inside a body is not.
    x - 1
}
";
        let file = chunk(text);
        let spans: Vec<(usize, usize, Option<&str>)> = file
            .chunks
            .iter()
            .map(|c| (c.start_line, c.end_line, c.symbol.as_deref()))
            .collect();
        // The two-line header is merged into the first definition's chunk.
        assert_eq!(spans, [(0, 13, Some("add_one")), (14, 19, Some("sub_one"))]);
        assert_eq!(names(&file.chunks[0]), ["add_one"]);
        assert!(file.doc_lines[3] && file.doc_lines[5] && file.doc_lines[14]);
        assert!(
            !file.doc_lines[6] && !file.doc_lines[16],
            "attribute, body comment"
        );
    }

    #[test]
    fn small_definitions_are_merged_and_long_ones_cut() {
        let mut text = String::new();
        for i in 0..4 {
            text.push_str(&format!("const C{i}: u32 = {i};\n"));
        }
        text.push_str("fn long() {\n");
        for i in 0..(MAX_CHUNK_LINES + 10) {
            text.push_str(&format!("    step({i});\n"));
        }
        text.push_str("}\n");
        let file = chunk(&text);
        let spans: Vec<(usize, usize)> = file
            .chunks
            .iter()
            .map(|c| (c.start_line, c.end_line))
            .collect();
        let end = 4 + 1 + MAX_CHUNK_LINES + 10 + 1;
        assert_eq!(
            spans,
            [(0, 4), (4, 4 + MAX_CHUNK_LINES), (4 + MAX_CHUNK_LINES, end)]
        );
        assert_eq!(names(&file.chunks[0]), ["C0", "C1", "C2", "C3"]);
        assert_eq!(names(&file.chunks[1]), ["long"]);
        // The continuation keeps the symbol it belongs to, but does not define it.
        // (A window before the definition line, a long doc comment, would.)
        assert_eq!(file.chunks[2].symbol.as_deref(), Some("long"));
        assert!(file.chunks[2].definitions.is_empty());
    }

    #[test]
    fn long_lines_are_cut_by_bytes() {
        let line = "x".repeat(1000);
        let text = vec![line.as_str(); 20].join("\n");
        let file = chunk(&text);
        for c in &file.chunks {
            let lines: Vec<&str> = text.lines().collect();
            assert!(byte_len(&lines, c.start_line, c.end_line) <= MAX_CHUNK_BYTES);
        }
        assert_eq!(file.chunks.last().unwrap().end_line, 20);
    }

    #[test]
    fn test_modules_are_marked() {
        let text = "\
pub fn real() {
    work();
    work();
    work();
    work();
    work();
}

#[cfg(test)]
mod tests {
    #[test]
    fn checks() {
        real();
        real();
        real();
        real();
    }
}
";
        let file = chunk(text);
        let flags: Vec<bool> = file.chunks.iter().map(|c| c.in_test_module).collect();
        assert_eq!(flags, [false, true], "{:?}", file.chunks);
    }

    #[test]
    fn module_doc_headings_start_chunks() {
        let mut text = String::from("//! The crate.\n");
        for i in 0..10 {
            text.push_str(&format!("//! intro {i}\n"));
        }
        text.push_str("//! ```\n//! # fn hidden_doctest_line() {}\n//! ```\n");
        text.push_str("//! # Line breaks\n//!\n");
        for i in 0..10 {
            text.push_str(&format!("//! about line breaks {i}\n"));
        }
        let file = chunk(&text);
        let symbols: Vec<Option<&str>> = file.chunks.iter().map(|c| c.symbol.as_deref()).collect();
        assert_eq!(symbols, [None, Some("Line breaks")]);
        assert_eq!(file.chunks[1].start_line, 14);
    }

    #[test]
    fn a_long_doc_comment_is_about_its_definition() {
        let mut text = String::new();
        for i in 0..(MAX_CHUNK_LINES + 5) {
            text.push_str(&format!("/// Explains {i}.\n"));
        }
        text.push_str("pub fn documented() {}\n");
        let file = chunk(&text);
        assert_eq!(file.chunks.len(), 2);
        for c in &file.chunks {
            assert_eq!(names(c), ["documented"]);
        }
    }

    #[test]
    fn markdown_headings_are_definitions() {
        let text = "# Title\nintro\n\n## Installing\n\nrun `cargo install`\nmore\nlines\nhere\n\n```\n# not a heading\n```\n";
        let lines: Vec<&str> = text.lines().collect();
        let file = chunk_file(&lines, true);
        let symbols: Vec<Option<&str>> = file.chunks.iter().map(|c| c.symbol.as_deref()).collect();
        assert_eq!(symbols, [Some("Title")]);
        assert_eq!(names(&file.chunks[0]), ["Title", "Installing"]);
    }
}
