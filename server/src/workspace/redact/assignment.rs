//! Values assigned to secret-looking names: `db_password = "…"`, `"api_key": "…"`,
//! `SIGNING_SALT=…`, YAML's `vault_token: …`, `setenv("API_TOKEN", "…")`, a line of
//! `name=value` pairs (an Ansible INI inventory's host line), and a name and its value
//! as attributes (NuGet's and .NET's `<add key="ClearTextPassword" value="…"/>`,
//! Spring's `<property name="password" value="…"/>`).
//!
//! The name decides the test (`[assignment]` in rules.toml): a password-like name's
//! literal is redacted unless it is a placeholder or a reference; any other
//! secret-looking name's literal only when it looks random (randomness.rs). An unquoted
//! value is code as often as it is a secret (`token = tokens.next()`, `password:
//! String`), so it must end its line or statement, and a password-like one must hold a
//! digit, a symbol or mixed case.

use std::ops::Range;
use std::sync::LazyLock;

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

/// A name and its value as XML attributes: `key="…" value="…"`, `name="…" value="…"`.
static ATTRIBUTE_PAIR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"\b(?:key|name)[ \t]*=[ \t]*"(?P<name>[A-Za-z_][A-Za-z0-9_.:-]*)"[ \t]+"#,
        r#"value[ \t]*=[ \t]*"(?P<value>[^"\r\n]*)""#,
    ))
    .expect("valid regex")
});

