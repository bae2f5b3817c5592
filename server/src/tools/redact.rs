//! Secret redaction: private key blocks and credential-shaped text in what the tools
//! return are replaced by a marker (`[redacted: private key]`) before it reaches the
//! model, the answer or a log.
//!
//! Shapes: PEM/OpenSSH/PGP private key blocks (also `\n`-escaped inside JSON strings);
//! AWS access key ids (`AKIA…`, `ASIA…`); GitHub tokens (`ghp_`, `gho_`, `ghu_`, `ghs_`,
//! `ghr_`, `github_pat_`); Anthropic (`sk-ant-…`) and OpenAI (`sk-…`, `sk-proj-…`) keys;
//! Slack tokens (`xox[baprs]-…`); and the value of an assignment to a name like
//! `password`, `secret`, `token`, `api_key` when the value is long and looks random.
//! Line structure is kept (a key block's lines are emptied, not removed), so line
//! numbers in a tool's output stay right. Everything is line-local but the key block.
//!
//! False positives are counted over the retrieval eval's corpora (our dependencies'
//! sources) and the fixture workspace: see `tests/redact_corpus.rs` and the README.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

const PRIVATE_KEY: &str = "[redacted: private key]";

static BEGIN_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----").expect("valid regex")
});

static END_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----").expect("valid regex")
});

/// A line of a key block's body: base64, or an RFC 1421 header (`Proc-Type: …`).
static KEY_BODY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z0-9+/=]{8,}|(?:Proc-Type|DEK-Info|Comment):.*").expect("valid regex")
});

/// Key material right after a BEGIN marker: without it the marker is only text (a
/// parser's constant, an empty test block).
static KEY_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\\r)?(?:\\n)?[ \t]*(?:[A-Za-z0-9+/=]{16,}|Proc-Type:)").expect("valid regex")
});

/// The token shapes, one alternative each (leftmost wins; at one position the first
/// listed: Anthropic before OpenAI).
static TOKENS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?P<aws>\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b)",
        r"|(?P<github>\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})\b)",
        r"|(?P<anthropic>\bsk-ant-[A-Za-z0-9_-]{20,})",
        r"|(?P<openai>\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})",
        r"|(?P<slack>\bxox[baprs]-[A-Za-z0-9-]{10,})",
    ))
    .expect("valid regex")
});

/// The words of a secret's name, to find the few lines worth matching `ASSIGNMENT` on
/// (a literal search: `ASSIGNMENT` over whole files is slow).
static SECRET_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i:passw(?:or)?d|secret|token|api[_-]?key|access[_-]?key|auth[_-]?key|private[_-]?key)",
    )
    .expect("valid regex")
});

/// The assignment of a secret-named variable: the name, an optional closing quote, the
/// operator, then the value (quoted or not). Run after `TOKENS`, whose markers it skips.
static ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?P<name>(?i:\b[a-z0-9_-]*(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|auth[_-]?key|private[_-]?key)[a-z0-9_-]*))",
        r#"["']?[ \t]*(?P<op>:=|=>|:|=)[ \t]*(?P<quote>["']?)(?P<value>[A-Za-z0-9+/=_\-.~!@#$%^&*]{16,})"#,
    ))
    .expect("valid regex")
});

/// `text` with secrets replaced by markers (borrowed when there are none).
pub fn redact(text: &str) -> Cow<'_, str> {
    let keys = redact_key_blocks(text);
    let tokens = replace(&keys, &TOKENS, token);
    let assigned = redact_assignments(&tokens);
    if let Cow::Owned(out) = assigned {
        return Cow::Owned(out);
    }
    if let Cow::Owned(out) = tokens {
        return Cow::Owned(out);
    }
    keys
}

/// Private key blocks: the BEGIN marker becomes the marker, the body lines and the END
/// marker are removed from their lines (whatever precedes them there, such as a line
/// number, stays).
fn redact_key_blocks(text: &str) -> Cow<'_, str> {
    if !text.contains("PRIVATE KEY") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut in_block = false;
    let mut changed = false;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (index, line) in lines.iter().copied().enumerate() {
        let (content, newline) = match line.strip_suffix('\n') {
            Some(content) => (content, "\n"),
            None => (line, ""),
        };
        if in_block {
            if let Some(end) = END_KEY.find(content) {
                out.push_str(&content[..end.start()]);
                out.push_str(&content[end.end()..]);
                in_block = false;
            } else if let Some(body) = KEY_BODY.find_iter(content).last() {
                // The last run: a prefix such as `keys/dev.pem:2: ` stays.
                out.push_str(&content[..body.start()]);
                out.push_str(&content[body.end()..]);
            } else {
                // Not a key line: the block was cut short (a partial read).
                in_block = false;
                out.push_str(content);
            }
            out.push_str(newline);
            changed = true;
            continue;
        }
        let Some(begin) = BEGIN_KEY.find(content) else {
            out.push_str(line);
            continue;
        };
        let rest = &content[begin.end()..];
        let escaped = KEY_START.is_match(rest) && rest.starts_with('\\');
        let next_is_key = rest.trim().is_empty()
            && lines.get(index + 1).is_some_and(|next| {
                // Past a prefix such as a line number or `path:line: `.
                KEY_BODY
                    .find_iter(next)
                    .last()
                    .is_some_and(|body| KEY_START.is_match(&next[body.start()..]))
            });
        if escaped {
            // One line (a JSON string with `\n` escapes), up to its END or, cut short,
            // to the end of the line.
            out.push_str(&content[..begin.start()]);
            out.push_str(PRIVATE_KEY);
            if let Some(end) = END_KEY.find(rest) {
                out.push_str(&rest[end.end()..]);
            }
            changed = true;
        } else if next_is_key {
            out.push_str(&content[..begin.start()]);
            out.push_str(PRIVATE_KEY);
            in_block = true;
            changed = true;
        } else {
            // The marker as text (a PEM parser's constant, an empty block): not a key.
            out.push_str(content);
        }
        out.push_str(newline);
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(text)
    }
}

