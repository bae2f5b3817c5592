//! Values assigned to secret-looking names: `db_password = "…"`, `"api_key": "…"`,
//! `SIGNING_SALT=…`, YAML's `vault_token: …`, `setenv("API_TOKEN", "…")`.
//!
//! The name decides the test (`[assignment]` in rules.toml): a password-like name's
//! literal is redacted unless it is a placeholder or a reference; any other
//! secret-looking name's literal only when it looks random (randomness.rs). An unquoted
//! value is code as often as it is a secret (`token = tokens.next()`, `password:
//! String`), so it must end its line or statement, and a password-like one must hold a
//! digit, a symbol or mixed case.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::{Captures, Regex};

use super::randomness::looks_random;
use super::rules::RULES;
use super::{is_placeholder, Found, MIN_PASSWORD_LEN};

/// What a name says of its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NameKind {
    Password,
    Secret,
}

static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"(?P<name>[A-Za-z_$@][A-Za-z0-9_.$-]*)(?P<nq>["'`]?)\]?[ \t]*"#,
        r#"(?P<op>:=|=>|\?=|\+=|<-|:|=|,)[ \t]*"#,
        r#"(?:"(?P<dq>[^"\r\n]*)"|'(?P<sq>[^'\r\n]*)'|`(?P<bq>[^`\r\n]*)`|(?P<bare>[^\s"'`,;&<>(){}\[\]]+))"#,
    ))
    .expect("valid regex")
});

/// The words that can make a name secret-looking, to find the few lines worth
/// matching `ASSIGNMENT` on.
static NAME_WORDS: LazyLock<AhoCorasick> = LazyLock::new(|| {
    let spec = &RULES.assignment;
    let mut words: Vec<&str> = Vec::new();
    words.extend(spec.password_words.iter().map(String::as_str));
    words.extend(spec.secret_words.iter().map(String::as_str));
    words.push(super::rules::ASSIGNMENT_KEY_WORD);
    AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::LeftmostFirst)
        .kind(Some(AhoCorasickKind::DFA))
        .build(words)
        .expect("words build")
});

/// Findings on every line of `text` that holds a name word as a word of a name.
pub fn find(text: &str) -> Vec<Found> {
    let mut out = Vec::new();
    let mut next_line = 0;
    for word in NAME_WORDS.find_iter(text) {
        if word.start() < next_line || !names_with(text, word.start(), word.end()) {
            continue;
        }
        let start = text[..word.start()].rfind('\n').map_or(0, |i| i + 1);
        let end = text[word.end()..]
            .find('\n')
            .map_or(text.len(), |i| word.end() + i);
        let line = &text[start..end];
        let mut at = 0;
        while let Some(caps) = ASSIGNMENT.captures_at(line, at) {
            match judge(&caps, line) {
                Some(mut found) => {
                    at = found.range.end;
                    found.range = found.range.start + start..found.range.end + start;
                    out.push(found);
                }
                // Not a secret: look again from past its name, for an assignment inside
                // its value (`"Default": "Server=…;Password=…;"`).
                None => at = caps.name("name").map_or(line.len(), |name| name.end()),
            }
        }
        next_line = end;
    }
    out
}

/// Whether the name word at `start..end` is one a name can be judged by: among the
/// words (`split_words`) of the identifier it stands in, a password or secret word, or
/// one ending in `key` (`classify` needs one of those). `pat` inside `path` or `sig`
/// inside `signal` is not: most lines of code hold such a word, and each sent its whole
/// line through the assignment regex. A name word is letters only, so it lies within
/// one run of letters and digits, and every word `classify` reads is one.
fn names_with(text: &str, start: usize, end: usize) -> bool {
    let bytes = text.as_bytes();
    let alnum = |b: &u8| b.is_ascii_alphanumeric();
    let from = bytes[..start]
        .iter()
        .rposition(|b| !alnum(b))
        .map_or(0, |i| i + 1);
    let to = bytes[end..]
        .iter()
        .position(|b| !alnum(b))
        .map_or(bytes.len(), |i| end + i);
    let spec = &RULES.assignment;
    split_words(&text[from..to]).iter().any(|w| {
        w.ends_with(super::rules::ASSIGNMENT_KEY_WORD)
            || spec.password_words.contains(w)
            || spec.secret_words.contains(w)
    })
}

