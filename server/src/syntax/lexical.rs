//! Where a text's comments and string literals are, found by a small lexer per language
//! rather than a syntax tree: the byte ranges that `references.rs` would call comments
//! and strings by the grammar's nodes (comment, string, char literal and text-block
//! nodes; code interpolated into a string is code; a C macro's body is code).
//!
//! Why our own: `find_references` tells a name's uses from its mentions in the files it
//! shows, and a tree-sitter parse of one large file (mypy's 190 KB `nodes.py`: about
//! 40 ms) costs more than ripgrep's search of the whole repository; this reads the same
//! file in well under a millisecond. Comments and strings are a lexical matter in every
//! language we ship but one: JSX text (`<p>refill</p>`) is text only by the grammar, so
//! a JavaScript or TSX text with an element in it is answered `None` and the caller
//! parses. `examples/lexical_agreement.rs` compares the two on real checkouts.

use std::ops::Range;

use super::Language;

/// The comments and string literals of `text`, in order, not overlapping; `None` when
/// only a parse can tell (JSX).
pub fn comments_and_strings(text: &str, language: Language) -> Option<Vec<Range<usize>>> {
    let mut lexer = Lexer {
        bytes: text.as_bytes(),
        at: 0,
        language,
        spans: Vec::new(),
        value_before: false,
        line_start: true,
    };
    lexer.code(Until::End).ok()?;
    Some(lexer.spans)
}

/// The text holds JSX, which only the grammar tells from code.
struct NeedsTree;

/// Where a stretch of code ends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Until {
    End,
    /// A `}` closing a template substitution or a Rust/Go-style block inside one.
    Brace,
    /// The `}` of a Python f-string's replacement field, which may have a `!conversion`
    /// and a `:format spec` first.
    Field,
}

struct Lexer<'a> {
    bytes: &'a [u8],
    at: usize,
    language: Language,
    spans: Vec<Range<usize>>,
    /// JavaScript: the last token was a value (a name, a number, `)`), so a `/` here
    /// divides instead of starting a regex, and a `<` compares.
    value_before: bool,
    /// Only blanks since the last line break (C's preprocessor lines).
    line_start: bool,
}

fn is_word_start(byte: u8) -> bool {
    byte.is_ascii_alphabetic() || byte == b'_' || byte == b'$' || byte >= 0x80
}

