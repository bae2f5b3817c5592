//! False positives of secret redaction on ordinary code: every text file of the
//! retrieval eval's corpora (the dependency crates of `bench/retrieval/questions.json`,
//! from the cargo registry) and of the fixture workspace goes through `redact`; each
//! redaction must be one of the known true positives listed here (test keys shipped in
//! those crates), so a new false positive fails with its line.

use std::collections::BTreeSet;
use std::path::Path;

use copilot_ls::workspace::redact::redact;

#[allow(dead_code)]
#[path = "../bench/retrieval/harness.rs"]
mod harness;

/// Redactions that are real secret shapes in the corpora: (a part of the reported
/// line, its file or its text, and the marker).
const KNOWN: &[(&str, &str)] = &[
    // Passwords in URLs, the url crate's own examples and test data: the shape a
    // `postgres://user:…@host` leak has, so they are redacted like one.
    ("/tests/urltestdata.json", "[password]"),
    ("/tests/setters_tests.json", "[password]"),
    ("Url::parse(\"ftp://user1:secret1@", "[password]"),
    ("Url::parse(\"ftp://:secre1@", "[password]"),
    ("\"ftp://user1:secre1@example.com/\"", "[password]"),
    // RFC 7617's example Basic credential (`Aladdin:open sesame`, base64) in reqwest's
    // tests of `basic_auth`: the shape a `"Basic …"` leak has.
    ("\"Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==\"", "[credential]"),
];

struct Count {
    files: usize,
    bytes: usize,
    redactions: Vec<String>,
}

fn scan(root: &Path, label: &str, count: &mut Count) {
    for entry in ignore::WalkBuilder::new(root)
        .hidden(false)
        .build()
        .flatten()
    {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        count.files += 1;
        count.bytes += text.len();
        let redacted = redact(&text);
        if redacted == text {
            continue;
        }
        let path = entry.path().strip_prefix(root).unwrap_or(entry.path());
        for (before, after) in text.lines().zip(redacted.lines()) {
            if before != after {
                let marker = after
                    .split("[redacted: ")
                    .nth(1)
                    .and_then(|rest| rest.split(']').next())
                    .unwrap_or("(line emptied)");
                count.redactions.push(format!(
                    "{label}/{}: [{marker}] {}",
                    path.display(),
                    before.trim().chars().take(100).collect::<String>()
                ));
            }
        }
    }
}

#[test]
fn redaction_finds_nothing_in_ordinary_code() {
    let root = harness::workspace_root();
    let questions = harness::load_questions(&root).expect("load the eval set");
    let crates: BTreeSet<String> = questions.iter().map(|q| q.crate_dir.clone()).collect();
    let mut count = Count {
        files: 0,
        bytes: 0,
        redactions: Vec::new(),
    };
    for crate_dir in &crates {
        let path = harness::locate_crate(crate_dir, &root).unwrap_or_else(|e| panic!("{e}"));
        scan(&path, crate_dir, &mut count);
    }
    scan(
        &root.join("fixtures/workspace"),
        "fixtures/workspace",
        &mut count,
    );
    assert!(
        count.files > 1_000,
        "the corpora were read: {} files",
        count.files
    );
    let unexpected: Vec<&String> = count
        .redactions
        .iter()
        .filter(|line| {
            !KNOWN
                .iter()
                .any(|(file, marker)| line.contains(file) && line.contains(marker))
        })
        .collect();
    eprintln!(
        "{} files, {} MB, {} crates + the fixture workspace: {} redacted lines, {} unexpected",
        count.files,
        count.bytes / 1_000_000,
        crates.len(),
        count.redactions.len(),
        unexpected.len()
    );
    assert!(
        unexpected.is_empty(),
        "false positives:\n{}",
        unexpected
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
}
