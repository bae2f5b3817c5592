//! Which lines of a retrieved chunk are worth citing as a place of a no-model answer: a
//! definition or a block of code, never a module docstring, an import block or an
//! `if TYPE_CHECKING:` guard alone; and how well a definition's name matches a question.
//! Line based and language-agnostic like the chunker: these are the shapes the usual
//! languages share.

/// The 0-based offset of the first line of `lines` that is code worth citing: not blank,
/// not a comment, not inside a docstring (a string standing alone as a statement), not an
/// import or a module declaration, not a guard around imports (`if TYPE_CHECKING:`,
/// `try:`/`except ImportError:`, an include guard). `None` when the chunk holds only
/// those.
pub fn first_code_line(lines: &[&str]) -> Option<usize> {
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if let Some(quote) = docstring_opening(line) {
            i = string_end(lines, i, quote) + 1;
            continue;
        }
        if let Some(end) = import_end(lines, i) {
            i = end + 1;
            continue;
        }
        if !line.is_empty() && !is_comment(line) && !is_guard(line) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The triple quote a line opens a docstring with (`"""`, `'''`, with a prefix such as
/// `r`): a string standing alone, which documents rather than does anything.
fn docstring_opening(line: &str) -> Option<&'static str> {
    let unprefixed = line.trim_start_matches(['r', 'R', 'u', 'U', 'b', 'B']);
    ["\"\"\"", "'''"]
        .into_iter()
        .find(|quote| unprefixed.starts_with(quote))
}

/// The 0-based line on which the string opened on line `start` with `quote` closes.
fn string_end(lines: &[&str], start: usize, quote: &str) -> usize {
    let first = lines[start].trim();
    let after_open = &first[first.find(quote).map_or(0, |at| at + quote.len())..];
    if after_open.contains(quote) {
        return start;
    }
    (start + 1..lines.len())
        .find(|&i| lines[i].contains(quote))
        .unwrap_or(lines.len().saturating_sub(1))
}

/// When line `i` starts an import (or a module declaration), the 0-based line it ends on:
/// a parenthesized or braced list, or a statement continued with `\`, runs on.
fn import_end(lines: &[&str], i: usize) -> Option<usize> {
    let line = lines[i].trim();
    let starts = [
        "import ",
        "from ",
        "use ",
        "pub use ",
        "extern crate ",
        "package ",
        "#include",
        "#import",
        "require ",
        "require(",
        "using ",
    ]
    .iter()
    .any(|p| line.starts_with(p))
        || (line.starts_with("const ") || line.starts_with("let ") || line.starts_with("var "))
            && line.contains("require(")
        || line.starts_with("export ") && line.contains(" from ")
        || line == "import (";
    if !starts {
        return None;
    }
    let mut end = i;
    let (open, close) = if line == "import (" {
        ('(', ')')
    } else if line.contains('{') && !line.contains('}') {
        ('{', '}')
    } else {
        ('(', ')')
    };
    let mut depth: i64 = 0;
    loop {
        let text = lines[end];
        depth += text.matches(open).count() as i64 - text.matches(close).count() as i64;
        let continued = text.trim_end().ends_with('\\');
        if (depth <= 0 && !continued) || end + 1 >= lines.len() {
            return Some(end);
        }
        end += 1;
    }
}

fn is_comment(line: &str) -> bool {
    ["//", "/*", "*", "--", "#!", ";"]
        .iter()
        .any(|p| line.starts_with(p))
        // `# text` and a bare `#` in Python or a shell, not C's `#define`.
        || line == "#"
        || line.starts_with("# ")
        || line.starts_with("#:")
        || line.starts_with("#-")
}

/// A line that only guards or wraps what follows: `if TYPE_CHECKING:`, the parts of a
/// `try:`/`except ImportError:` around imports, an include guard, a `"use strict"`.
fn is_guard(line: &str) -> bool {
    let line = line.trim_end_matches(';');
    line.contains("TYPE_CHECKING") && line.starts_with("if ")
        || matches!(line, "try:" | "else:" | "finally:" | "pass")
        || line.starts_with("except") && line.ends_with(':')
        || ["#ifndef ", "#endif", "#pragma once"]
            .iter()
            .any(|p| line.starts_with(p))
        || line == "\"use strict\""
        || line == "'use strict'"
}

/// The words of an identifier or a sentence, lowercased and reduced to a common stem
/// (`DEFAULT_RETRIES` and "retry" share `retri`, "limited" and `max_limit` share `limit`):
/// split at non-alphanumerics and at case changes, short words dropped.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && previous_lower {
                push_word(&mut out, &mut word);
            }
            previous_lower = c.is_lowercase() || c.is_ascii_digit();
            word.extend(c.to_lowercase());
        } else {
            previous_lower = false;
            push_word(&mut out, &mut word);
        }
    }
    push_word(&mut out, &mut word);
    out
}

