//! Scoring chunks for a question: BM25 over chunk fields, plus the signals plain BM25
//! misses.
//!
//! Plain BM25 treats a name in `pub struct FlowControl` like the same words in a
//! passing comment, and a test or a changelog line that repeats the question's words
//! like the code that answers it. So, on top of BM25 over the chunk text:
//! - terms in a definition's name or in a doc comment count extra (BM25F-style field
//!   weights, inside the saturation, so one field cannot dominate);
//! - terms in the file's path add a bonus (`sync/mpsc/bounded.rs` is about channels
//!   with bounds whatever the chunk says);
//! - a chunk gains when its *file* contains more of the question's words, since
//!   answers are usually files that are about the whole question;
//! - tests, benches, examples, changelogs and docs are demoted unless the question
//!   asks for them;
//! - results are spread over files, since five chunks of one file hide the
//!   second-best file.

use std::collections::HashMap;

use super::inverted::{ChunkId, FileId, InvertedIndex};
use super::tokenize::{for_each_term, query_terms, stem};

/// Which scoring to use. `PlainBm25` exists to measure the tuned ranker against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ranking {
    Tuned,
    PlainBm25,
}

/// What a file is, judged by its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Source,
    Test,
    Bench,
    Example,
    Changelog,
    /// README, guides: prose, often relevant, rarely the code that answers.
    Docs,
    /// Manifests, lock files, licenses, editor and CI configuration.
    Meta,
}

impl FileKind {
    pub fn of_path(path: &str) -> FileKind {
        let lower = path.to_ascii_lowercase();
        let name = lower.rsplit('/').next().unwrap_or(&lower);
        let stem = name.split('.').next().unwrap_or(name);
        let dirs: Vec<&str> = lower.split('/').collect();
        let dirs = &dirs[..dirs.len() - 1];
        let in_dir = |names: &[&str]| dirs.iter().any(|d| names.contains(d));

        if matches!(
            stem,
            "changelog" | "changes" | "history" | "news" | "releases" | "release-notes"
        ) {
            return FileKind::Changelog;
        }
        if name.ends_with(".lock")
            || matches!(
                name,
                "package-lock.json"
                    | "go.sum"
                    | "cargo.toml.orig"
                    | ".cargo_vcs_info.json"
                    | ".cargo-ok"
            )
            || stem.starts_with("license")
            || stem.starts_with("copying")
        {
            return FileKind::Meta;
        }
        let test_name = stem.starts_with("test_")
            || stem.ends_with("_test")
            || stem.ends_with("_tests")
            || name.contains(".test.")
            || name.contains(".spec.")
            || stem == "tests"
            || stem == "test";
        if test_name || in_dir(&["test", "tests", "__tests__", "testdata", "spec", "fixtures"]) {
            return FileKind::Test;
        }
        if in_dir(&["bench", "benches", "benchmarks"]) {
            return FileKind::Bench;
        }
        if in_dir(&["example", "examples"]) {
            return FileKind::Example;
        }
        let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
        if matches!(ext, "md" | "markdown" | "mdx" | "rst" | "txt" | "adoc")
            || in_dir(&["doc", "docs"])
        {
            return FileKind::Docs;
        }
        if matches!(
            ext,
            "toml" | "yml" | "yaml" | "json" | "lock" | "cfg" | "ini"
        ) {
            return FileKind::Meta;
        }
        FileKind::Source
    }
}

/// A chunk and its final score.
#[derive(Debug, Clone, Copy)]
pub struct Scored {
    pub chunk: ChunkId,
    pub score: f32,
}

struct Params {
    k1: f32,
    b: f32,
    def_weight: f32,
    doc_weight: f32,
    path_weight: f32,
    coverage_weight: f32,
    /// Each further chunk from an already listed file is multiplied by this.
    same_file_decay: f32,
    /// A chunk defining something whose name is made only of the question's words
    /// (`fn refill` for "how are tokens refilled?") is multiplied by `1 + name_weight`.
    name_weight: f32,
}

