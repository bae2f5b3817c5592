//! Where a name occurs as code: each occurrence of it in a text (found by the caller's
//! text search) told apart as a use, the name of one of its definitions, or words
//! inside a comment or a string literal.
//!
//! Why it matters: a grep for `refill` also finds "refill the bucket" in a doc comment
//! and `"refill"` in a log message. Comments and strings are found by `lexical.rs` (a
//! lexer per language, far cheaper than a parse), or by the syntax tree where only the
//! grammar can tell (JSX); code inside a string (an f-string's `{expr}`, a template
//! literal's `${expr}`) is code again. The definitions come from a parse, or from the
//! index's record of one, which is why they are placed by line (`mark_definitions`).

use std::ops::Range;

use tree_sitter::Node;

use super::{extract, lexical, Language, Symbol, SymbolKind, SyntaxError};

/// What one occurrence of a name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Occurrence {
    Use,
    /// The name of a definition of it (not a Rust `impl` block, which uses its type).
    Definition,
    /// Inside a comment or a string literal.
    CommentOrString,
}

/// A text's definitions and what each occurrence of the name is.
#[derive(Clone, Debug)]
pub struct NameScan {
    pub symbols: Vec<Symbol>,
    /// One per offset given, in the same order.
    pub occurrences: Vec<Occurrence>,
}

/// Classifies the occurrences of `name` starting at the byte offsets `starts` (sorted),
/// parsing the text for its definitions (`classify` says how).
pub fn scan_name(
    text: &str,
    language: Language,
    name: &str,
    starts: &[usize],
) -> Result<NameScan, SyntaxError> {
    let tree = extract::parse(text, language)?;
    let symbols: Vec<Symbol> = extract::definitions(&tree, text, language)?
        .into_iter()
        .map(|(symbol, _)| symbol)
        .collect();
    let mut occurrences = match lexical::comments_and_strings(text, language) {
        Some(spans) => by_spans(&spans, starts),
        None => by_tree(&tree, name, starts),
    };
    mark_definitions(text, name, starts, &symbols, &mut occurrences);
    Ok(NameScan {
        symbols,
        occurrences,
    })
}

/// Classifies the occurrences of `name` at `starts` (sorted) given the text's
/// definitions (the index's record of them, or a parse's): comments and strings by
/// `lexical.rs`, and on each definition's line the first occurrence in code (after any
/// `Scope::`) is its name. `None` when only a parse tells comments apart (JSX):
/// `classify_parsed` then.
pub fn classify(
    text: &str,
    language: Language,
    name: &str,
    starts: &[usize],
    symbols: &[Symbol],
) -> Option<Vec<Occurrence>> {
    let spans = lexical::comments_and_strings(text, language)?;
    let mut occurrences = by_spans(&spans, starts);
    mark_definitions(text, name, starts, symbols, &mut occurrences);
    Some(occurrences)
}

/// `classify` by the syntax tree (the definitions still given).
pub fn classify_parsed(
    text: &str,
    language: Language,
    name: &str,
    starts: &[usize],
    symbols: &[Symbol],
) -> Result<Vec<Occurrence>, SyntaxError> {
    let tree = extract::parse(text, language)?;
    let mut occurrences = by_tree(&tree, name, starts);
    mark_definitions(text, name, starts, symbols, &mut occurrences);
    Ok(occurrences)
}

/// The occurrences of a file counted by its text: comments and strings not told apart,
/// the given definitions' names still left out.
pub fn classify_by_text(
    text: &str,
    name: &str,
    starts: &[usize],
    symbols: &[Symbol],
) -> Vec<Occurrence> {
    let mut occurrences = vec![Occurrence::Use; starts.len()];
    mark_definitions(text, name, starts, symbols, &mut occurrences);
    occurrences
}

fn by_spans(spans: &[Range<usize>], starts: &[usize]) -> Vec<Occurrence> {
    starts
        .iter()
        .map(|&start| match lexical::within(spans, start) {
            true => Occurrence::CommentOrString,
            false => Occurrence::Use,
        })
        .collect()
}

pub(super) fn by_tree(tree: &tree_sitter::Tree, name: &str, starts: &[usize]) -> Vec<Occurrence> {
    let root = tree.root_node();
    starts
        .iter()
        .map(
            |&start| match root.descendant_for_byte_range(start, start + name.len()) {
                Some(node) if in_comment_or_string(node) => Occurrence::CommentOrString,
                _ => Occurrence::Use,
            },
        )
        .collect()
}