/// `ASSIGNMENT` on each line that holds a secret word.
fn redact_assignments(text: &str) -> Cow<'_, str> {
    let mut out = String::new();
    let mut copied = 0;
    let mut changed = false;
    for word in SECRET_WORD.find_iter(text) {
        if word.start() < copied {
            continue;
        }
        let start = text[..word.start()].rfind('\n').map_or(0, |i| i + 1);
        let end = text[word.end()..]
            .find('\n')
            .map_or(text.len(), |i| word.end() + i);
        let line = &text[start..end];
        if let Cow::Owned(redacted) = replace(line, &ASSIGNMENT, assigned_secret) {
            out.push_str(&text[copied..start]);
            out.push_str(&redacted);
            changed = true;
        } else {
            out.push_str(&text[copied..end]);
        }
        copied = end;
    }
    if !changed {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

type Found = (std::ops::Range<usize>, &'static str);

/// Replaces each match that `judge` accepts (the span it names) with its marker.
fn replace<'t>(
    text: &'t str,
    regex: &Regex,
    judge: fn(&Captures<'_>, &str) -> Option<Found>,
) -> Cow<'t, str> {
    let mut out = String::new();
    let mut copied = 0;
    for caps in regex.captures_iter(text) {
        let Some((range, marker)) = judge(&caps, text) else {
            continue;
        };
        out.push_str(&text[copied..range.start]);
        out.push_str(marker);
        copied = range.end;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

fn token(caps: &Captures<'_>, _: &str) -> Option<Found> {
    let whole = caps.get(0)?;
    let kind = |name: &str| caps.name(name).is_some();
    let marker = if kind("aws") {
        "[redacted: aws access key]"
    } else if kind("github") {
        "[redacted: github token]"
    } else if kind("anthropic") && looks_random(whole.as_str()) {
        "[redacted: anthropic key]"
    } else if kind("openai") && looks_random(whole.as_str()) {
        "[redacted: openai key]"
    } else if kind("slack") && whole.as_str().bytes().any(|b| b.is_ascii_digit()) {
        "[redacted: slack token]"
    } else {
        return None;
    };
    Some((whole.range(), marker))
}

/// The value of a secret-named assignment, when it is a literal that looks random.
fn assigned_secret(caps: &Captures<'_>, text: &str) -> Option<Found> {
    let name = caps.name("name")?.as_str().to_ascii_lowercase();
    let value = caps.name("value")?;
    let quote = &caps["quote"];
    if !quote.is_empty() {
        // The value must be the whole string literal.
        if !text[value.end()..].starts_with(quote) {
            return None;
        }
    } else {
        // In code an unquoted value is an expression (`token = tokens.next()`) or a type
        // (`key: KeyType,`): only a value that ends its line (`KEY=value`, YAML's
        // `key: value`) counts, after `=` also one ending a statement, never a path.
        let rest = text[value.end()..].trim_start_matches([' ', '\t']);
        let ends = rest.is_empty() || rest.starts_with(['\r', '\n', '#']);
        let ends_statement = &caps["op"] != ":" && rest.starts_with([',', ';']);
        if !(ends || ends_statement) || value.as_str().contains('.') {
            return None;
        }
    }
    if !looks_random(value.as_str()) {
        return None;
    }
    let marker = if name.contains("aws") {
        "[redacted: aws secret key]"
    } else if name.contains("password") || name.contains("passwd") {
        "[redacted: password]"
    } else {
        "[redacted: secret]"
    };
    Some((value.range(), marker))
}

/// Random-looking: letters and digits mixed, not a word-like identifier. A key has
/// both, and upper and lower case or a long run without separators.
fn looks_random(value: &str) -> bool {
    let digits = value.bytes().filter(u8::is_ascii_digit).count();
    let upper = value.bytes().filter(u8::is_ascii_uppercase).count();
    let lower = value.bytes().filter(u8::is_ascii_lowercase).count();
    if digits == 0 || upper + lower == 0 {
        return false;
    }
    let longest_alnum_run = value
        .split(|c: char| !c.is_ascii_alphanumeric())
        .map(str::len)
        .max()
        .unwrap_or(0);
    // `SOME_CONSTANT_NAME_2` or `my-token-name-v1` are names, not secrets.
    longest_alnum_run >= 12 && (upper > 0 && lower > 0 || longest_alnum_run >= 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PEM: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi8\nZ1vF3p0qQ2x9Yw==\n-----END RSA PRIVATE KEY-----\n";

    #[test]
    fn secrets_are_replaced_by_markers() {
        let cases: &[(&str, &str)] = &[
            (PEM, "[redacted: private key]\n\n\n\n"),
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----",
                "[redacted: private key]\n\n",
            ),
            (
                r#"{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"}"#,
                r#"{"private_key": "[redacted: private key]\n"}"#,
            ),
            ("key = AKIAIOSFODNN7EXAMPLE", "key = [redacted: aws access key]"),
            ("ASIAY34FZKBOKMUTVV7A.", "[redacted: aws access key]."),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "aws_secret_access_key = [redacted: aws secret key]",
            ),
            (
                "GITHUB_TOKEN=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",
                "GITHUB_TOKEN=[redacted: github token]",
            ),
            (
                "gho_16C7e42F292c6912E7710c838347Ae178B4a ghs_16C7e42F292c6912E7710c838347Ae178B4a",
                "[redacted: github token] [redacted: github token]",
            ),
            (
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX",
                "[redacted: github token]",
            ),
            (
                "client = OpenAI(api_key=\"sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXyZ0aBcD\")",
                "client = OpenAI(api_key=\"[redacted: openai key]\")",
            ),
            (
                "sk-T3BlbkFJabc123DEF456ghi789JKL012mno345PQR",
                "[redacted: openai key]",
            ),
            (
                "ANTHROPIC_API_KEY=sk-ant-api03-Xy9_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789-AA",
                "ANTHROPIC_API_KEY=[redacted: anthropic key]",
            ),
            (
                "token: xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
                "token: [redacted: slack token]",
            ),
            (
                "DB_PASSWORD=hunter2hunter2Xy9Q",
                "DB_PASSWORD=[redacted: password]",
            ),
            (
                r#"  "api_key": "a8F5f167f44f4964e6c998dee827110c","#,
                r#"  "api_key": "[redacted: secret]","#,
            ),
            (
                "secret: 'Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Ng'",
                "secret: '[redacted: secret]'",
            ),
            (
                "let client_secret = \"9f8e7d6c5b4a39281706f5e4d3c2b1a0\";",
                "let client_secret = \"[redacted: secret]\";",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(redact(input), *expected, "{input}");
        }
    }

    #[test]
    fn ordinary_code_is_left_alone() {
        for code in [
            "let token = tokens.next_token_or_eof2();",
            "token_type = TokenType::IdentifierWithVeryLongName",
            "max_tokens: 4096,",
            "password: String,",
            "const BEGIN: &str = \"-----BEGIN PRIVATE KEY-----\";",
            "if line.starts_with(\"-----BEGIN RSA PRIVATE KEY-----\") {",
            "let pem = b\"-----BEGIN RSA PRIVATE KEY-----\\n\\\n    -----END RSA PRIVATE KEY-----\\n\";",
            "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----\n",
            "let secret = compute_secret(&key_material_2024);",
            "api_key: Option<ApiKey>,",
            "secret_key_base = \"${SECRET_KEY_BASE}\"",
            "token = \"EXAMPLE_PLACEHOLDER_TOKEN_VALUE\"",
            "sk-fading-circle-animation-keyframes",
            "TOKEN_KIND_IDENTIFIER_2 = 7",
            "refresh_token_expiry_seconds = 3600",
            "checksum = \"88f3f8ec0dcfdda4d908bad2882fe0f89cf2b606e78d16491323e918dfa95765\"",
            "let access_key = self.credentials.access_key_id_v2;",
            "AKIA", // too short to be a key id
            "pub const PrivateKeyAttestMask: X509CertificateTemplatePrivateKeyFlag = 12288i32;",
            "fn f(secret: X509CertificateSecretType2, token: Tok3nTypeWithDigits) {}",
        ] {
            assert_eq!(redact(code), code, "{code}");
        }
    }

    #[test]
    fn line_numbers_before_key_lines_are_kept() {
        let numbered: String = PEM
            .lines()
            .enumerate()
            .map(|(i, line)| format!("{}\t{line}\n", i + 10))
            .collect();
        assert_eq!(
            redact(&numbered),
            "10\t[redacted: private key]\n11\t\n12\t\n13\t\n"
        );
        let searched = "keys/dev.pem:1: -----BEGIN PRIVATE KEY-----\nkeys/dev.pem:2: MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n";
        assert_eq!(
            redact(searched),
            "keys/dev.pem:1: [redacted: private key]\nkeys/dev.pem:2: \n"
        );
    }

    #[test]
    fn a_key_block_cut_short_ends_at_the_first_line_that_is_not_key() {
        let cut = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nfn main() {}\n";
        assert_eq!(redact(cut), "[redacted: private key]\n\nfn main() {}\n");
    }

    #[test]
    fn text_without_secrets_is_borrowed() {
        assert!(matches!(redact("fn main() {}\n"), Cow::Borrowed(_)));
    }
}
