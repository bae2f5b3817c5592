//! The rules table (`rules.toml`, compiled into the binary) and the token rules run
//! over a text: a keyword prefilter (one Aho-Corasick pass, as gitleaks does) picks the
//! rules worth running, each of those runs its regex over the whole text. The same pass
//! finds the key blocks' keywords and the assignment's name words ([`Hits`]): a text is
//! read once for all three finders.
//!
//! A finding is decided by its own line (or, for a rule whose regex spans lines, by the
//! whole text, which `needs_whole_text` then asks for): a rule's keyword found anywhere
//! in a file only says the rule is worth running, and a rule whose match need not hold
//! its keyword (`discord` names the file, the token stands on `client.login(…)`'s line)
//! counts a match only where a keyword stands on the match's line. Otherwise a search,
//! which redacts only the lines it matched, would show what a read of the file redacts.

use std::ops::Range;
use std::sync::{LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::Regex;
use serde::Deserialize;

use super::randomness::looks_random;
use super::{is_placeholder, Found, MIN_PASSWORD_LEN};

#[derive(Deserialize)]
struct Table {
    #[serde(default)]
    block: Vec<BlockSpec>,
    #[serde(default)]
    token: Vec<TokenSpec>,
    assignment: AssignmentSpec,
}

#[derive(Deserialize)]
struct BlockSpec {
    id: String,
    #[allow(dead_code)]
    source: String,
    marker: String,
    begin: String,
    end: String,
    keyword: String,
}

#[derive(Deserialize)]
struct TokenSpec {
    id: String,
    #[allow(dead_code)]
    source: String,
    marker: String,
    keywords: Vec<String>,
    regex: String,
    #[serde(default)]
    secret: usize,
    #[serde(default)]
    value: Option<String>,
    /// A pattern for the values inside the secret group (a list of keys): each match
    /// of it there is a finding, rather than the group itself.
    #[serde(default)]
    each: Option<String>,
    /// The regex can match a line break (`can_match_line_break`).
    #[serde(default)]
    spans_lines: bool,
    /// A match need not hold a keyword, so one must stand on its line (the negation of
    /// `match_holds_a_keyword`).
    #[serde(default)]
    keyword_on_line: bool,
}

/// The words of the `[assignment]` table, lower case.
#[derive(Deserialize)]
pub struct AssignmentSpec {
    #[allow(dead_code)]
    source: String,
    pub password_words: Vec<String>,
    pub secret_words: Vec<String>,
    pub key_words: Vec<String>,
    pub not_secret_last: Vec<String>,
    pub placeholders: Vec<String>,
}

/// The word besides the password and secret words that makes a name worth judging as
/// an assignment's (`api_key`, `apiKey`, `APIKEY`).
pub const ASSIGNMENT_KEY_WORD: &str = "key";

/// A rule's regex, compiled the first time its keyword is found: compiling the whole
/// table was most of a `copilot-ls tool` call's start (about 30 ms), and most texts
/// trigger no rule at all.
pub struct LazyRegex {
    id: String,
    pattern: String,
    compiled: OnceLock<Regex>,
}

impl LazyRegex {
    fn new(id: &str, pattern: &str) -> LazyRegex {
        LazyRegex {
            id: id.to_string(),
            pattern: pattern.to_string(),
            compiled: OnceLock::new(),
        }
    }

    /// The compiled regex. The table is compiled in, so a mistake in it is a bug the
    /// unit tests catch (they compile every rule), never a state the server runs in.
    pub fn get(&self) -> &Regex {
        self.compiled.get_or_init(|| {
            Regex::new(&self.pattern).unwrap_or_else(|e| panic!("rules.toml: {}: {e}", self.id))
        })
    }
}

/// A multi-line key: what opens and closes it.
pub struct BlockRule {
    pub marker: String,
    pub begin: LazyRegex,
    pub end: LazyRegex,
}

/// What a token rule's secret group must also pass.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ValueTest {
    None,
    Random,
    Password,
    /// A recovery phrase: at least 12 words, half of them different (not hardhat's
    /// public `test test … junk`).
    Phrase,
}

pub struct TokenRule {
    pub marker: String,
    regex: LazyRegex,
    secret: usize,
    value: ValueTest,
    each: Option<LazyRegex>,
    /// The keywords, lower case, when a match need not hold one: then one must stand on
    /// the match's line (see the module's comment). Empty when every match holds one.
    line_keywords: Vec<String>,
}

