//! The action a short question asks about, read off its shape: "where is the CSRF token
//! checked", "how are tokens refilled" — a question word, a form of *be*, the thing, and
//! a past participle that ends the main clause. The participle names what the code does
//! (`_check_token`, `refill`), while the thing's words also name data (a constant
//! `REASON_CSRF_TOKEN_MISSING`); the ranker lifts definitions named with both.
//!
//! Only a regular participle (`-ed`) that ends the clause counts: a word ending in
//! "-ed" elsewhere is often not the verb ("how does *marked*.use() merge", "where are
//! messages kept so they can be *dumped*": the clause ends at "so", on "kept").

use super::super::tokenize::for_each_term;

const QUESTION_WORDS: &[&str] = &["where", "how", "when", "which", "what", "why"];
const FORMS_OF_BE: &[&str] = &["is", "are", "was", "were", "get", "gets", "got"];
/// Words that start another clause: the main one ends before them.
const CLAUSE_STARTS: &[&str] = &[
    "so", "that", "when", "if", "because", "while", "before", "after", "since", "until", "unless",
    "and", "or", "but", "then", "which", "where", "who", "once", "whenever",
];
/// Prepositions that may follow the participle inside the main clause ("checked for
/// expiry", "stored on disk").
const PREPOSITIONS: &[&str] = &[
    "in", "on", "at", "for", "from", "to", "into", "by", "with", "during", "per", "against", "of",
    "over", "under", "through", "within", "without", "across", "between",
];

/// The index term of the question's main verb, when the question has the shape above.
pub fn main_verb(prose: &str) -> Option<String> {
    let mut words: Vec<(String, bool)> = Vec::new();
    for raw in prose.split_whitespace() {
        let ends_clause = raw.ends_with([',', ';', ':', '?', '.', '!', ')']);
        let word: String = raw
            .trim_matches(|c: char| !c.is_ascii_alphanumeric())
            .to_ascii_lowercase();
        if word.is_empty() || !word.chars().all(|c| c.is_ascii_alphabetic()) {
            // Code, a number or a path: not a question of this shape's plain words.
            return None;
        }
        words.push((word, ends_clause));
        if ends_clause {
            break;
        }
    }
    let question_word = words
        .iter()
        .position(|(w, _)| QUESTION_WORDS.contains(&w.as_str()))?;
    if question_word > 2 {
        return None;
    }
    let be = question_word
        + 1
        + words[question_word + 1..]
            .iter()
            .take(2)
            .position(|(w, _)| FORMS_OF_BE.contains(&w.as_str()))?;
    // The main clause: up to another clause's first word or a punctuation mark.
    let mut end = words.len();
    for (i, (word, ends_clause)) in words.iter().enumerate().skip(be + 1) {
        if CLAUSE_STARTS.contains(&word.as_str()) {
            end = i;
            break;
        }
        if *ends_clause {
            end = i + 1;
            break;
        }
    }
    let clause = &words[be + 1..end];
    // The participle ends the clause, or comes before its prepositional phrase; the
    // thing it is said of comes first.
    let last = clause
        .iter()
        .position(|(w, _)| PREPOSITIONS.contains(&w.as_str()))
        .unwrap_or(clause.len());
    if last < 2 {
        return None;
    }
    let participle = &clause[last - 1].0;
    if participle.len() < 5 || !participle.ends_with("ed") || participle.ends_with("eed") {
        return None;
    }
    let mut term = None;
    for_each_term(participle, |t| term = Some(t.to_string()));
    term
}

#[cfg(test)]
mod tests {
    use super::main_verb;

    #[test]
    fn the_participle_ending_the_main_clause_is_the_verb() {
        for (question, verb) in [
            ("where is the CSRF token checked", Some("check")),
            ("Where is the CSRF token checked?", Some("check")),
            ("how are tokens refilled", Some("refil")),
            (
                "where is the session cookie signed for the response",
                Some("sign"),
            ),
            ("In which file is the config loaded?", Some("load")),
            // Not a participle ending the clause, or not this shape at all.
            ("where are messages kept so they can be dumped", None),
            ("How does marked.use() merge extensions", None),
            ("how does the parser handle tabs", None),
            ("where is the embedded font", None),
            ("where is `parse_args` called", None),
            ("what is needed", None),
            ("where is the seed", None),
        ] {
            let got = main_verb(question);
            // The stemmer decides the exact term; the tests name what it gives.
            match verb {
                Some(verb) => assert!(
                    got.as_deref().is_some_and(|g| g.starts_with(&verb[..4])),
                    "{question}: {got:?}"
                ),
                None => assert_eq!(got, None, "{question}"),
            }
        }
    }
}