/// Findings on every line of `text` that holds a name word as a word of a name;
/// `name_words` (from `Rules::hits` of `text`) are where the words stand, by start.
pub fn find(text: &str, name_words: &[Range<usize>]) -> Vec<Found> {
    let mut out = Vec::new();
    let mut next_line = 0;
    for word in name_words {
        if word.start < next_line
            || !names_with(text, word.start, word.end)
            || !may_assign(text, word.end)
        {
            continue;
        }
        let start = text[..word.start].rfind('\n').map_or(0, |i| i + 1);
        let end = text[word.end..]
            .find('\n')
            .map_or(text.len(), |i| word.end + i);
        let line = &text[start..end];
        for caps in ATTRIBUTE_PAIR.captures_iter(line) {
            let value = caps.name("value").expect("a group of the match");
            if let Some(marker) = verdict(&caps["name"], value.as_str(), true) {
                out.push(Found {
                    range: value.start() + start..value.end() + start,
                    marker: marker.to_string(),
                });
            }
        }
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
    // Compared without lower-casing copies: this runs for every name word of a text.
    let among = |list: &[String], word: &str| list.iter().any(|w| w.eq_ignore_ascii_case(word));
    let key = super::rules::ASSIGNMENT_KEY_WORD;
    words(&text[from..to]).any(|w| {
        w.len() >= key.len() && w[w.len() - key.len()..].eq_ignore_ascii_case(key)
            || among(&spec.password_words, w)
            || among(&spec.secret_words, w)
    })
}

/// Whether the name word ending at `end` can stand in an assignment's name: the run of
/// name characters it ends is followed, as `ASSIGNMENT` requires, by a quote and a `]`
/// if any, blanks, and an operator (a comma only after a quote: `judge` takes no
/// other), or by the `value="` of an attribute pair. Only a name holding a name word can be judged secret, so a line where no
/// name word passes holds no finding, and the regex is not run on it (most lines that
/// name a token or a key use it rather than assign it).
fn may_assign(text: &str, end: usize) -> bool {
    let bytes = text.as_bytes();
    let mut at = end;
    let skip = |at: &mut usize, wanted: &dyn Fn(u8) -> bool| {
        while bytes.get(*at).is_some_and(|b| wanted(*b)) {
            *at += 1;
        }
    };
    skip(&mut at, &|b| {
        b.is_ascii_alphanumeric() || b"_.$-".contains(&b)
    });
    let quoted = bytes.get(at).is_some_and(|b| b"\"'`".contains(b));
    at += usize::from(quoted);
    at += usize::from(bytes.get(at) == Some(&b']'));
    skip(&mut at, &|b| b == b' ' || b == b'\t');
    match bytes.get(at) {
        Some(b':' | b'=' | b'?' | b'+' | b'<') => true,
        Some(b',') => quoted,
        Some(b'v') => quoted && bytes[at..].starts_with(b"value"),
        _ => false,
    }
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
    // Judged by its name first: most names are not secret-looking.
    name_kind(name)?;
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
    let marker = verdict(name, text, quoted)?;
    Some(Found {
        range,
        marker: marker.to_string(),
    })
}

/// The marker for `value` assigned to `name`, when it is a secret.
fn verdict(name: &str, value: &str, quoted: bool) -> Option<&'static str> {
    let kind = name_kind(name)?;
    if value.chars().any(char::is_whitespace) || value.starts_with("[redacted") {
        return None;
    }
    let secret = match kind {
        NameKind::Password => password_value(value, quoted, name),
        NameKind::Secret => looks_random(value) && !is_expression(value),
    };
    if !secret {
        return None;
    }
    Some(if kind == NameKind::Password {
        "password"
    } else if name.to_ascii_lowercase().contains("aws") {
        "aws secret key"
    } else {
        "secret"
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
    let trimmed = rest.trim_start_matches([' ', '\t']);
    if trimmed.len() < rest.len() && op == "=" && starts_assignment(trimmed) {
        // The next pair of a `name=value` list: `web1 ansible_user=deploy
        // ansible_ssh_pass=… ansible_become_pass=…`.
        return true;
    }
    let rest = trimmed;
    if rest.is_empty() || rest.starts_with(['\r', '\n', '#', '"', '\'']) || rest.starts_with("//") {
        return true;
    }
    match op {
        ":" => rest.starts_with(['}', ',']) && !value.chars().all(|c| c.is_alphanumeric()),
        _ => rest.starts_with([';', ',', '&', '}', ')']),
    }
}

/// Whether `text` opens with `name=` (a name of letters, digits, `_`, `.`, `-`).
fn starts_assignment(text: &str) -> bool {
    let name_len = text
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || b"_.-".contains(b))
        .count();
    name_len > 0
        && text.as_bytes()[0].is_ascii_alphabetic()
        && text.as_bytes().get(name_len) == Some(&b'=')
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
    words(name).map(str::to_ascii_lowercase).collect()
}

/// The words of `name` as `split_words` cuts them, as they are written: runs of ASCII
/// letters and digits, cut where a lower-case letter or a digit meets an upper-case one
/// (`accessToken`) and before the last capital of a run followed by a lower-case letter
/// (`APIKey` → API, Key).
fn words(name: &str) -> impl Iterator<Item = &str> {
    let bytes = name.as_bytes();
    let starts_word = move |i: usize| {
        let c = bytes[i];
        c.is_ascii_uppercase()
            && i > 0
            && (bytes[i - 1].is_ascii_lowercase()
                || bytes[i - 1].is_ascii_digit()
                || (bytes[i - 1].is_ascii_uppercase()
                    && bytes.get(i + 1).is_some_and(u8::is_ascii_lowercase)))
    };
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() && !bytes[at].is_ascii_alphanumeric() {
            at += 1;
        }
        if at == bytes.len() {
            return None;
        }
        let start = at;
        at += 1;
        while at < bytes.len() && bytes[at].is_ascii_alphanumeric() && !starts_word(at) {
            at += 1;
        }
        Some(&name[start..at])
    })
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
        assert_eq!(find_all(line).len(), 1);
    }

    fn find_all(text: &str) -> Vec<Found> {
        find(text, &RULES.hits(text).name_words)
    }

    /// The regex run over every line and every assignment in it, judged: what `find`
    /// must give with its gates.
    fn find_ungated(line: &str) -> Vec<(std::ops::Range<usize>, String)> {
        let mut out = Vec::new();
        let mut at = 0;
        while let Some(caps) = ASSIGNMENT.captures_at(line, at) {
            match judge(&caps, line) {
                Some(found) => {
                    at = found.range.end;
                    out.push((found.range, found.marker));
                }
                None => at = caps.name("name").map_or(line.len(), |name| name.end()),
            }
        }
        out
    }

    #[test]
    fn the_operator_gate_skips_only_lines_that_assign_no_secret_name() {
        let lines = [
            r#"db_password = "hunter2hunter2""#,
            r#"DB_PASSWORD=Xk9#mQ2$vL"#,
            r#"  "api_key": "9f8e7d6c5b4a39281706f5e4d3c2b1a0","#,
            r#"config["auth_token"] = 'ghx8RkQ2mZ7pW4vN1sT6'"#,
            r#"setenv("API_TOKEN", "ab12CD34ef56GH78ij90");"#,
            r#"vault_token: s.Qw3rTy8uIo1pAs5dFg7hJk9l"#,
            r#"$secret_key := "Zx8Cv6Bn4Mq2Wr9Ty7Ui5Op3""#,
            r#"self.signing_salt ?= "Mn3Bv7Cx1Zq9Wl5Ek2Rj8Ty4""#,
            r#"secret_token <- "Jh7Gf5Ds3Aq1Wz9Xe8Cr6Vt4""#,
            r#"api.key += "Yp4Ol8Ik2Uj6Hn0Tg5Rf9Ed3""#,
            r#"token  :  'Qa2Ws4Ed6Rf8Tg0Yh1Uj3Ik5'"#,
            r#""Default": "Server=db;Password=Ab12!cd34;""#,
            r#"let t = config_token.clone(); path = x"#,
            r#"f(config_token, other_key)"#,
            r#"signal = 3; key"#,
            r#"x = tokens.next(); api_key = "Lk9Jh7Gf5Ds3Aq1Wz9Xe8Cr6""#,
            r#"if api_key == "" { return }"#,
            r#"my-api-key]  = "Rt5Yu7Io9Pa1Sd3Fg5Hj7Kl9""#,
        ];
        let mut with_findings = 0;
        for line in lines {
            let found: Vec<_> = find_all(line)
                .into_iter()
                .map(|f| (f.range, f.marker))
                .collect();
            assert_eq!(found, find_ungated(line), "{line}");
            with_findings += usize::from(!found.is_empty());
        }
        // The lines test the gate both ways: most hold a secret.
        assert!(with_findings >= 12, "{with_findings}");
        // And a name word that is used, not assigned, sends no line through the regex.
        assert!(!may_assign("let t = config_token.clone()", 20));
        assert!(may_assign(r#"x["token"] = 1"#, 8));
        assert!(!may_assign("f(config_token, y)", 14));
        assert!(may_assign(r#"f("token", y)"#, 8));
    }

    #[test]
    fn names_split_into_words() {
        assert_eq!(
            split_words("accessTokenStorageKey"),
            ["access", "token", "storage", "key"]
        );
        assert_eq!(split_words("DB_PASSWORD"), ["db", "password"]);
        assert_eq!(split_words("APIKey2FA"), ["api", "key2", "fa"]);
        assert_eq!(split_words("__été_Token9x"), ["t", "token9x"]);
        assert_eq!(split_words("a-b.c$D"), ["a", "b", "c", "d"]);
        assert_eq!(split_words(""), Vec::<String>::new());
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
