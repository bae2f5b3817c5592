//! The retrieval eval, shared by `server/examples/retrieval_eval.rs` (the report) and
//! `tests/retrieval_recall.rs` (the gate): loads `bench/retrieval/questions.json`,
//! finds each crate's sources in the cargo registry at the version in `Cargo.lock`,
//! indexes each crate as a workspace and ranks every question with both rankers.
//!
//! Included with `#[path]` rather than living in the library, so the shipped server
//! carries no eval code.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use copilot_ls::index::{Ranking, RetrievalIndex};
use copilot_ls::workspace::sandbox::Sandbox;

/// A hit counts for recall@K when it is among the first K chunks returned; MRR looks
/// this deep.
pub const RANK_DEPTH: usize = 10;

#[derive(Debug, Clone)]
pub struct Question {
    /// `NAME-VERSION`, the directory name under `registry/src/<index>/`.
    pub crate_dir: String,
    pub question: String,
    pub expected: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Outcome {
    pub question: Question,
    /// 1-based rank of the first chunk from an expected file, within `RANK_DEPTH`.
    pub tuned_rank: Option<usize>,
    pub plain_rank: Option<usize>,
    /// The tuned ranker's top files, for the report.
    pub tuned_top: Vec<String>,
    pub tuned_search: Duration,
}

#[derive(Debug, Clone)]
pub struct CrateReport {
    pub crate_dir: String,
    pub files: usize,
    pub chunks: usize,
    pub bytes: usize,
    pub build: Duration,
}

pub struct Summary {
    pub questions: usize,
    pub tuned_recall_at_5: f64,
    pub plain_recall_at_5: f64,
    pub tuned_mrr: f64,
    pub plain_mrr: f64,
}

/// The workspace root (the directory holding `Cargo.lock` and `bench/`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the server crate lives in the workspace")
        .to_path_buf()
}

/// The gated eval set, `bench/retrieval/questions.json`.
pub fn load_questions(root: &Path) -> Result<Vec<Question>, String> {
    load_questions_from(&root.join("bench/retrieval/questions.json"))
}

pub fn load_questions_from(path: &Path) -> Result<Vec<Question>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let items = json["questions"]
        .as_array()
        .ok_or_else(|| format!("{}: no `questions` array", path.display()))?;
    items
        .iter()
        .map(|item| {
            let field = |name: &str| {
                item[name]
                    .as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("{}: question without `{name}`: {item}", path.display()))
            };
            let expected = item["expected"]
                .as_array()
                .map(|list| {
                    list.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            Ok(Question {
                crate_dir: field("crate")?,
                question: field("question")?,
                expected,
            })
        })
        .collect()
}

/// Package name → versions in `Cargo.lock`.
fn locked_versions(root: &Path) -> Result<HashMap<String, Vec<String>>, String> {
    let path = root.join("Cargo.lock");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut versions: HashMap<String, Vec<String>> = HashMap::new();
    let mut name: Option<String> = None;
    for line in text.lines() {
        let value = |l: &str| l.split('"').nth(1).map(str::to_string);
        if let Some(rest) = line.strip_prefix("name = ") {
            name = value(rest);
        } else if let Some(rest) = line.strip_prefix("version = ") {
            if let (Some(n), Some(v)) = (name.take(), value(rest)) {
                versions.entry(n).or_default().push(v);
            }
        }
    }
    Ok(versions)
}

/// `$CARGO_HOME/registry/src`, CARGO_HOME defaulting to `~/.cargo`.
pub fn registry_src() -> Result<PathBuf, String> {
    let home = match std::env::var_os("CARGO_HOME") {
        Some(home) => PathBuf::from(home),
        None => {
            let home = std::env::var_os("HOME").ok_or("neither CARGO_HOME nor HOME is set")?;
            PathBuf::from(home).join(".cargo")
        }
    };
    Ok(home.join("registry").join("src"))
}

/// Finds `NAME-VERSION` under `registry/src/*/`, after checking that `Cargo.lock`
/// still pins that version (if it moved on, the expected paths must be re-checked).
pub fn locate_crate(crate_dir: &str, root: &Path) -> Result<PathBuf, String> {
    let (name, version) = crate_dir
        .rsplit_once('-')
        .ok_or_else(|| format!("crate `{crate_dir}` is not NAME-VERSION"))?;
    let locked = locked_versions(root)?;
    let versions = locked.get(name).cloned().unwrap_or_default();
    if !versions.iter().any(|v| v == version) {
        return Err(format!(
            "bench/retrieval/questions.json was written against {crate_dir}, but Cargo.lock has \
             {name} {versions:?}: re-check the expected files and update the question set"
        ));
    }
    let src = registry_src()?;
    let indexes = std::fs::read_dir(&src).map_err(|e| {
        format!(
            "cannot read {}: {e} (build the workspace once so cargo fetches the sources)",
            src.display()
        )
    })?;
    for index in indexes.flatten() {
        let candidate = index.path().join(crate_dir);
        if candidate.is_dir() {
            return Ok(candidate);
        }
    }
    Err(format!(
        "sources of {crate_dir} not found under {}/*/ (run `cargo fetch` in the workspace)",
        src.display()
    ))
}

