//! Turning code and questions into search terms: identifier splitting, light stemming
//! and stop words.
//!
//! Code and questions must go through the same normalisation, or a question about
//! "parsing line breaks" never meets `fn parse_line_break`. So every word, from either
//! side, is split at `_` and camelCase boundaries, lowercased and stemmed; a multi-part
//! identifier also yields its parts glued together (`RopeBuilder` → `ropebuild`), which
//! a question produces from two adjacent words ("rope builder"). That compound is rare,
//! so BM25 gives it a high weight: exactly the "the question names this definition"
//! signal we want, without any per-language knowledge.

/// Words longer than this are hashes, base64 or minified noise, not vocabulary.
const MAX_WORD_LEN: usize = 48;

/// Calls `emit` with every term of `text`, in order. A compound term follows the parts
/// it is made of.
pub fn for_each_term(text: &str, mut emit: impl FnMut(&str)) {
    let mut parts: Vec<String> = Vec::new();
    let mut compound = String::new();
    for word in words(text) {
        if word.len() > MAX_WORD_LEN {
            continue;
        }
        split_identifier(word, &mut parts);
        compound.clear();
        let mut kept = 0;
        for part in &parts {
            let stem = stem(part);
            if keep_term(&stem) {
                emit(&stem);
            }
            compound.push_str(&stem);
            kept += 1;
        }
        if kept > 1 && keep_term(&compound) {
            emit(&compound);
        }
    }
}

/// The terms of `text` as owned strings.
#[cfg(test)]
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(text, |term| out.push(term.to_string()));
    out
}

/// One term of a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryTerm {
    pub text: String,
    /// Glued from several words or identifier parts: evidence of a name, not a word
    /// the answer must contain.
    pub compound: bool,
}

/// A question's terms: stop words dropped, each remaining word stemmed and split like
/// an identifier, plus compounds of adjacent content words ("flow control" →
/// `flowcontrol`, matching `FlowControl`). Deduplicated, in first-seen order.
pub fn query_terms(question: &str) -> Vec<QueryTerm> {
    let mut out: Vec<QueryTerm> = Vec::new();
    let push = |text: String, compound: bool, out: &mut Vec<QueryTerm>| {
        if keep_term(&text) && !out.iter().any(|t| t.text == text) {
            out.push(QueryTerm { text, compound });
        }
    };
    let mut parts = Vec::new();
    // The stems of the previous content word, to glue compounds across words.
    let mut previous: Option<String> = None;
    for word in words(question) {
        if word.len() > MAX_WORD_LEN {
            previous = None;
            continue;
        }
        let lower = word.to_lowercase();
        if is_stop_word(&lower) {
            // A stop word between two words breaks the compound: "read into string"
            // should not be glued to `readstring`.
            previous = None;
            continue;
        }
        split_identifier(word, &mut parts);
        let stems: Vec<String> = parts.iter().map(|p| stem(p)).collect();
        for stem in &stems {
            push(stem.clone(), false, &mut out);
        }
        let joined: String = stems.concat();
        if stems.len() > 1 {
            push(joined.clone(), true, &mut out);
        }
        if let Some(prev) = &previous {
            push(format!("{prev}{joined}"), true, &mut out);
        }
        previous = Some(joined);
    }
    out
}

/// Maximal runs of letters, digits and `_` (Unicode letters included).
pub fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// Splits an identifier into lowercase parts at `_` and at camelCase boundaries:
/// `parseHTTPHeader_v2` → `parse`, `http`, `header`, `v2`. Digits stay attached to
/// the letters before them (`utf8`, `h2`, `ipv6`), since that is how people write them.
pub fn split_identifier(word: &str, parts: &mut Vec<String>) {
    parts.clear();
    for piece in word.split('_').filter(|p| !p.is_empty()) {
        let chars: Vec<char> = piece.chars().collect();
        let mut current = String::new();
        for (i, &c) in chars.iter().enumerate() {
            if i > 0 && c.is_uppercase() {
                let prev = chars[i - 1];
                let next_is_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
                // `fooBar`: lower then upper; `HTTPHeader`: the last capital of a run
                // starts the next word when a lowercase letter follows it.
                if prev.is_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_uppercase() && next_is_lower)
                {
                    parts.push(std::mem::take(&mut current));
                }
            }
            current.extend(c.to_lowercase());
        }
        if !current.is_empty() {
            parts.push(current);
        }
    }
}

/// Whether a normalised term is worth indexing: not a single letter, not a stop word.
fn keep_term(term: &str) -> bool {
    let long_enough = term.len() >= 2 || term.chars().all(|c| c.is_ascii_digit());
    long_enough && !is_stop_word(term)
}

/// English function words and question words. Code keywords are left in: IDF already
/// makes `fn` and `self` nearly worthless, and `struct` or `trait` in a question can
/// matter.
pub fn is_stop_word(word: &str) -> bool {
    matches!(
        word,
        "a" | "about"
            | "after"
            | "all"
            | "also"
            | "an"
            | "and"
            | "any"
            | "are"
            | "as"
            | "at"
            | "be"
            | "been"
            | "being"
            | "but"
            | "by"
            | "can"
            | "could"
            | "did"
            | "do"
            | "doe"
            | "does"
            | "doing"
            | "done"
            | "each"
            | "either"
            | "else"
            | "for"
            | "from"
            | "had"
            | "has"
            | "have"
            | "how"
            | "i"
            | "if"
            | "in"
            | "instead"
            | "into"
            | "is"
            | "it"
            | "its"
            | "just"
            | "like"
            | "may"
            | "me"
            | "might"
            | "my"
            | "of"
            | "on"
            | "one"
            | "onto"
            | "or"
            | "our"
            | "should"
            | "so"
            | "some"
            | "such"
            | "than"
            | "that"
            | "the"
            | "their"
            | "them"
            | "then"
            | "there"
            | "these"
            | "they"
            | "this"
            | "those"
            | "to"
            | "too"
            | "us"
            | "very"
            | "was"
            | "way"
            | "we"
            | "were"
            | "what"
            | "when"
            | "where"
            | "whether"
            | "which"
            | "while"
            | "who"
            | "why"
            | "will"
            | "with"
            | "would"
            | "you"
            | "your"
    )
}

