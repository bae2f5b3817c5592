//! Where a definition ends, read from its lines when no parse says: at the brace that
//! closes the body it opens (C, C++, Java, JavaScript, Go, Rust…), else where the
//! indentation returns to the defining line's (Python, Ruby…). The no-model answer cites
//! a place from its defining line to this one.

/// The 0-based last line of the definition on line `defining`: where its braces close
/// when it opens one within its first lines (C, C++, Java, JavaScript, Go, Rust…; a
/// declaration ending in `;` first is one line), else by indentation (Python, Ruby…).
pub fn definition_end(lines: &[&str], defining: usize) -> usize {
    braces_end(lines, defining).unwrap_or_else(|| indentation_end(lines, defining))
}

/// Lines a signature may take before its body's `{`.
const SIGNATURE_LINES: usize = 12;

fn braces_end(lines: &[&str], defining: usize) -> Option<usize> {
    let mut depth: i64 = 0;
    let mut opened = false;
    for (i, line) in lines.iter().enumerate().skip(defining) {
        let code = code_part(line);
        for c in code.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if opened && depth <= 0 {
            return Some(i);
        }
        if !opened {
            let trimmed = code.trim_end();
            // Python's `def f():` and friends: no braces to follow.
            if trimmed.ends_with(':') && !trimmed.ends_with("::") {
                return None;
            }
            if trimmed.ends_with(';') {
                return Some(i);
            }
            if i - defining >= SIGNATURE_LINES {
                return None;
            }
        }
    }
    opened.then_some(lines.len().saturating_sub(1))
}

/// A line without its string and character literals and its `//` or `#` comment, so
/// their braces do not count.
fn code_part(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                if c == '\\' {
                    chars.next();
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '`' => quote = Some(c),
                // A lone `'` is a Rust lifetime, not a quote: only `'x'` counts.
                '\'' if chars.clone().nth(1) == Some('\'') => quote = Some(c),
                '/' if chars.peek() == Some(&'/') => break,
                '#' if out.trim().is_empty() => break,
                _ => out.push(c),
            },
        }
    }
    out
}

/// The last line of an indented body: before the next line indented no deeper than the
/// defining line, keeping a closing `end`, `)` or `]` at that depth and the rest of a
/// multi-line signature (`) -> T:`).
fn indentation_end(lines: &[&str], defining: usize) -> usize {
    let depth = indent(lines[defining]);
    let mut last = defining;
    for (i, line) in lines.iter().enumerate().skip(defining + 1) {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if indent(line) > depth {
            last = i;
            continue;
        }
        let closes = trimmed.starts_with(['}', ')', ']']) || trimmed == "end" || trimmed == "end;";
        if closes {
            last = i;
            if trimmed.ends_with(':') {
                continue;
            }
        }
        break;
    }
    last
}

/// The width of a line's leading whitespace, in characters.
pub fn indent(line: &str) -> usize {
    line.chars()
        .take_while(|c| c.is_whitespace())
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}
