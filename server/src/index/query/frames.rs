//! Where a question points in the code: traceback frames of Python, Java/Kotlin,
//! JavaScript, Go and Rust, `path:line` mentions, source URLs and file names, read off
//! one line at a time into paths (with lines) and the frames' function names.
//! `parse` calls `frames` on every line of a question.

use std::sync::LazyLock;

use regex::Regex;

use super::{Names, PathRef, Source};

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
pub(super) static FILE_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"\b[\w-]+\.(?:{EXTENSIONS})\b")).unwrap());

pub(super) static URL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(?:https?|file|ftp)://[^\s)>\]]+").unwrap());

/// Traceback frames and `path:line` mentions on one line: their paths and function
/// names. Returns whether the line was a frame (its words are then not prose).
pub(super) fn frames(line: &str, paths: &mut Vec<PathRef>, names: &mut Names) -> bool {
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

#[cfg(test)]
mod tests {
    use super::super::tests::{names, source_of};
    use super::super::{parse, ParsedQuestion};
    use super::Source;

    fn paths(q: &ParsedQuestion) -> Vec<(&str, Option<u32>)> {
        q.paths.iter().map(|p| (p.path.as_str(), p.line)).collect()
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
}