const TUNED: Params = Params {
    k1: 1.2,
    b: 0.75,
    def_weight: 3.0,
    doc_weight: 1.0,
    path_weight: 2.0,
    coverage_weight: 1.0,
    same_file_decay: 0.5,
    name_weight: 0.3,
};

const PLAIN: Params = Params {
    k1: 1.2,
    b: 0.75,
    def_weight: 0.0,
    doc_weight: 0.0,
    path_weight: 0.0,
    coverage_weight: 0.0,
    same_file_decay: 1.0,
    name_weight: 0.0,
};

/// What the question asks for beyond code, which lifts the matching demotion.
#[derive(Debug, Default, Clone, Copy)]
struct Intent {
    tests: bool,
    benches: bool,
    examples: bool,
    changelog: bool,
    docs: bool,
}

impl Intent {
    fn of(terms: &[String]) -> Intent {
        let asks = |words: &[&str]| words.iter().any(|w| terms.contains(&stem(w)));
        Intent {
            tests: asks(&["test", "tests", "testing", "unittest", "spec"]),
            benches: asks(&["bench", "benchmark", "benchmarks"]),
            examples: asks(&["example", "examples", "sample"]),
            changelog: asks(&[
                "changelog",
                "changed",
                "changes",
                "release",
                "releases",
                "history",
            ]),
            docs: asks(&["readme", "docs", "documentation", "guide", "tutorial"]),
        }
    }

    /// Whether the question asks for something other than source code.
    fn asks_for_a_kind(&self) -> bool {
        self.tests || self.benches || self.examples || self.changelog || self.docs
    }

    /// How much a chunk of this kind is worth relative to source code. A kind the
    /// question asks for ("where are the tests for …") beats source that merely
    /// shares its other words.
    fn factor(&self, kind: FileKind, in_test_module: bool) -> f32 {
        const ASKED: f32 = 2.5;
        let kind = if in_test_module { FileKind::Test } else { kind };
        match kind {
            FileKind::Source => 1.0,
            FileKind::Test if self.tests => ASKED,
            FileKind::Bench if self.benches => ASKED,
            FileKind::Example if self.examples => ASKED,
            FileKind::Changelog if self.changelog => ASKED,
            FileKind::Docs if self.docs => ASKED,
            FileKind::Docs => 0.7,
            FileKind::Example => 0.5,
            FileKind::Test | FileKind::Bench => 0.4,
            FileKind::Changelog => 0.3,
            FileKind::Meta => 0.3,
        }
    }
}

