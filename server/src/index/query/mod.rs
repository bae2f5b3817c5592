//! Reading a question as people write it: the identifiers, file paths, traceback frames,
//! error names and code blocks in it, apart from the prose around them, turned into
//! weighted search terms.
//!
//! A one-line "where is X handled?" is all prose; a bug report is a title, some prose,
//! a code block and a traceback, 2–20 KB in all. Treating both as a bag of words drowns
//! the report's few decisive names (`HelpFormatter.write_usage`, `File "…/types.py",
//! line 865, in convert`) in its common words. So the question is parsed first:
//! - code blocks (fenced, or indented after a blank line) are split from the prose;
//! - traceback frames of Python, Java/Kotlin, JavaScript, Go and Rust, and `path:line`
//!   mentions, give file paths (with lines) and function names (`frames.rs`);
//! - code-shaped words (`CamelCase`, `snake_case`, `a.b.c`, `a::b`, `Foo#bar`, `call()`,
//!   anything in backticks) are identifiers; `…Error`/`…Exception` names are errors;
//! - what the question is *about* beyond source code (tests, docs, examples, benchmarks,
//!   changes) is decided from explicit signals, not from a word in passing.
//!
//! Every term then carries a weight by where it was found: identifiers named in the
//! prose or a frame count most, code-block identifiers less, plain prose words 1, plain
//! words inside code least. `search.rs` keeps the most valuable terms (weight × rarity)
//! up to a cap, so a long report is searched by its names, not its filler.

use crate::text::prefix_within;
use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

mod about;
mod frames;
mod terms;
mod verb;

pub use about::About;
pub use terms::weighted_terms;

use super::tokenize::{split_identifier, stem};
use about::{about, content_words};
use frames::{frames, FILE_NAME, URL};

/// Longer questions are cut here before parsing: what follows is logs, not a question.
pub const MAX_QUESTION_BYTES: usize = 32 * 1024;
/// Distinct identifiers kept (first seen first); a pasted log must not flood the query.
const MAX_IDENTIFIERS: usize = 300;
const MAX_PATHS: usize = 40;

/// Where an identifier or word was found, which sets its weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// A plain word inside a code block (`import`, `print`, a local variable).
    CodeWord,
    /// A plain word of the prose.
    Prose,
    /// A code-shaped identifier inside a code block.
    Code,
    /// A code-shaped word in the prose, or anything in backticks.
    Named,
    /// A function or class named by a traceback frame.
    Frame,
}

impl Source {
    /// The weight of the identifier's whole-name term; its parts get half.
    fn weight(self) -> f32 {
        match self {
            Source::CodeWord => 0.5,
            Source::Prose => 1.0,
            Source::Code => 1.5,
            Source::Named => 3.0,
            Source::Frame => 3.0,
        }
    }
}

/// An identifier the question names: one segment of what was written (`Attribute.getValidKey`
/// gives `Attribute` and `getValidKey`).
#[derive(Debug, Clone, PartialEq)]
pub struct Identifier {
    pub name: String,
    pub source: Source,
    /// How often it was written.
    pub count: u32,
}

/// A file path the question mentions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRef {
    /// `/`-separated, without scheme, host, drive letter, `./` or a leading `/`
    /// (`site-packages/click/types.py`, `org/jsoup/parser/Tokeniser.java`).
    pub path: String,
    /// 1-based, when given.
    pub line: Option<u32>,
    /// Only seen inside a link: a reference the report gives (a docs page, a test
    /// resource), not what it is about.
    pub linked: bool,
}

