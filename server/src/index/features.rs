//! The learned ranker's features (issue #52): for a question and each file its search
//! found (the lexical ranking's chunks) or past changes voted for, the signals the hand-set
//! ranking multiplies, as numbers of their own. One function computes them for the
//! product and, through the hidden `copilot-ls dev features` command, for training, so
//! both read the same numbers.
//!
//! A file's chunk signals are its best-ranked chunk's; its lexical rank is the place its
//! first chunk holds among the files; the vote is its share of the best vote; today's
//! fused rank and score are features too, so the trees start from the order they are to
//! improve; the file's own size, definitions and change history come from the index's
//! stamp and the history store (`FileFacts`). The file
//! open in the editor is not a feature here: it stays a capped lift after ranking
//! (`open_file.rs`), so no learned weight can put it over what the question says.

use std::collections::HashMap;

use serde::Serialize;

use super::file_kind::FileKind;
use super::past_changes::{fused_score, Fusion};
use super::query::ParsedQuestion;
use super::search::Found;

/// The features' names, in the order of [`FileFeatures::values`]. A trained model is
/// bound to this order; a change to it is a new feature set (`FEATURE_SET`).
pub const NAMES: [&str; 33] = [
    "fused_rank",
    "fused_score",
    "lexical_rank",
    "lexical_score_share",
    "lexical_score",
    "bm25",
    "path_bonus",
    "coverage",
    "name",
    "verb",
    "named",
    "path_ref",
    "quoted",
    "kind_factor",
    "chunks_found",
    "vote_share",
    "vote_rank",
    "found_lexically",
    "depth",
    "kind_test",
    "kind_docs",
    "kind_example",
    "kind_other",
    "question_long",
    "question_words",
    "question_identifiers",
    "question_paths",
    "question_errors",
    "file_bytes",
    "file_chunks",
    "file_definitions",
    "file_changes",
    "file_changed_ago",
];

/// Which features `NAMES` lists; kept beside a trained model.
pub const FEATURE_SET: &str = "copilot-ls-file-features-2";

/// A candidate file and its features.
#[derive(Clone, Debug, Serialize)]
pub struct FileFeatures {
    pub path: String,
    pub values: Vec<f32>,
}

/// Rank of an absent candidate: past the last the search returns.
const ABSENT_RANK: f32 = 1000.0;
/// Commits since a change the history never saw: further back than any it holds.
const NEVER_CHANGED: f32 = 1.0e7;

/// What the index and the history know of a candidate file itself, beside the question:
/// its size, chunks and definitions (its stamp), how many commits changed it and how
/// many commits ago the newest did (Ye et al.'s fix frequency and recency). All zero,
/// and `changed_ago` none, for a file the index does not hold.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FileFacts {
    pub bytes: u64,
    pub chunks: u64,
    pub definitions: u64,
    pub changes: u64,
    pub changed_ago: Option<u64>,
}