/// What a keyword of the one automaton stands for.
#[derive(Clone, Copy)]
enum Keyword {
    Token(usize),
    Block(usize),
    NameWord,
}

/// What one pass of the keyword automaton found in a text.
pub struct Hits {
    /// The token rules whose keyword the text holds (indexed as `Rules::tokens`).
    pub tokens: Vec<bool>,
    /// The key blocks whose keyword it holds (indexed as `Rules::blocks`).
    pub blocks: Vec<bool>,
    /// Where a word that can make a name secret-looking stands (`token`, `passwd`,
    /// `key`), by start.
    pub name_words: Vec<Range<usize>>,
}

pub struct Rules {
    pub blocks: Vec<BlockRule>,
    pub tokens: Vec<TokenRule>,
    /// One automaton over every token rule's keywords, every block's keyword and the
    /// assignment's name words; `keyword_of[i]` says what pattern `i` is.
    keywords: AhoCorasick,
    keyword_of: Vec<Keyword>,
    /// The keywords of the rules whose findings may span lines: every block's, and
    /// those of the token rules whose regex can match a line break. A text holding none
    /// is redacted line by line exactly as whole (`needs_whole_text`).
    spanning_keywords: AhoCorasick,
    pub assignment: AssignmentSpec,
}

pub static RULES: LazyLock<Rules> = LazyLock::new(|| load(include_str!("rules.toml")));

/// Parses the table. It is compiled in, so a mistake in it is a bug the unit tests
/// catch, never a state the server runs in.
fn load(text: &str) -> Rules {
    let table: Table = toml::from_str(text).expect("rules.toml parses");
    let compile = LazyRegex::new;
    let blocks = table
        .block
        .iter()
        .map(|spec| BlockRule {
            marker: spec.marker.clone(),
            begin: compile(&spec.id, &spec.begin),
            end: compile(&spec.id, &spec.end),
        })
        .collect();
    let mut patterns: Vec<String> = Vec::new();
    let mut keyword_of = Vec::new();
    let mut spanning: Vec<String> = table.block.iter().map(|b| b.keyword.clone()).collect();
    // Both facts of a rule's regex are written in the table rather than read off its
    // syntax tree here: parsing the 78 regexes twice was 3 ms of every `copilot-ls
    // tool` call's start (of 5 ms loading the table; find_references on mypy: 46 ms).
    // A unit test reads them off the syntax trees and checks the table says the same,
    // so a rule added without them fails there.
    for spec in &table.token {
        if spec.spans_lines {
            spanning.extend(spec.keywords.iter().cloned());
        }
    }
    let tokens = table
        .token
        .iter()
        .enumerate()
        .map(|(index, spec)| {
            for keyword in &spec.keywords {
                patterns.push(keyword.clone());
                keyword_of.push(Keyword::Token(index));
            }
            let value = match spec.value.as_deref() {
                None => ValueTest::None,
                Some("random") => ValueTest::Random,
                Some("password") => ValueTest::Password,
                Some("phrase") => ValueTest::Phrase,
                Some(other) => panic!("rules.toml: {}: unknown value test {other}", spec.id),
            };
            let line_keywords = if spec.keyword_on_line {
                spec.keywords
                    .iter()
                    .map(|k| k.to_ascii_lowercase())
                    .collect()
            } else {
                Vec::new()
            };
            TokenRule {
                marker: spec.marker.clone(),
                regex: compile(&spec.id, &spec.regex),
                secret: spec.secret,
                value,
                each: spec.each.as_deref().map(|each| compile(&spec.id, each)),
                line_keywords,
            }
        })
        .collect();
    // A handful of words, searched over every file a search matched, as written (each
    // spanning rule needs its keyword so: a unit test checks it), in one pass: with so
    // few words the searcher is SIMD (Teddy), and one pass cost less than a substring
    // search per word (`search_code` on a common word: 7% less time, side by side).
    spanning.sort();
    spanning.dedup();
    let spanning_keywords = AhoCorasickBuilder::new()
        .match_kind(MatchKind::LeftmostFirst)
        .build(&spanning)
        .expect("spanning keywords build");
    let mut assignment = table.assignment;
    for list in [
        &mut assignment.password_words,
        &mut assignment.secret_words,
        &mut assignment.key_words,
        &mut assignment.not_secret_last,
        &mut assignment.placeholders,
    ] {
        for word in list.iter_mut() {
            *word = word.to_ascii_lowercase();
        }
    }
    for (index, block) in table.block.iter().enumerate() {
        patterns.push(block.keyword.clone());
        keyword_of.push(Keyword::Block(index));
    }
    let name_words = assignment
        .password_words
        .iter()
        .chain(&assignment.secret_words)
        .map(String::as_str)
        .chain([ASSIGNMENT_KEY_WORD]);
    for word in name_words {
        patterns.push(word.to_string());
        keyword_of.push(Keyword::NameWord);
    }
    // A DFA: every file a tool shows is scanned for all ~180 keywords at once, and the
    // overlapping scan was a third of `search_code`'s time on a common word (the
    // default, an NFA, follows failure links byte by byte). One automaton for the three
    // finders: a DFA pass costs about the same for 130 patterns as for 160 (about 0.5
    // GB/s here), so two passes cost twice one. Matched without case: a gate that fires
    // more often than its rule's regex matches costs time, never a finding.
    let keywords = AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .kind(Some(AhoCorasickKind::DFA))
        .build(&patterns)
        .expect("keywords build");
    Rules {
        blocks,
        tokens,
        keywords,
        keyword_of,
        spanning_keywords,
        assignment,
    }
}