impl PathRef {
    /// The file name (last component).
    pub fn file_name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

/// Words that open a question without its question mark ("how are retries spaced").
/// Not "when": a change's message opens with it as often ("When the cache is full, …").
const QUESTION_OPENERS: &[&str] = &["where", "how", "what", "which", "why"];

/// A parsed question.
#[derive(Debug, Default, Clone)]
pub struct ParsedQuestion {
    /// Deduplicated by name, in first-seen order, each with its strongest source.
    pub identifiers: Vec<Identifier>,
    /// Deduplicated, in first-seen order.
    pub paths: Vec<PathRef>,
    /// Error and exception names (`KeyError`, `NullPointerException`, `E0308`).
    pub errors: Vec<String>,
    /// The code blocks' text.
    pub code_blocks: Vec<String>,
    /// The text outside code blocks, URLs and frame lines.
    pub prose: String,
    /// Content words (not stop words) of the prose.
    pub prose_words: usize,
    /// From the prose: a question mostly about it. (A path of that kind says so too,
    /// but only when the workspace has it: the ranker checks that against `paths`.)
    pub about: About,
    /// Identifiers shaped like test names (`test_parse`, `TestParser`); the ranker
    /// counts the question as about tests when one of them is defined in a test.
    pub test_names: Vec<String>,
    /// The action a short question asks about ("where is the token *checked*"), as an
    /// index term (`verb.rs`).
    pub verb: Option<String>,
}

impl ParsedQuestion {
    /// A bug report rather than a one-line question: the plain-words name signal
    /// (a definition named only with the question's words) means little there.
    pub fn is_long(&self) -> bool {
        self.prose_words > 40 || !self.code_blocks.is_empty()
    }

    /// A question asked of the code ("where is the token checked?", "how are retries
    /// spaced"), not a report or a change's message: short, and either ending in a
    /// question mark or opening with a question word. The learned ranker was trained on
    /// messages and doc comments, so it leaves these to the hand-set order.
    pub fn is_question(&self) -> bool {
        if self.is_long() {
            return false;
        }
        let prose = self.prose.trim();
        let first = prose
            .split_whitespace()
            .next()
            .map(|word| {
                word.trim_matches(|c: char| !c.is_alphanumeric())
                    .to_lowercase()
            })
            .unwrap_or_default();
        prose.ends_with('?') || QUESTION_OPENERS.contains(&first.as_str())
    }
}

/// A code-ish token: segments joined by `.`, `::`, `#` or `->`, maybe called.
static TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z_$][\w$]*(?:(?:\.|::|#|->)[A-Za-z_$][\w$]*)*(\(\)?)?").unwrap()
});
static INLINE_CODE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"`([^`\n]+)`").unwrap());
/// Rust's and similar compilers' error codes.
static ERROR_CODE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b[EW]\d{4}\b").unwrap());

