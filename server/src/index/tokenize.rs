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

/// Calls `emit` with every term of `text`, in order (see `for_each_word_term`).
pub fn for_each_term(text: &str, mut emit: impl FnMut(&str)) {
    for word in words(text) {
        for_each_word_term(word, &mut emit);
    }
}

/// Calls `emit` with the terms of one word's parts alone, without the compounds
/// [`for_each_word_term`] adds after them: what a name is made of, in any order.
pub fn for_each_part_term(word: &str, mut emit: impl FnMut(&str)) {
    if word.len() > MAX_WORD_LEN {
        return;
    }
    let mut parts: Vec<String> = Vec::new();
    split_identifier(word, &mut parts);
    for part in &parts {
        let stem = stem(part);
        if keep_term(&stem) {
            emit(&stem);
        }
    }
}

/// Calls `emit` with the terms of one word. The compounds of a multi-part identifier
/// follow its parts: each adjacent pair, then the whole (`ServerCertVerifier` → `serv`,
/// `certific`, `verifi`, `servcertific`, `certificverifi`, `servcertificverifi`), so a
/// question naming two words of a long name still finds it.
pub fn for_each_word_term(word: &str, mut emit: impl FnMut(&str)) {
    if word.len() > MAX_WORD_LEN {
        return;
    }
    let mut parts: Vec<String> = Vec::new();
    split_identifier(word, &mut parts);
    let stems: Vec<String> = parts.iter().map(|part| stem(part)).collect();
    for stem in &stems {
        if keep_term(stem) {
            emit(stem);
        }
    }
    let mut compound = String::new();
    if stems.len() > 2 {
        for pair in stems.windows(2) {
            compound.clear();
            compound.push_str(&pair[0]);
            compound.push_str(&pair[1]);
            if keep_term(&compound) {
                emit(&compound);
            }
        }
    }
    if stems.len() > 1 {
        compound.clear();
        stems.iter().for_each(|s| compound.push_str(s));
        if keep_term(&compound) {
            emit(&compound);
        }
    }
}

