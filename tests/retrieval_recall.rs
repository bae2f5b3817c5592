//! The retrieval quality gate: the eval set's recall@5 must stay at or above 0.95.
//!
//! The questions are about crates copilot-ls depends on, so their sources are in the
//! cargo registry of any machine that built it; a missing crate is a failure with the
//! reason, never a skip. `cargo run --release -p copilot-ls --example retrieval_eval`
//! prints the per-question report.

// The report fields (timings, sizes, MRR) are for the example; this gate needs recall.
#[allow(dead_code)]
#[path = "../bench/retrieval/harness.rs"]
mod harness;

#[test]
fn recall_at_5_is_at_least_95_percent() {
    let root = harness::workspace_root();
    let questions = harness::load_questions(&root).expect("load the eval set");
    assert!(
        questions.len() >= 30,
        "the eval set needs at least 30 questions"
    );
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (_, outcomes) = harness::run(&questions, threads).unwrap_or_else(|e| panic!("{e}"));
    let summary = harness::summarize(&outcomes);
    let misses: Vec<String> = outcomes
        .iter()
        .filter(|o| o.tuned_rank.is_none_or(|r| r > 5))
        .map(|o| {
            format!(
                "{} ({}): expected {:?}, got {:?}",
                o.question.question, o.question.crate_dir, o.question.expected, o.tuned_top
            )
        })
        .collect();
    assert!(
        summary.tuned_recall_at_5 >= 0.95,
        "recall@5 {:.3} < 0.95 (plain BM25 {:.3}); misses:\n{}",
        summary.tuned_recall_at_5,
        summary.plain_recall_at_5,
        misses.join("\n")
    );
}
