//! What the question names, and which chunks it names: identifiers in code form
//! (`write_usage`, a traceback frame's function) against the chunks' definitions, the
//! question's plain words against definition names, the paths it gives against each
//! candidate's file, and the definition a hit is shown under. `rank.rs` weighs these.

use super::definition_line::Definition;
use super::query::{name_key, PathRef, Source};
use super::rank::{idf, Candidate, Corpus};
use super::tokenize::{self, for_each_term};

/// The identifiers the question names as code (not plain prose words), by their
/// [`name_key`], each with a strength in 0..=1: its source's weight relative to the
/// strongest, times its rarity (its whole-name term's IDF over the largest possible).
/// `convert` in backticks names less than `write_usage` does, since many things
/// define a `convert`.
pub fn named_keys(corpus: &Corpus) -> Vec<(String, f32)> {
    let n = corpus.chunks as f32;
    let max_idf = idf(n, 1.0).max(f32::EPSILON);
    let mut out: Vec<(String, f32)> = Vec::new();
    for identifier in &corpus.parsed.identifiers {
        if identifier.source < Source::Code {
            continue;
        }
        let Some(key) = name_key(&identifier.name) else {
            continue;
        };
        let Some(stats) = corpus.all_terms.iter().find(|t| t.term.text == key) else {
            continue;
        };
        if stats.chunk_df == 0 {
            continue;
        }
        let source = match identifier.source {
            Source::Named | Source::Frame => 1.0,
            _ => 0.5,
        };
        let strength = source * idf(n, stats.chunk_df as f32) / max_idf;
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, s)) => *s = s.max(strength),
            None => out.push((key, strength)),
        }
    }
    out
}

/// The strongest named identifier one of the chunk's definitions is named as.
pub fn named_strength(definitions: &[Definition], named: &[(String, f32)]) -> f32 {
    if named.is_empty() {
        return 0.0;
    }
    definitions
        .iter()
        .filter_map(|d| name_key(&d.name))
        .filter_map(|key| named.iter().find(|(k, _)| *k == key).map(|(_, s)| *s))
        .fold(0.0, f32::max)
}

/// How well each candidate's file matches the paths the question names.
#[derive(Default)]
pub struct PathMatches<'a> {
    refs: Vec<(&'a PathRef, Vec<String>)>,
    /// Per ref: how many distinct candidate files match it with each number of
    /// trailing components (index = components).
    ambiguity: Vec<Vec<usize>>,
}

impl<'a> PathMatches<'a> {
    pub fn new(refs: &'a [PathRef], candidates: &[Candidate]) -> PathMatches<'a> {
        let refs: Vec<(&PathRef, Vec<String>)> = refs
            .iter()
            .map(|r| {
                (
                    r,
                    r.path
                        .to_lowercase()
                        .split('/')
                        .map(str::to_string)
                        .collect(),
                )
            })
            .collect();
        let mut files: Vec<&str> = candidates.iter().map(|c| c.path.as_str()).collect();
        files.sort_unstable();
        files.dedup();
        let ambiguity = refs
            .iter()
            .map(|(_, parts)| {
                let mut counts = vec![0usize; parts.len() + 1];
                for file in &files {
                    counts[common_suffix(parts, file)] += 1;
                }
                counts
            })
            .collect();
        PathMatches { refs, ambiguity }
    }

    /// 0..=1: 1 when the candidate's file is the only one matching a named path in all
    /// its components (or in two, for a path that is longer than the workspace's, such
    /// as a traceback's `site-packages/pkg/mod.py`); less when only the file name
    /// matches or several files match as well. A named line inside the chunk adds a
    /// little (the line may have moved since).
    pub fn strength(&self, candidate: &Candidate) -> f32 {
        let mut best: f32 = 0.0;
        for ((path_ref, parts), counts) in self.refs.iter().zip(&self.ambiguity) {
            let matched = common_suffix(parts, &candidate.path);
            if matched == 0 {
                continue;
            }
            let depth = if matched >= parts.len().min(2) {
                1.0
            } else {
                0.5
            };
            let mut strength = depth / counts[matched].max(1) as f32;
            if let Some(line) = path_ref.line {
                let line = line.saturating_sub(1);
                if candidate.start_line <= line && line < candidate.end_line {
                    strength *= 1.2;
                }
            }
            best = best.max(strength.min(1.0));
        }
        best
    }
}

/// How many trailing path components (lowercased) `parts` and `path` share.
pub fn common_suffix(parts: &[String], path: &str) -> usize {
    let lower = path.to_lowercase();
    parts
        .iter()
        .rev()
        .zip(lower.rsplit('/'))
        .take_while(|(a, b)| a.as_str() == *b)
        .count()
}

/// 1.0 when one of the chunk's definitions is named only with the question's words
/// (every part of `TokenBucket` or `refill` asked about), else 0.0. Definitions are what
/// a question about behaviour is usually answered by; a mere mention is not.
pub fn name_match(definitions: &[Definition], words: &[&str]) -> f32 {
    let full = definitions.iter().any(|definition| {
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

/// 1.0 when one of the chunk's definitions is named only with the question's words and
/// one of them is the question's main verb (`_check_token` for "where is the CSRF token
/// checked", `query::verb`), else 0.0: it does what the question asks about, where a
/// constant named with the thing's words (`REASON_CSRF_TOKEN_MISSING`) only names it.
///
/// A name's parts count in any order ("token checked" against `_check_token`), where
/// `name_match` needs them adjacent in the question, as its compound term is.
pub fn verb_match(definitions: &[Definition], words: &[&str], verb: &str) -> f32 {
    let does = definitions.iter().any(|definition| {
        let (mut parts, mut matched, mut has_verb) = (0, 0, false);
        for word in tokenize::words(&definition.name) {
            tokenize::for_each_part_term(word, |term| {
                parts += 1;
                matched += usize::from(words.contains(&term));
                has_verb |= term == verb;
            });
        }
        parts > 0 && matched == parts && has_verb
    });
    f32::from(u8::from(does))
}

/// The definition in a chunk the question names (its strongest named identifier, of
/// `named`: the question's [`named_keys`], computed once for all its chunks), else the one
/// sharing most terms with the question, else the chunk's own symbol.
pub fn best_symbol(
    candidate: &Candidate,
    wanted: &[String],
    named: &[(String, f32)],
) -> Option<String> {
    // A definition the question names as an identifier wins outright: in a long report
    // most definitions share some word with it.
    if let Some((definition, _)) = candidate
        .definitions
        .iter()
        .filter_map(|d| {
            let key = name_key(&d.name)?;
            let strength = named.iter().find(|(k, _)| *k == key)?.1;
            Some((d, strength))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
    {
        return Some(definition.symbol.clone());
    }
    let mut best: Option<(usize, &str)> = None;
    for definition in &candidate.definitions {
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
        None => candidate.symbol.clone(),
    }
}
