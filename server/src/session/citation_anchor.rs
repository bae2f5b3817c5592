//! Finding a citation again after its document changed: the cited lines are kept as
//! text (the anchor), and after an edit the citation moves to the lines now holding
//! that text. Plain functions over lines, so the rules are unit-tested without an
//! editor.
//!
//! Why text and not edit offsets: a citation may sit in a document that was closed,
//! reloaded from disk (`:e!`) or replaced whole by the client, where no incremental
//! change tells us how lines moved. The anchor is refreshed at every placement, so a
//! citation follows a series of small edits inside it as well as lines inserted or
//! removed around it.

/// Where the anchored lines are now: 0-based first line and how many lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    pub start: usize,
    pub len: usize,
}

/// Finds `anchor` (the cited lines as last seen) in `current` (the document's lines
/// now), preferring the place nearest to `previous` (the 0-based first line it had).
/// `None` when the cited text is gone.
///
/// In order: the lines unchanged where they were; the whole block elsewhere (nearest
/// first); else the block's first and last distinctive lines, which survive an edit
/// inside the block. A block whose every line was edited or deleted is gone.
pub fn relocate(current: &[&str], anchor: &[String], previous: usize) -> Option<Placed> {
    let len = anchor.len();
    if len == 0 || current.is_empty() {
        return None;
    }
    let matches_at = |start: usize| {
        start + len <= current.len()
            && anchor
                .iter()
                .zip(&current[start..start + len])
                .all(|(a, c)| a == c)
    };
    if matches_at(previous) {
        return Some(Placed {
            start: previous,
            len,
        });
    }
    if let Some(start) = nearest((0..current.len()).filter(|&s| matches_at(s)), previous) {
        return Some(Placed { start, len });
    }

    // The block itself was edited: find its first and last lines that still stand,
    // counting only lines distinctive enough to mean something (not `}` or a blank).
    let found = |index: usize, after: Option<usize>, near: usize| {
        let line = &anchor[index];
        if !distinctive(line) {
            return None;
        }
        nearest(
            lines_equal_to(current, line).filter(|&l| after.is_none_or(|a| l > a)),
            near,
        )
    };
    let (top, top_at) = (0..len).find_map(|i| Some((i, found(i, None, previous + i)?)))?;
    let start = top_at.saturating_sub(top);
    let bottom = (top + 1..len)
        .rev()
        .find_map(|j| Some((j, found(j, Some(top_at), start + j)?)));
    // Lines of the block after the last one found keep their count; a last line far
    // from the first belongs to another place, not to this block.
    let end = match bottom {
        Some((j, at)) if at - top_at < 2 * len + 16 => at + (len - 1 - j),
        _ => start + len - 1,
    };
    let end = end.min(current.len() - 1);
    Some(Placed {
        start,
        len: end - start + 1,
    })
}

fn lines_equal_to<'a>(current: &'a [&'a str], wanted: &'a str) -> impl Iterator<Item = usize> + 'a {
    current
        .iter()
        .enumerate()
        .filter(move |(_, line)| **line == wanted)
        .map(|(index, _)| index)
}

fn nearest(candidates: impl Iterator<Item = usize>, to: usize) -> Option<usize> {
    candidates.min_by_key(|&c| (c.abs_diff(to), c))
}

/// A line that identifies its place: some letters or digits beyond punctuation.
fn distinctive(line: &str) -> bool {
    line.chars().filter(|c| c.is_alphanumeric()).count() >= 3
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anchor(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    const CODE: &[&str] = &[
        "use std::time;",
        "",
        "fn refill(&mut self) {",
        "    let now = time::Instant::now();",
        "    self.tokens += 1;",
        "}",
        "",
        "fn other() {}",
    ];

    #[test]
    fn unchanged_lines_stay() {
        let a = anchor(&CODE[2..6]);
        assert_eq!(relocate(CODE, &a, 2), Some(Placed { start: 2, len: 4 }));
    }

    #[test]
    fn lines_inserted_above_move_it_down() {
        let a = anchor(&CODE[2..6]);
        let mut moved = vec!["// a new comment", "// and another"];
        moved.extend_from_slice(CODE);
        assert_eq!(relocate(&moved, &a, 2), Some(Placed { start: 4, len: 4 }));
        let removed = &CODE[1..];
        assert_eq!(relocate(removed, &a, 2), Some(Placed { start: 1, len: 4 }));
    }

    #[test]
    fn an_edit_inside_keeps_it_by_its_first_and_last_lines() {
        let a = anchor(&CODE[2..6]);
        let mut edited: Vec<&str> = CODE.to_vec();
        edited[4] = "    self.tokens += 2; // changed";
        edited.insert(4, "    // inserted inside");
        // The last line `}` is not distinctive: the block keeps its length from its first.
        // `let now` still stands: the block runs from `fn refill` to two lines past it.
        assert_eq!(relocate(&edited, &a, 2), Some(Placed { start: 2, len: 4 }));

        // With its first line edited the block is still found by the lines after it.
        let mut renamed: Vec<&str> = CODE.to_vec();
        renamed[2] = "fn refill_tokens(&mut self) {";
        renamed.insert(0, "// moved down");
        assert_eq!(relocate(&renamed, &a, 2), Some(Placed { start: 3, len: 4 }));
    }

    #[test]
    fn the_nearest_copy_wins() {
        let text = ["fn a() {}", "x", "fn a() {}", "y", "y", "fn a() {}"];
        let a = anchor(&["fn a() {}"]);
        assert_eq!(relocate(&text, &a, 4), Some(Placed { start: 5, len: 1 }));
        assert_eq!(relocate(&text, &a, 1), Some(Placed { start: 0, len: 1 }));
    }

    #[test]
    fn deleted_text_is_gone() {
        let a = anchor(&CODE[2..6]);
        let rest: Vec<&str> = CODE[..2].iter().chain(&CODE[6..]).copied().collect();
        assert_eq!(relocate(&rest, &a, 2), None);
        assert_eq!(relocate(&[], &a, 2), None);
        // Punctuation alone does not keep a citation alive.
        let braces = anchor(&["}"]);
        assert_eq!(relocate(&["{", "]"], &braces, 0), None);
    }

    #[test]
    fn a_block_past_the_end_is_clamped() {
        let a = anchor(&["fn tail() {", "    body();", "    more();"]);
        let text = ["fn tail() {"];
        assert_eq!(relocate(&text, &a, 0), Some(Placed { start: 0, len: 1 }));
    }
}
