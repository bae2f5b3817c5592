//! Private key blocks, found on a whole text so that a read or a search that returns
//! only part of a block (lines from its middle) is redacted all the same: callers
//! redact the whole file and then take the lines they show.
//!
//! A block runs from its BEGIN line to its END line when every line between is key
//! material (base64, RFC 1421/4880 headers such as `Proc-Type:` or `Version:`, blank
//! lines, as PGP armour has after its headers; quotes and `\n` escapes of a string
//! literal around them). Without an END (a truncated file) it runs as long as the lines
//! are base64. A BEGIN with no key material after it is text (a parser's constant).
//! An END with no BEGIN above it (an excerpt that starts inside a block) takes the key
//! lines above it. In a JSON string (`"-----BEGIN …\nMIIE…\n-----END …"`) the block is
//! one line.
//!
//! The BEGIN marker becomes the marker; body lines and the END marker are emptied, so
//! the text keeps its lines. A prefix a tool put before a line (`12\t`, `path:12: `)
//! and the indentation stay.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::rules::{BlockRule, RULES};
use super::Found;

/// Longest block looked at: an 8192-bit RSA key in PEM is about 100 lines.
const MAX_BLOCK_LINES: usize = 400;

/// A line a tool prefixed: `12\t` (read_file) or `path:12: ` (search_code).
static TOOL_PREFIX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:\d+\t|[^\s:]+:\d+: )").expect("valid regex"));

/// Key material on a line of its own: base64, perhaps inside a string literal.
static STRICT_BODY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^(?:b?["'`])?[A-Za-z0-9+/=]{16,}(?:\\r)?(?:\\n)?["'`]?[ \t]*[,+;\\]?[ \t]*$"#)
        .expect("valid regex")
});

/// Armour headers and the PGP checksum line.
static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^(?:b?["'`])?(?:(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset|MessageID|Encryption|PuTTY-User-Key-File-\d|Public-Lines):.*|=[A-Za-z0-9+/]{4})(?:\\n)?["'`]?[ \t]*[,+]?[ \t]*$"#)
        .expect("valid regex")
});

static BASE64_RUN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9+/=]{16,}").expect("valid regex"));

/// A line of `text`: its byte range without the line break, and where its content
/// starts past a tool's prefix and the indentation.
struct Line {
    range: Range<usize>,
    content: usize,
}

fn lines_of(text: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut start = 0;
    for piece in text.split_inclusive('\n') {
        let end = start + piece.trim_end_matches(['\n', '\r']).len();
        let body = &text[start..end];
        let prefix = TOOL_PREFIX.find(body).map_or(0, |m| m.end());
        let indent = body[prefix..].len() - body[prefix..].trim_start().len();
        lines.push(Line {
            range: start..end,
            content: start + prefix + indent,
        });
        start += piece.len();
    }
    lines
}

/// Every key block of `text`, as edits: the BEGIN marker replaced, the rest removed.
/// `triggered` (from `Rules::hits` of `text`) names the blocks whose keyword it holds.
pub fn find(text: &str, triggered: &[bool]) -> Vec<Found> {
    let rules: Vec<&BlockRule> = RULES
        .blocks
        .iter()
        .zip(triggered)
        .filter(|(_, hit)| **hit)
        .map(|(rule, _)| rule)
        .collect();
    if rules.is_empty() {
        return Vec::new();
    }
    let lines = lines_of(text);
    let line_of = |offset: usize| lines.partition_point(|line| line.range.end < offset);
    let mut out = Vec::new();
    // Lines already inside a block, so an END is not taken twice.
    let mut covered: Vec<Range<usize>> = Vec::new();
    for rule in rules {
        for begin in rule.begin.get().find_iter(text) {
            let first = line_of(begin.start());
            if covered.iter().any(|c| c.contains(&first)) {
                continue;
            }
            let line = &lines[first];
            let rest = &text[begin.end()..line.range.end];
            if rest.starts_with('\\') {
                if let Some(end) = rule.end.get().find(rest) {
                    // One line: a JSON string with `\n` escapes.
                    out.push(found(begin.start()..begin.end() + end.end(), &rule.marker));
                    covered.push(first..first + 1);
                    continue;
                }
            }
            let Some(last) = block_end(text, &lines, first, rule) else {
                continue;
            };
            out.push(found(begin.start()..line.range.end, &rule.marker));
            empty_lines(text, &lines, first + 1..last + 1, rule, &mut out);
            covered.push(first..last + 1);
        }
        // An END with no BEGIN in the text: the excerpt began inside the block.
        for end in rule.end.get().find_iter(text) {
            let last = line_of(end.start());
            if covered.iter().any(|c| c.contains(&last)) {
                continue;
            }
            let mut first = last;
            while first > 0 && is_key_line(text, &lines[first - 1], true) {
                first -= 1;
            }
            if first < last {
                empty_lines(text, &lines, first..last + 1, rule, &mut out);
                covered.push(first..last + 1);
            }
        }
    }
    out
}

/// The last line (an index into `lines`) of the block whose BEGIN is on line `first`,
/// or `None` when no key material follows it.
fn block_end(text: &str, lines: &[Line], first: usize, rule: &BlockRule) -> Option<usize> {
    let limit = lines.len().min(first + MAX_BLOCK_LINES);
    // With an END: every line between must be quiet, one of them key material.
    let end = (first + 1..limit).find(|&i| rule.end.get().is_match(&text[lines[i].range.clone()]));
    if let Some(end) = end {
        let between = &lines[first + 1..end];
        let quiet = between
            .iter()
            .all(|line| is_quiet(&text[line.content..line.range.end]));
        let keyed = between
            .iter()
            .any(|line| BASE64_RUN.is_match(&text[line.content..line.range.end]));
        if quiet && keyed {
            return Some(end);
        }
    }
    // Without one (a file cut short, or an END far away): the base64 lines that follow.
    let mut last = None;
    let mut i = first + 1;
    while i < limit {
        let line = &lines[i];
        let content = &text[line.content..line.range.end];
        if STRICT_BODY.is_match(content) {
            last = Some(i);
        } else if !(content.is_empty() || HEADER.is_match(content)) {
            break;
        }
        i += 1;
    }
    last
}

/// Between a BEGIN and its END: nothing that looks like code.
fn is_quiet(content: &str) -> bool {
    !content.contains(['(', ')', '{', '}', ';', '<', '>']) && !content.contains("BEGIN")
}

fn is_key_line(text: &str, line: &Line, strict: bool) -> bool {
    let content = &text[line.content..line.range.end];
    STRICT_BODY.is_match(content) || (strict && HEADER.is_match(content))
}

/// Removes the content of `range`'s lines (the END marker and what precedes it on its
/// line; what follows the END, such as a closing quote, stays).
fn empty_lines(
    text: &str,
    lines: &[Line],
    range: Range<usize>,
    rule: &BlockRule,
    out: &mut Vec<Found>,
) {
    for line in &lines[range] {
        let body = &text[line.content..line.range.end];
        let end = match rule.end.get().find(body) {
            Some(end) => line.content + end.end(),
            None => line.range.end,
        };
        if end > line.content {
            out.push(found(line.content..end, ""));
        }
    }
}

fn found(range: Range<usize>, marker: &str) -> Found {
    Found {
        range,
        marker: marker.to_string(),
    }
}
