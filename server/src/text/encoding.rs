//! Conversion between editor positions and rope char indices, in UTF-8 or UTF-16.

use ropey::Rope;

use super::{Pos, Span};

/// What an editor's `character` counts. Negotiated once at `initialize`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PositionEncoding {
    Utf8,
    #[default]
    Utf16,
}

/// Number of lines as an editor shows them: a trailing line break opens an empty last
/// line, and an empty text has one line.
pub fn line_count(rope: &Rope) -> usize {
    rope.len_lines()
}

/// Length of a line without its line break, in chars.
fn line_len_chars(rope: &Rope, line: usize) -> usize {
    let slice = rope.line(line);
    let mut len = slice.len_chars();
    if len > 0 && slice.char(len - 1) == '\n' {
        len -= 1;
    }
    if len > 0 && slice.char(len - 1) == '\r' {
        len -= 1;
    }
    len
}

/// The text of one 0-based line without its line break.
pub fn line_text(rope: &Rope, line: usize) -> String {
    let len = line_len_chars(rope, line);
    rope.line(line).slice(..len).to_string()
}

/// The char index of an editor position. A column past the end of the line is clamped
/// to the line's end (the LSP rule); a line past the end of the text is `None`, except
/// that the position just after the last line's end is accepted.
pub fn char_index(rope: &Rope, pos: Pos, encoding: PositionEncoding) -> Option<usize> {
    let line = pos.line as usize;
    if line >= rope.len_lines() {
        return None;
    }
    let line_start = rope.line_to_char(line);
    let len = line_len_chars(rope, line);
    let wanted = pos.character as usize;
    let slice = rope.line(line).slice(..len);
    let chars_in = match encoding {
        PositionEncoding::Utf8 => {
            let byte_len = slice.len_bytes();
            if wanted >= byte_len {
                len
            } else {
                // A column inside a multi-byte char is rounded down to the char start.
                slice.byte_to_char(wanted)
            }
        }
        PositionEncoding::Utf16 => {
            let units = slice.len_utf16_cu();
            if wanted >= units {
                len
            } else {
                slice.utf16_cu_to_char(wanted)
            }
        }
    };
    Some(line_start + chars_in)
}

/// The editor position of a char index (clamped to the end of the text).
pub fn position_of(rope: &Rope, char_idx: usize, encoding: PositionEncoding) -> Pos {
    let char_idx = char_idx.min(rope.len_chars());
    let line = rope.char_to_line(char_idx);
    let line_start = rope.line_to_char(line);
    let column_chars = char_idx - line_start;
    let slice = rope.line(line).slice(..column_chars);
    let character = match encoding {
        PositionEncoding::Utf8 => slice.len_bytes(),
        PositionEncoding::Utf16 => slice.len_utf16_cu(),
    };
    Pos::new(line as u32, character as u32)
}

/// The span covering whole 0-based lines `first..=last`: from the start of the first to
/// the start of the line after the last, or to the end of the last line when it is the
/// final line of the text. `last` is clamped to the text.
pub fn line_span(rope: &Rope, first: usize, last: usize, encoding: PositionEncoding) -> Span {
    let last = last.min(rope.len_lines().saturating_sub(1));
    let first = first.min(last);
    let start = Pos::new(first as u32, 0);
    let end = if last + 1 < rope.len_lines() {
        Pos::new(last as u32 + 1, 0)
    } else {
        let len = line_len_chars(rope, last);
        let slice = rope.line(last).slice(..len);
        let character = match encoding {
            PositionEncoding::Utf8 => slice.len_bytes(),
            PositionEncoding::Utf16 => slice.len_utf16_cu(),
        };
        Pos::new(last as u32, character as u32)
    };
    Span { start, end }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emoji_and_cjk_columns_differ_by_encoding() {
        // "a😀b" : 😀 is 4 UTF-8 bytes and 2 UTF-16 units; "漢" is 3 bytes, 1 unit.
        let rope = Rope::from_str("a😀b漢c\nx");
        let b = 2; // char index of 'b'
        assert_eq!(
            position_of(&rope, b, PositionEncoding::Utf8),
            Pos::new(0, 5)
        );
        assert_eq!(
            position_of(&rope, b, PositionEncoding::Utf16),
            Pos::new(0, 3)
        );
        assert_eq!(
            char_index(&rope, Pos::new(0, 5), PositionEncoding::Utf8),
            Some(b)
        );
        assert_eq!(
            char_index(&rope, Pos::new(0, 3), PositionEncoding::Utf16),
            Some(b)
        );
        let c = 4;
        assert_eq!(
            position_of(&rope, c, PositionEncoding::Utf8),
            Pos::new(0, 9)
        );
        assert_eq!(
            position_of(&rope, c, PositionEncoding::Utf16),
            Pos::new(0, 5)
        );
    }

    #[test]
    fn columns_past_line_end_clamp_and_lines_past_end_fail() {
        let rope = Rope::from_str("ab\r\ncd");
        assert_eq!(
            char_index(&rope, Pos::new(0, 99), PositionEncoding::Utf16),
            Some(2)
        );
        assert_eq!(
            char_index(&rope, Pos::new(1, 2), PositionEncoding::Utf16),
            Some(6)
        );
        assert_eq!(
            char_index(&rope, Pos::new(2, 0), PositionEncoding::Utf16),
            None
        );
    }

    #[test]
    fn crlf_and_lone_cr_break_lines_but_unicode_separators_do_not() {
        let rope = Rope::from_str("a\r\nb\rc\u{2028}d\n");
        assert_eq!(line_count(&rope), 4);
        assert_eq!(line_text(&rope, 0), "a");
        assert_eq!(line_text(&rope, 2), "c\u{2028}d");
    }

    #[test]
    fn line_span_ends_at_next_line_start_or_text_end() {
        let rope = Rope::from_str("one\ntwo\nthree😀");
        let span = line_span(&rope, 0, 1, PositionEncoding::Utf16);
        assert_eq!(span.start, Pos::new(0, 0));
        assert_eq!(span.end, Pos::new(2, 0));
        let last = line_span(&rope, 2, 2, PositionEncoding::Utf16);
        assert_eq!(last.end, Pos::new(2, 7));
        let last8 = line_span(&rope, 2, 5, PositionEncoding::Utf8);
        assert_eq!(last8.end, Pos::new(2, 9));
    }
}
