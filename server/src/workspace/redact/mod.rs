//! Secret redaction: every text from the workspace that can reach the model, an answer
//! or the log passes through [`redact`] here, which replaces credentials by markers
//! (`[redacted: github token]`) and keeps the text's lines, so line numbers stay right.
//!
//! What is found, in order of precedence (an overlapping later finding is dropped):
//! 1. private key blocks (blocks.rs), on the whole text;
//! 2. credentials with a shape of their own (the `[[token]]` rules of rules.toml, each
//!    naming the gitleaks, ripsecrets or trufflehog rule it follows), gated by keywords;
//! 3. values assigned to secret-looking names (assignment.rs), with a randomness test
//!    (randomness.rs) for names that are not password-like.
//!
//! Redact whole files, then take the lines to show ([`redact_lines`]): a key block is
//! only recognisable from its BEGIN line. Every other finding is decided by its own
//! line (rules.rs), so a search may redact only the lines it matched and show what a
//! read of the whole file shows. Measured recall and false positives are in
//! docs/security.md; `tests/redact_table.rs` is the table, `tests/redact_corpus.rs`
//! counts false positives over real code.

mod assignment;
mod blocks;
mod memo;
mod randomness;
mod rules;

use std::borrow::Cow;
use std::ops::Range;

pub use randomness::looks_random;

/// Shortest value a password-like name's literal must have to count.
pub const MIN_PASSWORD_LEN: usize = 4;

/// One finding: the bytes to replace and the marker they become (empty: removed).
#[derive(Clone, Debug)]
pub struct Found {
    pub range: Range<usize>,
    pub marker: String,
}

/// `text` with secrets replaced by markers (borrowed when there are none). Lines are
/// kept: no line break is removed or added.
pub fn redact(text: &str) -> Cow<'_, str> {
    let findings = find(text);
    if findings.is_empty() {
        return Cow::Borrowed(text);
    }
    Cow::Owned(replaced(text, 0, &findings))
}

/// `text` (which starts at `offset` of the text `findings` were made on) with each
/// finding replaced by its marker.
fn replaced(text: &str, offset: usize, findings: &[Found]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for found in findings {
        out.push_str(&text[copied..found.range.start - offset]);
        if !found.marker.is_empty() {
            out.push_str("[redacted: ");
            out.push_str(&found.marker);
            out.push(']');
        }
        copied = found.range.end - offset;
    }
    out.push_str(&text[copied..]);
    out
}

/// Each of `lines` (lines of one text for which [`needs_whole_text`] is false) as
/// [`redact`] of it alone gives it: `None` when it is unchanged. They are scanned as one
/// text, since no finding of such a text crosses a line break: a search that matched a
/// common word on most lines of a file pays one scan for the file, not one per line
/// (the per-call cost was most of the redaction's).
pub fn redact_each_line(lines: &[&str]) -> Vec<Option<String>> {
    let mut joined = String::with_capacity(lines.iter().map(|line| line.len() + 1).sum());
    let mut starts = Vec::with_capacity(lines.len());
    for line in lines {
        starts.push(joined.len());
        joined.push_str(line);
        if !line.ends_with('\n') {
            joined.push('\n');
        }
    }
    let mut out = redact_joined_lines(&joined, &starts);
    for (line, redacted) in lines.iter().zip(&mut out) {
        if let Some(redacted) = redacted.as_mut().filter(|_| !line.ends_with('\n')) {
            redacted.pop();
        }
    }
    out
}

/// [`redact_each_line`] of lines already joined: line `i` is `joined[starts[i]..]` up
/// to the next start (or the end), each ending in a line break.
pub fn redact_joined_lines(joined: &str, starts: &[usize]) -> Vec<Option<String>> {
    let line_at = |i: usize| &joined[starts[i]..starts.get(i + 1).copied().unwrap_or(joined.len())];
    // Not through the memo: a search's joined lines are never asked for again.
    let findings = scan(joined);
    let mut out = vec![None; starts.len()];
    let mut rest = &findings[..];
    while let Some(first) = rest.first() {
        let i = starts.partition_point(|start| *start <= first.range.start) - 1;
        let (start, line) = (starts[i], line_at(i));
        let in_line = rest
            .iter()
            .take_while(|found| found.range.start < start + line.len())
            .count()
            .max(1);
        let (here, after) = rest.split_at(in_line);
        rest = after;
        out[i] = Some(
            if here
                .iter()
                .all(|found| found.range.end <= start + line.len())
            {
                replaced(line, start, here)
            } else {
                // A finding past the line's end (none is, for such a text): the line is
                // redacted alone rather than cut wrongly.
                redact(line).into_owned()
            },
        );
    }
    out
}

