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
//!   mentions, give file paths (with lines) and function names;
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

use super::tokenize::{for_each_word_term, is_stop_word, query_terms, stem, words, QueryTerm};

/// Longer questions are cut here before parsing: what follows is logs, not a question.
pub const MAX_QUESTION_BYTES: usize = 32 * 1024;
/// Distinct identifiers kept (first seen first); a pasted log must not flood the query.
const MAX_IDENTIFIERS: usize = 300;
/// The weight of a prose word the reporter owns ("my test"), against 1 for others.
const OWNED_WORD_WEIGHT: f32 = 0.25;
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

/// What a question asks for beyond source code.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct About {
    pub tests: bool,
    /// The reporter speaks of their own tests ("my test fails"): the project's tests
    /// share the words of the report, but the report is about the code they test.
    pub own_tests: bool,
    pub benches: bool,
    pub examples: bool,
    pub changelog: bool,
    pub docs: bool,
}

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
}

impl ParsedQuestion {
    /// A bug report rather than a one-line question: the plain-words name signal
    /// (a definition named only with the question's words) means little there.
    pub fn is_long(&self) -> bool {
        self.prose_words > 40 || !self.code_blocks.is_empty()
    }
}

/// A search term and how much it counts.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightedTerm {
    pub term: QueryTerm,
    pub weight: f32,
}

static PY_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"File "([^"]+)", line (\d+)(?:, in ([A-Za-z_<>][\w<>.]*))?"#).unwrap()
});
/// `at org.jsoup.parser.Tokeniser.read(Tokeniser.java:123)`, also `(Unknown Source)`.
static JVM_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bat\s+((?:[\w$]+\.)+)([\w$<>]+)\((?:([\w$]+\.(?:java|kt|scala|groovy|kts)):(\d+)|[^)]*)\)")
        .unwrap()
});
/// `at render (/app/src/view.js:10:5)`, `at async Object.run (file:///x.mjs:3:1)`.
static JS_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bat\s+(?:async\s+)?(?:new\s+)?([\w$.<>\[\]]+)\s+\(([^()\s]+?):(\d+)(?::\d+)?\)")
        .unwrap()
});
/// Go: `github.com/gin-gonic/gin/binding.setByForm(0x1, …)`,
/// `main.(*Server).Serve(…)`.
static GO_FUNC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:[\w.-]+/)*[\w-]+\.((?:\(\*?\w+\)\.)?[\w.]+)\((?:0x[0-9a-f]|\.\.\.|\)\s*$)")
        .unwrap()
});
/// Rust backtraces: `  3: my_crate::module::function`.
static RUST_FRAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*\d+:\s+((?:[\w<>]+::)+[\w<>]+)").unwrap());
/// `path/to/file.ext:12` or `file.ext:12:5`, as compilers, panics and stack lines write it.
static PATH_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"((?:[A-Za-z]:)?(?:[\w.@+~-]*[/\\])*[\w.@+-]*[\w-]\.[A-Za-z][A-Za-z0-9]{0,7}):(\d+)",
    )
    .unwrap()
});
/// Extensions of the files a question names without a line (with a line, any will do).
const EXTENSIONS: &str = "py|pyi|rs|go|js|mjs|cjs|jsx|ts|tsx|java|kt|kts|scala|groovy|c|h|cc|cpp|cxx|hpp|hh|hxx|cs|rb|php|swift|m|mm|lua|sh|md|rst|txt|toml|yaml|yml|json|html|css|vue|svelte";
/// A path with at least one `/`, ending in a file name with a known extension.
static SLASH_PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?:[\w.@+~-]+/)+[\w.@+-]*[\w-]\.(?:{EXTENSIONS})\b"
    ))
    .unwrap()
});
/// A bare file name with a known extension (`form_mapping.go`, `README.md`).
static FILE_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"\b[\w-]+\.(?:{EXTENSIONS})\b")).unwrap());
static URL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(?:https?|file|ftp)://[^\s)>\]]+").unwrap());
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
    parsed.prose = prose;
    parsed.code_blocks = code_blocks;
    parsed
}

