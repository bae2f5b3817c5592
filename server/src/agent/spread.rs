//! Which retrieved chunks come first: as many files as possible. Five chunks of one file
//! show one guess, and the answer is often the next file (issue #23 item 4), so each
//! file's first chunk comes before any file's second, and a file the index ranked down
//! as not what the question is about (a test, doc or config file) waits with the second
//! ones. The no-model answer lists its places in this order (`no_provider.rs`), and a
//! model is shown its first chunks in it (`for_model`).

use crate::index::RetrievalHit;

/// Chunks a model's first message is chosen from: enough that `for_model` finds a
/// first chunk of more files than it shows.
pub const MODEL_CANDIDATES: usize = 24;

/// The positions of `hits` in that order; within each tier, the retrieval's order.
pub fn files_first<'a>(hits: impl IntoIterator<Item = &'a RetrievalHit>) -> Vec<usize> {
    let mut seen: Vec<&str> = Vec::new();
    let mut order: Vec<(bool, usize)> = Vec::new();
    for (i, hit) in hits.into_iter().enumerate() {
        let first = !seen.contains(&hit.path.as_str());
        if first {
            seen.push(&hit.path);
        }
        order.push((hit.ranked_down || !first, i));
    }
    // Stable: a tier keeps the retrieval's order.
    order.sort_by_key(|&(later, _)| later);
    order.into_iter().map(|(_, i)| i).collect()
}

/// How many files `files_first` lists in its first tier: files with a chunk the index did
/// not rank down.
pub fn leading_files(hits: &[RetrievalHit]) -> usize {
    let mut seen: Vec<&str> = Vec::new();
    for hit in hits.iter().filter(|hit| !hit.ranked_down) {
        if !seen.contains(&hit.path.as_str()) {
            seen.push(&hit.path);
        }
    }
    seen.len()
}

/// The `n` chunks a model is shown, from the retrieval's `hits`, in that order.
pub fn for_model(hits: Vec<RetrievalHit>, n: usize) -> Vec<RetrievalHit> {
    let order = files_first(&hits);
    let mut hits: Vec<Option<RetrievalHit>> = hits.into_iter().map(Some).collect();
    order
        .into_iter()
        .take(n)
        .filter_map(|i| hits[i].take())
        .collect()
}

/// A retrieved chunk of three lines from `line`, for the agent's tests.
#[cfg(test)]
pub(super) fn test_hit(path: &str, line: usize, ranked_down: bool) -> RetrievalHit {
    RetrievalHit {
        path: path.into(),
        start_line: line,
        end_line: line + 2,
        score: 1.0,
        symbol: None,
        ranked_down,
        text: String::new(),
        file_symbols: None,
    }
}

#[cfg(test)]
mod tests {
    use super::test_hit as hit;
    use super::*;

    fn shown(hits: &[RetrievalHit]) -> Vec<String> {
        hits.iter()
            .map(|h| format!("{}:{}", h.path, h.start_line))
            .collect()
    }

    #[test]
    fn each_file_first_then_second_places_and_ranked_down_files() {
        let hits = vec![
            hit("src/a.rs", 1, false),
            hit("src/a.rs", 40, false),
            hit("tests/a.rs", 1, true),
            hit("src/a.rs", 90, false),
            hit("src/b.rs", 7, false),
            hit("src/c.rs", 3, false),
        ];
        assert_eq!(files_first(&hits), [0, 4, 5, 1, 2, 3]);
        assert_eq!(
            shown(&for_model(hits, 4)),
            ["src/a.rs:1", "src/b.rs:7", "src/c.rs:3", "src/a.rs:40"]
        );
    }

    #[test]
    fn fewer_hits_than_places_are_all_shown() {
        let hits = vec![hit("src/a.rs", 1, false), hit("src/a.rs", 9, false)];
        assert_eq!(shown(&for_model(hits, 6)), ["src/a.rs:1", "src/a.rs:9"]);
        assert!(for_model(Vec::new(), 6).is_empty());
    }
}