/// On the line of each definition of `name` (not a Rust `impl` block, which uses its
/// type), the first occurrence in code that could be its name is: not followed by
/// `::`, and after a `::` only when a `(` follows (`void Bucket::refill()`).
/// `def refill(self, refill)` names it first; `Bucket::Bucket()` names the class first,
/// a use; `typedef ns::Size Size;` names the type last. The index keeps a definition's
/// line, not its column, so this is the rule whether the definitions come from the
/// index or a parse (both answers agree).
pub(super) fn mark_definitions(
    text: &str,
    name: &str,
    starts: &[usize],
    symbols: &[Symbol],
    occurrences: &mut [Occurrence],
) {
    let mut lines: Vec<usize> = symbols
        .iter()
        .filter(|s| s.name == name && s.kind != SymbolKind::Impl)
        .map(|s| s.line)
        .collect();
    if lines.is_empty() {
        return;
    }
    lines.sort_unstable();
    // Each occurrence's line, counted once over the text.
    let mut on_line = Vec::with_capacity(starts.len());
    let (mut line, mut counted) = (0, 0);
    for &start in starts {
        line += memchr::memchr_iter(b'\n', &text.as_bytes()[counted..start]).count();
        counted = start;
        on_line.push(line);
    }
    for group in lines.chunk_by(|a, b| a == b) {
        let line = group[0];
        let first = on_line.partition_point(|&l| l < line);
        let last = on_line.partition_point(|&l| l <= line);
        let candidates: Vec<usize> = (first..last)
            .filter(|&i| {
                let after = &text[starts[i] + name.len()..];
                let scoped = text[..starts[i]].ends_with("::");
                occurrences[i] == Occurrence::Use
                    && !after.starts_with("::")
                    && (!scoped || after.trim_start_matches([' ', '\t']).starts_with('('))
            })
            .take(group.len())
            .collect();
        for i in candidates {
            occurrences[i] = Occurrence::Definition;
        }
    }
}

/// The last occurrence inside a definition's name as written is the definition: in
/// `TokenBucket::TokenBucket()` the first one is its class, a use.
pub(super) fn mark_written(
    starts: &[usize],
    written: &Range<usize>,
    occurrences: &mut [Occurrence],
) {
    if let Some(index) = starts.iter().rposition(|start| written.contains(start)) {
        if occurrences[index] == Occurrence::Use {
            occurrences[index] = Occurrence::Definition;
        }
    }
}

/// Whether the node, or what holds it, is a comment or a string literal; code
/// interpolated into a string is code.
pub(super) fn in_comment_or_string(node: Node) -> bool {
    let mut current = Some(node);
    while let Some(node) = current {
        let kind = node.kind();
        if kind.contains("interpolation") || kind.contains("substitution") {
            return false;
        }
        // A keyword's own token is no literal, whatever its kind (TypeScript's `string`
        // type is a token of kind "string").
        if node.is_named() && is_comment_or_string(kind) {
            return true;
        }
        current = node.parent();
    }
    false
}

/// The node kinds of comments and literals across the grammars we ship (`line_comment`,
/// `block_comment`, `string_literal`, `interpreted_string_literal`, `template_string`,
/// `string_content`, `system_lib_string`, `char_literal`, Java's `text_block`, JSX text).
fn is_comment_or_string(kind: &str) -> bool {
    kind.contains("comment")
        || kind.contains("string")
        || matches!(
            kind,
            "char_literal" | "character_literal" | "text_block" | "jsx_text"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str, language: Language, name: &str) -> Vec<Occurrence> {
        let starts: Vec<usize> = text.match_indices(name).map(|(at, _)| at).collect();
        scan_name(text, language, name, &starts)
            .unwrap()
            .occurrences
    }

    use Occurrence::{CommentOrString as Skip, Definition as Def, Use};

    #[test]
    fn rust_definitions_uses_comments_and_strings() {
        let text = "/// refill the bucket\nfn refill() {}\nfn main() {\n    refill(); // refill\n    log(\"refill\");\n    println!(\"{}\", refill);\n}\n";
        assert_eq!(
            kinds(text, Language::Rust, "refill"),
            [Skip, Def, Use, Skip, Skip, Use]
        );
    }

    #[test]
    fn an_impl_block_uses_its_type() {
        let text = "struct Bucket;\nimpl Bucket {\n    fn new() -> Bucket { Bucket }\n}\n";
        assert_eq!(kinds(text, Language::Rust, "Bucket"), [Def, Use, Use, Use]);
    }

    #[test]
    fn python_f_string_code_is_code_and_docstrings_are_not() {
        let text =
            "def refill(n):\n    \"\"\"refill n tokens\"\"\"\n    return f\"{refill(n)} refill\"\n";
        assert_eq!(
            kinds(text, Language::Python, "refill"),
            [Def, Skip, Use, Skip]
        );
    }

    #[test]
    fn javascript_template_substitutions_are_code() {
        let text = "function refill() {}\nconst s = `refill ${refill()}`;\n// refill\n";
        assert_eq!(
            kinds(text, Language::JavaScript, "refill"),
            [Def, Skip, Use, Skip]
        );
    }

    #[test]
    fn a_cpp_method_defined_outside_its_class_is_one_definition() {
        let text = "class Bucket { public: Bucket(); void refill(); };\nBucket::Bucket() {}\nvoid Bucket::refill() { refill(); }\n";
        assert_eq!(kinds(text, Language::Cpp, "refill"), [Def, Def, Use]);
        // `Bucket::Bucket`: the class, then the constructor.
        let bucket = kinds(text, Language::Cpp, "Bucket");
        assert_eq!(bucket[..2], [Def, Def]);
        assert_eq!(bucket[2..4], [Use, Def]);
        assert_eq!(bucket[4], Use);
    }

    #[test]
    fn c_macro_bodies_are_code() {
        let text = "int limit(void);\n#define LIMIT limit()\n/* limit */\n";
        assert_eq!(kinds(text, Language::C, "limit"), [Def, Use, Skip]);
    }
}
