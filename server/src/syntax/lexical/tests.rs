//! The lexer's answers on the cases where a lexer is easiest to get wrong, each as the
//! grammar's tree answers it (`agreement.rs` checks the same over whole checkouts).

use super::*;

/// For each occurrence of `word` (as a whole word), whether it lies in a comment or a
/// string.
fn marked(text: &str, language: Language, word: &str) -> Vec<bool> {
    let spans = comments_and_strings(text, language).expect("no JSX here");
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    text.match_indices(word)
        .map(|(at, _)| at)
        .filter(|&at| {
            let bytes = text.as_bytes();
            let before = at > 0 && is_word(bytes[at - 1]);
            let after = bytes.get(at + word.len()).is_some_and(|&b| is_word(b));
            !before && !after
        })
        .map(|at| within(&spans, at))
        .collect()
}

const T: bool = true;
const F: bool = false;

#[test]
fn python_strings_comments_and_f_string_fields() {
    let text = "x = 1  # x\ns = 'x' + r\"\\\"x\" + b'x'\nd = \"\"\"\nx\n\"\"\"\n";
    assert_eq!(marked(text, Language::Python, "x"), [F, T, T, T, T, T]);
    // A field is code, its nested string a string; `{{` is text; a format spec's fill
    // character starts no string.
    let text = "f\"{x['k']} {{x}} {x:'>10} x\"\nx\n";
    assert_eq!(marked(text, Language::Python, "x"), [F, T, F, T, F]);
    assert_eq!(marked(text, Language::Python, "k"), [T]);
    let text = "rf'''{x}\nx''' ; Rb'x'\n";
    assert_eq!(marked(text, Language::Python, "x"), [F, T, T]);
}

#[test]
fn rust_raw_strings_chars_lifetimes_and_nested_comments() {
    let text = "/* a /* x */ x */ x\nlet s = r#\"x \" x\"#; let b = b\"x\";\n";
    assert_eq!(marked(text, Language::Rust, "x"), [T, T, F, T, T, T]);
    // `'x'` is a char, `'x` a lifetime; `r#x` a raw identifier, not a string.
    let text = "fn f<'x>(c: char) { c == 'x'; '\\''; r#x; }\n";
    assert_eq!(marked(text, Language::Rust, "x"), [F, T, F]);
}

#[test]
fn javascript_templates_regexes_and_division() {
    let text = "const s = `x ${x + `x ${x}`} x`;\n";
    assert_eq!(marked(text, Language::JavaScript, "x"), [T, F, T, F, T]);
    // A quote inside a regex starts nothing; after a value `/` divides.
    let text = "let r = /\"x/; let q = a / x / 2; // x\n'x'\n";
    assert_eq!(marked(text, Language::JavaScript, "x"), [F, F, T, T]);
    // An element's text is for the grammar to tell.
    assert!(comments_and_strings("const e = <p>x</p>;\n", Language::JavaScript).is_none());
    assert!(comments_and_strings("if (a <b) {}\n", Language::JavaScript).is_some());
    // TypeScript has no elements: `<T>` is a cast.
    let text = "let v = <T>x; let s: string = 'x';\n";
    assert_eq!(marked(text, Language::TypeScript, "x"), [F, T]);
    assert_eq!(marked(text, Language::TypeScript, "string"), [F]);
}

#[test]
fn go_raw_strings_and_runes_java_text_blocks() {
    let text = "s := `x\nx` + \"x\"; r := '\"'; x\n";
    assert_eq!(marked(text, Language::Go, "x"), [T, T, T, F]);
    let text = "String s = \"\"\"\n  x \"x\"\n  \"\"\"; char c = 'x'; x();\n";
    assert_eq!(marked(text, Language::Java, "x"), [T, T, T, F]);
}

#[test]
fn c_preprocessor_lines_splices_and_raw_strings() {
    // `<x.h>` is a string; a macro body is code, its strings and `//` too, up to `/*`.
    let text =
        "#include <x.h>\n#include \"x.h\"\n#define X(a) x(\"x\") // x\n#define Y x /* x */\n";
    assert_eq!(marked(text, Language::C, "x"), [T, T, F, F, F, F, T]);
    let text = "#if x\n#undef Z // x\n#endif // x\n";
    assert_eq!(marked(text, Language::C, "x"), [F, F, T]);
    // A `//` comment spliced onto the next line; a digit separator is no quote.
    let text = "// a \\\nx\nint n = 1'000; x;\n";
    assert_eq!(marked(text, Language::Cpp, "x"), [T, F]);
    let text = "auto s = R\"d(x )\" x)d\"; x; u8\"x\";\n";
    assert_eq!(marked(text, Language::Cpp, "x"), [T, T, F, T]);
}

#[test]
fn agrees_with_the_tree_on_this_crates_own_sources() {
    // Real text, thick with the cases above: the lexer and this module's neighbours.
    // `examples/lexical_agreement.rs` runs the same comparison over whole checkouts.
    for (name, text) in [
        ("lexical.rs", include_str!("../lexical.rs")),
        ("lexical/tests.rs", include_str!("tests.rs")),
        ("references.rs", include_str!("../references.rs")),
        ("extract.rs", include_str!("../extract.rs")),
        ("syntax/tests.rs", include_str!("../tests.rs")),
    ] {
        let found = crate::syntax::agreement(text, Language::Rust).expect("parses");
        assert!(found.identifiers > 300, "{name}: {found:?}");
        assert_eq!(
            (found.differ, found.definitions_differ),
            (0, 0),
            "{name}: {found:?}"
        );
    }
}
