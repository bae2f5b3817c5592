//! The redaction table: every planted kind of credential (tests/support's `secrets`,
//! more than 60 kinds, values generated per seed) must be gone after `redact`, whole
//! and in every window a partial read could show; every benign look-alike (more than
//! 30) must come through unchanged; lines are kept. Prints recall and false positives
//! over 20 seeds (the numbers docs/security.md reports).
//!
//! `REDACT_TABLE_JSON=path` also writes the table of seed 1 as JSON, to measure other
//! redactors against the same cases.

use copilot_ls::workspace::redact::{needs_whole_text, redact, redact_each_line, redact_lines};
use copilot_ls_test_support::secrets::{benign, cases, Case};

const SEEDS: u64 = 20;

fn leaks(case: &Case, shown: &str) -> Vec<String> {
    case.values
        .iter()
        .filter(|value| shown.contains(value.as_str()))
        .cloned()
        .collect()
}

#[test]
fn every_planted_kind_is_redacted_and_no_look_alike_is() {
    let first = cases(1);
    let kinds: std::collections::BTreeSet<&str> = first.iter().map(|c| c.kind).collect();
    assert!(kinds.len() >= 60, "{} kinds", kinds.len());
    let look_alikes = benign(1);
    assert!(look_alikes.len() >= 30, "{} look-alikes", look_alikes.len());
    if let Ok(path) = std::env::var("REDACT_TABLE_JSON") {
        let table = serde_json::json!({"cases": first, "benign": look_alikes});
        std::fs::write(path, serde_json::to_string_pretty(&table).unwrap()).unwrap();
    }

    let mut planted = 0;
    let mut caught = 0;
    let mut missed: Vec<String> = Vec::new();
    let mut checked = 0;
    let mut false_positives: Vec<String> = Vec::new();
    for seed in 1..=SEEDS {
        for case in cases(seed) {
            planted += 1;
            let shown = redact(&case.text);
            assert_eq!(
                shown.lines().count(),
                case.text.lines().count(),
                "{}: lines kept",
                case.kind
            );
            let leaked = leaks(&case, &shown);
            if leaked.is_empty() {
                caught += 1;
            } else {
                missed.push(format!("seed {seed} {}: {shown}", case.kind));
            }
        }
        for look_alike in benign(seed) {
            checked += 1;
            let shown = redact(&look_alike.text);
            if shown != look_alike.text {
                false_positives.push(format!("seed {seed} {}: {shown}", look_alike.kind));
            }
        }
    }
    eprintln!(
        "redaction table: {} kinds, {planted} planted over {SEEDS} seeds, {caught} redacted \
         (recall {:.1}%); {checked} look-alikes, {} false positives",
        kinds.len(),
        100.0 * caught as f64 / planted as f64,
        false_positives.len()
    );
    assert!(
        missed.is_empty() && false_positives.is_empty(),
        "missed:\n{}\nfalse positives:\n{}",
        missed.join("\n"),
        false_positives.join("\n")
    );
}

#[test]
fn no_window_of_a_key_shows_its_body() {
    for seed in 1..=SEEDS {
        for case in cases(seed)
            .iter()
            .filter(|c| c.kind.contains("private key"))
        {
            let total = case.text.lines().count();
            for first in 1..=total {
                for len in [1, 2, 5] {
                    let shown = redact_lines(&case.text, first, first + len - 1);
                    let leaked = leaks(case, &shown);
                    assert!(
                        leaked.is_empty(),
                        "seed {seed} {} lines {first}+{len}: {shown}",
                        case.kind
                    );
                }
            }
        }
    }
}

#[test]
fn a_key_block_cut_by_the_start_of_an_excerpt_is_redacted_up_to_its_end() {
    // What tool output looks like when the excerpt starts inside a block: the END is
    // shown but no BEGIN (the final pass over tool output sees only this).
    for case in cases(3).iter().filter(|c| c.kind == "rsa private key") {
        let lines: Vec<&str> = case.text.lines().collect();
        let excerpt: String = lines[4..]
            .iter()
            .enumerate()
            .map(|(i, line)| format!("{}\t{line}\n", i + 5))
            .collect();
        let shown = redact(&excerpt);
        assert!(leaks(case, &shown).is_empty(), "{shown}");
        assert_eq!(shown.lines().count(), excerpt.lines().count());
    }
}

#[test]
fn a_text_without_spanning_rules_reads_the_same_redacted_line_by_line() {
    // What lets a search redact only the lines it matched: unless the text holds a
    // keyword of a rule whose findings may span lines, each line redacted alone is that
    // line of the whole text's redaction, for every planted kind and look-alike.
    let (mut line_by_line, mut whole) = (0, 0);
    for seed in 1..=5 {
        let texts = cases(seed).into_iter().map(|c| (c.kind, c.text));
        let texts = texts.chain(benign(seed).into_iter().map(|b| (b.kind, b.text)));
        // Each text inside an ordinary file, and all of them in one file.
        let texts: Vec<(&str, String)> = texts
            .map(|(kind, text)| (kind, format!("# settings\nname = \"shop\"\n{text}# end\n")))
            .collect();
        let all: String = texts.iter().map(|(_, text)| text.as_str()).collect();
        for (kind, text) in texts.iter().map(|(k, t)| (*k, t)).chain([("all", &all)]) {
            if needs_whole_text(text) {
                whole += 1;
                continue;
            }
            line_by_line += 1;
            let redacted = redact(text);
            for (n, (line, expected)) in text
                .split_inclusive('\n')
                .zip(redacted.split_inclusive('\n'))
                .enumerate()
            {
                assert_eq!(redact(line), expected, "{kind}, line {}", n + 1);
            }
            // A search's matched lines, redacted in one scan: all of them, every other
            // one, and lines without their line break, each as it reads alone.
            let all: Vec<&str> = text.split_inclusive('\n').collect();
            let odd: Vec<&str> = all.iter().copied().step_by(2).collect();
            let bare: Vec<&str> = all.iter().map(|l| l.trim_end_matches('\n')).collect();
            for lines in [&all, &odd, &bare] {
                for (line, each) in lines.iter().zip(redact_each_line(lines)) {
                    let alone = redact(line);
                    let expected = matches!(alone, std::borrow::Cow::Owned(_)).then_some(alone);
                    assert_eq!(each.as_deref(), expected.as_deref(), "{kind}: {line:?}");
                }
            }
        }
    }
    // Most kinds are line by line; the spanning ones (key blocks, netrc, Terraform) not.
    assert!(
        line_by_line > whole * 2,
        "{line_by_line} line by line, {whole} whole"
    );
}