/// The terms of `text` as owned strings.
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
    // Initials of the run of content words so far: "carriage return line feed" also
    // asks for `crlf`, since code abbreviates what questions spell out.
    let mut initials = String::new();
    for word in words(question) {
        if word.len() > MAX_WORD_LEN {
            previous = None;
            initials.clear();
            continue;
        }
        let lower = word.to_lowercase();
        if lower.chars().count() == 1 && !lower.chars().all(|c| c.is_ascii_digit()) {
            // The `s` of "server's": neither a term nor a break between words.
            continue;
        }
        if is_stop_word(&lower) {
            // A stop word between two words breaks the compound: "read into string"
            // should not be glued to `readstring`.
            previous = None;
            initials.clear();
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
        match lower.chars().next() {
            Some(c) if c.is_ascii_alphabetic() => initials.push(c),
            _ => initials.clear(),
        }
        for n in 3..=4 {
            if initials.len() >= n {
                push(initials[initials.len() - n..].to_string(), true, &mut out);
            }
        }
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

/// A light suffix stripper: plurals, `-ing`, `-ed`, agent nouns `-er`, `-ation`,
/// `-ator`, `-ate`, `-tion`/`-sion`, British `-ise`, a final `y` after a consonant and a
/// final `e`, so `parse`, `parser`, `parsed`, `parsing` and `parses` meet at `pars`,
/// and `verify`, `verifies` and `verifier` at `verifi`. Deliberately timid (short words
/// are left alone): a wrong merge costs more than a missed one. Common abbreviations
/// in code (`cert`, `buf`, `ctx`, …) are first expanded to the word they stand for.
pub fn stem(word: &str) -> String {
    let mut w = expand_abbreviation(word).to_string();
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
    // British spellings meet American ones: `recognised` → `recognized`.
    if w.len() >= 6 {
        for (british, american) in [
            ("isation", "ization"),
            ("ising", "izing"),
            ("ised", "ized"),
            ("ise", "ize"),
        ] {
            if w.ends_with(british) {
                w.truncate(w.len() - british.len());
                w.push_str(american);
                break;
            }
        }
    }
    // Verb and noun endings; each needs a stem of at least three letters left. A
    // stripped verb gets its `e` back unless a consonant was doubled (`validat` →
    // `validate`, `runn` → `run`), so it goes through the same rules as the verb.
    let stripped = if w.ends_with("ing") && w.len() >= 6 {
        Some(3)
    } else if (w.ends_with("ed") && w.len() >= 5) || (w.ends_with("er") && w.len() >= 6) {
        Some(2)
    } else {
        None
    };
    if let Some(n) = stripped {
        w.truncate(w.len() - n);
        if !undouble(&mut w) {
            w.push('e');
        }
    }
    if w.ends_with("ation") && w.len() >= 8 {
        w.truncate(w.len() - 5);
    } else if w.ends_with("ator") && w.len() >= 7 {
        w.truncate(w.len() - 4);
    } else if (w.ends_with("ate") || w.ends_with("tion") || w.ends_with("sion")) && w.len() >= 7 {
        // `-ate` goes; `-tion` and `-sion` lose their `ion` (`connection` → `connect`).
        w.truncate(w.len() - 3);
    }
    // `verify`, `verified` and `verifier` all end in `verifi`; `key` keeps its `y`.
    if w.len() > 3 && w.ends_with('y') {
        let before = w.as_bytes()[w.len() - 2];
        if !matches!(before, b'a' | b'e' | b'i' | b'o' | b'u') {
            w.pop();
            w.push('i');
        }
    }
    if w.ends_with('e') && w.len() > 3 {
        w.pop();
    }
    w
}

/// Abbreviations common enough in identifiers that a question's full word should find
/// them (`ServerCertVerifier` for "certificate"), and the reverse.
fn expand_abbreviation(word: &str) -> &str {
    match word {
        "addr" => "address",
        "arg" | "args" => "argument",
        "auth" => "authentication",
        "buf" | "buff" => "buffer",
        "cert" | "certs" => "certificate",
        "cfg" | "conf" | "config" => "configuration",
        "cmd" => "command",
        "conn" => "connection",
        "ctx" => "context",
        "cur" | "curr" => "current",
        "db" => "database",
        "dest" | "dst" => "destination",
        "dir" | "dirs" => "directory",
        "env" => "environment",
        "err" => "error",
        "expr" => "expression",
        "fmt" => "format",
        "hdr" => "header",
        "ident" => "identifier",
        "idx" => "index",
        "init" => "initialize",
        "iter" => "iterator",
        "len" => "length",
        "lib" => "library",
        "mem" => "memory",
        "msg" | "msgs" => "message",
        "num" => "number",
        "opt" | "opts" => "option",
        "param" | "params" => "parameter",
        "pkg" => "package",
        "pos" => "position",
        "prev" => "previous",
        "ptr" => "pointer",
        "req" => "request",
        "resp" => "response",
        "sig" => "signature",
        "src" => "source",
        "str" => "string",
        "tmp" | "temp" => "temporary",
        "val" => "value",
        "var" => "variable",
        _ => word,
    }
}

/// `runn` → `run`, `stopp` → `stop`; `ll`, `ss` and `zz` stay (`fill`, `pass`).
/// Returns whether a letter was dropped.
fn undouble(w: &mut String) -> bool {
    let bytes = w.as_bytes();
    let n = bytes.len();
    if n >= 4 && bytes[n - 1] == bytes[n - 2] {
        let last = bytes[n - 1];
        if !matches!(last, b'l' | b's' | b'z' | b'a' | b'e' | b'i' | b'o' | b'u') {
            w.pop();
            return true;
        }
    }
    false
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
    fn words_are_runs_of_letters_digits_and_underscores() {
        let found: Vec<&str> = words("fn größe_2(x: &str) -> Ünïcode—dash, a_b").collect();
        assert_eq!(
            found,
            ["fn", "größe_2", "x", "str", "Ünïcode", "dash", "a_b"]
        );
        assert_eq!(words("").count(), 0);
        assert_eq!(words("  ...  ").count(), 0);
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
        for word in ["verify", "verifies", "verified", "verifier"] {
            assert_eq!(stem(word), "verifi", "{word}");
        }
        for word in [
            "validate",
            "validated",
            "validating",
            "validation",
            "validator",
        ] {
            assert_eq!(stem(word), "valid", "{word}");
        }
        assert_eq!(stem("recognised"), stem("recognized"));
        assert_eq!(stem("configuration"), stem("configured"));
        // Abbreviations meet their words.
        assert_eq!(stem("cert"), stem("certificates"));
        assert_eq!(stem("buf"), stem("buffer"));
        assert_eq!(stem("str"), stem("string"));
        assert_eq!(stem("running"), "run");
        assert_eq!(stem("entries"), "entri");
        assert_eq!(stem("key"), "key");
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
        assert_eq!(
            texts,
            ["rop", "build", "ropbuild", "work", "buildwork", "rbw"]
        );
        let compounds: Vec<bool> = terms.iter().map(|t| t.compound).collect();
        assert_eq!(compounds, [false, false, true, false, true, true]);
        // A stop word breaks the compound.
        assert_eq!(query_texts("read into a string"), ["read", "str"]);
        // Spelled-out acronyms.
        let acronyms = query_texts("carriage return line feed");
        assert!(acronyms.contains(&"crlf".to_string()), "{acronyms:?}");
        // Identifiers in a question are split like identifiers in code.
        assert_eq!(
            query_texts("spawn_blocking"),
            ["spawn", "block", "spawnblock"]
        );
    }

    #[test]
    fn long_identifiers_yield_pairs() {
        assert_eq!(
            terms("ServerCertVerifier"),
            [
                "serv",
                "certific",
                "verifi",
                "servcertific",
                "certificverifi",
                "servcertificverifi"
            ]
        );
        // A possessive `s` does not break the pair in a question.
        let question = query_texts("the server's certificate");
        assert!(
            question.contains(&"servcertific".to_string()),
            "{question:?}"
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
