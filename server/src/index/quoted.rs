//! The program's own words: the fixed text of string literals, which a bug report quotes
//! when it pastes what the program printed (`error: unknown option '--x'`, `Too many
//! redirects occurred trying to load URL`, `Failed to open output file: …`). The code
//! that holds the message is usually the code that decided to print it.
//!
//! Index side: each chunk's literals are cut at their format placeholders (`%s`,
//! `%(name)s`, `{}`, `${x}`, escapes) and at words holding a `/` (URLs, paths) into
//! pieces; a literal of one token (a name) gives none, and a piece of three words or
//! more, two of them content words, is kept as one key: its first words, lowercased,
//! joined by `_` (`error_unknown_option`). Question side: every run of three to
//! [`MAX_KEY_WORDS`] words on one line of the question is a key that may be in the
//! index; the ones that are point at the chunks holding them (`search.rs`), which
//! `rank.rs` lifts.
//!
//! Lexical on purpose: it runs in a cold build's first phase, before any file is
//! parsed, and for every language alike. An apostrophe inside a word (`don't`) opens
//! no literal, so comments yield little; what they do yield must still be quoted word
//! for word by a question to count.

use rustc_hash::FxHashSet;

use super::file_kind::FileKind;
use super::query::MAX_QUESTION_BYTES;
use super::tokenize::is_stop_word;
use crate::text::prefix_within;

/// A key holds at most this many words: a report often quotes the start of a message,
/// and each further word is one more lookup per word of the question.
const MAX_KEY_WORDS: usize = 6;
/// Words a key needs: two-word literals are mostly names and settings (`go run`, `bold
/// red`, `audio-source`) that any report of the project repeats, not its messages.
const MIN_KEY_WORDS: usize = 3;
/// Content words (not stop words, two characters or more, a letter among them) a key
/// needs: `it is not` or `instead of the` is in any program's strings and any prose.
const MIN_CONTENT_WORDS: usize = 2;
/// Keys looked up per question: a 20 KB report has thousands of word runs.
const MAX_QUESTION_KEYS: usize = 4096;
/// A literal longer than this on one line is data, not a message.
const MAX_LITERAL_CHARS: usize = 400;

/// Whether a file's string literals are a program's messages. Not in tests, nor in prose
/// and markup (markdown, text, HTML), whose quotes are prose, nor in translation catalogs (gettext's
/// `.po`, XLIFF, `.strings`, anything under a `locale/` or `i18n/` folder), which repeat
/// every message once per language: a hundred copies would divide each message's worth
/// by a hundred, and the code that prints it is what a report is about.
pub fn gives_keys(path: &str) -> bool {
    const NOT_MESSAGES: &[&str] = &[
        ".md",
        ".markdown",
        ".mdx",
        ".rst",
        ".txt",
        ".adoc",
        ".html",
        ".htm",
        ".tex",
        ".po",
        ".pot",
        ".xlf",
        ".xliff",
        ".strings",
        ".resx",
        ".arb",
    ];
    const CATALOG_DIRS: &[&str] = &["locale", "locales", "i18n", "l10n", "translations"];
    // A test's literals are the outputs it expects: copies of the messages again.
    if FileKind::of_path(path) == FileKind::Test {
        return false;
    }
    let lower = path.to_ascii_lowercase();
    let mut dirs = lower.split('/').rev().skip(1);
    !NOT_MESSAGES.iter().any(|ext| lower.ends_with(ext))
        && !dirs.any(|dir| CATALOG_DIRS.contains(&dir))
}

/// The keys of the string literals on `line`, appended to `out` (a space after each:
/// the field's text, see `schema.rs`).
pub fn push_line_keys(line: &str, out: &mut String) {
    // Most lines hold no quote, and most literals are one token (see `key_of`): both are
    // passed over before anything is cut or allocated.
    if !line.bytes().any(|b| matches!(b, b'"' | b'\'' | b'`')) {
        return;
    }
    for literal in literals(line).into_iter().filter(|l| l.contains(' ')) {
        for piece in pieces(literal).into_iter().flat_map(between_addresses) {
            if let Some(key) = key_of(piece) {
                out.push_str(&key);
                out.push(' ');
            }
        }
    }
}

/// The keys a question may quote, each with its number of content words, in the
/// question's order; at most [`MAX_QUESTION_KEYS`], from the part of the question
/// [`super::query::parse`] reads.
pub fn question_keys(question: &str) -> Vec<(String, usize)> {
    let question = prefix_within(question, MAX_QUESTION_BYTES);
    let mut seen: FxHashSet<String> = FxHashSet::default();
    let mut keys = Vec::new();
    for line in question.lines() {
        let words = lower_words(line);
        for start in 0..words.len() {
            for end in (start + MIN_KEY_WORDS)..=(start + MAX_KEY_WORDS).min(words.len()) {
                let run = &words[start..end];
                let content = content_words(run);
                if content < MIN_CONTENT_WORDS {
                    continue;
                }
                let key = run.join("_");
                if seen.insert(key.clone()) {
                    keys.push((key, content));
                }
                if keys.len() == MAX_QUESTION_KEYS {
                    return keys;
                }
            }
        }
    }
    keys
}