/// Parses a question (cut at [`MAX_QUESTION_BYTES`]).
pub fn parse(question: &str) -> ParsedQuestion {
    let question = prefix_within(question, MAX_QUESTION_BYTES);
    let mut parsed = ParsedQuestion::default();
    let mut names = Names::default();
    let (prose_lines, code_blocks) = split_code_blocks(question);

    // Frames and paths, wherever they are.
    let mut frame_lines = vec![false; prose_lines.len()];
    for (i, line) in prose_lines.iter().enumerate() {
        frame_lines[i] = frames(line, &mut parsed.paths, &mut names);
    }
    // Code blocks without their frame lines, whose words are paths and line numbers.
    let mut code_text = String::new();
    for block in &code_blocks {
        for line in block.lines() {
            if !frames(line, &mut parsed.paths, &mut names) {
                code_text.push_str(line);
                code_text.push('\n');
            }
        }
    }

    // The prose: without frame lines and URLs (whose paths were kept above).
    let mut prose = String::new();
    for (line, is_frame) in prose_lines.iter().zip(&frame_lines) {
        if !is_frame {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    let prose = URL.replace_all(&prose, " ").into_owned();
    for m in INLINE_CODE.captures_iter(&prose) {
        tokens(&m[1], true, Source::Named, &mut names);
    }
    let outside_backticks = INLINE_CODE.replace_all(&prose, " ");
    tokens(&outside_backticks, false, Source::Named, &mut names);
    tokens(&code_text, false, Source::Code, &mut names);

    for m in ERROR_CODE.find_iter(question) {
        push_unique(&mut parsed.errors, m.as_str());
    }
    for identifier in &names.list {
        if is_error_name(&identifier.name) {
            push_unique(&mut parsed.errors, &identifier.name);
        }
        if is_test_name(&identifier.name) {
            push_unique(&mut parsed.test_names, &identifier.name);
        }
    }
    parsed.paths.truncate(MAX_PATHS);
    parsed.identifiers = names.list;
    parsed.prose_words = content_words(&outside_backticks).len();
    parsed.about = about(&outside_backticks);
    parsed.verb = verb::main_verb(&prose);
    parsed.prose = prose;
    parsed.code_blocks = code_blocks;
    parsed
}

/// The key two names share when they are the same identifier however they are written
/// (`write_usage`, `writeUsage` and `WriteUsage` → `writusag`): their stemmed parts,
/// glued. `None` for a name with no indexable part.
pub fn name_key(name: &str) -> Option<String> {
    let mut parts = Vec::new();
    split_identifier(name, &mut parts);
    let key: String = parts.iter().map(|p| stem(p)).collect();
    (key.len() >= 2).then_some(key)
}

/// Identifiers gathered while parsing, deduplicated.
#[derive(Default)]
pub(super) struct Names {
    list: Vec<Identifier>,
    /// Name → position in `list`.
    seen: HashMap<String, usize>,
}

impl Names {
    pub(super) fn add(&mut self, name: &str, source: Source) {
        let name = name.trim_matches('$');
        if name.len() < 2 || name.len() > 64 || name.chars().all(|c| c.is_ascii_digit()) {
            return;
        }
        if let Some(&i) = self.seen.get(name) {
            let existing = &mut self.list[i];
            existing.count += 1;
            existing.source = existing.source.max(source);
        } else if self.list.len() < MAX_IDENTIFIERS {
            self.seen.insert(name.to_string(), self.list.len());
            self.list.push(Identifier {
                name: name.to_string(),
                source,
                count: 1,
            });
        }
    }
}

/// The prose lines (code block lines left out) and the code blocks: fenced (```, ~~~)
/// or indented by four spaces or a tab after a blank line.
fn split_code_blocks(text: &str) -> (Vec<&str>, Vec<String>) {
    let mut prose = Vec::new();
    let mut blocks: Vec<String> = Vec::new();
    let mut fence: Option<&str> = None;
    let mut current = String::new();
    let mut indented = false;
    let mut previous_blank = true;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(marker) = fence {
            if trimmed.starts_with(marker) && trimmed.trim_start_matches(marker).trim().is_empty() {
                fence = None;
                blocks.push(std::mem::take(&mut current));
            } else {
                current.push_str(line);
                current.push('\n');
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            if indented {
                blocks.push(std::mem::take(&mut current));
                indented = false;
            }
            fence = Some(if trimmed.starts_with("```") {
                "```"
            } else {
                "~~~"
            });
            continue;
        }
        let is_indented = line.starts_with("    ") || line.starts_with('\t');
        if indented {
            if is_indented || line.trim().is_empty() {
                current.push_str(line);
                current.push('\n');
                continue;
            }
            blocks.push(std::mem::take(&mut current));
            indented = false;
        } else if is_indented && previous_blank && !line.trim().is_empty() {
            indented = true;
            current.push_str(line);
            current.push('\n');
            continue;
        }
        previous_blank = line.trim().is_empty();
        prose.push(line);
    }
    // An unclosed fence runs to the end, as Markdown renders it.
    if !current.trim().is_empty() {
        blocks.push(current);
    }
    blocks.retain(|b| !b.trim().is_empty());
    (prose, blocks)
}

/// Identifiers among the tokens of `text`. `backticked`: everything is code-shaped.
fn tokens(text: &str, backticked: bool, source: Source, names: &mut Names) {
    for m in TOKEN.find_iter(text) {
        let token = m.as_str();
        let called = token.ends_with('(') || token.ends_with("()");
        let token = token.trim_end_matches(['(', ')']);
        // A file name is a path, not an identifier (`types.py`).
        if token.contains('.') && FILE_NAME.find(token).is_some_and(|f| f.as_str() == token) {
            continue;
        }
        let segments: Vec<&str> = token
            .split(['.', '#', ':'])
            .flat_map(|s| s.split("->"))
            .filter(|s| !s.is_empty())
            .collect();
        let qualified = segments.len() > 1 && segments.iter().all(|s| s.len() >= 2);
        for segment in &segments {
            let shaped = backticked || qualified || called || code_shaped(segment);
            if shaped {
                names.add(segment, source);
            } else if source == Source::Code {
                // Plain words inside code: `import`, `print`, local names.
                names.add(segment, Source::CodeWord);
            }
        }
    }
}

/// `HelpFormatter`, `getValidKey`, `write_usage`, `MAX_SIZE`, `W3CDom`: a word nobody
/// writes in prose.
fn code_shaped(word: &str) -> bool {
    let chars: Vec<char> = word.chars().collect();
    let inner_underscore =
        word.trim_matches('_').contains('_') && word.chars().any(|c| c.is_alphabetic());
    let lower_then_upper = chars
        .windows(2)
        .any(|w| (w[0].is_lowercase() || w[0].is_ascii_digit()) && w[1].is_uppercase());
    // `HTTPServer`, `W3CDom`: a capital run followed by a capitalised word.
    let caps_then_word = chars
        .windows(3)
        .any(|w| w[0].is_uppercase() && w[1].is_uppercase() && w[2].is_lowercase())
        && chars.len() > 3;
    inner_underscore || lower_then_upper || caps_then_word || word.starts_with("__")
}

fn is_error_name(name: &str) -> bool {
    ["Error", "Exception", "Warning", "Panic", "Fault"]
        .iter()
        .any(|suffix| name.len() > suffix.len() && name.ends_with(suffix))
        && name.chars().next().is_some_and(char::is_uppercase)
}

fn is_test_name(name: &str) -> bool {
    // The xUnit frameworks' own types (`class ReproTest(TestCase)`) are not a test.
    if matches!(
        name,
        "TestCase" | "TestSuite" | "TestResult" | "TestLoader" | "TestRunner"
    ) {
        return false;
    }
    let lower = name.to_ascii_lowercase();
    lower.starts_with("test_")
        || lower.ends_with("_test")
        || (name.len() > 4
            && (name.starts_with("Test") && name[4..].starts_with(char::is_uppercase)
                || name.ends_with("Test")
                || name.ends_with("Tests")))
}

fn push_unique(list: &mut Vec<String>, item: &str) {
    if !list.iter().any(|i| i == item) {
        list.push(item.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn names(q: &ParsedQuestion) -> Vec<&str> {
        q.identifiers.iter().map(|i| i.name.as_str()).collect()
    }

    pub(super) fn source_of(q: &ParsedQuestion, name: &str) -> Option<Source> {
        q.identifiers
            .iter()
            .find(|i| i.name == name)
            .map(|i| i.source)
    }

    /// A short question, with its question mark or opening with a question word, is asked
    /// of the code; a change's message, a one-line report and a long report are not.
    #[test]
    fn questions_asked_of_the_code() {
        for asked in [
            "Is there a helper to time how long a block of code takes and print it?",
            "where is the CSRF token checked",
            "How are retries spaced",
            "When I mistype a recipe name, where does just suggest the closest one?",
            "`App::parse` panics on an empty argument list, why?",
        ] {
            assert!(parse(asked).is_question(), "{asked}");
        }
        for other in [
            "Fix the timer's output when a block takes under a millisecond",
            "When the cache is full, evict the oldest entry first",
            "Returns the number of cells a string takes in the terminal.",
            "Crash in parse_args with an empty list",
            "",
        ] {
            assert!(!parse(other).is_question(), "{other}");
        }
        let report = "Why does the parser crash? Running the tool with an empty argument list \
            against a fresh checkout prints a stack trace instead of the usage message. The \
            trace points into the tokenizer, which reads past the end of the buffer when no \
            words are given. Expected the usual help text, as older releases printed, and an \
            exit status of two. Seen on Linux and macOS with the latest release installed \
            from the package registry, both shells, any terminal.";
        assert!(parse(report).is_long());
        assert!(
            !parse(report).is_question(),
            "a long report is not a question"
        );
    }

    #[test]
    fn identifiers_by_shape() {
        let q = parse(
            "Empty output from `HelpFormatter.write_usage` when calling render() on a std::io::Write or Foo#bar; \
             MAX_SIZE and W3CDom and getValidKey but not The or Usage or e.g. this.",
        );
        for name in [
            "HelpFormatter",
            "write_usage",
            "render",
            "io",
            "Write",
            "Foo",
            "bar",
            "MAX_SIZE",
            "W3CDom",
            "getValidKey",
        ] {
            assert_eq!(
                source_of(&q, name),
                Some(Source::Named),
                "{name}: {:?}",
                names(&q)
            );
        }
        for word in ["The", "Usage", "e", "this", "Empty", "output"] {
            assert_eq!(source_of(&q, word), None, "{word}");
        }
    }

    #[test]
    fn code_blocks_fenced_and_indented() {
        let q = parse(
            "Title\n\nSome prose.\n\n```python\nf = click.HelpFormatter()\nf.write_usage(\"program\")\n```\n\nMore prose.\n\n    indented_call(x)\n    other_name = 1\n\nAfter.\n",
        );
        assert_eq!(q.code_blocks.len(), 2, "{:?}", q.code_blocks);
        assert!(q.code_blocks[1].contains("indented_call"));
        assert_eq!(source_of(&q, "HelpFormatter"), Some(Source::Code));
        assert_eq!(source_of(&q, "write_usage"), Some(Source::Code));
        assert_eq!(source_of(&q, "indented_call"), Some(Source::Code));
        // A plain word in code is a weak code word; `f` is too short.
        assert_eq!(source_of(&q, "program"), Some(Source::CodeWord));
        assert_eq!(source_of(&q, "f"), None);
        assert_eq!(source_of(&q, "click"), Some(Source::Code));
        assert!(q.prose.contains("More prose") && !q.prose.contains("indented_call"));
        // An unclosed fence runs to the end.
        let open = parse("Broken\n```\nlast_call()\n");
        assert_eq!(open.code_blocks, ["last_call()\n"]);
    }

    #[test]
    fn name_keys_ignore_the_case_style() {
        assert_eq!(name_key("write_usage"), name_key("writeUsage"));
        assert_eq!(name_key("WriteUsage"), name_key("write_usage"));
        assert_ne!(name_key("write_usage"), name_key("write"));
        assert_eq!(name_key("_"), None);
    }

    #[test]
    fn a_20_kb_report_stays_bounded() {
        let mut report = String::from("Crash in `Renderer.render_page` with a big table\n\n");
        for i in 0..400 {
            report.push_str(&format!(
                "line {i}: the table renders slowly and then the program stops with value_{i} set.\n"
            ));
        }
        report.push_str("```\n");
        for i in 0..200 {
            report.push_str(&format!(
                "  File \"/app/src/mod_{i}.py\", line {i}, in handler_{i}\n"
            ));
        }
        report.push_str("```\n");
        assert!(report.len() > 20_000, "{}", report.len());
        let q = parse(&report);
        let terms = weighted_terms(&q);
        assert!(q.identifiers.len() <= MAX_IDENTIFIERS);
        assert!(q.paths.len() <= MAX_PATHS);
        assert_eq!(source_of(&q, "render_page"), Some(Source::Named));
        let key = name_key("render_page").unwrap();
        let top = terms.iter().find(|t| t.term.text == key).unwrap();
        assert!(terms.iter().all(|t| t.weight <= top.weight + 1.0));
        // Over the cut, nothing is read.
        let huge = "word ".repeat(MAX_QUESTION_BYTES);
        assert!(parse(&huge).prose.len() <= MAX_QUESTION_BYTES + 1);
    }

    #[test]
    fn nothing_breaks_on_odd_input() {
        for text in [
            "",
            "```",
            "`",
            "    ",
            "File \"\", line x",
            "at (:)",
            "::",
            "a.b.c.",
            "é€😀",
            "\u{0}",
        ] {
            let q = parse(text);
            let _ = weighted_terms(&q);
        }
    }
}