/// Rank of the first hit from an expected file.
fn rank_of(
    index: &RetrievalIndex,
    question: &Question,
    ranking: Ranking,
) -> (Option<usize>, Vec<String>) {
    let hits = index.search_with(&question.question, RANK_DEPTH, ranking);
    let rank = hits
        .iter()
        .position(|hit| question.expected.contains(&hit.path))
        .map(|i| i + 1);
    (rank, hits.into_iter().map(|hit| hit.path).collect())
}

/// Builds one index per crate (on `threads` threads) and ranks every question.
pub fn run(
    questions: &[Question],
    threads: usize,
) -> Result<(Vec<CrateReport>, Vec<Outcome>), String> {
    let root = workspace_root();
    let mut by_crate: BTreeMap<String, Vec<Question>> = BTreeMap::new();
    for question in questions {
        by_crate
            .entry(question.crate_dir.clone())
            .or_default()
            .push(question.clone());
    }
    // Locate everything first, so a missing crate fails before any work.
    let mut jobs = Vec::new();
    for (crate_dir, questions) in by_crate {
        let dir = locate_crate(&crate_dir, &root)?;
        for question in &questions {
            for expected in &question.expected {
                if !dir.join(expected).is_file() {
                    return Err(format!(
                        "{crate_dir}: expected file {expected} does not exist"
                    ));
                }
            }
        }
        jobs.push((crate_dir, dir, questions));
    }

    let next = AtomicUsize::new(0);
    let results = Mutex::new((Vec::new(), Vec::new()));
    let error: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((crate_dir, dir, questions)) = jobs.get(i) else {
                    break;
                };
                let sandbox = match Sandbox::new(dir) {
                    Ok(sandbox) => sandbox,
                    Err(e) => {
                        *error.lock().unwrap() = Some(format!("{}: {e}", dir.display()));
                        break;
                    }
                };
                let started = Instant::now();
                let index = RetrievalIndex::build(&sandbox);
                let report = CrateReport {
                    crate_dir: crate_dir.clone(),
                    files: index.file_count(),
                    chunks: index.counts().chunks,
                    bytes: index.approximate_bytes(),
                    build: started.elapsed(),
                };
                let mut outcomes = Vec::new();
                for question in questions {
                    let started = Instant::now();
                    let (tuned_rank, tuned_top) = rank_of(&index, question, Ranking::Tuned);
                    let tuned_search = started.elapsed();
                    let (plain_rank, _) = rank_of(&index, question, Ranking::PlainBm25);
                    outcomes.push(Outcome {
                        question: question.clone(),
                        tuned_rank,
                        plain_rank,
                        tuned_top,
                        tuned_search,
                    });
                }
                let mut results = results.lock().unwrap();
                results.0.push(report);
                results.1.extend(outcomes);
            });
        }
    });
    if let Some(error) = error.into_inner().unwrap() {
        return Err(error);
    }
    let (mut reports, mut outcomes): (Vec<CrateReport>, Vec<Outcome>) =
        results.into_inner().unwrap();
    reports.sort_by(|a, b| a.crate_dir.cmp(&b.crate_dir));
    // Back in question-file order.
    outcomes.sort_by_key(|o| {
        questions
            .iter()
            .position(|q| q.question == o.question.question && q.crate_dir == o.question.crate_dir)
    });
    Ok((reports, outcomes))
}

pub fn summarize(outcomes: &[Outcome]) -> Summary {
    let n = outcomes.len().max(1) as f64;
    let recall = |f: fn(&Outcome) -> Option<usize>| {
        outcomes
            .iter()
            .filter(|o| f(o).is_some_and(|r| r <= 5))
            .count() as f64
            / n
    };
    let mrr = |f: fn(&Outcome) -> Option<usize>| {
        outcomes
            .iter()
            .map(|o| f(o).map_or(0.0, |r| 1.0 / r as f64))
            .sum::<f64>()
            / n
    };
    Summary {
        questions: outcomes.len(),
        tuned_recall_at_5: recall(|o| o.tuned_rank),
        plain_recall_at_5: recall(|o| o.plain_rank),
        tuned_mrr: mrr(|o| o.tuned_rank),
        plain_mrr: mrr(|o| o.plain_rank),
    }
}
