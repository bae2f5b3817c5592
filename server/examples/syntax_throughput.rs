//! What parsing costs: `syntax::symbols` throughput per language over real checkouts.
//!
//! `cargo run --release -p copilot-ls --example syntax_throughput -- DIR...` walks the
//! directories (files up to 1 MB, as the index takes them), parses every file whose
//! extension has a grammar and prints, per language, the files, megabytes, seconds,
//! MB/s and definitions found. Each language's files are parsed at least `ROUNDS`
//! times and for at least half a second, so small samples still time well.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[path = "support/walk.rs"]
mod walk;

use copilot_ls::syntax::{self, Language};
use walk::walk;

const MAX_FILE_BYTES: u64 = 1024 * 1024;
const ROUNDS: usize = 3;
const MIN_TIME: Duration = Duration::from_millis(500);

fn main() {
    let dirs: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    if dirs.is_empty() {
        eprintln!("usage: syntax_throughput DIR...");
        std::process::exit(2);
    }
    let mut files = Vec::new();
    for dir in &dirs {
        walk(dir, &mut files);
    }
    let mut by_language: BTreeMap<&'static str, (Language, Vec<String>)> = BTreeMap::new();
    for path in files {
        let Some(language) = Language::from_path(&path.to_string_lossy()) else {
            continue;
        };
        let Ok(metadata) = std::fs::metadata(&path) else {
            continue;
        };
        if metadata.len() > MAX_FILE_BYTES {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        by_language
            .entry(language.name())
            .or_insert_with(|| (language, Vec::new()))
            .1
            .push(text);
    }
    let mut out = String::from(
        "| language | files | MB | symbols | MB/s | slowest file ms |\n| --- | ---: | ---: | ---: | ---: | ---: |\n",
    );
    let (mut all_bytes, mut all_time) = (0usize, Duration::ZERO);
    for (name, (language, texts)) in &by_language {
        let bytes: usize = texts.iter().map(String::len).sum();
        let mut symbols = 0;
        let mut rounds = 0;
        let mut slowest = Duration::ZERO;
        let started = Instant::now();
        while rounds < ROUNDS || started.elapsed() < MIN_TIME {
            symbols = 0;
            for text in texts {
                let one = Instant::now();
                symbols += syntax::symbols(text, *language).map_or(0, |s| s.len());
                slowest = slowest.max(one.elapsed());
            }
            rounds += 1;
        }
        let per_round = started.elapsed() / rounds as u32;
        all_bytes += bytes;
        all_time += per_round;
        let mb = bytes as f64 / 1e6;
        out.push_str(&format!(
            "| {name} | {} | {mb:.1} | {symbols} | {:.1} | {:.1} |\n",
            texts.len(),
            mb / per_round.as_secs_f64(),
            slowest.as_secs_f64() * 1e3
        ));
    }
    let mb = all_bytes as f64 / 1e6;
    out.push_str(&format!(
        "| all | | {mb:.1} | | {:.1} | |\n",
        mb / all_time.as_secs_f64()
    ));
    eprint!("{out}");
}