/// How much a quoted key says, 0–1: a message of three content words or more says all
/// it can; of two (`no such option`), two thirds.
pub fn key_strength(content_words: usize) -> f32 {
    (content_words as f32 / 3.0).min(1.0)
}

/// The texts between the quotes of the string literals on a line: `"…"`, `'…'` and
/// `` `…` ``, with backslash escapes and string prefixes (`f"…"`, `r'…'`); an apostrophe
/// inside a word (`don't`, `it's`) opens none, and a literal left open at the end of the
/// line is dropped.
fn literals(line: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let quote = bytes[i];
        let opens = match quote {
            b'"' | b'`' => true,
            b'\'' => !after_word(&bytes[..i]),
            _ => false,
        };
        if !opens {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut j = start;
        let mut closed = None;
        while j < bytes.len() {
            match bytes[j] {
                b'\\' => j += 2,
                b if b == quote => {
                    closed = Some(j);
                    break;
                }
                _ => j += 1,
            }
        }
        match closed {
            Some(end) => {
                // Quotes are ASCII, so both ends are char boundaries.
                if end - start <= MAX_LITERAL_CHARS {
                    found.push(&line[start..end]);
                }
                i = end + 1;
            }
            None => break,
        }
    }
    found
}

/// Whether an apostrophe after `before` is inside a word (`don't`), not the quote of a
/// literal: a letter or digit before it that is not a string prefix (`f'…'`, `rb'…'`).
fn after_word(before: &[u8]) -> bool {
    let word = before
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_alphanumeric() || **b >= 0x80)
        .count();
    let prefix = &before[before.len() - word..];
    word > 0 && !(word <= 2 && prefix.iter().all(|b| b"fFrRbBuU".contains(b)))
}

/// A literal cut at what a program fills in or escapes: `%s`, `%-10.2f`, `%[1]q`,
/// `%(name)s`, `{}`, `{name}`, `${x}`, `\n`. The words on either side never meet in its
/// output.
fn pieces(literal: &str) -> Vec<&str> {
    let bytes = literal.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    let mut i = 0;
    while i < bytes.len() {
        let skip = match bytes[i] {
            b'%' => {
                let mut j = i + 1;
                // Python's `%(name)s`.
                if bytes.get(j) == Some(&b'(') {
                    j = literal[j..]
                        .find(')')
                        .map_or(bytes.len(), |close| j + close + 1);
                }
                // printf's flags, width, precision and Go's argument index; not the
                // space flag, which would read "50% of" as a placeholder.
                while j < bytes.len() && b"-+#0123456789.*[]".contains(&bytes[j]) {
                    j += 1;
                }
                (j < bytes.len() && bytes[j].is_ascii_alphabetic()).then_some(j + 1)
            }
            b'{' => literal[i..].find('}').map(|close| i + close + 1),
            b'\\' => Some((i + 2).min(bytes.len())),
            _ => None,
        };
        match skip {
            Some(next) => {
                out.push(&literal[from..i]);
                // A placeholder or escape is ASCII up to `next`, or ends at a `}`.
                let mut next = next;
                while !literal.is_char_boundary(next) {
                    next += 1;
                }
                from = next;
                i = next;
            }
            None => i += 1,
        }
    }
    out.push(&literal[from..]);
    out
}

/// A piece's key: its first [`MAX_KEY_WORDS`] words, when there are enough of them and
/// enough content words among them.
fn key_of(piece: &str) -> Option<String> {
    // A message has spaces: one token is a name, a module path (`django.db.models`), a
    // CSS class (`w-panel-header`) or an identifier, and most literals are one token.
    piece.split_whitespace().nth(1)?;
    let mut words = lower_words(piece);
    words.truncate(MAX_KEY_WORDS);
    (words.len() >= MIN_KEY_WORDS && content_words(&words) >= MIN_CONTENT_WORDS)
        .then(|| words.join("_"))
}

/// A piece cut at its addresses: a word with a `/` (a URL, a path) is mostly the user's
/// own or differs on their machine; the words around it are the message.
fn between_addresses(piece: &str) -> Vec<&str> {
    let mut runs = Vec::new();
    let mut from = 0;
    for token in piece.split_whitespace().filter(|t| t.contains('/')) {
        // `token` is a slice of `piece`: its offset is the pointers' difference.
        let at = token.as_ptr() as usize - piece.as_ptr() as usize;
        runs.push(&piece[from..at]);
        from = at + token.len();
    }
    runs.push(&piece[from..]);
    runs
}

