//! The rules table read and checked: its rules classified by what their regexes can match.

use super::*;

/// The case-sensitive literal runs of a regex: its literals, joined where they are
/// concatenated.
fn literal_texts(hir: &regex_syntax::hir::Hir) -> Vec<String> {
    use regex_syntax::hir::HirKind;
    let mut out = Vec::new();
    match hir.kind() {
        HirKind::Literal(literal) => out.push(String::from_utf8_lossy(&literal.0).into_owned()),
        HirKind::Concat(parts) => {
            let mut run = String::new();
            for part in parts {
                if let HirKind::Literal(literal) = part.kind() {
                    run.push_str(&String::from_utf8_lossy(&literal.0));
                } else {
                    out.push(std::mem::take(&mut run));
                    out.extend(literal_texts(part));
                }
            }
            out.push(run);
        }
        HirKind::Capture(capture) => out.extend(literal_texts(&capture.sub)),
        _ => {}
    }
    out
}

#[test]
fn the_table_loads_and_every_rule_has_a_source_and_a_keyword() {
    let table: Table = toml::from_str(include_str!("../rules.toml")).unwrap();
    for spec in &table.token {
        assert!(!spec.source.trim().is_empty(), "{}", spec.id);
        assert!(!spec.keywords.is_empty(), "{}", spec.id);
    }
    for spec in &table.block {
        assert!(!spec.source.trim().is_empty(), "{}", spec.id);
    }
    let rules = &*RULES;
    assert!(rules.tokens.len() >= 50, "{}", rules.tokens.len());
    // Every regex compiles (each is compiled only when its keyword is first found).
    for rule in &rules.tokens {
        rule.regex.get();
        if let Some(each) = &rule.each {
            each.get();
        }
    }
    for block in &rules.blocks {
        block.begin.get();
        block.end.get();
    }
    // The classification of spanning rules sees what spans and what does not.
    assert!(can_match_line_break(r"machine\s+\S+"));
    assert!(can_match_line_break(r"\{[^}]*?default"));
    assert!(can_match_line_break(r"(?s)a.b"));
    assert!(!can_match_line_break(r"\bghp_[0-9A-Za-z]{36}\b"));
    assert!(!can_match_line_break(r"a.b[ \t]*c\S+"));
    let spanning: Vec<&TokenSpec> = table
        .token
        .iter()
        .filter(|r| can_match_line_break(&r.regex))
        .collect();
    assert!(!spanning.is_empty() && spanning.len() < table.token.len() / 2);
    // `needs_whole_text` looks for a spanning rule's keyword exactly as written: the
    // rule must not match without it (its regex holds it as a case-sensitive
    // literal), or a text holding it in another case would be redacted by lines.
    for rule in spanning {
        let hir = regex_syntax::parse(&rule.regex).unwrap();
        let literals = literal_texts(&hir);
        assert!(
            rule.keywords
                .iter()
                .any(|k| literals.iter().any(|l| l.contains(k.as_str()))),
            "{}: {:?} not among {literals:?}",
            rule.id,
            rule.keywords
        );
    }
    assert!(!rules.blocks.is_empty());
    let ids: Vec<&str> = table.token.iter().map(|r| r.id.as_str()).collect();
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(ids.len(), unique.len(), "rule ids are unique");
    assert!(table.block.iter().all(|b| !b.keyword.is_empty()));
}

#[test]
fn a_rule_whose_match_may_lack_its_keyword_looks_at_the_match_line() {
    let holds = |pattern: &str, keywords: &[&str]| {
        let keywords: Vec<String> = keywords.iter().map(|k| k.to_string()).collect();
        match_holds_a_keyword(pattern, &keywords)
    };
    assert!(holds(r"\bghp_[0-9A-Za-z]{36}\b", &["ghp_"]));
    assert!(holds(r"(?i)\bauthorization[ \t]+(\S+)", &["Authorization"]));
    assert!(holds(
        r"(?:\bbot|\b)(\d{5,16}:AA[0-9A-Za-z_-]{32})",
        &[":AA"]
    ));
    assert!(holds(r"\b(?i:hmac)\.new\(", &["hmac.new("]));
    assert!(holds(
        r"\b(?:login|authenticate)\(",
        &["login", "authenticate"]
    ));
    // The keyword is context, not part of the match.
    assert!(!holds(
        r"\b[MNO][0-9A-Za-z_-]{23,25}\.[0-9A-Za-z_-]{6}",
        &["discord"]
    ));
    assert!(!holds(r"^[a-z]+:(?:\d{2,5}|\*):(\S+)", &[":5432:"]));
    // An alternation holds one only when each branch does.
    assert!(!holds(r"\b(?:login|run)\(", &["login"]));
    // One optional character cuts a run: `seed_?phrase` holds neither spelling.
    assert!(!holds(r"seed_?phrase", &["seedphrase", "seed_phrase"]));

    let rules = &*RULES;
    let table: Table = toml::from_str(include_str!("../rules.toml")).unwrap();
    let by_line: Vec<&str> = table
        .token
        .iter()
        .zip(&rules.tokens)
        .filter(|(_, rule)| !rule.line_keywords.is_empty())
        .map(|(spec, _)| spec.id.as_str())
        .collect();
    assert!(by_line.contains(&"discord-bot-token"), "{by_line:?}");
    assert!(by_line.len() < table.token.len() / 4, "{by_line:?}");
    // The token on a line of its own in a file that names Discord elsewhere: the
    // line decides, read alone or in the file.
    let token = [
        "MTk4NjIyNDgzNDcxOTI1MjQ4",
        ".Cl2FMQ.",
        "ZnCjm1XVW7vRze4b7Cq4se7kKWs",
    ]
    .concat();
    let file = format!("const discord = require(\"discord.js\");\nconst t = \"{token}\";\n");
    let line = format!("const t = \"{token}\";\n");
    for text in [file.as_str(), line.as_str()] {
        let hits = rules.hits(text);
        assert!(rules.tokens(text, &hits.tokens).is_empty(), "{text}");
    }
    let login = format!("client.login(\"{token}\");\n");
    let hits = rules.hits(&login);
    assert!(!rules.tokens(&login, &hits.tokens).is_empty());
}

/// The table's two facts about each token rule's regex are the ones its syntax tree
/// gives (the loader reads the table's, to spare every process the parsing).
#[test]
fn each_rules_written_facts_are_its_regexs() {
    let table: Table = toml::from_str(include_str!("../rules.toml")).unwrap();
    for spec in &table.token {
        assert_eq!(
            spec.spans_lines,
            can_match_line_break(&spec.regex),
            "rules.toml: {}: spans_lines",
            spec.id
        );
        assert_eq!(
            spec.keyword_on_line,
            !match_holds_a_keyword(&spec.regex, &spec.keywords),
            "rules.toml: {}: keyword_on_line",
            spec.id
        );
    }
}
