//! How far `lexical.rs` agrees with the syntax tree it stands in for: every identifier
//! of a text (two characters or more) classified both ways, as comment-or-string or
//! code, and every definition's name placed both ways (the tree's byte range against
//! the line rule). Not used by the product: `examples/lexical_agreement.rs` runs it over
//! real checkouts and the tests over this repository's own sources.

use super::references::{by_tree, mark_definitions, mark_written};
use super::{extract, lexical, Language, Occurrence, SymbolKind};

/// The counts for one text, and the first disagreements (byte offset, the tree's
/// answer, the lexer's).
#[derive(Debug, Default)]
pub struct Agreement {
    pub identifiers: usize,
    pub differ: usize,
    pub definitions: usize,
    pub definitions_differ: usize,
    /// Left to the tree (JSX).
    pub parsed_instead: bool,
    pub examples: Vec<(usize, Occurrence, Occurrence)>,
}

const EXAMPLES: usize = 5;

/// `None` when the text does not parse at all (too large, a parse past its budget).
pub fn agreement(text: &str, language: Language) -> Option<Agreement> {
    let tree = extract::parse(text, language).ok()?;
    let definitions = extract::definitions(&tree, text, language).ok()?;
    let mut agreement = Agreement::default();
    let Some(spans) = lexical::comments_and_strings(text, language) else {
        agreement.parsed_instead = true;
        return Some(agreement);
    };
    let bytes = text.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
    let mut words: Vec<(usize, usize)> = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if is_word(bytes[at]) {
            let start = at;
            while at < bytes.len() && is_word(bytes[at]) {
                at += 1;
            }
            let first = bytes[start];
            if at - start >= 2 && !first.is_ascii_digit() && text.is_char_boundary(start) {
                words.push((start, at - start));
            }
        } else {
            at += 1;
        }
    }
    let root = tree.root_node();
    for &(start, len) in &words {
        agreement.identifiers += 1;
        let by_tree = root
            .descendant_for_byte_range(start, start + len)
            .is_some_and(super::references::in_comment_or_string);
        let by_lexer = lexical::within(&spans, start);
        if by_tree != by_lexer {
            agreement.differ += 1;
            let kind = |comment: bool| match comment {
                true => Occurrence::CommentOrString,
                false => Occurrence::Use,
            };
            if agreement.examples.len() < EXAMPLES {
                agreement
                    .examples
                    .push((start, kind(by_tree), kind(by_lexer)));
            }
        }
    }
    // Each defined name: where the tree puts its definitions against the line rule,
    // both over the tree's comments (so only the placing is compared).
    let symbols: Vec<_> = definitions.iter().map(|(s, _)| s.clone()).collect();
    let mut names: Vec<&str> = symbols
        .iter()
        .filter(|s| s.kind != SymbolKind::Impl)
        .map(|s| s.name.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let starts: Vec<usize> = words
            .iter()
            .filter(|&&(start, len)| &text[start..start + len] == name)
            .map(|&(start, _)| start)
            .collect();
        let mut written = by_tree(&tree, name, &starts);
        for (symbol, range) in &definitions {
            if symbol.kind != SymbolKind::Impl && symbol.name == name {
                mark_written(&starts, range, &mut written);
            }
        }
        let mut by_line = by_tree(&tree, name, &starts);
        mark_definitions(text, name, &starts, &symbols, &mut by_line);
        for (i, (a, b)) in written.iter().zip(&by_line).enumerate() {
            if *a == Occurrence::Definition || *b == Occurrence::Definition {
                agreement.definitions += 1;
                if a != b {
                    agreement.definitions_differ += 1;
                    if agreement.examples.len() < EXAMPLES {
                        agreement.examples.push((starts[i], *a, *b));
                    }
                }
            }
        }
    }
    Some(agreement)
}