/// A light suffix stripper: plurals, `-ing`, `-ed`, agent nouns `-er`, `-tion`/`-sion`
/// and a final `e`, so `parse`, `parser`, `parsed`, `parsing` and `parses` meet at
/// `pars`. Deliberately timid (short words are left alone): a wrong merge costs more
/// than a missed one, since identifiers already share whole words.
pub fn stem(word: &str) -> String {
    let mut w = word.to_string();
    if !w.is_ascii() || w.len() <= 3 || w.bytes().any(|b| b.is_ascii_digit()) {
        return w;
    }
    // Plurals.
    if w.ends_with("ies") && w.len() > 4 {
        w.truncate(w.len() - 3);
        w.push('y');
    } else if w.ends_with("sses") {
        w.truncate(w.len() - 2);
    } else if w.ends_with('s')
        && !w.ends_with("ss")
        && !w.ends_with("us")
        && !w.ends_with("is")
        && w.len() > 3
    {
        w.pop();
    }
    // Verb and noun endings; each needs a stem of at least three letters left.
    if w.ends_with("ing") && w.len() >= 6 {
        w.truncate(w.len() - 3);
        undouble(&mut w);
    } else if w.ends_with("ed") && w.len() >= 5 {
        w.truncate(w.len() - 2);
        undouble(&mut w);
    } else if w.ends_with("er") && w.len() >= 6 {
        w.truncate(w.len() - 2);
        undouble(&mut w);
    } else if (w.ends_with("tion") || w.ends_with("sion")) && w.len() >= 7 {
        w.truncate(w.len() - 3);
    }
    if w.ends_with('e') && w.len() > 3 {
        w.pop();
    }
    w
}

/// `runn` → `run`, `stopp` → `stop`; `ll`, `ss` and `zz` stay (`fill`, `pass`).
fn undouble(w: &mut String) {
    let bytes = w.as_bytes();
    let n = bytes.len();
    if n >= 4 && bytes[n - 1] == bytes[n - 2] && !matches!(bytes[n - 1], b'l' | b's' | b'z') {
        let last = bytes[n - 1];
        if !matches!(last, b'a' | b'e' | b'i' | b'o' | b'u') {
            w.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(word: &str) -> Vec<String> {
        let mut parts = Vec::new();
        split_identifier(word, &mut parts);
        parts
    }

    #[test]
    fn splits_snake_and_camel_case() {
        assert_eq!(split("spawn_blocking"), ["spawn", "blocking"]);
        assert_eq!(split("RopeBuilder"), ["rope", "builder"]);
        assert_eq!(
            split("parseHTTPHeader_v2"),
            ["parse", "http", "header", "v2"]
        );
        assert_eq!(split("__private"), ["private"]);
        assert_eq!(split("utf8"), ["utf8"]);
        assert_eq!(split("ALL_CAPS"), ["all", "caps"]);
    }

    #[test]
    fn stems_meet_at_a_common_root() {
        for word in ["parse", "parser", "parsed", "parsing", "parses"] {
            assert_eq!(stem(word), "pars", "{word}");
        }
        assert_eq!(stem("running"), "run");
        assert_eq!(stem("entries"), "entry");
        assert_eq!(stem("compression"), "compress");
        assert_eq!(stem("connection"), "connect");
        assert_eq!(stem("filling"), "fill");
        // Short words and words with digits are left alone.
        assert_eq!(stem("bus"), "bus");
        assert_eq!(stem("timer"), "timer");
        assert_eq!(stem("tls13"), "tls13");
        assert_eq!(stem("class"), "class");
    }

    #[test]
    fn code_terms_include_compounds() {
        assert_eq!(
            terms("impl RopeBuilder { fn new() }"),
            ["impl", "rop", "build", "ropbuild", "fn", "new"]
        );
        // One-letter words are dropped; numbers are kept.
        assert_eq!(terms("let x = 42;"), ["let", "42"]);
    }

    fn query_texts(question: &str) -> Vec<String> {
        query_terms(question).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn query_terms_drop_stop_words_and_glue_neighbours() {
        let terms = query_terms("How does the rope builder work?");
        let texts: Vec<&str> = terms.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(texts, ["rop", "build", "ropbuild", "work", "buildwork"]);
        let compounds: Vec<bool> = terms.iter().map(|t| t.compound).collect();
        assert_eq!(compounds, [false, false, true, false, true]);
        // A stop word breaks the compound.
        assert_eq!(query_texts("read into a string"), ["read", "str"]);
        // Identifiers in a question are split like identifiers in code.
        assert_eq!(
            query_texts("spawn_blocking"),
            ["spawn", "block", "spawnblock"]
        );
    }

    #[test]
    fn query_and_code_agree_on_identifiers() {
        let code = terms("pub struct FlowControl;");
        for term in query_texts("flow control") {
            assert!(code.contains(&term), "{term} not in {code:?}");
        }
    }
}