fn judge(caps: &Captures<'_>, line: &str) -> Option<Found> {
    let name_match = caps.name("name")?;
    if line[..name_match.start()].ends_with([':', '/', '@']) {
        // Inside a URL (`user:password@host:5432`): the URL rule's business.
        return None;
    }
    let name = name_match.as_str();
    let op = &caps["op"];
    let quoted_name = !caps["nq"].is_empty();
    if op == "," && !quoted_name {
        return None;
    }
    let kind = name_kind(name)?;
    let (value, quoted) = match (
        caps.name("dq"),
        caps.name("sq"),
        caps.name("bq"),
        caps.name("bare"),
    ) {
        (Some(v), ..) | (_, Some(v), ..) | (_, _, Some(v), _) => (v, true),
        (.., Some(v)) => (v, false),
        _ => return None,
    };
    let (range, text) = match quoted {
        true => (value.range(), value.as_str()),
        false => whole_bare_value(value.range(), line),
    };
    if text.chars().any(char::is_whitespace) || text.starts_with("[redacted") {
        return None;
    }
    if !quoted && !ends_statement(op, text, &line[range.end..]) {
        return None;
    }
    let secret = match kind {
        NameKind::Password => password_value(text, quoted, name),
        NameKind::Secret => looks_random(text) && !is_expression(text),
    };
    if !secret {
        return None;
    }
    let marker = if kind == NameKind::Password {
        "password"
    } else if name.to_ascii_lowercase().contains("aws") {
        "aws secret key"
    } else {
        "secret"
    };
    Some(Found {
        range,
        marker: marker.to_string(),
    })
}

/// An unquoted value that runs to the end of its line without a space or a quote is
/// one value, symbols and all: `DJANGO_SECRET_KEY=k9^@*&!#-x7…` in a compose file's
/// environment, `SECRET_KEY: a#-!&b…` in YAML (a `#` is a comment only after a space).
/// Otherwise the value stops where a statement could (`Password=…;Server=…`).
fn whole_bare_value(bare: std::ops::Range<usize>, line: &str) -> (std::ops::Range<usize>, &str) {
    let rest = line[bare.start..].trim_end_matches([' ', '\t', '\r']);
    let one_value = !rest.contains([' ', '\t', '"', '\'', '`', ';', ',']);
    if one_value && rest.len() > bare.len() {
        (bare.start..bare.start + rest.len(), rest)
    } else {
        (bare.clone(), &line[bare])
    }
}

/// An unquoted value counts only where it ends the line or the statement: `KEY=value`,
/// YAML's `key: value`, `Password=…;` in a connection string, `password=…&` in a query,
/// a header inside a quoted curl argument. Never `key: Type,` (after `:`, a `,` ends
/// a parameter's type) unless the value is not a plain word.
fn ends_statement(op: &str, value: &str, rest: &str) -> bool {
    if op == ":" && value.starts_with(':') {
        // `Token::Secret`: a path, not an assignment.
        return false;
    }
    let rest = rest.trim_start_matches([' ', '\t']);
    if rest.is_empty() || rest.starts_with(['\r', '\n', '#', '"', '\'']) || rest.starts_with("//") {
        return true;
    }
    match op {
        ":" => rest.starts_with(['}', ',']) && !value.chars().all(|c| c.is_alphanumeric()),
        _ => rest.starts_with([';', ',', '&', '}', ')']),
    }
}

/// A password-like name's value is a password unless it stands for one.
fn password_value(value: &str, quoted: bool, name: &str) -> bool {
    if value.len() < MIN_PASSWORD_LEN || is_placeholder(value, name) || is_expression(value) {
        return false;
    }
    if names_a_secret(value) {
        // `PASSWORD_KEY = "user_password"`: a storage key or a field name.
        return false;
    }
    if quoted {
        return true;
    }
    // Unquoted, `password = user_input` is code: a password holds a digit, a symbol or
    // both cases.
    let has_digit = value.bytes().any(|b| b.is_ascii_digit());
    let has_symbol = value
        .bytes()
        .any(|b| !b.is_ascii_alphanumeric() && b != b'_');
    let mixed = value.bytes().any(|b| b.is_ascii_uppercase())
        && value.bytes().any(|b| b.is_ascii_lowercase());
    let constant = value
        .bytes()
        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        && value.contains('_');
    (has_digit || has_symbol || mixed) && !constant
}

/// `config.db.password`, `os.environ`, `process.env.TOKEN`: member access, not a literal.
fn is_expression(value: &str) -> bool {
    let parts: Vec<&str> = value.split('.').collect();
    parts.len() >= 2
        && parts.iter().all(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        })
        && parts
            .iter()
            .any(|part| part.chars().any(|c| c.is_ascii_lowercase()))
        && !parts.iter().any(|part| looks_random(part))
}

