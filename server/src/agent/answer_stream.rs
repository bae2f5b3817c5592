//! The `answer` string of the `answer` tool's arguments, decoded while those arguments
//! are still arriving as partial JSON, so the answer streams like any other text.
//!
//! Hand-written rather than taken from a crate: the incremental JSON parsers on
//! crates.io either want the whole document or hand out values only once complete, and
//! what is needed here is small: find the top-level key `"answer"`, then decode its string
//! value (escapes, `\uXXXX`, surrogate pairs, UTF-8 split anywhere) as it comes. The
//! arguments still get parsed whole at the end of the turn; that parse is authoritative.

/// Where the scanner is in the arguments object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// Before the opening `{`.
    Start,
    /// Inside the top-level object (depth 1), outside any string.
    TopLevel,
    /// Inside a nested object or array (depth > 1), outside any string.
    Nested,
    /// Inside a string; `target` when it is the value of `"answer"`.
    InString { target: bool, key: bool },
    /// The answer string ended (or the object closed): nothing more to emit.
    Done,
}

/// The escape being read inside a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Escape {
    None,
    /// Just after `\`.
    Backslash,
    /// Inside `\uXXXX`: the digits read so far and their value.
    Unicode {
        digits: u8,
        value: u32,
    },
}

#[derive(Debug)]
pub struct AnswerStream {
    place: Place,
    escape: Escape,
    /// Nesting depth outside strings (1 = the arguments object itself).
    depth: usize,
    /// At depth 1: whether the next string is a key (after `{` or `,`).
    expect_key: bool,
    /// The key being read, and the last key read at depth 1.
    key: Vec<u8>,
    last_key_is_answer: bool,
    /// A high surrogate waiting for its low half.
    high_surrogate: Option<u32>,
    /// Decoded bytes not yet handed out because they end inside a UTF-8 character.
    pending: Vec<u8>,
}

impl Default for AnswerStream {
    fn default() -> Self {
        AnswerStream {
            place: Place::Start,
            escape: Escape::None,
            depth: 0,
            expect_key: false,
            key: Vec::new(),
            last_key_is_answer: false,
            high_surrogate: None,
            pending: Vec::new(),
        }
    }
}

impl AnswerStream {
    /// Feeds the next fragment of the arguments; returns the answer text it completes.
    pub fn push(&mut self, fragment: &[u8]) -> String {
        for &byte in fragment {
            if self.place == Place::Done {
                break;
            }
            self.byte(byte);
        }
        self.take_complete_text()
    }

    /// Whether the answer string has ended.
    #[cfg(test)]
    pub fn is_done(&self) -> bool {
        self.place == Place::Done
    }

    fn byte(&mut self, byte: u8) {
        match self.place {
            Place::Start => {
                if byte == b'{' {
                    self.depth = 1;
                    self.place = Place::TopLevel;
                    self.expect_key = true;
                } else if !byte.is_ascii_whitespace() {
                    // Not an object: there is no answer field to stream.
                    self.place = Place::Done;
                }
            }
            Place::TopLevel | Place::Nested => self.structural(byte),
            Place::InString { target, key } => self.in_string(byte, target, key),
            Place::Done => {}
        }
    }

    fn structural(&mut self, byte: u8) {
        match byte {
            b'"' => {
                let key = self.depth == 1 && self.expect_key;
                let target = self.depth == 1 && !key && self.last_key_is_answer;
                if key {
                    self.key.clear();
                }
                self.place = Place::InString { target, key };
            }
            b'{' | b'[' => {
                self.depth += 1;
                self.place = Place::Nested;
            }
            b'}' | b']' => {
                self.depth = self.depth.saturating_sub(1);
                self.place = match self.depth {
                    0 => Place::Done,
                    1 => Place::TopLevel,
                    _ => Place::Nested,
                };
            }
            b',' if self.depth == 1 => {
                self.expect_key = true;
                self.last_key_is_answer = false;
            }
            // `"answer": null` or a number: the value is not a string, so nothing streams.
            _ => {}
        }
    }

    fn in_string(&mut self, byte: u8, target: bool, key: bool) {
        match self.escape {
            Escape::None => match byte {
                b'\\' => self.escape = Escape::Backslash,
                b'"' => {
                    self.flush_lone_surrogate(target, key);
                    self.end_string(target, key);
                }
                _ => {
                    self.flush_lone_surrogate(target, key);
                    self.out(&[byte], target, key);
                }
            },
            Escape::Backslash => {
                self.escape = Escape::None;
                if byte == b'u' {
                    self.escape = Escape::Unicode {
                        digits: 0,
                        value: 0,
                    };
                    return;
                }
                self.flush_lone_surrogate(target, key);
                let decoded = match byte {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    b'b' => 0x08,
                    b'f' => 0x0c,
                    // `\"`, `\\`, `\/`, and anything invalid taken as itself.
                    other => other,
                };
                self.out(&[decoded], target, key);
            }
            Escape::Unicode { digits, value } => {
                let Some(digit) = (byte as char).to_digit(16) else {
                    // A broken escape: drop it and read the byte as ordinary text.
                    self.escape = Escape::None;
                    self.in_string(byte, target, key);
                    return;
                };
                let value = value * 16 + digit;
                if digits < 3 {
                    self.escape = Escape::Unicode {
                        digits: digits + 1,
                        value,
                    };
                    return;
                }
                self.escape = Escape::None;
                self.code_unit(value, target, key);
            }
        }
    }