fn push_word(out: &mut Vec<String>, word: &mut String) {
    let taken = std::mem::take(word);
    if taken.chars().count() >= 3 {
        out.push(stem(&taken));
    }
}

/// A light English stem: enough for a name and a question to meet (`retries`, `retry`
/// → `retri`; `limited`, `limits` → `limit`; `configured` → `configur`).
fn stem(word: &str) -> String {
    let mut w = word.to_string();
    for suffix in ["ies", "ing", "ed", "es", "s", "y", "e"] {
        if w.len() > suffix.len() + 2 && w.ends_with(suffix) {
            w.truncate(w.len() - suffix.len());
            // `retries` and `retry` both end up `retri`.
            if suffix == "ies" || suffix == "y" {
                w.push('i');
            }
            break;
        }
    }
    w
}

/// How many of `question`'s words the name shares.
pub fn name_overlap(name: &str, question: &[String]) -> usize {
    let mut shared = words(name);
    shared.sort();
    shared.dedup();
    shared.iter().filter(|w| question.contains(w)).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(text: &str) -> Option<usize> {
        first_code_line(&text.lines().collect::<Vec<_>>())
    }

    #[test]
    fn a_docstring_imports_and_a_type_checking_guard_are_no_code() {
        let header = "\"\"\"\nhttpkit.sessions\n~~~~\n\nThe session: redirects, limits.\n\"\"\"\nimport os\nfrom typing import TYPE_CHECKING\nfrom .models import (\n    Request,\n    Response,\n)\n\nif TYPE_CHECKING:\n    from .models import Response\n";
        assert_eq!(first(header), None);
        let with_constant = format!("{header}\nDEFAULT_RETRIES = 0\n");
        assert_eq!(first(&with_constant), Some(16));
        assert_eq!(first("'''One line.'''\ntry:\n    import simplejson as json\nexcept ImportError:\n    import json\n"), None);
        assert_eq!(
            first("use std::io::{\n    Read,\n    Write,\n};\n\nfn main() {}\n"),
            Some(5)
        );
        assert_eq!(
            first("#ifndef A_H\n#include <stdio.h>\n#define MAX_RETRIES 3\n"),
            Some(2)
        );
        assert_eq!(
            first("import { a,\n  b } from './x';\nexport const limit = 3;\n"),
            Some(2)
        );
        assert_eq!(first("# a comment\n\ndef f():\n    pass\n"), Some(2));
    }

    #[test]
    fn names_and_questions_meet_on_their_stems() {
        let question = words("where is the retry count configured");
        assert_eq!(name_overlap("DEFAULT_RETRIES", &question), 1);
        assert_eq!(name_overlap("DEFAULT_POOLBLOCK", &question), 0);
        let question = words("How are redirects limited?");
        assert_eq!(name_overlap("resolve_redirects", &question), 1);
        assert_eq!(name_overlap("DEFAULT_REDIRECT_LIMIT", &question), 2);
        assert_eq!(
            words("maxRetries HTTPAdapter"),
            ["max", "retri", "httpadapter"]
        );
    }
}
