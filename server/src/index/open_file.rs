//! The file open in the editor as a signal of its own, capped: its first chunk among
//! what the question's words found may move up one place, past a chunk of another file
//! that it nearly ties with. It adds no words to the query (the open file's path once
//! did, and its words lifted files of the same name in every root above what the
//! question asked for), so it settles a near tie only and can never bring in a file the
//! question does not match. It moves places rather than scores: the order it is given
//! may already be the history fusion's (or the learned ranker's), which a scalar score
//! does not hold.

use super::RetrievalHit;

/// A near tie: the open file's chunk scores within this factor of the one above it.
pub const OPEN_FILE_LIFT: f32 = 1.1;

/// Moves the first chunk of `open` (a path as hits show it) up one place when it nearly
/// ties with the chunk above it.
pub fn lift(mut hits: Vec<RetrievalHit>, open: Option<&str>) -> Vec<RetrievalHit> {
    let Some(open) = open else {
        return hits;
    };
    if let Some(at) = hits.iter().position(|hit| hit.path == open) {
        if at > 0
            && hits[at - 1].path != open
            && hits[at].score * OPEN_FILE_LIFT >= hits[at - 1].score
        {
            hits.swap(at - 1, at);
        }
    }
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(path: &str, score: f32) -> RetrievalHit {
        RetrievalHit {
            path: path.to_string(),
            start_line: 1,
            end_line: 2,
            score,
            symbol: None,
            ranked_down: false,
            text: String::new(),
            file_symbols: None,
        }
    }

    fn order(hits: &[RetrievalHit]) -> Vec<&str> {
        hits.iter().map(|h| h.path.as_str()).collect()
    }

    #[test]
    fn the_open_file_settles_a_near_tie_and_never_outweighs_a_clear_match() {
        let hits = vec![hit("a.py", 10.0), hit("open.py", 9.5), hit("b.py", 5.0)];
        assert_eq!(
            order(&lift(hits.clone(), Some("open.py"))),
            ["open.py", "a.py", "b.py"]
        );
        // One place at most, whatever the scores: the order given is the ranking's.
        let hits = vec![hit("a.py", 1.0), hit("b.py", 1.0), hit("open.py", 9.0)];
        assert_eq!(
            order(&lift(hits.clone(), Some("open.py"))),
            ["a.py", "open.py", "b.py"]
        );
        let hits = vec![hit("a.py", 10.0), hit("b.py", 6.0), hit("open.py", 5.0)];
        assert_eq!(
            order(&lift(hits.clone(), Some("open.py"))),
            ["a.py", "b.py", "open.py"]
        );
        // A file the question did not find stays out.
        assert_eq!(order(&lift(hits.clone(), Some("gone.py"))), order(&hits));
        assert_eq!(order(&lift(hits.clone(), None)), order(&hits));
    }
}
