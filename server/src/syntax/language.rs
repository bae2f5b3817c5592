//! The languages we parse: which file extensions they own, their tree-sitter grammar and
//! definitions query (`queries/*.scm`), and the few facts about each that a query cannot
//! say (how names are qualified, which nodes merely wrap a definition, the keyword an
//! outline shows for a definition).

use std::sync::OnceLock;

use tree_sitter::Query;

use super::SymbolKind;

/// A language with a grammar. TypeScript and TSX are two grammars of one language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Language {
    Rust,
    Python,
    JavaScript,
    TypeScript,
    Tsx,
    Go,
    Java,
    C,
    Cpp,
}

impl Language {
    pub const ALL: [Language; 9] = [
        Language::Rust,
        Language::Python,
        Language::JavaScript,
        Language::TypeScript,
        Language::Tsx,
        Language::Go,
        Language::Java,
        Language::C,
        Language::Cpp,
    ];

    /// The language of a file, by its extension (case-insensitive).
    pub fn from_path(path: &str) -> Option<Language> {
        let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
        let (_, extension) = name.rsplit_once('.')?;
        Language::from_extension(extension)
    }

    /// The language of a file by its extension and, for the one extension two languages
    /// share (`.h`: C and C++ headers), by its text: a header using C++'s own syntax
    /// (`namespace`, `template`, `class`, access labels, `::`) is parsed as C++, which
    /// the C grammar would read as errors and lose its classes and methods.
    pub fn of_file(path: &str, text: &str) -> Option<Language> {
        let language = Language::from_path(path)?;
        let header = path
            .rsplit_once('.')
            .is_some_and(|(_, e)| e.eq_ignore_ascii_case("h"));
        if language == Language::C && header && looks_like_cpp(text) {
            return Some(Language::Cpp);
        }
        Some(language)
    }

    pub fn from_extension(extension: &str) -> Option<Language> {
        Some(match extension.to_ascii_lowercase().as_str() {
            "rs" => Language::Rust,
            "py" | "pyi" => Language::Python,
            "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
            "ts" | "mts" | "cts" => Language::TypeScript,
            "tsx" => Language::Tsx,
            "go" => Language::Go,
            "java" => Language::Java,
            "c" | "h" => Language::C,
            "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => Language::Cpp,
            _ => return None,
        })
    }

