//! Reports retrieval quality on the eval set: per-question rank for the tuned ranker
//! and plain BM25, recall@5 and MRR, and index build time and size per crate.
//!
//! `cargo run --release -p copilot-ls --example retrieval_eval [-- --whole-registry]`
//! (`--holdout` evaluates `bench/retrieval/holdout.json`, the questions written after
//! tuning, instead of the gated set;
//! `--whole-registry` also indexes all of `$CARGO_HOME/registry/src` as one workspace
//! and times searches on it; `--explain "some words"` prints the top chunks of every
//! question containing those words, with scores, to see why a file ranks where it does;
//! `--time-build DIR` builds an index of DIR five times and prints the fastest, which
//! is the number to trust on a busy machine).
// A report for a human at a terminal, not the LSP server: stdout is free here.
#![allow(clippy::print_stdout)]

#[path = "../../bench/retrieval/harness.rs"]
mod harness;

use std::time::Instant;

use copilot_ls::index::RetrievalIndex;
use copilot_ls::workspace::sandbox::Sandbox;

fn main() -> Result<(), String> {
    // `RUST_LOG=copilot_ls=debug` shows the build's own timings (walk vs. total).
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args: Vec<String> = std::env::args().collect();
    let whole_registry = args.iter().any(|a| a == "--whole-registry");
    let root = harness::workspace_root();
    let questions = if args.iter().any(|a| a == "--holdout") {
        harness::load_questions_from(&root.join("bench/retrieval/holdout.json"))?
    } else {
        harness::load_questions(&root)?
    };
    if let Some(i) = args.iter().position(|a| a == "--time-build") {
        let dir = args.get(i + 1).ok_or("--time-build needs a directory")?;
        let sandbox = Sandbox::new(std::path::Path::new(dir)).map_err(|e| format!("{dir}: {e}"))?;
        let mut best = std::time::Duration::MAX;
        let mut files = 0;
        for _ in 0..5 {
            let started = Instant::now();
            let index = RetrievalIndex::build(&sandbox);
            best = best.min(started.elapsed());
            files = index.file_count();
        }
        println!(
            "{dir}: {files} files, fastest build of 5: {:.1} ms",
            best.as_secs_f64() * 1e3
        );
        return Ok(());
    }
    if let Some(i) = args.iter().position(|a| a == "--explain") {
        let words = args.get(i + 1).ok_or("--explain needs words to look for")?;
        return explain(&root, &questions, words);
    }
    // One thread per crate index, one at a time, so build times are comparable.
    let (reports, outcomes) = harness::run(&questions, 1)?;

    println!(
        "{:>5} {:>5}  question (crate) → tuned top files",
        "tuned", "plain"
    );
    let show = |r: Option<usize>| r.map_or("-".to_string(), |r| r.to_string());
    for o in &outcomes {
        let miss = if o.tuned_rank.is_some_and(|r| r <= 5) {
            " "
        } else {
            "✗"
        };
        println!(
            "{miss}{:>4} {:>5}  {} ({})",
            show(o.tuned_rank),
            show(o.plain_rank),
            o.question.question,
            o.question.crate_dir
        );
        if o.tuned_rank.is_none_or(|r| r > 5) {
            println!("             expected {:?}", o.question.expected);
            println!(
                "             got      {:?}",
                &o.tuned_top[..o.tuned_top.len().min(5)]
            );
        }
    }

    let summary = harness::summarize(&outcomes);
    let crates = reports.len();
    println!();
    println!("{} questions over {crates} crates", summary.questions);
    println!(
        "recall@5: tuned {:.3}  plain BM25 {:.3}",
        summary.tuned_recall_at_5, summary.plain_recall_at_5
    );
    println!(
        "MRR@{}:   tuned {:.3}  plain BM25 {:.3}",
        harness::RANK_DEPTH,
        summary.tuned_mrr,
        summary.plain_mrr
    );
    let mut searches: Vec<f64> = outcomes
        .iter()
        .map(|o| o.tuned_search.as_secs_f64() * 1e3)
        .collect();
    searches.sort_by(f64::total_cmp);
    println!(
        "search (tuned, top {}): median {:.2} ms, max {:.2} ms",
        harness::RANK_DEPTH,
        searches[searches.len() / 2],
        searches[searches.len() - 1]
    );

    println!();
    println!(
        "{:<26} {:>6} {:>7} {:>9} {:>9}",
        "crate", "files", "chunks", "index MB", "build ms"
    );
    for r in &reports {
        println!(
            "{:<26} {:>6} {:>7} {:>9.1} {:>9.1}",
            r.crate_dir,
            r.files,
            r.chunks,
            r.bytes as f64 / 1e6,
            r.build.as_secs_f64() * 1e3
        );
    }

    if whole_registry {
        let src = harness::registry_src()?;
        let sandbox = Sandbox::new(&src).map_err(|e| format!("{}: {e}", src.display()))?;
        let started = Instant::now();
        let index = RetrievalIndex::build(&sandbox);
        let build = started.elapsed();
        let started = Instant::now();
        for q in &questions {
            index.search(&q.question, harness::RANK_DEPTH);
        }
        let per_search = started.elapsed() / questions.len() as u32;
        println!();
        println!(
            "whole {}: {} files, {} chunks, ~{:.0} MB, built in {:.2} s; search {:.2} ms on average",
            src.display(),
            index.file_count(),
            index.counts().chunks,
            index.approximate_bytes() as f64 / 1e6,
            build.as_secs_f64(),
            per_search.as_secs_f64() * 1e3
        );
    }
    Ok(())
}

/// Prints the top chunks for every question containing `words`, and where the best
/// chunk of an expected file ranks.
fn explain(
    root: &std::path::Path,
    questions: &[harness::Question],
    words: &str,
) -> Result<(), String> {
    for q in questions.iter().filter(|q| q.question.contains(words)) {
        let dir = harness::locate_crate(&q.crate_dir, root)?;
        let sandbox = Sandbox::new(&dir).map_err(|e| e.to_string())?;
        let index = RetrievalIndex::build(&sandbox);
        println!(
            "{} ({})  expected {:?}",
            q.question, q.crate_dir, q.expected
        );
        let hits = index.search(&q.question, 200);
        for (i, hit) in hits.iter().enumerate() {
            let expected = q.expected.contains(&hit.path);
            if i < 10 || expected {
                println!(
                    "  {}{:>3} {:>7.2}  {}:{}-{}  {:?}",
                    if expected { "*" } else { " " },
                    i + 1,
                    hit.score,
                    hit.path,
                    hit.start_line,
                    hit.end_line,
                    hit.symbol
                );
            }
            if expected && i >= 10 {
                break;
            }
        }
    }
    Ok(())
}