/// The features of every file in `found` (lexical, best first) and in `voted` (past
/// changes' votes, best first), in the lexical order then the voted files it missed.
/// The first two are today's ranking (`past_changes::fuse` with `fusion`): its score
/// and the file's place in it, so a model starts from the order it is to improve.
pub fn of_files(
    found: &[Found],
    voted: &[(String, f32)],
    question: &ParsedQuestion,
    fusion: Fusion,
    facts: &dyn Fn(&[&str]) -> Vec<FileFacts>,
) -> Vec<FileFeatures> {
    let mut order: Vec<&str> = Vec::new();
    let mut best: HashMap<&str, &Found> = HashMap::new();
    let mut chunks: HashMap<&str, usize> = HashMap::new();
    for hit in found {
        let path = hit.path.as_str();
        if !best.contains_key(path) {
            best.insert(path, hit);
            order.push(path);
        }
        *chunks.entry(path).or_default() += 1;
    }
    for (path, _) in voted {
        if !best.contains_key(path.as_str()) && !order.contains(&path.as_str()) {
            order.push(path);
        }
    }
    let top_score = found
        .first()
        .map_or(0.0, |hit| hit.score)
        .max(f32::MIN_POSITIVE);
    let best_vote = voted
        .first()
        .map_or(0.0, |(_, v)| *v)
        .max(f32::MIN_POSITIVE);
    let question_values = [
        question.is_long() as u8 as f32,
        question.prose_words as f32,
        question.identifiers.len() as f32,
        question.paths.len() as f32,
        question.errors.len() as f32,
    ];
    let vote_share = |path: &str| {
        voted
            .iter()
            .find(|(p, _)| p == path)
            .map_or(0.0, |(_, vote)| vote / best_vote)
    };
    // The files the lexical search found come first in `order`, in its order; today's
    // ranking sorts them by the fused score, ties kept in that order.
    let fused: Vec<f32> = order
        .iter()
        .enumerate()
        .map(|(place, &path)| {
            let lexical = best.contains_key(path).then_some(place + 1);
            fused_score(lexical, vote_share(path), fusion)
        })
        .collect();
    let mut by_fused: Vec<usize> = (0..order.len()).collect();
    by_fused.sort_by(|&a, &b| fused[b].total_cmp(&fused[a]).then(a.cmp(&b)));
    let mut fused_rank = vec![0usize; order.len()];
    for (rank, &i) in by_fused.iter().enumerate() {
        fused_rank[i] = rank + 1;
    }
    let facts = facts(&order);
    order
        .iter()
        .enumerate()
        .map(|(place, &path)| {
            let hit = best.get(path);
            let lexical_rank = if hit.is_some() {
                (place + 1) as f32
            } else {
                ABSENT_RANK
            };
            let signals = hit.map(|hit| hit.signals).unwrap_or_default();
            let score = hit.map_or(0.0, |hit| hit.score);
            let (vote_rank, vote) = voted
                .iter()
                .position(|(p, _)| p == path)
                .map_or((ABSENT_RANK, 0.0), |i| ((i + 1) as f32, voted[i].1));
            let kind = FileKind::of_path(path);
            let mut values = vec![
                fused_rank[place] as f32,
                fused[place],
                lexical_rank,
                score / top_score,
                score,
                signals.bm25,
                signals.path_bonus,
                signals.coverage,
                signals.name,
                signals.verb,
                signals.named,
                signals.path_ref,
                signals.quoted,
                if hit.is_some() {
                    signals.kind_factor
                } else {
                    1.0
                },
                chunks.get(path).copied().unwrap_or(0) as f32,
                vote / best_vote,
                vote_rank,
                hit.is_some() as u8 as f32,
                path.matches('/').count() as f32,
                (kind == FileKind::Test || kind == FileKind::Bench) as u8 as f32,
                (kind == FileKind::Docs || kind == FileKind::Changelog) as u8 as f32,
                (kind == FileKind::Example) as u8 as f32,
                matches!(
                    kind,
                    FileKind::Meta | FileKind::Vendored | FileKind::Generated
                ) as u8 as f32,
            ];
            values.extend(question_values);
            let file = facts.get(place).copied().unwrap_or_default();
            values.extend([
                file.bytes as f32,
                file.chunks as f32,
                file.definitions as f32,
                file.changes as f32,
                file.changed_ago.map_or(NEVER_CHANGED, |ago| ago as f32),
            ]);
            debug_assert_eq!(values.len(), NAMES.len());
            FileFeatures {
                path: path.to_string(),
                values,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::search::test_hits::hit;

    #[test]
    fn each_file_once_with_its_best_chunk_its_vote_and_the_voted_files_it_missed() {
        let mut found = vec![
            hit("a.py", 1, None),
            hit("tests/test_a.py", 3, None),
            hit("a.py", 9, None),
        ];
        found[0].score = 4.0;
        found[0].signals.bm25 = 3.0;
        found[1].score = 2.0;
        found[2].score = 1.0;
        let voted = vec![("b.py".to_string(), 2.0), ("a.py".to_string(), 1.0)];
        let rows = of_files(
            &found,
            &voted,
            &crate::index::query::parse("where is a parsed?"),
            crate::index::past_changes::FUSION,
            &|paths: &[&str]| {
                paths
                    .iter()
                    .map(|path| FileFacts {
                        bytes: path.len() as u64,
                        changes: (*path == "a.py") as u64 * 3,
                        changed_ago: (*path == "a.py").then_some(7),
                        ..FileFacts::default()
                    })
                    .collect()
            },
        );
        let paths: Vec<&str> = rows.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(paths, ["a.py", "tests/test_a.py", "b.py"]);
        let value = |row: &FileFeatures, name: &str| {
            row.values[NAMES.iter().position(|n| *n == name).unwrap()]
        };
        assert_eq!(value(&rows[0], "lexical_rank"), 1.0);
        // Today's order: a.py first lexically keeps its place; b.py, voted for but not
        // found, gains only a tenth of a vote over k and stays behind the test file.
        assert_eq!(value(&rows[0], "fused_rank"), 1.0);
        assert_eq!(value(&rows[1], "fused_rank"), 2.0);
        assert_eq!(value(&rows[2], "fused_rank"), 3.0);
        assert_eq!(value(&rows[2], "fused_score"), 0.01);
        assert_eq!(value(&rows[0], "bm25"), 3.0);
        assert_eq!(value(&rows[0], "chunks_found"), 2.0);
        assert_eq!(value(&rows[0], "vote_share"), 0.5);
        assert_eq!(value(&rows[0], "vote_rank"), 2.0);
        assert_eq!(value(&rows[1], "lexical_score_share"), 0.5);
        assert_eq!(value(&rows[1], "kind_test"), 1.0);
        assert_eq!(value(&rows[1], "vote_rank"), ABSENT_RANK);
        assert_eq!(value(&rows[2], "lexical_rank"), ABSENT_RANK);
        assert_eq!(value(&rows[2], "found_lexically"), 0.0);
        assert_eq!(value(&rows[2], "vote_share"), 1.0);
        assert_eq!(value(&rows[0], "file_bytes"), 4.0);
        assert_eq!(value(&rows[2], "file_bytes"), 4.0);
        assert_eq!(value(&rows[1], "file_bytes"), 15.0);
        assert_eq!(value(&rows[0], "file_changes"), 3.0);
        assert_eq!(value(&rows[0], "file_changed_ago"), 7.0);
        assert_eq!(value(&rows[1], "file_changed_ago"), NEVER_CHANGED);
        assert!(rows.iter().all(|r| r.values.len() == NAMES.len()));
    }
}
