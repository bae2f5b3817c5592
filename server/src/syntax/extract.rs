//! Parsing a text and running its language's definitions query, then turning the
//! matches into `Symbol`s: nesting by containment, qualified names, methods told from
//! functions by their container, doc comments and decorators found above the
//! definition, all bounded in time.

use std::cell::RefCell;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::ops::Range;

use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, ParseOptions, Parser, QueryCursor, QueryCursorOptions, Tree};

use super::budget::Budget;
use super::{Language, Symbol, SymbolKind, SyntaxError, MAX_PARSE_BYTES, PARSE_BUDGET};

/// A signature longer than this is cut (one minified line must not fill a result).
const MAX_SIGNATURE_CHARS: usize = 200;
/// Matches in flight per query cursor; past this tree-sitter drops the oldest, which
/// only happens on pathological nesting.
const MATCH_LIMIT: u32 = 256;

thread_local! {
    // A parser allocates its stacks once; parsing many files on one thread reuses it.
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

/// A definition as the query found it, before nesting.
struct Found<'tree> {
    node: Node<'tree>,
    name: Node<'tree>,
    kind: SymbolKind,
    pattern: usize,
    toplevel_only: bool,
    receiver: Option<Node<'tree>>,
    implemented: Option<Node<'tree>>,
}

pub fn symbols(text: &str, language: Language) -> Result<Vec<Symbol>, SyntaxError> {
    let tree = parse(text, language)?;
    Ok(definitions(&tree, text, language)?
        .into_iter()
        .map(|(symbol, _)| symbol)
        .collect())
}