/// Whether `text` must be redacted whole for a line of it to read right: it holds a
/// keyword of a rule whose findings may span lines. When false, `redact(line)` of each
/// of its lines equals that line of `redact(text)` (a search redacts only the lines it
/// matched).
pub fn needs_whole_text(text: impl AsRef<[u8]>) -> bool {
    rules::RULES.needs_whole_text(text.as_ref())
}

/// Lines `first..=last` (1-based, as an editor counts them) of `text` redacted as a
/// whole, joined by `\n`; empty when `first` is past the end.
pub fn redact_lines(text: &str, first: usize, last: usize) -> String {
    let redacted = redact(text);
    let lines: Vec<&str> = redacted.lines().collect();
    let start = first.max(1) - 1;
    let end = last.min(lines.len());
    if start >= end {
        return String::new();
    }
    lines[start..end].join("\n")
}

/// `text[range]` as the whole text's redaction shows it: the findings are made on all
/// of `text`, so a part cut from a key block or from inside a token is redacted too (a
/// secret the part cuts into becomes a whole marker).
pub fn redact_span(text: &str, range: Range<usize>) -> String {
    let mut out = String::with_capacity(range.len());
    let mut copied = range.start;
    for found in find(text) {
        if found.range.end <= range.start || found.range.start >= range.end {
            continue;
        }
        out.push_str(&text[copied..found.range.start.max(copied)]);
        if !found.marker.is_empty() {
            out.push_str("[redacted: ");
            out.push_str(&found.marker);
            out.push(']');
        }
        copied = found.range.end.min(range.end);
    }
    out.push_str(&text[copied..range.end]);
    out
}

/// The findings of `text`, sorted and not overlapping.
pub fn find(text: &str) -> Vec<Found> {
    memo::RECENT.findings(text, scan)
}

fn scan(text: &str) -> Vec<Found> {
    let mut accepted: Vec<Found> = Vec::new();
    let take = |candidates: Vec<Found>, accepted: &mut Vec<Found>| {
        let mut candidates = candidates;
        // Leftmost first; at one start, the longest.
        candidates.sort_by(|a, b| {
            a.range
                .start
                .cmp(&b.range.start)
                .then(b.range.end.cmp(&a.range.end))
        });
        for candidate in candidates {
            if candidate.range.is_empty() {
                continue;
            }
            let overlaps = accepted.iter().any(|a| {
                a.range.start < candidate.range.end && candidate.range.start < a.range.end
            });
            if !overlaps {
                accepted.push(candidate);
            }
        }
    };
    let hits = rules::RULES.hits(text);
    take(blocks::find(text, &hits.blocks), &mut accepted);
    take(rules::RULES.tokens(text, &hits.tokens), &mut accepted);
    take(assignment::find(text, &hits.name_words), &mut accepted);
    accepted.sort_by_key(|found| found.range.start);
    accepted
}

/// Whether a value stands for a secret without being one: a reference (`${DB_PASS}`,
/// `$TOKEN`, `{{ .Values.token }}`, `%(password)s`, `<your-token>`), a listed
/// placeholder (`changeme`), the name itself (`password: password`), or one character
/// repeated (`********`).
pub fn is_placeholder(value: &str, name: &str) -> bool {
    let lower = value.to_ascii_lowercase();
    let trimmed = lower.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    if value.starts_with(['$', '%', '<', '{']) && value.len() > 1
        || value.contains("${")
        || value.contains("{{")
        || value.contains("%(")
        || value.contains("#{")
    {
        return true;
    }
    let mut chars = value.chars();
    if let Some(first) = chars.next() {
        if chars.all(|c| c == first) {
            return true;
        }
    }
    if trimmed.is_empty() || trimmed == name.to_ascii_lowercase() {
        return true;
    }
    let spec = &rules::RULES.assignment;
    if spec.placeholders.iter().any(|p| p == trimmed) {
        return true;
    }
    [
        "placeholder",
        "changeme",
        "change_me",
        "redacted",
        "example",
        "xxxx",
        "****",
        "your_",
        "your-",
        "dummy",
    ]
    .iter()
    .any(|word| lower.contains(word))
}

#[cfg(test)]
mod tests;