fn is_word(byte: u8) -> bool {
    is_word_start(byte) || byte.is_ascii_digit()
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> u8 {
        self.bytes.get(self.at + ahead).copied().unwrap_or(0)
    }

    fn c_family(&self) -> bool {
        matches!(self.language, Language::C | Language::Cpp)
    }

    fn script(&self) -> bool {
        matches!(
            self.language,
            Language::JavaScript | Language::TypeScript | Language::Tsx
        )
    }

    /// Code, up to `until` (the closing brace is consumed).
    fn code(&mut self, until: Until) -> Result<(), NeedsTree> {
        let mut depth = 0usize;
        while self.at < self.bytes.len() {
            let byte = self.bytes[self.at];
            match byte {
                b'\n' => {
                    self.at += 1;
                    self.line_start = true;
                    continue;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => {
                    self.at += 1;
                    continue;
                }
                _ => {}
            }
            let line_start = std::mem::replace(&mut self.line_start, false);
            let next = self.peek(1);
            let value_before = std::mem::replace(&mut self.value_before, false);
            match byte {
                b'#' if self.language == Language::Python => self.line_comment(),
                b'#' if self.c_family() && line_start => self.directive(),
                b'/' if self.language != Language::Python && next == b'/' => self.line_comment(),
                b'/' if self.language != Language::Python && next == b'*' => self.block_comment(),
                b'/' if self.script() && !value_before => {
                    self.regex();
                    self.value_before = true;
                }
                b'"' | b'\'' | b'`' => {
                    let start = self.at;
                    self.quoted(start)?;
                    self.value_before = true;
                }
                b'<' if matches!(self.language, Language::JavaScript | Language::Tsx)
                    && !value_before
                    && (next.is_ascii_alphabetic() || next == b'>') =>
                {
                    return Err(NeedsTree);
                }
                b'0'..=b'9' => {
                    self.number();
                    self.value_before = true;
                }
                _ if is_word_start(byte) => self.word()?,
                b'{' | b'(' | b'[' => {
                    depth += 1;
                    self.at += 1;
                }
                b'}' | b')' | b']' => {
                    if byte == b'}' && depth == 0 && until != Until::End {
                        self.at += 1;
                        return Ok(());
                    }
                    depth = depth.saturating_sub(1);
                    self.at += 1;
                    self.value_before = byte != b'}';
                }
                // A field's `!r` conversion or `:spec` (a walrus there must be in
                // parentheses, so a `:` at depth 0 always starts the spec).
                b'!' | b':'
                    if until == Until::Field && depth == 0 && (byte == b':' || next != b'=') =>
                {
                    self.format_spec()?;
                    return Ok(());
                }
                _ => self.at += 1,
            }
        }
        Ok(())
    }

    /// A name or keyword, or the prefix of a string literal (`rb"…"`, `u8"…"`, `r#"…"#`).
    fn word(&mut self) -> Result<(), NeedsTree> {
        let start = self.at;
        self.skip_word();
        let word = &self.bytes[start..self.at];
        let quote = self.peek(0);
        let prefix = match self.language {
            Language::Python => {
                (quote == b'"' || quote == b'\'')
                    && word.len() <= 2
                    && word.iter().all(|b| b"rRbBuUfFtT".contains(b))
            }
            Language::Rust => match quote {
                b'"' => matches!(word, b"b" | b"c" | b"r" | b"br" | b"cr"),
                b'\'' => word == b"b",
                b'#' => matches!(word, b"r" | b"br" | b"cr") && self.peek(self.hashes()) == b'"',
                _ => false,
            },
            Language::C | Language::Cpp => {
                (quote == b'"' || quote == b'\'')
                    && matches!(
                        word,
                        b"L" | b"u" | b"U" | b"u8" | b"R" | b"LR" | b"uR" | b"UR" | b"u8R"
                    )
            }
            _ => false,
        };
        if prefix {
            self.quoted(start)?;
            self.value_before = true;
            return Ok(());
        }
        // After these a JavaScript `/` starts a regex and a `<` an element.
        let before_expression = matches!(
            word,
            b"return"
                | b"typeof"
                | b"instanceof"
                | b"in"
                | b"of"
                | b"new"
                | b"delete"
                | b"void"
                | b"throw"
                | b"case"
                | b"do"
                | b"else"
                | b"yield"
                | b"await"
        );
        self.value_before = !before_expression;
        Ok(())
    }

    fn number(&mut self) {
        while self.at < self.bytes.len() {
            let byte = self.bytes[self.at];
            let next = self.peek(1);
            let digit_separator = byte == b'\'' && self.c_family() && next.is_ascii_alphanumeric();
            if byte.is_ascii_alphanumeric()
                || byte == b'_'
                || (byte == b'.' && next.is_ascii_digit())
                || digit_separator
            {
                self.at += 1;
            } else {
                break;
            }
        }
    }

    fn line_comment(&mut self) {
        let start = self.at;
        while self.at < self.bytes.len() && self.bytes[self.at] != b'\n' {
            // C's line splice continues a `//` comment on the next line.
            if self.c_family() && self.bytes[self.at] == b'\\' {
                self.at += 1;
                if self.peek(0) == b'\r' {
                    self.at += 1;
                }
            }
            self.at += 1;
        }
        self.spans.push(start..self.at.min(self.bytes.len()));
    }

    fn block_comment(&mut self) {
        let start = self.at;
        self.at += 2;
        let nests = self.language == Language::Rust;
        let mut depth = 1;
        while self.at < self.bytes.len() {
            match (self.bytes[self.at], self.peek(1)) {
                (b'*', b'/') => {
                    self.at += 2;
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                (b'/', b'*') if nests => {
                    self.at += 2;
                    depth += 1;
                }
                _ => self.at += 1,
            }
        }
        self.spans.push(start..self.at.min(self.bytes.len()));
    }

    /// A JavaScript regex literal: code by the grammar, skipped so that a quote or a
    /// `//` in it starts nothing.
    fn regex(&mut self) {
        self.at += 1;
        let mut in_class = false;
        while self.at < self.bytes.len() {
            match self.bytes[self.at] {
                b'\\' => self.at += 1,
                b'\n' => return,
                b'[' => in_class = true,
                b']' => in_class = false,
                b'/' if !in_class => {
                    self.at += 1;
                    self.skip_word();
                    return;
                }
                _ => {}
            }
            self.at += 1;
        }
    }

    /// A literal starting with its prefix at `start` and its quote at `self.at` (or a
    /// Rust lifetime, a Go rune: skipped, not marked).
    fn quoted(&mut self, start: usize) -> Result<(), NeedsTree> {
        let prefix = &self.bytes[start..self.at];
        let quote = self.bytes[self.at];
        match (self.language, quote) {
            (Language::Python, _) => {
                let interpolated = prefix.iter().any(|b| b"fFtT".contains(b));
                self.python_string(start, interpolated)
            }
            (Language::Rust, b'#' | b'"') if prefix.contains(&b'r') => {
                self.raw_string(start);
                Ok(())
            }
            (Language::Rust, b'\'') => {
                self.rust_quote(start);
                Ok(())
            }
            (Language::Go, b'\'') => {
                self.simple(start, b'\'', false, false);
                self.spans.pop();
                Ok(())
            }
            (Language::Go, b'`') => {
                self.simple(start, b'`', true, true);
                Ok(())
            }
            (Language::Java, b'"') if self.peek(1) == b'"' && self.peek(2) == b'"' => {
                self.at += 3;
                self.until_triple(start, b'"');
                Ok(())
            }
            (Language::C | Language::Cpp, b'"') if prefix.ends_with(b"R") => {
                self.cpp_raw_string(start);
                Ok(())
            }
            (_, b'`') if self.script() => self.template(start),
            (_, b'`') => {
                // A stray backtick (a Markdown fence in a comment-less place): skip it.
                self.at += 1;
                Ok(())
            }
            // Rust strings may hold line breaks; the others' end at one (unterminated).
            (language, quote) => {
                self.simple(start, quote, language == Language::Rust, false);
                Ok(())
            }
        }
    }

    /// `"…"` or `'…'` with backslash escapes; `raw`: no escapes (Go's backquotes).
    fn simple(&mut self, start: usize, quote: u8, multiline: bool, raw: bool) {
        self.at += 1;
        while self.at < self.bytes.len() {
            let byte = self.bytes[self.at];
            if byte == b'\\' && !raw {
                self.at += 2;
                continue;
            }
            if byte == quote {
                self.at += 1;
                break;
            }
            if byte == b'\n' && !multiline {
                break;
            }
            self.at += 1;
        }
        self.spans.push(start..self.at.min(self.bytes.len()));
    }

    fn until_triple(&mut self, start: usize, quote: u8) {
        while self.at < self.bytes.len() {
            if self.bytes[self.at] == b'\\' {
                self.at += 2;
                continue;
            }
            if self.bytes[self.at..].starts_with(&[quote; 3]) {
                self.at += 3;
                break;
            }
            self.at += 1;
        }
        self.spans.push(start..self.at.min(self.bytes.len()));
    }

    /// `'a'` or `b'a'` is a char literal; `'a` alone a lifetime or a label (code).
    fn rust_quote(&mut self, start: usize) {
        let next = self.peek(1);
        let char_len = match next {
            0..=0x7f => 1,
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            _ => 4,
        };
        if next == b'\\' || (next != b'\'' && self.peek(1 + char_len) == b'\'') {
            self.simple(start, b'\'', false, false);
        } else {
            self.at += 1;
        }
    }

    /// `r"…"`, `r#"…"#`, `br##"…"##`.
    fn raw_string(&mut self, start: usize) {
        let hashes = self.hashes();
        self.at += hashes + 1;
        while self.at < self.bytes.len() {
            if self.bytes[self.at] == b'"'
                && self.bytes[self.at + 1..]
                    .iter()
                    .take(hashes)
                    .filter(|&&b| b == b'#')
                    .count()
                    == hashes
            {
                self.at += 1 + hashes;
                break;
            }
            self.at += 1;
        }
        self.spans.push(start..self.at.min(self.bytes.len()));
    }

    /// `R"delim(…)delim"`.
    fn cpp_raw_string(&mut self, start: usize) {
        self.at += 1;
        let open = self.at;
        while self.at < self.bytes.len() && !matches!(self.bytes[self.at], b'(' | b'\n') {
            self.at += 1;
        }
        let mut close = vec![b')'];
        close.extend_from_slice(&self.bytes[open..self.at]);
        close.push(b'"');
        match memchr::memmem::find(&self.bytes[self.at..], &close) {
            Some(found) => self.at += found + close.len(),
            None => self.at = self.bytes.len(),
        }
        self.spans.push(start..self.at);
    }

    /// A JavaScript template literal; each `${…}` in it is code.
    fn template(&mut self, start: usize) -> Result<(), NeedsTree> {
        self.at += 1;
        let mut piece = start;
        while self.at < self.bytes.len() {
            match self.bytes[self.at] {
                b'\\' => self.at += 2,
                b'`' => {
                    self.at += 1;
                    break;
                }
                b'$' if self.peek(1) == b'{' => {
                    self.spans.push(piece..self.at);
                    self.at += 2;
                    self.code(Until::Brace)?;
                    piece = self.at;
                }
                _ => self.at += 1,
            }
        }
        self.spans.push(piece..self.at.min(self.bytes.len()));
        Ok(())
    }

    /// A Python string from its prefix at `start`; an f-string's (or t-string's)
    /// replacement fields are code.
    fn python_string(&mut self, start: usize, interpolated: bool) -> Result<(), NeedsTree> {
        let quote = self.bytes[self.at];
        let triple = self.bytes[self.at..].starts_with(&[quote; 3]);
        self.at += if triple { 3 } else { 1 };
        let mut piece = start;
        while self.at < self.bytes.len() {
            let byte = self.bytes[self.at];
            if byte == b'\\' {
                self.at += 2;
                continue;
            }
            if byte == quote && (!triple || self.bytes[self.at..].starts_with(&[quote; 3])) {
                self.at += if triple { 3 } else { 1 };
                break;
            }
            if byte == b'\n' && !triple {
                break;
            }
            if interpolated && byte == b'{' {
                if self.peek(1) == b'{' {
                    self.at += 2;
                    continue;
                }
                self.spans.push(piece..self.at);
                self.at += 1;
                self.code(Until::Field)?;
                piece = self.at;
                continue;
            }
            self.at += 1;
        }
        self.spans.push(piece..self.at.min(self.bytes.len()));
        Ok(())
    }

    /// The rest of a replacement field after its `!` or `:`: a conversion and a format
    /// spec, literal text but for nested `{fields}`; up to and past the closing `}`.
    fn format_spec(&mut self) -> Result<(), NeedsTree> {
        while self.at < self.bytes.len() {
            match self.bytes[self.at] {
                b'}' => {
                    self.at += 1;
                    return Ok(());
                }
                b'{' => {
                    self.at += 1;
                    self.code(Until::Field)?;
                }
                b'\n' | b'"' | b'\'' => return Ok(()),
                _ => self.at += 1,
            }
        }
        Ok(())
    }

    fn skip_word(&mut self) {
        while self.at < self.bytes.len() && is_word(self.bytes[self.at]) {
            self.at += 1;
        }
    }

    /// The `#`s from here on (a Rust raw string's).
    fn hashes(&self) -> usize {
        self.bytes[self.at..]
            .iter()
            .take_while(|&&b| b == b'#')
            .count()
    }

    fn blanks(&mut self) {
        while matches!(self.peek(0), b' ' | b'\t') {
            self.at += 1;
        }
    }
}

/// Whether byte `at` lies in one of `spans` (sorted, not overlapping).
pub fn within(spans: &[Range<usize>], at: usize) -> bool {
    let after = spans.partition_point(|span| span.start <= at);
    after > 0 && spans[after - 1].contains(&at)
}

mod preprocessor;
#[cfg(test)]
mod tests;
