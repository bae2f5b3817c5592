//! How far `find_references`' comment-and-string lexer (`syntax/lexical.rs`) agrees with
//! the tree-sitter grammars it stands in for, over real checkouts.
//!
//! `cargo run --release -p copilot-ls --example lexical_agreement -- DIR...` walks the
//! directories (files up to 1 MB, `.git` skipped), and for every file with a grammar
//! classifies each identifier both ways (comment-or-string, or code) and places each
//! definition's name both ways; it prints, per language, the files, the identifiers
//! and how many differ, the definitions and how many differ, the files left to the tree
//! (JSX), and a few of the disagreements as `path:line: tree / lexer: the line`.

// A report for a human at a terminal, not the LSP server: stdout is free here.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use std::path::PathBuf;

#[path = "support/walk.rs"]
mod walk;

use copilot_ls::syntax::{self, Language};
use walk::walk;

const MAX_FILE_BYTES: u64 = 1024 * 1024;
const SHOWN: usize = 40;

#[derive(Default)]
struct Totals {
    files: usize,
    identifiers: usize,
    differ: usize,
    definitions: usize,
    definitions_differ: usize,
    parsed_instead: usize,
}

fn main() {
    let dirs: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if dirs.is_empty() {
        eprintln!("usage: lexical_agreement DIR...");
        std::process::exit(2);
    }
    let mut files = Vec::new();
    for dir in &dirs {
        walk(dir, &mut files);
    }
    files.sort();
    let mut by_language: BTreeMap<&'static str, Totals> = BTreeMap::new();
    let mut shown = Vec::new();
    for path in files {
        let shown_path = path.to_string_lossy().to_string();
        if std::fs::metadata(&path).map_or(true, |m| m.len() > MAX_FILE_BYTES) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Some(language) = Language::of_file(&shown_path, &text) else {
            continue;
        };
        let Some(agreement) = syntax::agreement(&text, language) else {
            continue;
        };
        let totals = by_language.entry(language.name()).or_default();
        totals.files += 1;
        totals.identifiers += agreement.identifiers;
        totals.differ += agreement.differ;
        totals.definitions += agreement.definitions;
        totals.definitions_differ += agreement.definitions_differ;
        totals.parsed_instead += usize::from(agreement.parsed_instead);
        for (at, tree, lexer) in agreement.examples {
            if shown.len() < SHOWN {
                let line = text[..at].matches('\n').count() + 1;
                let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
                let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
                let excerpt: String = text[start..end].trim().chars().take(120).collect();
                shown.push(format!(
                    "{shown_path}:{line}: {tree:?} / {lexer:?}: {excerpt}"
                ));
            }
        }
    }
    println!(
        "| language | files | identifiers | differ | definitions | differ | left to the tree |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (name, t) in &by_language {
        println!(
            "| {name} | {} | {} | {} ({:.3}%) | {} | {} ({:.3}%) | {} |",
            t.files,
            t.identifiers,
            t.differ,
            100.0 * t.differ as f64 / t.identifiers.max(1) as f64,
            t.definitions,
            t.definitions_differ,
            100.0 * t.definitions_differ as f64 / t.definitions.max(1) as f64,
            t.parsed_instead
        );
    }
    println!();
    for line in shown {
        println!("{line}");
    }
}