/// The question's terms with weights, deduplicated (a term keeps its highest weight).
/// Prose gives the words, their stems, and compounds of neighbours (as `query_terms`
/// always did); identifiers add their parts and whole-name compounds at their weight;
/// paths add their file name's words.
pub fn weighted_terms(parsed: &ParsedQuestion) -> Vec<WeightedTerm> {
    let mut out: Vec<WeightedTerm> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut add =
        |term: QueryTerm, weight: f32, out: &mut Vec<WeightedTerm>| match seen.get(&term.text) {
            Some(&i) => {
                let existing = &mut out[i];
                existing.weight = existing.weight.max(weight);
                existing.term.compound &= term.compound;
            }
            None => {
                seen.insert(term.text.clone(), out.len());
                out.push(WeightedTerm { term, weight });
            }
        };
    // A word the reporter owns ("my test fails", "in our app") names their thing, not
    // the project's: searched at full weight, "test" finds the project's tests. Once
    // owned, the word stays theirs ("the test passed before").
    let owned: Vec<String> = content_words(&parsed.prose)
        .into_iter()
        .filter(|(_, before)| before.as_deref().is_some_and(is_possessive))
        .map(|(word, _)| stem(&word))
        .collect();
    for term in query_terms(&parsed.prose) {
        let weight = if owned.contains(&term.text) {
            OWNED_WORD_WEIGHT
        } else {
            Source::Prose.weight()
        };
        add(term, weight, &mut out);
    }
    for identifier in &parsed.identifiers {
        // Said again and again, a name is what the report is about; but only a little
        // more each time.
        let repeat = 1.0 + 0.25 * (identifier.count as f32).ln().min(2.0);
        let whole = identifier.source.weight() * repeat;
        let terms = identifier_terms(&identifier.name);
        let n = terms.len();
        for (i, term) in terms.into_iter().enumerate() {
            // The last term is the whole name (one term for a one-part name).
            let weight = if i + 1 == n {
                whole
            } else {
                (whole * 0.5).max(0.5)
            };
            add(term, weight, &mut out);
        }
    }
    for path in &parsed.paths {
        let name = path.file_name();
        let stem_part = name.split('.').next().unwrap_or(name);
        for term in identifier_terms(stem_part) {
            add(term, Source::Named.weight(), &mut out);
        }
    }
    out
}

/// An identifier's terms as the index has them (parts, pairs, the whole name last); the
/// pairs and the whole of a multi-part name are compounds.
fn identifier_terms(name: &str) -> Vec<QueryTerm> {
    let mut parts = Vec::new();
    super::tokenize::split_identifier(name, &mut parts);
    let stems: Vec<String> = parts.iter().map(|p| stem(p)).collect();
    let mut out = Vec::new();
    for_each_word_term(name, |t| {
        out.push(QueryTerm {
            text: t.to_string(),
            compound: !stems.iter().any(|s| s == t),
        })
    });
    out
}

/// The key two names share when they are the same identifier however they are written
/// (`write_usage`, `writeUsage` and `WriteUsage` → `writusag`): their stemmed parts,
/// glued. `None` for a name with no indexable part.
pub fn name_key(name: &str) -> Option<String> {
    let mut parts = Vec::new();
    super::tokenize::split_identifier(name, &mut parts);
    let key: String = parts.iter().map(|p| stem(p)).collect();
    (key.len() >= 2).then_some(key)
}

/// Identifiers gathered while parsing, deduplicated.
#[derive(Default)]
struct Names {
    list: Vec<Identifier>,
    /// Name → position in `list`.
    seen: HashMap<String, usize>,
}