/// Maximal runs of letters and digits, lowercased (`_` splits: `shell_complete` is
/// printed and quoted as two words as often as one).
fn lower_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn content_words(words: &[String]) -> usize {
    words
        .iter()
        .filter(|w| {
            w.chars().count() >= 2 && w.chars().any(char::is_alphabetic) && !is_stop_word(w)
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(line: &str) -> Vec<String> {
        let mut out = String::new();
        push_line_keys(line, &mut out);
        out.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn a_message_is_cut_at_its_placeholders() {
        assert_eq!(
            keys(r#"    raise UsageError(f"No such option: {name}. Did you mean {hint}?")"#),
            ["no_such_option"]
        );
        assert_eq!(
            keys(r#"fmt.Errorf("Group id '%s' is not defined for subcommand '%s'", id, cmd)"#),
            ["is_not_defined_for_subcommand"]
        );
        assert_eq!(
            keys(r#"LOGE("Could not open output file:\n%s", path);"#),
            ["could_not_open_output_file"]
        );
        assert_eq!(
            keys(
                "throw new IOException(\"Too many redirects occurred trying to load URL \" + url);"
            ),
            ["too_many_redirects_occurred_trying_to"]
        );
    }

    #[test]
    fn prose_and_translation_catalogs_give_no_keys() {
        for path in [
            "src/tally/rows.py",
            "app/src/cli.c",
            "lib/Locale.java",
            "src/locale.rs",
        ] {
            assert!(gives_keys(path), "{path}");
        }
        for path in [
            "README.md",
            "docs/usage.rst",
            "wagtail/locale/fr/LC_MESSAGES/django.po",
            "po/messages.pot",
            "src/i18n/en.json",
            "public/locales/de/common.json",
            "Resources/Localizable.strings",
            "tests/test_cli.py",
            "command_test.go",
        ] {
            assert!(!gives_keys(path), "{path}");
        }
    }

    #[test]
    fn named_placeholders_and_addresses_cut_a_message_too() {
        assert_eq!(
            keys(
                r#"_("This workflow is in progress on %(count)d page/snippet. Disabling this workflow will cancel moderation")"#
            ),
            [
                "this_workflow_is_in_progress_on",
                "disabling_this_workflow_will_cancel_moderation"
            ]
        );
        assert_eq!(
            keys(r#"die("cannot open /etc/app/config.toml for reading, check permissions")"#),
            // "cannot open" is two words: a name more often than a message.
            ["for_reading_check_permissions"]
        );
        assert!(keys(r#"let s = "- [Chapter 1](./chapter_1.md)";"#).is_empty());
        // One token is a name, not a message, however many words it joins.
        assert!(
            keys(r#"apps = ["django.contrib.admin.sites", "w-panel-header-title"]"#).is_empty()
        );
    }

    #[test]
    fn apostrophes_short_literals_and_addresses_make_no_key() {
        // `don't` opens no literal; two words are a name, one content word is filler.
        assert!(keys("// don't do this, it's what 'they' want").is_empty());
        assert!(keys(r#"if x == "bold red" || y == "it is not" || z == "" {"#).is_empty());
        assert!(keys(r#"url = "https://github.com/owner/project/issues/new""#).is_empty());
        // A literal left open on the line is not one.
        assert!(keys(r#"let s = "unterminated message text"#).is_empty());
        assert_eq!(keys("s = 'white on blue'"), ["white_on_blue"]);
        assert!(keys("s = f'white on {color}'").is_empty());
        assert_eq!(keys("s = rb'white on blue'"), ["white_on_blue"]);
    }

    #[test]
    fn a_question_yields_the_runs_of_words_on_each_line() {
        let keys: Vec<String> = question_keys("error: unknown option '--verbose'\nTry again")
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert!(
            keys.contains(&"error_unknown_option".to_string()),
            "{keys:?}"
        );
        assert!(
            keys.contains(&"unknown_option_verbose".to_string()),
            "{keys:?}"
        );
        // Runs do not cross lines, and need three words, two of them content words.
        assert!(!keys.iter().any(|k| k.contains("verbose_try")), "{keys:?}");
        assert!(!keys.contains(&"error_unknown".to_string()), "{keys:?}");
        let runs: Vec<(String, usize)> = question_keys("'x' is not a valid choice");
        assert!(
            runs.contains(&("a_valid_choice".to_string(), 2)),
            "{runs:?}"
        );
        assert!(runs.iter().all(|(_, c)| *c >= 2), "{runs:?}");
        assert!((key_strength(2) - 2.0 / 3.0).abs() < 1e-6 && key_strength(5) == 1.0);
    }

    #[test]
    fn a_huge_question_yields_a_bounded_number_of_keys() {
        let huge = "Error: cannot read the config file\n".repeat(100_000);
        let keys = question_keys(&huge);
        // Every line is the same: its runs once each.
        assert!(keys.len() < 20, "{}", keys.len());
        let words: String = (0..200_000).map(|i| format!("word{i} ")).collect();
        assert_eq!(question_keys(&words).len(), MAX_QUESTION_KEYS);
    }

    #[test]
    fn non_ascii_text_is_cut_at_char_boundaries() {
        // One word on either side of the placeholder: no key.
        assert!(keys("msg = \"Größe {n} überschritten\"").is_empty());
        assert_eq!(
            keys("msg = \"Die Größe ist überschritten: {n}\""),
            ["die_größe_ist_überschritten"]
        );
        assert!(keys("s = \"\\é\"").is_empty());
        // A percent sign in prose is not a placeholder.
        assert_eq!(
            keys("help = \"runs 50% of the slow tests\""),
            ["runs_50_of_the_slow_tests"]
        );
    }
}