/// Whether a word-like value itself names a secret (`user_password`, `auth.token`).
fn names_a_secret(value: &str) -> bool {
    if looks_random(value) {
        return false;
    }
    let words = split_words(value);
    words.len() >= 2 && classify(&words).is_some()
}

fn name_kind(name: &str) -> Option<NameKind> {
    classify(&split_words(name))
}

fn classify(words: &[String]) -> Option<NameKind> {
    let spec = &RULES.assignment;
    let last = words.last()?;
    if spec.not_secret_last.contains(last) {
        return None;
    }
    let has = |list: &[String], word: &str| list.iter().any(|w| w == word);
    // The short words (`pass`, `pw`) name a password only at the end (`db_pass`), never
    // inside a name (`needless_pass_by_value`, `pw_hash_rounds`).
    let password_word = |(i, w): (usize, &String)| {
        has(&spec.password_words, w) && (w.len() > 4 || i + 1 == words.len())
    };
    if words.iter().enumerate().any(password_word) {
        return Some(NameKind::Password);
    }
    let key_pair = words
        .windows(2)
        .any(|pair| pair[1] == "key" && has(&spec.key_words, &pair[0]));
    let fused_key = words.iter().any(|w| {
        w.strip_suffix("key")
            .is_some_and(|head| !head.is_empty() && has(&spec.key_words, head))
    });
    if key_pair || fused_key || words.iter().any(|w| has(&spec.secret_words, w)) {
        return Some(NameKind::Secret);
    }
    None
}

/// `accessTokenStorageKey` → access, token, storage, key; `DB_PASSWORD` → db, password;
/// `spring.datasource.password` → spring, datasource, password. Lower case.
pub fn split_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            continue;
        }
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1);
        let boundary = c.is_ascii_uppercase()
            && prev.is_some_and(|p| {
                p.is_ascii_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_ascii_uppercase() && next.is_some_and(|n| n.is_ascii_lowercase()))
            });
        if boundary && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_word_counts_only_as_a_word_of_its_name() {
        let relevant = |text: &str, word: &str| {
            let start = text.to_ascii_lowercase().find(word).unwrap();
            names_with(text, start, start + word.len())
        };
        for (text, word) in [
            ("db_pass = 'x'", "pass"),
            ("apiKey: 1", "key"),
            ("APIKEY=1", "key"),
            ("accessTokenStorageKey = 2", "token"),
            ("sig=abc", "sig"),
            ("spring.datasource.password: x", "password"),
        ] {
            assert!(relevant(text, word), "{text}");
        }
        for (text, word) in [
            ("let path = x;", "pat"),
            ("signal = 3", "sig"),
            ("passport = 'x'", "pass"),
            ("tokenizer = 1", "token"),
        ] {
            assert!(!relevant(text, word), "{text}");
        }
        // Skipped words leave the line's real assignment found.
        let line = r#"path = "/tmp"; db_password = "hunter2hunter2""#;
        assert_eq!(find(line).len(), 1);
    }

    #[test]
    fn names_split_into_words() {
        assert_eq!(
            split_words("accessTokenStorageKey"),
            ["access", "token", "storage", "key"]
        );
        assert_eq!(split_words("DB_PASSWORD"), ["db", "password"]);
        assert_eq!(split_words("XMLHttpToken"), ["xml", "http", "token"]);
        assert_eq!(
            split_words("spring.datasource.password"),
            ["spring", "datasource", "password"]
        );
    }

    #[test]
    fn names_are_classified_by_their_words() {
        for (name, kind) in [
            ("db_password", Some(NameKind::Password)),
            ("PASSWD", Some(NameKind::Password)),
            ("encryption_key", Some(NameKind::Secret)),
            ("signing_salt", Some(NameKind::Secret)),
            ("apiKey", Some(NameKind::Secret)),
            ("APIKEY", Some(NameKind::Secret)),
            ("stripeSecretKey", Some(NameKind::Secret)),
            ("key", None),
            ("primary_key", None),
            ("token_url", None),
            ("password_length", None),
            ("passport", None),
            ("keyboard", None),
            ("tokenizer", None),
            ("needless_pass_by_value", None),
            ("db_pass", Some(NameKind::Password)),
            ("ProgressToken", Some(NameKind::Secret)),
        ] {
            assert_eq!(name_kind(name), kind, "{name}");
        }
    }
}
