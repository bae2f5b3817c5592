//! Syntax: text and a language in, the definitions in it out (name, qualified name,
//! kind, lines, signature, container), by tree-sitter with the official grammars and
//! one tags-style query per language (`queries/*.scm`); and, for `find_references`,
//! which occurrences of a name are uses, definitions, or words in comments and strings
//! (`references.rs`, with the comments and strings found by a lexer: `lexical.rs`).
//!
//! Pure on purpose: it knows no LSP type, no index, no disk; the tools and the index
//! hand it text. It never panics and never hangs: texts past `MAX_PARSE_BYTES` are
//! refused, a parse or a query running past `PARSE_BUDGET` is stopped, and a text
//! with syntax errors still yields the definitions tree-sitter could recover.

mod agreement;
mod budget;
mod extract;
mod language;
mod lexical;
mod references;

use std::ffi::c_void;
use std::time::Duration;

#[doc(hidden)]
pub use self::agreement::{agreement, Agreement};
pub use self::budget::{cpu_ns, CpuClock};
pub use self::language::Language;
pub use self::references::{
    classify, classify_by_text, classify_parsed, scan_name, NameScan, Occurrence,
};

/// Larger texts are not parsed (generated or minified code; a parse costs about
/// linear time and memory in the size).
pub const MAX_PARSE_BYTES: usize = 8 * 1024 * 1024;
/// The most CPU time one parse (and, apart, its query) may take (`budget.rs`).
pub const PARSE_BUDGET: Duration = Duration::from_secs(2);

/// What a definition is, in the words the `find_symbol` tool accepts, plus `Impl` for
/// a Rust `impl` block (a container of methods, not a definition of a name: the
/// outline shows it, `find_symbol` does not).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymbolKind {
    Function,
    Method,
    Class,
    Struct,
    Enum,
    Trait,
    Interface,
    Type,
    Constant,
    Module,
    Impl,
}

impl SymbolKind {
    pub const ALL: [SymbolKind; 11] = [
        SymbolKind::Function,
        SymbolKind::Method,
        SymbolKind::Class,
        SymbolKind::Struct,
        SymbolKind::Enum,
        SymbolKind::Trait,
        SymbolKind::Interface,
        SymbolKind::Type,
        SymbolKind::Constant,
        SymbolKind::Module,
        SymbolKind::Impl,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::Class => "class",
            SymbolKind::Struct => "struct",
            SymbolKind::Enum => "enum",
            SymbolKind::Trait => "trait",
            SymbolKind::Interface => "interface",
            SymbolKind::Type => "type",
            SymbolKind::Constant => "constant",
            SymbolKind::Module => "module",
            SymbolKind::Impl => "impl",
        }
    }

    pub fn parse(word: &str) -> Option<SymbolKind> {
        SymbolKind::ALL
            .into_iter()
            .find(|kind| kind.as_str().eq_ignore_ascii_case(word.trim()))
    }

    /// Whether definitions inside it are its members (a function inside a class is a
    /// method; a typedef or a constant holds nothing).
    pub fn is_container(self) -> bool {
        !matches!(self, SymbolKind::Type | SymbolKind::Constant)
    }

    /// A type: what members are defined in (a class, struct, enum, trait, interface, or
    /// a Rust `impl`).
    pub fn is_type_like(self) -> bool {
        matches!(
            self,
            SymbolKind::Class
                | SymbolKind::Struct
                | SymbolKind::Enum
                | SymbolKind::Trait
                | SymbolKind::Interface
                | SymbolKind::Impl
        )
    }
}

/// One definition. Lines are 0-based and inclusive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    /// The containers' names and the name, in the language's notation
    /// (`TokenBucket::refill`, `TokenBucket.refill`).
    pub qualified_name: String,
    pub kind: SymbolKind,
    /// What an outline shows: the language's keyword and the name (`fn try_acquire`,
    /// `def refill`, `impl Display for TokenBucket`).
    pub label: String,
    /// The line naming the definition (not its attributes, decorators or doc comment).
    pub line: usize,
    /// The first line of its doc comment, attributes or decorators (`line` if none).
    pub doc_line: usize,
    /// The last line of its body.
    pub end_line: usize,
    /// The defining line, trimmed (at most 200 characters).
    pub signature: String,
    /// The qualified name of what it is defined in: a class, an impl's type, a Go
    /// method's receiver, a namespace, a C++ `Scope::` prefix.
    pub container: Option<String>,
    /// How many containers it is nested in (what an outline indents by).
    pub depth: usize,
}

/// Why a text yielded no definitions at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyntaxError {
    #[error("the text is too large to parse ({0} bytes; the limit is {MAX_PARSE_BYTES})")]
    TooLarge(usize),
    #[error("parsing took more than {} s of CPU time and was stopped", PARSE_BUDGET.as_secs())]
    TimedOut,
    #[error("no parser is available for {0}")]
    Unavailable(&'static str),
}

/// Has tree-sitter allocate its parsers' stacks and its trees with these C functions
/// (`malloc`, `calloc`, `realloc`, `free`) instead of the C library's: the binary hands
/// it its own allocator's (`main.rs`).
///
/// # Safety
/// The four must be one allocator's, with C's semantics, and this must run before any
/// tree is parsed (a tree would otherwise be freed by another allocator than made it).
pub unsafe fn set_allocator(
    malloc: unsafe extern "C" fn(usize) -> *mut c_void,
    calloc: unsafe extern "C" fn(usize, usize) -> *mut c_void,
    realloc: unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void,
    free: unsafe extern "C" fn(*mut c_void),
) {
    // SAFETY: the caller keeps this function's contract, which is tree-sitter's.
    unsafe {
        tree_sitter::set_allocator(Some(malloc), Some(calloc), Some(realloc), Some(free));
    }
}

/// Compiles `language`'s definitions query now (once per process), so a caller that
/// bounds its parsing by a time budget can leave that one-time cost out of it.
pub fn compile_query(language: Language) {
    let _ = language.query();
}

/// The definitions in `text`, in the order they start (a container before its members).
pub fn symbols(text: &str, language: Language) -> Result<Vec<Symbol>, SyntaxError> {
    extract::symbols(text, language)
}

/// The definitions of a file whose language is known by its path's extension; `None`
/// for a file without a grammar.
pub fn symbols_for_path(path: &str, text: &str) -> Option<Result<Vec<Symbol>, SyntaxError>> {
    Language::of_file(path, text).map(|language| symbols(text, language))
}

#[cfg(test)]
mod tests;
