//! Definitions read off a single line, for text no parser of `syntax/` knows: the
//! shapes almost every language shares (`fn`, `def`, `class`, `struct`, `interface`,
//! `impl Trait for Type`, C-like methods, and so on, after modifiers such as `pub` or
//! `static`) and Markdown headings. `chunk.rs` starts chunks at them.

/// A Markdown heading is cut here: it names a section, it is not one.
const MAX_HEADING_CHARS: usize = 80;

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
pub(super) fn markdown_heading(line: &str) -> Option<Definition> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn def(line: &str) -> Option<String> {
        definition_on_line(line).map(|d| d.symbol)
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
}