/// Whether a rule's regex can match a line break anywhere (a literal `\n`, `\s`, a
/// negated class, `(?s).`): read off its syntax tree, which the tests check each rule's
/// `spans_lines` against, so a rule added to the table cannot be misclassified.
#[cfg(test)]
fn can_match_line_break(pattern: &str) -> bool {
    use regex_syntax::hir::{Class, Hir, HirKind};
    fn walk(hir: &Hir) -> bool {
        match hir.kind() {
            HirKind::Empty | HirKind::Look(_) => false,
            HirKind::Literal(literal) => literal.0.contains(&b'\n'),
            HirKind::Class(Class::Unicode(class)) => class
                .ranges()
                .iter()
                .any(|r| r.start() <= '\n' && '\n' <= r.end()),
            HirKind::Class(Class::Bytes(class)) => class
                .ranges()
                .iter()
                .any(|r| r.start() <= b'\n' && b'\n' <= r.end()),
            HirKind::Repetition(repetition) => walk(&repetition.sub),
            HirKind::Capture(capture) => walk(&capture.sub),
            HirKind::Concat(parts) | HirKind::Alternation(parts) => parts.iter().any(walk),
        }
    }
    // A pattern the parser refuses cannot be told apart: treat it as spanning.
    regex_syntax::parse(pattern).map_or(true, |hir| walk(&hir))
}

/// Whether every match of `pattern` holds one of `keywords` (compared without case),
/// read off its syntax tree: then the keyword gate of a line is the gate of the match,
/// and the rule needs no look at the match's line. A pattern it cannot tell is treated
/// as one whose matches may lack a keyword (the line is then looked at: slower, never
/// wrong).
#[cfg(test)]
fn match_holds_a_keyword(pattern: &str, keywords: &[String]) -> bool {
    use regex_syntax::hir::{Class, Hir, HirKind};
    let keywords: Vec<String> = keywords.iter().map(|k| k.to_ascii_lowercase()).collect();
    // The one ASCII character (lower case) a node matches, in any case: a literal
    // byte, or a class of one letter's two cases (what `(?i)` makes of a letter; the
    // Unicode folds it adds, such as the Kelvin sign for `k`, are let pass).
    fn one_char(hir: &Hir) -> Option<Vec<u8>> {
        match hir.kind() {
            HirKind::Literal(literal) => Some(literal.0.to_ascii_lowercase()),
            HirKind::Class(Class::Unicode(class)) => {
                let mut folded = class
                    .ranges()
                    .iter()
                    .filter(|r| r.start().is_ascii())
                    .flat_map(|r| r.start()..=r.end().min('\x7f'))
                    .map(|c| c.to_ascii_lowercase() as u8);
                let first = folded.next()?;
                folded.all(|c| c == first).then(|| vec![first])
            }
            _ => None,
        }
    }
    fn holds(hir: &Hir, keywords: &[String]) -> bool {
        match hir.kind() {
            HirKind::Concat(parts) => {
                // The runs of literal characters this concatenation always matches.
                let mut runs = vec![Vec::new()];
                for part in parts {
                    match one_char(part) {
                        Some(bytes) => runs.last_mut().expect("a run").extend(bytes),
                        None => runs.push(Vec::new()),
                    }
                }
                runs.iter()
                    .any(|run| keywords.iter().any(|k| contains(run, k.as_bytes())))
                    || parts.iter().any(|part| holds(part, keywords))
            }
            HirKind::Alternation(branches) => branches.iter().all(|b| holds(b, keywords)),
            HirKind::Capture(capture) => holds(&capture.sub, keywords),
            HirKind::Repetition(repetition) if repetition.min > 0 => {
                holds(&repetition.sub, keywords)
            }
            _ => one_char(hir)
                .is_some_and(|run| keywords.iter().any(|k| contains(&run, k.as_bytes()))),
        }
    }
    fn contains(run: &[u8], keyword: &[u8]) -> bool {
        !keyword.is_empty() && run.windows(keyword.len()).any(|w| w == keyword)
    }
    regex_syntax::parse(pattern).is_ok_and(|hir| holds(&hir, &keywords))
}