impl Names {
    fn add(&mut self, name: &str, source: Source) {
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

/// Traceback frames and `path:line` mentions on one line: their paths and function
/// names. Returns whether the line was a frame (its words are then not prose).
fn frames(line: &str, paths: &mut Vec<PathRef>, names: &mut Names) -> bool {
    let mut frame = false;
    let has = |needle: &str| line.contains(needle);
    if let Some(c) = has("File \"").then(|| PY_FRAME.captures(line)).flatten() {
        add_path(paths, &c[1], c[2].parse().ok());
        if let Some(function) = c.get(3) {
            for segment in function.as_str().split('.') {
                if !segment.starts_with('<') {
                    names.add(segment, Source::Frame);
                }
            }
        }
        frame = true;
    }
    let at = has("at ");
    for c in JVM_FRAME.captures_iter(if at { line } else { "" }) {
        let qualified: Vec<&str> = c[1].trim_end_matches('.').split('.').collect();
        let method = &c[2];
        // `…Tokeniser$1.read`: the outer class names the file.
        let class = qualified.last().copied().unwrap_or("");
        let outer = class.split('$').next().unwrap_or(class);
        names.add(outer, Source::Frame);
        if !method.starts_with('<') {
            names.add(method, Source::Frame);
        }
        if let (Some(file), Some(number)) = (c.get(3), c.get(4)) {
            let package = &qualified[..qualified.len().saturating_sub(1)];
            let mut path = package.join("/");
            if !path.is_empty() {
                path.push('/');
            }
            path.push_str(file.as_str());
            add_path(paths, &path, number.as_str().parse().ok());
        }
        frame = true;
    }
    if !frame {
        for c in JS_FRAME.captures_iter(if at { line } else { "" }) {
            for segment in c[1].split('.') {
                if !matches!(segment, "Object" | "<anonymous>" | "Module" | "async") {
                    names.add(segment, Source::Frame);
                }
            }
            add_path(paths, &c[2], c[3].parse().ok());
            frame = true;
        }
    }
    if let Some(c) = has("::").then(|| RUST_FRAME.captures(line)).flatten() {
        for segment in c[1].split("::") {
            if !segment.starts_with('<') {
                names.add(segment, Source::Frame);
            }
        }
        frame = true;
    }
    if !frame {
        if let Some(c) = has("(").then(|| GO_FUNC.captures(line)).flatten() {
            for segment in c[1].split('.') {
                let segment = segment.trim_matches(|c| c == '(' || c == ')' || c == '*');
                names.add(segment, Source::Frame);
            }
            frame = true;
        }
    }
    let mut mentioned = false;
    if !has(".") {
        return frame;
    }
    for c in PATH_LINE.captures_iter(if has(":") { line } else { "" }) {
        if looks_like_a_file(&c[1]) {
            add_path(paths, &c[1], c[2].parse().ok());
            mentioned = true;
        }
    }
    // A line that is nothing but a location (`\t/src/x.go:137 +0x5e6`) is a frame too.
    if mentioned {
        let rest = PATH_LINE.replace_all(line, "");
        let rest = rest.trim();
        if rest.is_empty() || rest.starts_with('+') || rest.starts_with("at") && rest.len() < 4 {
            frame = true;
        }
    }
    let mut without_urls = std::borrow::Cow::Borrowed(line);
    if has("://") {
        for m in URL.find_iter(line) {
            if let Some(path) = url_path(m.as_str()) {
                add_linked_path(paths, &path.0, path.1);
            }
        }
        without_urls = URL.replace_all(line, " ");
    }
    for m in SLASH_PATH.find_iter(if has("/") { &without_urls } else { "" }) {
        if looks_like_a_file(m.as_str()) {
            add_path(paths, m.as_str(), None);
        }
    }
    for m in FILE_NAME.find_iter(&without_urls) {
        add_path(paths, m.as_str(), None);
    }
    frame
}

/// Not a version number or a domain: a file name with letters before its extension.
fn looks_like_a_file(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    !stem.is_empty()
        && stem.chars().any(|c| c.is_alphabetic())
        && ext.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && !matches!(ext, "com" | "org" | "net" | "io" | "dev" | "x" | "0")
}

/// A source URL's repository path and line: `https://github.com/o/r/blob/REV/src/a.py#L929`
/// → `src/a.py`, 929. Other URLs give their path when it ends in a file name.
fn url_path(url: &str) -> Option<(String, Option<u32>)> {
    let (without_fragment, fragment) = match url.split_once('#') {
        Some((u, f)) => (u, Some(f)),
        None => (url, None),
    };
    let after_scheme = without_fragment.split_once("://")?.1;
    let path = after_scheme.split_once('/')?.1;
    let parts: Vec<&str> = path.split('/').collect();
    // GitHub and GitLab blob/tree URLs: owner/repo/blob/rev/PATH.
    let start = parts
        .iter()
        .position(|p| matches!(*p, "blob" | "tree" | "raw"))
        .map_or(0, |i| i + 2);
    let rest = parts.get(start..)?.join("/");
    if !looks_like_a_file(&rest) {
        return None;
    }
    let line = fragment
        .and_then(|f| f.strip_prefix('L'))
        .and_then(|f| f.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok());
    Some((rest, line))
}

fn add_path(paths: &mut Vec<PathRef>, raw: &str, line: Option<u32>) {
    add_path_as(paths, raw, line, false);
}

fn add_linked_path(paths: &mut Vec<PathRef>, raw: &str, line: Option<u32>) {
    add_path_as(paths, raw, line, true);
}

fn add_path_as(paths: &mut Vec<PathRef>, raw: &str, line: Option<u32>, linked: bool) {
    let mut path = raw.replace('\\', "/");
    // `x.mjs:3:1` in a URL: the line and column are not part of the path.
    let mut line = line;
    while let Some((head, tail)) = path.rsplit_once(':') {
        if tail.is_empty() || !tail.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        line = line
            .or_else(|| tail.parse().ok())
            .filter(|_| !head.ends_with(':'));
        path = head.to_string();
    }
    if let Some(rest) = path.strip_prefix("file://") {
        path = rest.to_string();
    }
    if let Some((_, rest)) = path.split_once("node:") {
        path = rest.to_string();
    }
    // A drive letter, `./`, `../`, leading `/`.
    if path.len() > 2 && path.as_bytes()[1] == b':' && path.as_bytes()[0].is_ascii_alphabetic() {
        path = path[2..].to_string();
    }
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != "." && *p != "..")
        .collect();
    let path = parts.join("/");
    if path.is_empty() || !looks_like_a_file(&path) {
        return;
    }
    match paths.iter_mut().find(|p| p.path == path) {
        Some(existing) => {
            if existing.line.is_none() {
                existing.line = line;
            }
            existing.linked &= linked;
        }
        None => {
            // A bare name already known with its directories adds nothing.
            if !path.contains('/') && paths.iter().any(|p| p.path.ends_with(&format!("/{path}"))) {
                return;
            }
            paths.push(PathRef { path, line, linked });
        }
    }
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
    let lower = name.to_ascii_lowercase();
    lower.starts_with("test_")
        || lower.ends_with("_test")
        || (name.len() > 4
            && (name.starts_with("Test") && name[4..].starts_with(char::is_uppercase)
                || name.ends_with("Test")
                || name.ends_with("Tests")))
}

/// The content words of prose, lowercased, with the word before each (for possessives).
fn is_possessive(word: &str) -> bool {
    matches!(word, "my" | "our" | "your" | "their" | "own")
}

fn content_words(text: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut previous: Option<String> = None;
    for word in words(text) {
        let lower = word.to_lowercase();
        if lower.chars().count() >= 2 && !is_stop_word(&lower) {
            out.push((lower.clone(), previous.clone()));
        }
        previous = Some(lower);
    }
    out
}

/// What the question asks for beyond code. Explicit signals only: a mentioned path of
/// that kind (not one only linked to: "I've checked the [FAQ](…/FAQ.md)"), or a question
/// mostly about it (at least a sixth of its content words). A
/// word the user owns ("my test fails", "our docs") is about their own project, not
/// this one's tests or docs, and does not count.
fn about(prose: &str) -> About {
    let mut about = About::default();
    let words = content_words(prose);
    if words.is_empty() {
        return about;
    }
    let share = |family: &[&str]| {
        let hits = words
            .iter()
            .filter(|(w, before)| {
                family.contains(&w.as_str()) && !before.as_deref().is_some_and(is_possessive)
            })
            .count();
        hits > 0 && hits * 6 >= words.len()
    };
    const TESTS: &[&str] = &[
        "test",
        "tests",
        "testing",
        "unittest",
        "unittests",
        "spec",
        "specs",
    ];
    about.tests |= share(TESTS);
    about.own_tests = words.iter().any(|(w, before)| {
        TESTS.contains(&w.as_str()) && before.as_deref().is_some_and(is_possessive)
    });
    about.benches |= share(&["bench", "benches", "benchmark", "benchmarks"]);
    about.examples |= share(&["example", "examples", "sample", "samples"]);
    about.changelog |= share(&[
        "changelog",
        "changed",
        "changes",
        "release",
        "releases",
        "history",
    ]);
    about.docs |= share(&["readme", "docs", "documentation", "guide", "tutorial"]);
    about
}

fn push_unique(list: &mut Vec<String>, item: &str) {
    if !list.iter().any(|i| i == item) {
        list.push(item.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(q: &ParsedQuestion) -> Vec<(&str, Option<u32>)> {
        q.paths.iter().map(|p| (p.path.as_str(), p.line)).collect()
    }

    fn names(q: &ParsedQuestion) -> Vec<&str> {
        q.identifiers.iter().map(|i| i.name.as_str()).collect()
    }

    fn source_of(q: &ParsedQuestion, name: &str) -> Option<Source> {
        q.identifiers
            .iter()
            .find(|i| i.name == name)
            .map(|i| i.source)
    }

    #[test]
    fn python_traceback_frames() {
        let q = parse(
            "Path.convert fails\n\n```\nTraceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\n  File \"/venv/lib/python3.12/site-packages/click/types.py\", line 865, in convert\n    is_dash = self.file_okay and self.allow_dash\nBytesWarning: Comparison between bytes and string\n```\n",
        );
        assert_eq!(
            paths(&q),
            [(
                "venv/lib/python3.12/site-packages/click/types.py",
                Some(865)
            )]
        );
        assert_eq!(source_of(&q, "convert"), Some(Source::Frame));
        assert_eq!(source_of(&q, "file_okay"), Some(Source::Code));
        assert!(
            q.errors.contains(&"BytesWarning".to_string()),
            "{:?}",
            q.errors
        );
        assert!(!names(&q).contains(&"module"), "{:?}", names(&q));
    }

    #[test]
    fn jvm_frames_name_the_package_path() {
        let q = parse(
            "NPE when parsing\nException in thread \"main\" java.lang.NullPointerException\n\tat org.jsoup.parser.Tokeniser.read(Tokeniser.java:123)\n\tat org.jsoup.parser.TreeBuilder$1.run(TreeBuilder.java:7)\n\tat java.base/java.lang.Thread.run(Unknown Source)\n",
        );
        assert_eq!(
            paths(&q),
            [
                ("org/jsoup/parser/Tokeniser.java", Some(123)),
                ("org/jsoup/parser/TreeBuilder.java", Some(7)),
            ]
        );
        for name in ["Tokeniser", "read", "TreeBuilder", "run"] {
            assert_eq!(source_of(&q, name), Some(Source::Frame), "{name}");
        }
        assert!(q.errors.contains(&"NullPointerException".to_string()));
        // Frame lines are not prose.
        assert!(!q.prose.contains("Tokeniser"), "{}", q.prose);
    }

    #[test]
    fn javascript_frames() {
        let q = parse(
            "TypeError: Cannot read properties of undefined\n    at Lexer.blockTokens (/app/node_modules/marked/src/Lexer.js:120:15)\n    at async Object.run (file:///home/me/cli.mjs:3:1)\n    at /app/src/main.js:10:5\n",
        );
        assert_eq!(
            paths(&q),
            [
                ("app/node_modules/marked/src/Lexer.js", Some(120)),
                ("home/me/cli.mjs", Some(3)),
                ("app/src/main.js", Some(10)),
            ]
        );
        assert_eq!(source_of(&q, "blockTokens"), Some(Source::Frame));
        assert_eq!(source_of(&q, "Lexer"), Some(Source::Frame));
        assert_eq!(source_of(&q, "run"), Some(Source::Frame));
        assert!(q.errors.contains(&"TypeError".to_string()));
    }

    #[test]
    fn go_panics() {
        let q = parse(
            "panic in binding\n\n```\ngoroutine 2717 [running]:\ngithub.com/gin-gonic/gin/binding.setByForm(0x126a5a0, 0xc00d970380, ...)\n\tD:/go/pkg/mod/github.com/gin-gonic/gin@v1.4.0/binding/form_mapping.go:137 +0x5e6\nmain.(*Server).ServeHTTP(0xc0000a2000)\n\t/src/server.go:45 +0xed\n```\n",
        );
        assert_eq!(
            paths(&q),
            [
                (
                    "go/pkg/mod/github.com/gin-gonic/gin@v1.4.0/binding/form_mapping.go",
                    Some(137)
                ),
                ("src/server.go", Some(45)),
            ]
        );
        assert_eq!(source_of(&q, "setByForm"), Some(Source::Frame));
        assert_eq!(source_of(&q, "ServeHTTP"), Some(Source::Frame));
        assert_eq!(source_of(&q, "Server"), Some(Source::Frame));
    }

    #[test]
    fn rust_panics_and_backtraces() {
        let q = parse(
            "thread 'main' panicked at src/parser/lexer.rs:40:5:\nindex out of bounds\nstack backtrace:\n   0: rust_begin_unwind\n   3: mdbook::renderer::html_handlebars::hbs_renderer::render_item\n             at ./src/renderer/html_handlebars/hbs_renderer.rs:88:9\n",
        );
        assert_eq!(
            paths(&q),
            [
                ("src/parser/lexer.rs", Some(40)),
                ("src/renderer/html_handlebars/hbs_renderer.rs", Some(88)),
            ]
        );
        assert_eq!(source_of(&q, "render_item"), Some(Source::Frame));
        assert_eq!(source_of(&q, "hbs_renderer"), Some(Source::Frame));
    }

    #[test]
    fn paths_in_prose_and_urls() {
        let q = parse(
            "The check here https://github.com/pallets/click/blob/c9f7d9d/src/click/types.py#L929C64-L929C75 and in `core.py`, \
             also src/a.rs:40 and form_mapping.go:63 ~ form_mapping.go:89. Version 1.2.3 on example.com:8080.",
        );
        assert_eq!(
            paths(&q),
            [
                ("src/a.rs", Some(40)),
                ("form_mapping.go", Some(63)),
                ("src/click/types.py", Some(929)),
                ("core.py", None),
            ]
        );
        // URLs are not prose.
        assert!(!q.prose.contains("github"), "{}", q.prose);
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
    fn identifiers_outweigh_prose_in_terms() {
        let q = parse("The usage line is empty for `HelpFormatter.write_usage` without arguments");
        let terms = weighted_terms(&q);
        let weight = |text: &str| terms.iter().find(|t| t.term.text == text).map(|t| t.weight);
        let key = name_key("write_usage").unwrap();
        assert_eq!(key, "writusag");
        assert_eq!(weight(&key), Some(Source::Named.weight()));
        assert_eq!(weight("empti"), Some(1.0), "{terms:?}");
        assert!(weight("usag").unwrap() > 1.0);
        // Deduplicated.
        let mut texts: Vec<&str> = terms.iter().map(|t| t.term.text.as_str()).collect();
        let len = texts.len();
        texts.sort_unstable();
        texts.dedup();
        assert_eq!(texts.len(), len);
        // Compounds are marked; the parts of a name are not compounds.
        let term = |text: &str| terms.iter().find(|t| t.term.text == text).unwrap();
        assert!(term(&key).term.compound);
        assert!(!term("usag").term.compound);
    }

    #[test]
    fn name_keys_ignore_the_case_style() {
        assert_eq!(name_key("write_usage"), name_key("writeUsage"));
        assert_eq!(name_key("WriteUsage"), name_key("write_usage"));
        assert_ne!(name_key("write_usage"), name_key("write"));
        assert_eq!(name_key("_"), None);
    }

    #[test]
    fn about_tests_only_from_explicit_signals() {
        // A link is a reference, not the subject.
        let linked = parse(
            "I checked the [FAQ](https://github.com/o/r/blob/master/FAQ.md) and \
             https://github.com/o/r/blob/main/src/test/resources/page.html: the panel title loses its style",
        );
        assert_eq!(linked.paths.len(), 2, "{:?}", linked.paths);
        assert!(linked.paths.iter().all(|p| p.linked));
        assert!(
            !linked.about.docs && !linked.about.tests,
            "{:?}",
            linked.about
        );
        // A bug report's "my test fails" is the user's test, not ours.
        let report = parse(
            "My test fails when parsing a table\n\nWhen I run my test suite with the new version, parsing a table with a caption drops the caption element. \
             The parser used to keep it. Here is what I do: I parse the document, select the table and print it.\n\n```java\nDocument doc = Jsoup.parse(html);\n```\n",
        );
        assert!(!report.about.tests, "{:?}", report.about);
        // The reporter owns the word: it counts less, and the project's tests more so.
        assert!(report.about.own_tests);
        let test = weighted_terms(&report)
            .into_iter()
            .find(|t| t.term.text == "test")
            .unwrap();
        assert_eq!(test.weight, OWNED_WORD_WEIGHT);
        assert!(!parse("Where are the tests for the parser?").about.own_tests);
        // A question mostly about tests, or naming a test file or test function.
        assert!(
            parse("Where are the tests for carriage return line feed handling?")
                .about
                .tests
        );
        assert!(
            parse("why does tests/parser/test_tables.py fail")
                .about
                .tests
        );
        // A report's own script is a path, not what it is about; whether a named test
        // file lifts tests is the ranker's call, once it knows the file exists.
        let script = parse("The parser drops the caption of a table when it parses the page, see my script test_repro.py");
        assert!(!script.about.tests, "{:?}", script.about);
        assert_eq!(script.paths[0].path, "test_repro.py");
        let named = parse("test_parse_caption is flaky");
        assert_eq!(named.test_names, ["test_parse_caption"]);
        assert!(
            parse("What changed in the most recent release according to the changelog?")
                .about
                .changelog
        );
        assert!(
            parse("Is there an example program that walks a directory tree?")
                .about
                .examples
        );
        assert!(!parse("How are tokens refilled?").about.tests);
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