/// The best chunks for `query`, best first, at most `limit`.
pub fn rank(index: &InvertedIndex, query: &str, limit: usize, ranking: Ranking) -> Vec<Scored> {
    let params = match ranking {
        Ranking::Tuned => &TUNED,
        Ranking::PlainBm25 => &PLAIN,
    };
    if limit == 0 || index.live_chunks == 0 {
        return Vec::new();
    }
    let all_terms = query_terms(query);
    let texts: Vec<String> = all_terms.iter().map(|t| t.text.clone()).collect();
    let intent = Intent::of(&texts);
    let files = index.live_files as f32;
    // A term may be only in paths ("tests"): it still earns the path bonus.
    let path_idf: Vec<(u32, f32)> = all_terms
        .iter()
        .filter_map(|t| {
            let id = index.vocab.get(&t.text)?;
            let df = index.file_df[id as usize] as f32;
            (df > 0.0).then(|| (id, (1.0 + (files - df + 0.5) / (df + 0.5)).ln()))
        })
        .collect();
    // Terms found in some chunk, at most 64 so a file's matched terms fit a bitmask.
    let mut terms = all_terms;
    terms.retain(|t| {
        index
            .vocab
            .get(&t.text)
            .is_some_and(|id| index.chunk_df[id as usize] > 0)
    });
    terms.truncate(64);
    if terms.is_empty() {
        return Vec::new();
    }

    let n = index.live_chunks as f32;
    let avg_len = (index.total_len as f32 / n).max(1.0);
    let mut scores: HashMap<ChunkId, f32> = HashMap::new();
    let mut file_terms: HashMap<FileId, u64> = HashMap::new();
    let mut term_idf = Vec::with_capacity(terms.len());
    for (i, term) in terms.iter().enumerate() {
        let id = index.vocab.get(&term.text).expect("retained above") as usize;
        let df = index.chunk_df[id] as f32;
        let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
        term_idf.push(idf);
        for posting in &index.postings[id] {
            let chunk = &index.chunks[posting.chunk as usize];
            if !chunk.alive {
                continue;
            }
            let tf = f32::from(posting.body)
                + params.def_weight * f32::from(posting.def)
                + params.doc_weight * f32::from(posting.doc);
            let norm = params.k1 * (1.0 - params.b + params.b * chunk.len as f32 / avg_len);
            *scores.entry(posting.chunk).or_default() += idf * tf * (params.k1 + 1.0) / (tf + norm);
            if !term.compound {
                *file_terms.entry(chunk.file).or_default() |= 1 << i;
            }
        }
    }

    let word_idf_total: f32 = terms
        .iter()
        .zip(&term_idf)
        .filter(|(t, _)| !t.compound)
        .map(|(_, idf)| idf)
        .sum();
    // Compounds count here: "token bucket" glues to `tokenbucket`, which a name such as
    // `TokenBucket` also yields.
    let words: Vec<&str> = terms.iter().map(|t| t.text.as_str()).collect();
    // A question about tests or changes is answered by that kind of file, not by the
    // definition it names.
    let name_weight = if intent.asks_for_a_kind() {
        0.0
    } else {
        params.name_weight
    };
    let mut scored: Vec<Scored> = scores
        .into_iter()
        .map(|(chunk_id, bm25)| {
            if ranking == Ranking::PlainBm25 {
                return Scored {
                    chunk: chunk_id,
                    score: bm25,
                };
            }
            let chunk = &index.chunks[chunk_id as usize];
            let file = index.file(chunk.file);
            let path_bonus: f32 = path_idf
                .iter()
                .filter(|(id, _)| file.path_terms.contains(id))
                .map(|(_, idf)| idf)
                .sum();
            let mask = file_terms.get(&chunk.file).copied().unwrap_or(0);
            let covered: f32 = terms
                .iter()
                .zip(&term_idf)
                .enumerate()
                .filter(|(i, (t, _))| !t.compound && mask & (1 << i) != 0)
                .map(|(_, (_, idf))| idf)
                .sum();
            let coverage = if word_idf_total > 0.0 {
                covered / word_idf_total
            } else {
                0.0
            };
            let score = (bm25 + params.path_weight * path_bonus)
                * (1.0 + params.coverage_weight * coverage)
                * (1.0 + name_weight * name_match(chunk, &words))
                * intent.factor(file.kind, chunk.in_test_module);
            Scored {
                chunk: chunk_id,
                score,
            }
        })
        .collect();
    // Ties go by path and line, not by chunk id: ids depend on which build thread
    // finished first, and results must not.
    scored.sort_unstable_by(|a, b| {
        b.score.total_cmp(&a.score).then_with(|| {
            let (a, b) = (
                &index.chunks[a.chunk as usize],
                &index.chunks[b.chunk as usize],
            );
            (&index.file(a.file).path, a.start_line).cmp(&(&index.file(b.file).path, b.start_line))
        })
    });
    diversify(index, scored, limit, params.same_file_decay)
}