/// Whether one of `keywords` (lower case) stands on the line of `text` around `at`.
fn line_holds_a_keyword(text: &str, at: std::ops::Range<usize>, keywords: &[String]) -> bool {
    let start = text[..at.start].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at.end..].find('\n').map_or(text.len(), |i| at.end + i);
    let line = text[start..end].to_ascii_lowercase();
    keywords.iter().any(|k| line.contains(k.as_str()))
}

/// Whether `value` reads as a recovery phrase rather than one word repeated.
fn is_phrase(value: &str) -> bool {
    let words: Vec<&str> = value.split_whitespace().collect();
    let mut distinct = words.clone();
    distinct.sort_unstable();
    distinct.dedup();
    words.len() >= 12 && distinct.len() * 2 >= words.len()
}

impl Rules {
    /// Whether `text` holds a keyword of a rule whose findings may span lines (a key
    /// block, a netrc entry, a Terraform variable): then only a redaction of the whole
    /// text is right. Otherwise every finding lies within one line, and a line redacted
    /// alone reads as it does in the whole text's redaction.
    pub fn needs_whole_text(&self, text: &[u8]) -> bool {
        self.spanning_keywords.is_match(text)
    }

    /// The keywords `text` holds, in one pass.
    pub fn hits(&self, text: &str) -> Hits {
        let mut hits = Hits {
            tokens: vec![false; self.tokens.len()],
            blocks: vec![false; self.blocks.len()],
            name_words: Vec::new(),
        };
        // Overlapping matches: a keyword inside another (`sk-` in `sk-ant-`, `key` in
        // `PRIVATE KEY`) counts too.
        for found in self.keywords.find_overlapping_iter(text) {
            match self.keyword_of[found.pattern().as_usize()] {
                Keyword::Token(rule) => hits.tokens[rule] = true,
                Keyword::Block(rule) => hits.blocks[rule] = true,
                Keyword::NameWord => hits.name_words.push(found.range()),
            }
        }
        // Reported by where they end: by start for the assignment finder.
        hits.name_words.sort_by_key(|word| word.start);
        hits
    }

    /// Every finding in `text` of the token rules `triggered` (from [`Rules::hits`] of
    /// it) names (they may overlap; the caller picks).
    pub fn tokens(&self, text: &str, triggered: &[bool]) -> Vec<Found> {
        let mut out = Vec::new();
        for (rule, _) in self.tokens.iter().zip(triggered).filter(|(_, t)| **t) {
            for caps in rule.regex.get().captures_iter(text) {
                let Some(secret) = caps.get(rule.secret) else {
                    continue;
                };
                if !rule.line_keywords.is_empty()
                    && !line_holds_a_keyword(text, secret.range(), &rule.line_keywords)
                {
                    continue;
                }
                let values: Vec<(std::ops::Range<usize>, &str)> = match &rule.each {
                    None => vec![(secret.range(), secret.as_str())],
                    Some(each) => each
                        .get()
                        .find_iter(secret.as_str())
                        .map(|m| {
                            (
                                secret.start() + m.start()..secret.start() + m.end(),
                                m.as_str(),
                            )
                        })
                        .collect(),
                };
                for (range, value) in values {
                    let passes = match rule.value {
                        ValueTest::None => true,
                        ValueTest::Random => looks_random(value),
                        ValueTest::Password => {
                            value.len() >= MIN_PASSWORD_LEN && !is_placeholder(value, "")
                        }
                        ValueTest::Phrase => is_phrase(value),
                    };
                    if passes && !value.is_empty() {
                        out.push(Found {
                            range,
                            marker: rule.marker.clone(),
                        });
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