/// The syntax tree of `text`, within `MAX_PARSE_BYTES` and `PARSE_BUDGET`.
pub fn parse(text: &str, language: Language) -> Result<Tree, SyntaxError> {
    if text.len() > MAX_PARSE_BYTES {
        return Err(SyntaxError::TooLarge(text.len()));
    }
    PARSER.with(|parser| {
        let mut parser = parser.borrow_mut();
        parser
            .set_language(&language.grammar())
            .map_err(|_| SyntaxError::Unavailable(language.name()))?;
        let mut budget = Budget::start(PARSE_BUDGET);
        let mut past_budget = |_: &tree_sitter::ParseState| {
            if budget.spent() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let bytes = text.as_bytes();
        let tree = parser.parse_with_options(
            &mut |offset, _| bytes.get(offset..).unwrap_or_default(),
            None,
            Some(ParseOptions::new().progress_callback(&mut past_budget)),
        );
        // A stopped parse leaves state behind for resuming; we never resume.
        parser.reset();
        tree.ok_or(SyntaxError::TimedOut)
    })
}

/// The definitions in a parsed text, each with the byte range of its name as written
/// (`TokenBucket::refill` for a C++ method defined outside its class).
pub fn definitions(
    tree: &Tree,
    text: &str,
    language: Language,
) -> Result<Vec<(Symbol, Range<usize>)>, SyntaxError> {
    let query = language
        .query()
        .ok_or(SyntaxError::Unavailable(language.name()))?;
    let capture_names = query.capture_names();
    let mut cursor = QueryCursor::new();
    cursor.set_match_limit(MATCH_LIMIT);
    let budget = std::cell::RefCell::new(Budget::start(PARSE_BUDGET));
    let mut timed_out = false;
    let mut past_budget = |_: &tree_sitter::QueryCursorState| {
        if budget.borrow_mut().spent() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let mut matches = cursor.matches_with_options(
        query,
        tree.root_node(),
        text.as_bytes(),
        QueryCursorOptions::new().progress_callback(&mut past_budget),
    );
    // By (definition node, name node): two patterns matching the same definition (a
    // Go struct is also a type) keep the first, more specific one.
    let mut found: HashMap<(usize, usize), Found> = HashMap::new();
    while let Some(matched) = matches.next() {
        if budget.borrow_mut().spent() {
            timed_out = true;
            break;
        }
        let mut definition = None;
        let mut name = None;
        let mut receiver = None;
        let mut implemented = None;
        for capture in matched.captures {
            let capture_name = capture_names[capture.index as usize];
            match capture_name {
                "name" => name = Some(capture.node),
                "receiver" => receiver = Some(capture.node),
                "trait" => implemented = Some(capture.node),
                _ => {
                    if let Some(rest) = capture_name.strip_prefix("definition.") {
                        let (kind, toplevel_only) = match rest.strip_suffix(".toplevel") {
                            Some(kind) => (kind, true),
                            None => (rest, false),
                        };
                        if let Some(kind) = SymbolKind::parse(kind) {
                            definition = Some((capture.node, kind, toplevel_only));
                        }
                    }
                }
            }
        }
        let (Some((node, kind, toplevel_only)), Some(name)) = (definition, name) else {
            continue;
        };
        let candidate = Found {
            node,
            name,
            kind,
            pattern: matched.pattern_index,
            toplevel_only,
            receiver,
            implemented,
        };
        match found.entry((node.id(), name.id())) {
            Entry::Occupied(mut existing) => {
                if candidate.pattern < existing.get().pattern {
                    existing.insert(candidate);
                }
            }
            Entry::Vacant(slot) => {
                slot.insert(candidate);
            }
        }
    }
    drop(matches);
    if timed_out && found.is_empty() {
        return Err(SyntaxError::TimedOut);
    }

    let mut found: Vec<Found> = found
        .into_values()
        .filter(|f| !(f.toplevel_only && inside_function(f.node)))
        .collect();
    // Outer before inner; declarators sharing one declaration in the order written.
    found.sort_by_key(|f| {
        (
            f.node.start_byte(),
            std::cmp::Reverse(f.node.end_byte()),
            f.name.start_byte(),
        )
    });
    Ok(nest(text, language, found))
}

/// Turns the definitions (sorted by start, outer first) into symbols with their
/// containers.
fn nest(text: &str, language: Language, found: Vec<Found>) -> Vec<(Symbol, Range<usize>)> {
    let separator = language.separator();
    // The open containers: (end byte, node id, index into `symbols`).
    let mut stack: Vec<(usize, usize, usize)> = Vec::new();
    let mut symbols: Vec<Symbol> = Vec::with_capacity(found.len());
    let mut names: Vec<Range<usize>> = Vec::with_capacity(found.len());
    for definition in found {
        // A container ends before this starts, or is this very node (`const a = () =>
        // 1, b = () => 2` declares two functions in one node, neither inside the other).
        while stack.last().is_some_and(|(end, node, _)| {
            *end <= definition.node.start_byte() || *node == definition.node.id()
        }) {
            stack.pop();
        }
        let parent = stack.last().map(|(_, _, index)| &symbols[*index]);
        let mut kind = definition.kind;
        let (mut name, scope) = split_name(language, definition.name, text);
        let receiver = definition
            .receiver
            .map(|node| base_name(node_text(node, text)));
        if kind == SymbolKind::Impl {
            name = last_segment(&base_name(&name)).to_string();
        }
        if name.is_empty() {
            continue;
        }
        // Where it lives: the receiver of a Go method, or the enclosing definition and
        // a `Scope::` written in the name.
        let container = match (&receiver, parent, &scope) {
            (Some(receiver), _, _) => Some(receiver.clone()),
            (None, Some(parent), Some(scope)) => {
                Some(format!("{}{separator}{scope}", parent.qualified_name))
            }
            (None, Some(parent), None) => Some(parent.qualified_name.clone()),
            (None, None, Some(scope)) => Some(scope.clone()),
            (None, None, None) => None,
        };
        if kind == SymbolKind::Function {
            let in_type = parent.is_some_and(|p| p.kind.is_type_like());
            let in_class_scope = scope.as_deref().is_some_and(|scope| {
                last_segment(scope)
                    .chars()
                    .next()
                    .is_some_and(char::is_uppercase)
            });
            if in_type || in_class_scope {
                kind = SymbolKind::Method;
            }
        }
        let qualified_name = match &container {
            Some(container) => format!("{container}{separator}{name}"),
            None => name.clone(),
        };
        let keyword = language.keyword(definition.node.kind(), kind);
        let label = match (kind, &definition.implemented, &receiver) {
            (SymbolKind::Impl, Some(implemented), _) => format!(
                "impl {} for {name}",
                collapse_whitespace(node_text(*implemented, text))
            ),
            (_, _, Some(receiver)) => format!("{keyword} ({receiver}) {name}"),
            _ => match &scope {
                Some(scope) => format!("{keyword} {scope}{separator}{name}"),
                None => format!("{keyword} {name}"),
            },
        };
        let (doc_line, end_line) = extent(language, definition.node, text);
        let line = definition.name.start_position().row;
        let depth = stack.len();
        symbols.push(Symbol {
            name,
            qualified_name,
            kind,
            label,
            line,
            doc_line: doc_line.min(line),
            end_line: end_line.max(line),
            signature: signature(text, definition.name.start_byte()),
            container,
            depth,
        });
        names.push(definition.name.byte_range());
        if kind.is_container() {
            stack.push((
                definition.node.end_byte(),
                definition.node.id(),
                symbols.len() - 1,
            ));
        }
    }
    symbols.into_iter().zip(names).collect()
}

/// The name, and the scope written in front of it (`TokenBucket::refill` defined
/// outside its class) for C++.
fn split_name(language: Language, name: Node, text: &str) -> (String, Option<String>) {
    let full = collapse_whitespace(node_text(name, text));
    if language == Language::Cpp && name.kind() == "qualified_identifier" {
        if let Some((scope, last)) = full.rsplit_once("::") {
            let scope = base_name(scope);
            let scope = (!scope.is_empty()).then_some(scope);
            return (base_name(last), scope);
        }
    }
    if language == Language::Cpp && name.kind() == "template_function" {
        return (base_name(&full), None);
    }
    (full, None)
}

/// The first line of the definition's text (its doc comment, attributes, decorators)
/// and the last line of its body.
fn extent(language: Language, node: Node, text: &str) -> (usize, usize) {
    let mut anchor = node;
    while let Some(parent) = anchor.parent() {
        let same_line = parent.start_position().row == anchor.start_position().row;
        if language.wrapper(parent.kind(), same_line) {
            anchor = parent;
        } else {
            break;
        }
    }
    let mut doc_line = anchor.start_position().row;
    let mut sibling = anchor.prev_sibling();
    while let Some(above) = sibling {
        let adjacent = above.end_position().row + 1 >= doc_line;
        if !(language.leading(above.kind()) && adjacent && starts_its_line(above, text)) {
            break;
        }
        doc_line = above.start_position().row;
        sibling = above.prev_sibling();
    }
    let end = anchor.end_position();
    // A node that ends with its line break ends on the line before.
    let end_line = if end.column == 0 && end.row > anchor.start_position().row {
        end.row - 1
    } else {
        end.row
    };
    (doc_line, end_line)
}

/// Whether only whitespace precedes the node on its line (a comment at the end of a
/// code line is about that line, not the definition below).
fn starts_its_line(node: Node, text: &str) -> bool {
    let start = char_boundary(text, node.start_byte());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    text[line_start..start].trim().is_empty()
}

/// Whether a node sits in a function's body (a local constant or callback).
fn inside_function(node: Node) -> bool {
    let mut current = node.parent();
    while let Some(ancestor) = current {
        let kind = ancestor.kind();
        if (kind.contains("function") && !kind.contains("declarator"))
            || kind.contains("method")
            || kind.contains("lambda")
            || kind.contains("closure")
            || kind == "arrow_function"
            || kind == "constructor_declaration"
        {
            return true;
        }
        current = ancestor.parent();
    }
    false
}

/// The trimmed line holding byte `at`, cut to `MAX_SIGNATURE_CHARS`.
fn signature(text: &str, at: usize) -> String {
    let at = char_boundary(text, at);
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let line = text[start..end].trim();
    if line.chars().count() > MAX_SIGNATURE_CHARS {
        let mut cut: String = line.chars().take(MAX_SIGNATURE_CHARS).collect();
        cut.push('…');
        cut
    } else {
        line.to_string()
    }
}

/// `at`, or the char boundary before it: tree-sitter's offsets are bytes, and slicing a
/// `str` elsewhere would panic.
fn char_boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn node_text<'a>(node: Node, text: &'a str) -> &'a str {
    text.get(node.byte_range()).unwrap_or_default()
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A type as a container name: without generic arguments, references or pointers
/// (`&'a mut Bucket<T>` → `Bucket`).
fn base_name(text: &str) -> String {
    let text = text.split('<').next().unwrap_or_default();
    let mut name = text.trim();
    loop {
        let before = name;
        name = name.trim_start_matches(['&', '*']).trim_start();
        if let Some(rest) = name.strip_prefix('\'') {
            name = rest
                .trim_start_matches(|c: char| c.is_alphanumeric() || c == '_')
                .trim_start();
        }
        for prefix in ["mut ", "dyn ", "const "] {
            if let Some(rest) = name.strip_prefix(prefix) {
                name = rest.trim_start();
            }
        }
        if name == before {
            break;
        }
    }
    collapse_whitespace(name)
}

/// The last part of a path (`crate::bucket::TokenBucket` → `TokenBucket`).
fn last_segment(path: &str) -> &str {
    path.rsplit("::").next().unwrap_or(path)
}