    /// The language's name, for people.
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "Rust",
            Language::Python => "Python",
            Language::JavaScript => "JavaScript",
            Language::TypeScript => "TypeScript",
            Language::Tsx => "TSX",
            Language::Go => "Go",
            Language::Java => "Java",
            Language::C => "C",
            Language::Cpp => "C++",
        }
    }

    /// What joins a container's name and a member's in this language's own notation.
    pub fn separator(self) -> &'static str {
        match self {
            Language::Rust | Language::Cpp => "::",
            _ => ".",
        }
    }

    pub(super) fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Language::Go => tree_sitter_go::LANGUAGE.into(),
            Language::Java => tree_sitter_java::LANGUAGE.into(),
            Language::C => tree_sitter_c::LANGUAGE.into(),
            Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        }
    }

    fn query_source(self) -> &'static str {
        match self {
            Language::Rust => include_str!("queries/rust.scm"),
            Language::Python => include_str!("queries/python.scm"),
            Language::JavaScript => include_str!("queries/javascript.scm"),
            Language::TypeScript | Language::Tsx => include_str!("queries/typescript.scm"),
            Language::Go => include_str!("queries/go.scm"),
            Language::Java => include_str!("queries/java.scm"),
            Language::C => include_str!("queries/c.scm"),
            Language::Cpp => include_str!("queries/cpp.scm"),
        }
    }

    /// The compiled definitions query, compiled once per process. `None` only if a
    /// query does not fit its grammar, which the unit tests rule out.
    pub(super) fn query(self) -> Option<&'static Query> {
        static QUERIES: [OnceLock<Option<Query>>; 9] = [const { OnceLock::new() }; 9];
        let slot = Language::ALL.iter().position(|l| *l == self)?;
        QUERIES[slot]
            .get_or_init(|| match Query::new(&self.grammar(), self.query_source()) {
                Ok(query) => Some(query),
                Err(error) => {
                    tracing::error!("the {} definitions query is invalid: {error}", self.name());
                    None
                }
            })
            .as_ref()
    }

    /// Nodes that wrap a definition (an `export`, decorators, a `template<>`): their
    /// start is where the definition's text starts, and the comments above them are
    /// its doc comment. `same_line_only` wrappers count only when they start on the
    /// definition's line (a Go `type (...)` group holds several definitions).
    pub(super) fn wrapper(self, kind: &str, same_line: bool) -> bool {
        match self {
            Language::Python => kind == "decorated_definition",
            Language::JavaScript | Language::TypeScript | Language::Tsx => {
                kind == "export_statement" || kind == "ambient_declaration"
            }
            Language::Go => {
                same_line
                    && matches!(
                        kind,
                        "type_declaration" | "const_declaration" | "var_declaration"
                    )
            }
            Language::Cpp => kind == "template_declaration",
            Language::Rust | Language::Java | Language::C => false,
        }
    }

    /// Siblings above a definition that belong to it: comments, attributes, decorators.
    pub(super) fn leading(self, kind: &str) -> bool {
        kind.contains("comment") || matches!(kind, "attribute_item" | "decorator")
    }

    /// The word an outline shows before a definition's name: the language's own
    /// keyword where it has one, else the kind.
    pub(super) fn keyword(self, node_kind: &str, kind: SymbolKind) -> &'static str {
        match (self, node_kind) {
            (Language::Rust, "function_item" | "function_signature_item") => "fn",
            (Language::Rust, "struct_item") => "struct",
            (Language::Rust, "union_item") => "union",
            (Language::Rust, "enum_item") => "enum",
            (Language::Rust, "trait_item") => "trait",
            (Language::Rust, "impl_item") => "impl",
            (Language::Rust, "mod_item") => "mod",
            (Language::Rust, "type_item") => "type",
            (Language::Rust, "const_item") => "const",
            (Language::Rust, "static_item") => "static",
            (Language::Rust, "macro_definition") => "macro_rules!",
            (Language::Python, "function_definition") => "def",
            (Language::Python, "class_definition") => "class",
            (_, "function_declaration") if self == Language::Go => "func",
            (Language::Go, "method_declaration") => "func",
            (Language::Go, "const_spec") => "const",
            (_, "function_declaration" | "function_signature") => "function",
            (_, "generator_function_declaration") => "function*",
            (_, "class_declaration") => "class",
            (_, "abstract_class_declaration") => "abstract class",
            (_, "interface_declaration") => "interface",
            (_, "type_alias_declaration") => "type",
            (_, "enum_declaration") => "enum",
            (_, "internal_module") => "namespace",
            (_, "module") => "module",
            (_, "lexical_declaration" | "variable_declaration") if kind == SymbolKind::Constant => {
                "const"
            }
            (Language::Java, "record_declaration") => "record",
            (Language::Java, "annotation_type_declaration") => "@interface",
            (Language::Java, "constructor_declaration") => "constructor",
            (_, "struct_specifier") => "struct",
            (_, "union_specifier") => "union",
            (_, "enum_specifier") => "enum",
            (_, "class_specifier") => "class",
            (_, "namespace_definition") => "namespace",
            (_, "type_definition") => "typedef",
            (_, "alias_declaration") => "using",
            (_, "concept_definition") => "concept",
            (_, "preproc_def" | "preproc_function_def") => "#define",
            _ => kind.as_str(),
        }
    }
}

/// Whether a header's text uses syntax only C++ has, on lines that do not start a
/// comment. Strings and trailing comments are not told apart: a C header that mentions
/// `::` in one is parsed as C++, which reads plain C nearly the same.
fn looks_like_cpp(text: &str) -> bool {
    const MARKERS: [&str; 8] = [
        "namespace ",
        "template<",
        "template <",
        "class ",
        "public:",
        "private:",
        "protected:",
        "::",
    ];
    text.lines().any(|line| {
        let line = line.trim_start();
        let comment = line.starts_with("//") || line.starts_with("/*") || line.starts_with('*');
        !comment && MARKERS.iter().any(|m| line.contains(m))
    })
}
