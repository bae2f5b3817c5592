//! The repository's history as one signal of the file ranking: the files similar past
//! changes changed (`history::vote`) are fused with the files the lexical ranking found,
//! by reciprocal rank, per file. A voted file the candidates did not hold enters with its
//! chunk that best matches the question.
//!
//! The fusion is weighted so the vote reorders and completes the first places rather
//! than replacing them: the lexical first file keeps its place unless the vote agrees
//! with another one strongly (docs/retrieval.md, "Similar past changes", has the
//! numbers on both splits that chose the weights).

use super::file_kind::FileKind;
use super::search::{Found, PastChanges};
use super::Ranking;
use super::{Inner, Location, RetrievalIndex};
use crate::history::{self, History, HistoryOptions};
use crate::workspace::sandbox::Sandbox;

/// Fusion parameters: the lexical ranking's reciprocal-rank constant, the vote's weight
/// against it, the commits that vote, the voted files considered.
#[derive(Clone, Copy, Debug)]
pub struct Fusion {
    pub k: f32,
    pub weight: f32,
    pub voters: usize,
    pub files: usize,
}

/// Chosen on the tuning split (docs/history.md, "The vote, measured"): the vote by
/// its share of the best vote (a file a weak match voted for gains little; by reciprocal
/// rank a second vote weighed nearly what the first did), a weight of a tenth (the
/// lexical first file stays first unless the vote agrees on another one strongly), and
/// 20 voters (50 only added weaker matches).
pub const FUSION: Fusion = Fusion {
    k: 10.0,
    weight: 0.1,
    voters: 20,
    files: 10,
};

impl Fusion {
    /// `FUSION`, or the evaluation's override (`COPILOT_LS_HISTORY_FUSION=k,weight,
    /// voters,files`), read once.
    pub fn current() -> Fusion {
        static FROM_ENV: std::sync::OnceLock<Fusion> = std::sync::OnceLock::new();
        *FROM_ENV.get_or_init(
            || match super::numbers_from_env("COPILOT_LS_HISTORY_FUSION")[..] {
                [k, weight, voters, files] => Fusion {
                    k,
                    weight,
                    voters: voters as usize,
                    files: files as usize,
                },
                _ => FUSION,
            },
        )
    }
}

/// The history of `sandbox`'s root, kept beside the index (`<index dir>.history/`), or
/// in memory with an index in memory.
pub fn open_history(sandbox: &Sandbox, location: &Location) -> History {
    let dir = match location {
        Location::Disk(dir) => {
            let mut name = dir.file_name().unwrap_or_default().to_os_string();
            name.push(".history");
            Some(dir.with_file_name(name))
        }
        Location::Memory(_) => None,
    };
    History::open(
        sandbox.root(),
        dir.as_deref(),
        HistoryOptions::from_env(),
        tokenize,
    )
}

impl RetrievalIndex {
    /// The root's history: its commits, for the `git_*` tools and the answers.
    pub fn history(&self) -> &History {
        &self.inner.history
    }

    /// Reads what HEAD gained or lost since the history was last read (a no-op when it
    /// did not move): a commit made while the server runs is seen at the next ask.
    pub fn refresh_history(&self) {
        self.inner.history.refresh_if_idle();
    }
}

/// The index's tokenizer, for the history's messages and questions.
pub fn tokenize(text: &str, emit: &mut dyn FnMut(&str)) {
    super::tokenize::for_each_term(text, emit);
}

/// The question's votes and the fusion in force, for `search::search`; none for the
/// plain BM25 baseline.
pub fn for_question(inner: &Inner, question: &str, ranking: Ranking) -> PastChanges {
    let fusion = Fusion::current();
    let voted = match ranking {
        Ranking::Tuned => votes(inner, question, fusion),
        Ranking::PlainBm25 => Vec::new(),
    };
    PastChanges { voted, fusion }
}

/// The files voted for, best first: only source files the index holds now. The
/// history is searched before the index's file list is locked, so a search never holds
/// up the index's updates.
fn votes(inner: &Inner, question: &str, fusion: Fusion) -> Vec<(String, f32)> {
    if fusion.weight <= 0.0 || inner.history.is_empty() {
        return Vec::new();
    }
    let source = |path: &str| FileKind::of_path(path) == FileKind::Source;
    let mut voted = history::vote::vote(&inner.history, question, fusion.voters, &source);
    let files = super::lock(&inner.files);
    voted.retain(|(path, _)| files.get(path).is_some_and(|stamp| stamp.text));
    voted.truncate(fusion.files);
    voted
}

/// `found` (the lexical ranking's chunks, best first) reordered by file: each file's
/// place is fused with its place among the `voted` files; a voted file with no chunk
/// gets one from `chunk_of`. Within a file, chunks keep their order.
pub fn fuse(
    found: Vec<Found>,
    voted: &[(String, f32)],
    fusion: Fusion,
    chunk_of: &dyn Fn(&str) -> Option<Found>,
) -> Vec<Found> {
    let Some(best_vote) = voted.first().map(|(_, vote)| *vote).filter(|v| *v > 0.0) else {
        return found;
    };
    // Lexical file ranks, 1-based, in the order the files first appear.
    let lexical = super::search::file_ranks(&found);
    let mut found = found;
    for (path, _) in voted {
        if !lexical.contains_key(path) {
            found.extend(chunk_of(path));
        }
    }
    let fused = |path: &str| -> f32 {
        let vote = voted
            .iter()
            .find(|(p, _)| p == path)
            .map_or(0.0, |(_, vote)| vote / best_vote);
        fused_score(lexical.get(path).copied(), vote, fusion)
    };
    super::search::by_file_score(found, fused)
}

/// A file's fused score: its reciprocal lexical rank (1-based; none when the lexical
/// search missed it) plus the weighted vote share (its vote over the best vote). Also a
/// feature of the learned ranker (`features.rs`), so it starts from today's order.
pub fn fused_score(lexical_rank: Option<usize>, vote_share: f32, fusion: Fusion) -> f32 {
    let lexical = lexical_rank.map_or(0.0, |rank| 1.0 / (fusion.k + rank as f32));
    lexical + fusion.weight * vote_share / fusion.k
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::index::search::test_hits::order;

    fn hit(path: &str, line: usize) -> Found {
        crate::index::search::test_hits::hit(path, line, None)
    }

    #[test]
    fn a_vote_lifts_an_agreeing_file_and_brings_a_missing_one() {
        let found = vec![
            hit("a.py", 1),
            hit("b.py", 1),
            hit("a.py", 9),
            hit("c.py", 1),
        ];
        let voted = vec![("c.py".to_string(), 2.0), ("d.py".to_string(), 1.0)];
        let fused = fuse(found, &voted, FUSION, &|path| Some(hit(path, 5)));
        assert_eq!(
            order(&fused),
            // c.py agrees with the vote and passes b.py; a.py, first by far, stays.
            ["a.py:1", "a.py:9", "c.py:1", "b.py:1", "d.py:5"]
        );
    }

    #[test]
    fn no_votes_change_nothing() {
        let found = vec![hit("a.py", 1), hit("b.py", 1)];
        let fused = fuse(found, &[], FUSION, &|_| None);
        assert_eq!(order(&fused), ["a.py:1", "b.py:1"]);
    }
}
