//! The C preprocessor's lines for `lexical.rs`: which parts of a `#` line the C and C++
//! grammars call strings (an `#include <path>`) and which one opaque token of code (a
//! macro's body, a directive's argument).

use super::Lexer;

impl Lexer<'_> {
    /// A preprocessor line at `#`. `#include <x.h>` is a string; a macro's body and the
    /// argument of `#pragma`, `#undef`, `#error` and the like are one opaque token in the C
    /// grammars (code, strings and `//` included) that stops before a `/*` comment; the
    /// conditions of `#if` are expressions, lexed as code.
    pub(super) fn directive(&mut self) {
        self.at += 1;
        self.blanks();
        let start = self.at;
        self.skip_word();
        let directive = &self.bytes[start..self.at];
        match directive {
            b"if" | b"ifdef" | b"ifndef" | b"elif" | b"elifdef" | b"elifndef" | b"else"
            | b"endif" => {}
            b"include" | b"include_next" | b"import" => {
                self.blanks();
                if self.peek(0) == b'<' {
                    let start = self.at;
                    while self.at < self.bytes.len() && !matches!(self.bytes[self.at], b'>' | b'\n')
                    {
                        self.at += 1;
                    }
                    if self.peek(0) == b'>' {
                        self.at += 1;
                    }
                    self.spans.push(start..self.at);
                }
            }
            _ => {
                if directive == b"define" {
                    self.blanks();
                    self.skip_word();
                    if self.peek(0) == b'(' {
                        while self.at < self.bytes.len()
                            && !matches!(self.bytes[self.at], b')' | b'\n')
                        {
                            self.at += 1;
                        }
                    }
                }
                self.macro_argument();
            }
        }
    }

    /// A macro body or directive argument, to the end of its (spliced) line.
    fn macro_argument(&mut self) {
        self.blanks();
        if self.peek(0) == b'/' && self.peek(1) == b'/' {
            self.line_comment();
            return;
        }
        while self.at < self.bytes.len() {
            match (self.bytes[self.at], self.peek(1)) {
                (b'\n', _) => return,
                (b'\\', b'\n') => self.at += 2,
                (b'\\', b'\r') if self.peek(2) == b'\n' => self.at += 3,
                (b'/', b'*') => self.block_comment(),
                _ => self.at += 1,
            }
        }
    }
}