/// 1.0 when one of the chunk's definitions is named only with the question's words
/// (every part of `TokenBucket` or `refill` asked about), else 0.0. Definitions are what
/// a question about behaviour is usually answered by; a mere mention is not.
fn name_match(chunk: &super::inverted::ChunkRecord, words: &[&str]) -> f32 {
    let full = chunk.definitions.iter().any(|definition| {
        let mut parts = 0;
        let mut matched = 0;
        for_each_term(&definition.name, |term| {
            parts += 1;
            if words.contains(&term) {
                matched += 1;
            }
        });
        parts > 0 && matched == parts
    });
    if full {
        1.0
    } else {
        0.0
    }
}

/// Picks `limit` chunks greedily, multiplying a chunk's score by `decay` for each chunk
/// of its file already picked. Lazy greedy: scores only ever fall, so a popped entry
/// whose file has not gained a pick since it was scored is the true best; otherwise it
/// is rescored and pushed back. Exact, and each chunk is rescored at most `limit` times.
fn diversify(index: &InvertedIndex, scored: Vec<Scored>, limit: usize, decay: f32) -> Vec<Scored> {
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
        chunk: ChunkId,
        /// Picks of the chunk's file when `score` was computed.
        seen: i32,
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
            chunk: s.chunk,
            seen: 0,
        })
        .collect();
    let mut picked_per_file: HashMap<FileId, i32> = HashMap::new();
    let mut out = Vec::with_capacity(limit.min(heap.len()));
    while out.len() < limit {
        let Some(entry) = heap.pop() else {
            break;
        };
        let file = index.chunks[entry.chunk as usize].file;
        let seen = picked_per_file.get(&file).copied().unwrap_or(0);
        if entry.seen == seen {
            *picked_per_file.entry(file).or_default() += 1;
            out.push(Scored {
                chunk: entry.chunk,
                score: entry.score,
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

/// The definition in a chunk that shares most terms with the question, else the
/// chunk's own symbol.
pub fn best_symbol(index: &InvertedIndex, chunk: ChunkId, query: &str) -> Option<String> {
    let chunk = &index.chunks[chunk as usize];
    let wanted: Vec<String> = query_terms(query).into_iter().map(|t| t.text).collect();
    let mut best: Option<(usize, &str)> = None;
    for definition in chunk.definitions.iter() {
        let mut overlap = 0;
        for_each_term(&definition.name, |term| {
            if wanted.iter().any(|w| w == term) {
                overlap += 1;
            }
        });
        if overlap > 0 && best.is_none_or(|(o, _)| overlap > o) {
            best = Some((overlap, &definition.symbol));
        }
    }
    match best {
        Some((_, symbol)) => Some(symbol.to_string()),
        None => chunk.symbol.as_deref().map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::inverted::tests::index_of;

    fn top_paths(index: &InvertedIndex, query: &str, ranking: Ranking) -> Vec<String> {
        rank(index, query, 5, ranking)
            .iter()
            .map(|s| index.file(index.chunks[s.chunk as usize].file).path.clone())
            .collect()
    }

    #[test]
    fn classifies_paths() {
        assert_eq!(
            FileKind::of_path("src/sync/mpsc/bounded.rs"),
            FileKind::Source
        );
        assert_eq!(FileKind::of_path("tests/crlf.rs"), FileKind::Test);
        assert_eq!(FileKind::of_path("pkg/reader_test.go"), FileKind::Test);
        assert_eq!(FileKind::of_path("web/app.spec.ts"), FileKind::Test);
        assert_eq!(FileKind::of_path("benches/insert.rs"), FileKind::Bench);
        assert_eq!(FileKind::of_path("examples/walk.rs"), FileKind::Example);
        assert_eq!(FileKind::of_path("CHANGELOG.md"), FileKind::Changelog);
        assert_eq!(FileKind::of_path("README.md"), FileKind::Docs);
        assert_eq!(FileKind::of_path("Cargo.lock"), FileKind::Meta);
        assert_eq!(FileKind::of_path("LICENSE-MIT"), FileKind::Meta);
        // A word inside a file name is not a directory.
        assert_eq!(FileKind::of_path("src/testing.rs"), FileKind::Source);
    }

    const SOURCE: &str = "\
/// A channel with a bounded buffer: senders wait while it is full.
pub struct BoundedChannel {
    buffer: Vec<u8>,
}
";
    const TEST: &str = "\
fn senders_wait_when_bounded_channel_buffer_is_full() {
    let channel = bounded_channel();
    fill_buffer(&channel);
    assert!(channel.buffer.full());
    let senders = spawn_senders(channel);
    assert!(senders.wait());
    assert!(channel.buffer.full());
}
";
    const CHANGELOG: &str = "\
- bounded channel: senders now wait when the buffer is full (bounded channel buffer).
";

    #[test]
    fn definitions_beat_mentions_and_tests_are_demoted() {
        // Unrelated files give the terms realistic document frequencies.
        let fillers: Vec<(String, String)> = (0..20)
            .map(|i| {
                (
                    format!("src/module{i}.rs"),
                    format!(
                        "pub fn helper{i}(input: &str) -> usize {{\n    input.len() + {i}\n}}\n"
                    ),
                )
            })
            .collect();
        let mut files: Vec<(&str, &str)> = fillers
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        files.extend([
            ("tests/bounded_channel.rs", TEST),
            ("CHANGELOG.md", CHANGELOG),
            ("src/channel.rs", SOURCE),
        ]);
        let index = index_of(&files);
        let question = "what happens to senders when a bounded channel buffer is full";
        let plain = top_paths(&index, question, Ranking::PlainBm25);
        assert_ne!(
            plain[0], "src/channel.rs",
            "the fixture should fool plain BM25: {plain:?}"
        );
        let tuned = top_paths(&index, question, Ranking::Tuned);
        assert_eq!(tuned[0], "src/channel.rs", "{tuned:?}");
        // Asking for tests or changes lifts the demotion.
        let tests = top_paths(&index, "tests for the bounded channel", Ranking::Tuned);
        assert_eq!(tests[0], "tests/bounded_channel.rs", "{tests:?}");
        let changes = top_paths(
            &index,
            "what changed for bounded channel senders",
            Ranking::Tuned,
        );
        assert_eq!(changes[0], "CHANGELOG.md", "{changes:?}");
    }

    #[test]
    fn path_terms_count() {
        let index = index_of(&[
            ("src/timeout.rs", "pub fn limit(f: F, d: Duration) {}\n"),
            ("src/other.rs", "pub fn other(d: Duration) { limit(); }\n"),
        ]);
        let top = top_paths(&index, "give up after a timeout duration", Ranking::Tuned);
        assert_eq!(top[0], "src/timeout.rs", "{top:?}");
    }

    #[test]
    fn results_are_spread_over_files() {
        let mut big = String::new();
        for i in 0..5 {
            big.push_str(&format!("/// Parses a header.\npub fn parse_header_{i}() {{\n    header();\n    a(); b(); c();\n    d();\n    e();\n}}\n\n"));
        }
        let index = index_of(&[
            ("src/big.rs", &big),
            (
                "src/small.rs",
                "/// Header parsing helper.\npub fn helper() {\n    header();\n}\n",
            ),
        ]);
        let top = top_paths(&index, "parse header", Ranking::Tuned);
        assert!(top[..3].contains(&"src/small.rs".to_string()), "{top:?}");
        let plain = top_paths(&index, "parse header", Ranking::PlainBm25);
        assert!(
            !plain[..3].contains(&"src/small.rs".to_string()),
            "{plain:?}"
        );
    }

    #[test]
    fn best_symbol_matches_the_question() {
        let index = index_of(&[(
            "src/a.rs",
            "const A: u8 = 1;\nfn unrelated() {}\nfn read_line() {}\n",
        )]);
        assert_eq!(
            best_symbol(&index, 0, "how do I read a line").as_deref(),
            Some("read_line")
        );
        assert_eq!(best_symbol(&index, 0, "nothing here").as_deref(), Some("A"));
    }
}
