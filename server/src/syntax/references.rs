//! Where a name occurs as code: each occurrence of it in a text (found by the caller's
//! text search) told apart, by the text's syntax tree, as a use, the name of one of its
//! definitions, or words inside a comment or a string literal.
//!
//! Why by the tree: a grep for `refill` also finds "refill the bucket" in a doc
//! comment and `"refill"` in a log message; the grammar knows which bytes are comments
//! and strings. Code inside a string (an f-string's `{expr}`, a template literal's
//! `${expr}`) is code again.

use std::ops::Range;

use tree_sitter::Node;

use super::{extract, Language, Symbol, SymbolKind, SyntaxError};

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

/// Classifies the occurrences of `name` starting at the byte offsets `starts` (sorted).
pub fn scan_name(
    text: &str,
    language: Language,
    name: &str,
    starts: &[usize],
) -> Result<NameScan, SyntaxError> {
    let tree = extract::parse(text, language)?;
    let definitions = extract::definitions(&tree, text, language)?;
    let root = tree.root_node();
    let mut occurrences: Vec<Occurrence> = starts
        .iter()
        .map(
            |&start| match root.descendant_for_byte_range(start, start + name.len()) {
                Some(node) if in_comment_or_string(node) => Occurrence::CommentOrString,
                _ => Occurrence::Use,
            },
        )
        .collect();
    for (symbol, written) in &definitions {
        if symbol.kind == SymbolKind::Impl || symbol.name != name {
            continue;
        }
        mark_definition(starts, written, &mut occurrences);
    }
    Ok(NameScan {
        symbols: definitions.into_iter().map(|(symbol, _)| symbol).collect(),
        occurrences,
    })
}

/// The last occurrence inside a definition's name as written is the definition: in
/// `TokenBucket::TokenBucket()` the first one is its class, a use.
fn mark_definition(starts: &[usize], written: &Range<usize>, occurrences: &mut [Occurrence]) {
    if let Some(index) = starts.iter().rposition(|start| written.contains(start)) {
        if occurrences[index] == Occurrence::Use {
            occurrences[index] = Occurrence::Definition;
        }
    }
}

/// Whether the node, or what holds it, is a comment or a string literal; code
/// interpolated into a string is code.
fn in_comment_or_string(node: Node) -> bool {
    let mut current = Some(node);
    while let Some(node) = current {
        let kind = node.kind();
        if kind.contains("interpolation") || kind.contains("substitution") {
            return false;
        }
        if is_comment_or_string(kind) {
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
