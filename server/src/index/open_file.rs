//! The file open in the editor as a signal of its own, capped: its chunks are lifted by
//! a bounded factor among what the question's words already found. It adds no words to
//! the query (the open file's path once did, and its words lifted files of the same name
//! in every root above what the question asked for), so it reorders near ties only and
//! can never bring in a file the question does not match.

use super::RetrievalHit;

/// How much the open file's chunks are lifted: enough to settle a near tie, too little to
/// outweigh a clearly better match of the question.
pub const OPEN_FILE_LIFT: f32 = 1.1;

/// Lifts the chunks of `open` (a path as hits show it) and orders the hits again.
pub fn lift(mut hits: Vec<RetrievalHit>, open: Option<&str>) -> Vec<RetrievalHit> {
    let Some(open) = open else {
        return hits;
    };
    let mut lifted = false;
    for hit in hits.iter_mut().filter(|hit| hit.path == open) {
        hit.score *= OPEN_FILE_LIFT;
        lifted = true;
    }
    if lifted {
        // Stable: equal scores keep the ranking's own order.
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
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
