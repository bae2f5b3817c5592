//! Choosing the results from the scored chunks: spread over files (`diversify`), and
//! for a bug report the place each file is cited at (`first_places`).

use std::collections::HashMap;

use super::rank::{Candidate, Scored};

/// For a bug report: each file keeps its rank, but the chunk it is cited at first is
/// the file's candidate with the best place score, a member rather than the head of a
/// type when the file has one that matches.
///
/// The ranking score is right for choosing files and wrong for this. Its length
/// normalisation favours the shortest chunk that mentions a name, and its name lifts
/// favour the definitions a report names, which are mostly the API the reporter called
/// or the frames the error passed through, rather than the code that is wrong. So the
/// place score weighs the report's words over the whole chunk (a milder length
/// normalisation) and leaves the names out, except a line the report points at. A
/// class's head (its doc comment and fields) matches a report about that class,
/// but the fix is usually in one of its members.
pub fn first_places(candidates: &[Candidate], picked: Vec<Scored>, place: &[f32]) -> Vec<Scored> {
    let mut best: HashMap<&str, usize> = HashMap::new();
    for (i, candidate) in candidates.iter().enumerate() {
        if place[i] <= 0.0 {
            continue;
        }
        let key = |i: usize| (!candidates[i].head, place[i]);
        let entry = best.entry(candidate.path.as_str()).or_insert(i);
        if key(i) > key(*entry) {
            *entry = i;
        }
    }
    let mut out: Vec<Scored> = Vec::with_capacity(picked.len());
    for scored in &picked {
        let file = candidates[scored.candidate].path.as_str();
        let first = !out.iter().any(|o| candidates[o.candidate].path == file);
        let candidate = match best.get(file) {
            Some(&chosen) if first => chosen,
            _ => scored.candidate,
        };
        if !out.iter().any(|o| o.candidate == candidate) {
            out.push(Scored {
                candidate,
                ..*scored
            });
        }
    }
    out
}

/// Picks `limit` chunks greedily, multiplying a chunk's score by `decay` for each chunk
/// of its file already picked. Lazy greedy: scores only ever fall, so a popped entry
/// whose file has not gained a pick since it was scored is the true best; otherwise it
/// is rescored and pushed back. Exact, and each chunk is rescored at most `limit` times.
pub fn diversify(
    candidates: &[Candidate],
    scored: Vec<Scored>,
    limit: usize,
    decay: f32,
) -> Vec<Scored> {
    if decay >= 1.0 {
        let mut scored = scored;
        scored.truncate(limit);
        return scored;
    }
    #[derive(PartialEq)]
    struct Entry {
        score: f32,
        /// Position in `scored`, which breaks ties.
        order: usize,
        candidate: usize,
        /// Picks of the chunk's file when `score` was computed.
        seen: i32,
        ranked_down: bool,
        signals: super::rank::Signals,
    }
    impl Eq for Entry {}
    impl PartialOrd for Entry {
        fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(other))
        }
    }
    impl Ord for Entry {
        // Best score first; ties go to the earlier in `scored`.
        fn cmp(&self, other: &Self) -> std::cmp::Ordering {
            self.score
                .total_cmp(&other.score)
                .then(other.order.cmp(&self.order))
        }
    }
    let mut heap: std::collections::BinaryHeap<Entry> = scored
        .into_iter()
        .enumerate()
        .map(|(order, s)| Entry {
            score: s.score,
            order,
            candidate: s.candidate,
            seen: 0,
            ranked_down: s.ranked_down,
            signals: s.signals,
        })
        .collect();
    let mut picked_per_file: HashMap<&str, i32> = HashMap::new();
    let mut out = Vec::with_capacity(limit.min(heap.len()));
    while out.len() < limit {
        let Some(entry) = heap.pop() else {
            break;
        };
        let file = candidates[entry.candidate].path.as_str();
        let seen = picked_per_file.get(file).copied().unwrap_or(0);
        if entry.seen == seen {
            *picked_per_file.entry(file).or_default() += 1;
            out.push(Scored {
                candidate: entry.candidate,
                score: entry.score,
                ranked_down: entry.ranked_down,
                signals: entry.signals,
            });
        } else {
            heap.push(Entry {
                score: entry.score * decay.powi(seen - entry.seen),
                seen,
                ..entry
            });
        }
    }
    out
}
