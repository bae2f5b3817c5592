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
//! language, just the shapes almost every language shares (`definition_line.rs`).

use super::definition_line::{definition_on_line, markdown_heading, Definition};
use super::file_kind::test_module_ranges;

/// A chunk is cut when it reaches this many lines or bytes.
pub const MAX_CHUNK_LINES: usize = 60;
pub const MAX_CHUNK_BYTES: usize = 4096;
/// A chunk shorter than this absorbs the next segment (when that still fits).
const MIN_CHUNK_LINES: usize = 6;

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

#[cfg(test)]
mod tests {
    use super::*;

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