    /// One `\uXXXX` code unit, pairing surrogates.
    fn code_unit(&mut self, unit: u32, target: bool, key: bool) {
        let is_high = (0xD800..0xDC00).contains(&unit);
        let is_low = (0xDC00..0xE000).contains(&unit);
        if let Some(high) = self.high_surrogate.take() {
            if is_low {
                let scalar = 0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00);
                self.out_char(char::from_u32(scalar).unwrap_or('\u{FFFD}'), target, key);
                return;
            }
            self.out_char('\u{FFFD}', target, key);
        }
        if is_high {
            self.high_surrogate = Some(unit);
        } else if is_low {
            self.out_char('\u{FFFD}', target, key);
        } else {
            self.out_char(char::from_u32(unit).unwrap_or('\u{FFFD}'), target, key);
        }
    }

    fn flush_lone_surrogate(&mut self, target: bool, key: bool) {
        if self.high_surrogate.take().is_some() {
            self.out_char('\u{FFFD}', target, key);
        }
    }

    fn out_char(&mut self, c: char, target: bool, key: bool) {
        let mut buffer = [0u8; 4];
        self.out(c.encode_utf8(&mut buffer).as_bytes(), target, key);
    }

    fn out(&mut self, bytes: &[u8], target: bool, key: bool) {
        if target {
            self.pending.extend_from_slice(bytes);
        } else if key {
            self.key.extend_from_slice(bytes);
        }
    }

    fn end_string(&mut self, target: bool, key: bool) {
        if target {
            self.place = Place::Done;
            return;
        }
        if key {
            self.last_key_is_answer = self.key == b"answer";
            self.expect_key = false;
        }
        self.place = if self.depth == 1 {
            Place::TopLevel
        } else {
            Place::Nested
        };
    }

    /// The decoded bytes that form whole UTF-8 characters; a character cut by the
    /// fragment's end waits for the next fragment.
    fn take_complete_text(&mut self) -> String {
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            Err(error) if error.error_len().is_none() => error.valid_up_to(),
            // Bytes that can never be UTF-8 (not possible from a `&str` fragment).
            Err(_) => self.pending.len(),
        };
        let rest = self.pending.split_off(valid);
        let complete = std::mem::replace(&mut self.pending, rest);
        String::from_utf8_lossy(&complete).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the streamed pieces add up to, for the input cut at `cuts` byte offsets.
    fn streamed(input: &[u8], cuts: &[usize]) -> String {
        let mut stream = AnswerStream::default();
        let mut text = String::new();
        let mut start = 0;
        for &cut in cuts.iter().chain(std::iter::once(&input.len())) {
            text.push_str(&stream.push(&input[start..cut]));
            start = cut;
        }
        text
    }

    /// The answer as serde_json decodes the whole arguments.
    fn expected(input: &str) -> String {
        let value: serde_json::Value = serde_json::from_str(input).unwrap();
        value["answer"].as_str().unwrap_or_default().to_string()
    }

    const CASES: &[&str] = &[
        r#"{"answer": "Tokens refill in `refill` (src/rate_limit.rs:35)."}"#,
        r#"{"citations": [{"path": "a.rs", "line": 3, "note": "the \"answer\": here"}], "answer": "after"}"#,
        r#"{"answer":"esc \" \\ \/ \b \f \n \r \t end"}"#,
        r#"{"answer": "unicode \u00e9 \u2713 and a pair \ud83d\ude00 done"}"#,
        r#"{"answer": "raw é ✓ 😀 日本"}"#,
        r#"{ "nested": {"answer": "not this"}, "answer" : "this", "x": 1}"#,
        r#"{"answerx": "no", "xanswer": "no", "answer": "yes"}"#,
        r#"{"answer": ""}"#,
        r#"{"citations": [], "answer": "line\nbreak", "answer_extra": "ignored"}"#,
        r#"{"key\"answer": "no", "answer": "yes"}"#,
        r#"{"an\u0073wer": "escaped key"}"#,
    ];

    #[test]
    fn every_case_at_every_split_and_every_pair_of_splits() {
        for input in CASES {
            let bytes = input.as_bytes();
            let want = expected(input);
            assert_eq!(streamed(bytes, &[]), want, "{input}");
            for cut in 0..=bytes.len() {
                assert_eq!(streamed(bytes, &[cut]), want, "{input} cut at {cut}");
            }
            for first in 0..=bytes.len() {
                for second in first..=bytes.len() {
                    assert_eq!(
                        streamed(bytes, &[first, second]),
                        want,
                        "{input} cut at {first} and {second}"
                    );
                }
            }
        }
    }

    #[test]
    fn byte_by_byte_hands_out_text_as_soon_as_it_is_whole() {
        let input = r#"{"answer": "a\u00e9😀\ud83d\ude00b"}"#.as_bytes();
        let mut stream = AnswerStream::default();
        let pieces: Vec<String> = input
            .iter()
            .map(|b| stream.push(std::slice::from_ref(b)))
            .filter(|p| !p.is_empty())
            .collect();
        assert_eq!(pieces, ["a", "é", "😀", "😀", "b"]);
        assert!(stream.is_done());
    }

    #[test]
    fn not_an_answer_string() {
        for input in [
            r#"{"answer": null}"#,
            r#"{"answer": 3}"#,
            r#"{"citations": []}"#,
            r#"["answer", "x"]"#,
            r#""answer""#,
            "",
        ] {
            assert_eq!(streamed(input.as_bytes(), &[]), "", "{input}");
        }
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let input = r#"{"answer": "a\ud83dz \ude00 \ud83d\u0041"}"#;
        assert_eq!(
            streamed(input.as_bytes(), &[]),
            "a\u{FFFD}z \u{FFFD} \u{FFFD}A"
        );
    }

    #[test]
    fn partial_input_streams_what_it_has() {
        let input = r#"{"answer": "The bucket refills con"#;
        assert_eq!(
            streamed(input.as_bytes(), &[7, 20]),
            "The bucket refills con"
        );
    }
}
