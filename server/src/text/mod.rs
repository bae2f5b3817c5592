//! Text positions: plain position/range types, UTF-8/UTF-16 conversion on ropey ropes,
//! whole-line spans, and `file://` URIs. Used by every layer; depends on none.
//!
//! Ropes are built without ropey's `unicode_lines` feature, so only `\n`, `\r\n` and a
//! lone `\r` break lines, exactly as LSP clients count them.

mod encoding;
mod uri;

pub use encoding::{char_index, line_count, line_span, line_text, position_of, PositionEncoding};
pub use uri::{file_uri, path_from_file_uri};

/// The longest prefix of `text` within `max` bytes that ends on a character boundary
/// (slicing a `str` inside a character would panic).
pub fn prefix_within(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// A count with thousands separators, as people read it: `6,712`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `1 file`, `2,310 files`: a count with its noun, singular or plural.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

/// A size as people read it: `512 bytes`, `703.1 KB`, `12.4 MB`, `1.2 GB` (powers of
/// 1,000, as the units say).
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 3] = ["KB", "MB", "GB"];
    if bytes < 1_000 {
        return format!("{bytes} bytes");
    }
    let mut value = bytes as f64 / 1_000.0;
    let mut unit = 0;
    while value >= 999.95 && unit + 1 < UNITS.len() {
        value /= 1_000.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// A position as the editor counts it: 0-based line, and a column in the negotiated
/// encoding's code units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    pub line: u32,
    pub character: u32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    pub start: Pos,
    pub end: Pos,
}

impl Pos {
    pub fn new(line: u32, character: u32) -> Pos {
        Pos { line, character }
    }
}

impl Span {
    /// Whether two spans share at least one position (touching counts, as an editor's
    /// cursor at the end of a range is "on" it).
    pub fn touches(&self, other: &Span) -> bool {
        self.start <= other.end && other.start <= self.end
    }
}
