//! The answer when no model is configured: the most relevant places for the question,
//! found by the server's own retrieval, so the tool is useful on a fresh machine.

use super::citations::{check, CitedLines};
use super::{AgentOutcome, AskInput, AskStats, StopReason};
use crate::index::RetrievalHit;
use crate::text::PositionEncoding;
use crate::tools::redact::redact;
use crate::workspace::Workspace;

/// Places listed in a no-provider answer.
pub const PLACES: usize = 5;

pub fn answer(workspace: &Workspace, input: &AskInput, encoding: PositionEncoding) -> AgentOutcome {
    let mut answer = String::from(
        "No model is configured, so this answer lists the places in the workspace that best match your question, found by copilot-ls's own search. \
         To get written answers, set `provider` (`openai` or `anthropic`) and the API key variable, or point `baseUrl` at a local server such as Ollama or llama.cpp.\n\n",
    );
    let mut citations = Vec::new();
    for hit in input.context.iter().take(PLACES) {
        // The excerpts and labels show file text: secrets redacted as in tool output.
        let hit = &RetrievalHit {
            text: redact(&hit.text).into_owned(),
            ..hit.clone()
        };
        let label = hit
            .symbol
            .clone()
            .unwrap_or_else(|| first_code_line(&hit.text));
        let place = place(workspace, hit);
        let line = place.line;
        let citation = check(
            workspace,
            &CitedLines {
                path: hit.path.clone(),
                line,
                end_line: place.end_line,
                note: Some(label.clone()),
            },
            encoding,
        );
        answer.push_str(&format!(
            "{}. `{}:{}` — `{}`\n\n{}\n",
            citations.len() + 1,
            hit.path,
            line,
            label.replace('`', "'"),
            excerpt(hit, &place)
        ));
        citations.push(citation);
    }
    if citations.is_empty() {
        answer.push_str("The search found nothing that matches the question's words.\n");
    }
    AgentOutcome {
        answer,
        citations,
        edits: Vec::new(),
        steps: Vec::new(),
        stop_reason: StopReason::NoProvider,
        history: input.history.clone(),
        stats: AskStats::default(),
    }
}

/// Lines of excerpt shown under each place.
const EXCERPT_LINES: usize = 6;

/// Longest walk up from a chunk in the middle of a long body to the line defining it.
const LOOKBACK_LINES: usize = 2000;

/// Where a hit is cited: the line defining its place and the place's last line, and
/// (for a chunk in the middle of a long body) the defining line's text shown above the
/// excerpt.
struct Place {
    /// 1-based.
    line: usize,
    end_line: usize,
    /// The defining line when it lies above the chunk.
    heading: Option<String>,
}

/// The place a hit stands for (PROTOCOL.md §3, `provider: none`): `line` is the line
/// naming its definition (not the doc comment, attribute or import above it), `endLine`
/// the definition's last line. A chunk cut from the middle of a long body is cited from
/// its definition's line above it. The definition's extent is read from indentation:
/// it ends before the next line indented no deeper than its defining line, keeping a
/// closing `}`/`)`/`end` at that depth. Prose (Markdown, text) and chunks without a
/// definition keep the chunk's range.
fn place(workspace: &Workspace, hit: &RetrievalHit) -> Place {
    let chunk: Vec<&str> = hit.text.lines().collect();
    let fallback = || {
        let offset = chunk.iter().position(|l| is_code(l)).unwrap_or(0);
        Place {
            line: hit.start_line + offset,
            end_line: hit.end_line,
            heading: None,
        }
    };
    let Some(name) = hit.symbol.as_deref().map(short_name) else {
        return fallback();
    };
    if is_prose(&hit.path) {
        return match chunk.iter().position(|l| l.contains(name)) {
            Some(offset) => Place {
                line: hit.start_line + offset,
                end_line: hit.end_line,
                heading: None,
            },
            None => fallback(),
        };
    }
    let Some(text) = workspace
        .resolve_readable(&hit.path)
        .and_then(|resolved| workspace.read_text(&resolved))
        .ok()
        .map(|file| file.text)
    else {
        return fallback();
    };
    let lines: Vec<&str> = text.lines().collect();
    let start = hit.start_line.saturating_sub(1);
    let end = hit.end_line.min(lines.len());
    if start >= end {
        return fallback();
    }
    let inside = (start..end).find(|&i| is_code(lines[i]) && names(lines[i], name));
    let defining = inside.or_else(|| {
        // Above the chunk: the nearest line naming the symbol that is indented less than
        // the chunk's code (the body it belongs to).
        let body_indent = (start..end)
            .filter(|&i| is_code(lines[i]))
            .map(|i| indent(lines[i]))
            .min()?;
        (start.saturating_sub(LOOKBACK_LINES)..start)
            .rev()
            .find(|&i| is_code(lines[i]) && indent(lines[i]) < body_indent && names(lines[i], name))
    });
    let Some(defining) = defining else {
        return fallback();
    };
    // A namespace or module holds the whole file: the chunk is the better place.
    let container = ["namespace", "module", "package", "mod "]
        .iter()
        .any(|k| lines[defining].trim_start().starts_with(k))
        && !lines[defining].trim_end().ends_with('}');
    let last = if container {
        end - 1
    } else {
        definition_end(&lines, defining)
    };
    let last = last.max(if defining < start { end - 1 } else { defining });
    Place {
        line: defining + 1,
        end_line: last + 1,
        // File text shown in the answer: secrets redacted like the excerpt.
        heading: (defining < start).then(|| redact(lines[defining]).into_owned()),
    }
}

/// The 0-based last line of the definition on line `defining`: where its braces close
/// when it opens one within its first lines (C, C++, Java, JavaScript, Go, Rust…; a
/// declaration ending in `;` first is one line), else by indentation (Python, Ruby…).
fn definition_end(lines: &[&str], defining: usize) -> usize {
    braces_end(lines, defining).unwrap_or_else(|| indentation_end(lines, defining))
}

/// Lines a signature may take before its body's `{`.
const SIGNATURE_LINES: usize = 12;

fn braces_end(lines: &[&str], defining: usize) -> Option<usize> {
    let mut depth: i64 = 0;
    let mut opened = false;
    for (i, line) in lines.iter().enumerate().skip(defining) {
        let code = code_part(line);
        for c in code.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        if opened && depth <= 0 {
            return Some(i);
        }
        if !opened {
            let trimmed = code.trim_end();
            // Python's `def f():` and friends: no braces to follow.
            if trimmed.ends_with(':') && !trimmed.ends_with("::") {
                return None;
            }
            if trimmed.ends_with(';') {
                return Some(i);
            }
            if i - defining >= SIGNATURE_LINES {
                return None;
            }
        }
    }
    opened.then_some(lines.len().saturating_sub(1))
}

/// A line without its string and character literals and its `//` or `#` comment, so
/// their braces do not count.
fn code_part(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                if c == '\\' {
                    chars.next();
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '`' => quote = Some(c),
                // A lone `'` is a Rust lifetime, not a quote: only `'x'` counts.
                '\'' if chars.clone().nth(1) == Some('\'') => quote = Some(c),
                '/' if chars.peek() == Some(&'/') => break,
                '#' if out.trim().is_empty() => break,
                _ => out.push(c),
            },
        }
    }
    out
}

/// The last line of an indented body: before the next line indented no deeper than the
/// defining line, keeping a closing `end`, `)` or `]` at that depth and the rest of a
/// multi-line signature (`) -> T:`).
fn indentation_end(lines: &[&str], defining: usize) -> usize {
    let depth = indent(lines[defining]);
    let mut last = defining;
    for (i, line) in lines.iter().enumerate().skip(defining + 1) {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if indent(line) > depth {
            last = i;
            continue;
        }
        let closes = trimmed.starts_with(['}', ')', ']']) || trimmed == "end" || trimmed == "end;";
        if closes {
            last = i;
            if trimmed.ends_with(':') {
                continue;
            }
        }
        break;
    }
    last
}

fn is_code(line: &str) -> bool {
    let line = line.trim();
    !line.is_empty()
        && !["//", "#", "/*", "*", "--", "\"\"\"", "@"]
            .iter()
            .any(|p| line.starts_with(p))
}

/// Whether `line` names `name` as a whole word.
fn names(line: &str, name: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    line.match_indices(name).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + name.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

/// `Foo::bar`, `Foo.bar`, `impl Display for Foo` → the name its defining line shows.
fn short_name(symbol: &str) -> &str {
    let last = symbol.rsplit([':', '.', ' ']).next().unwrap_or(symbol);
    if last.is_empty() {
        symbol
    } else {
        last
    }
}

fn indent(line: &str) -> usize {
    line.chars()
        .take_while(|c| c.is_whitespace())
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

fn is_prose(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".md", ".markdown", ".mdx", ".rst", ".txt", ".adoc"]
        .iter()
        .any(|ext| lower.ends_with(ext))
}

/// A few lines of the place from its defining line (or, for a chunk inside a long
/// body, the defining line, `…`, then the chunk), fenced with the file's language so
/// the editor highlights it. Fences inside the code cannot end the block: the fence is
/// longer than any run of backticks in it.
fn excerpt(hit: &RetrievalHit, place: &Place) -> String {
    let from = place.line.saturating_sub(hit.start_line);
    let skip = if place.heading.is_some() {
        hit.text.lines().position(is_code).unwrap_or(0)
    } else {
        from
    };
    let mut lines: Vec<&str> = Vec::new();
    if let Some(heading) = &place.heading {
        lines.push(heading);
    }
    let taken = EXCERPT_LINES - lines.len();
    lines.extend(hit.text.lines().skip(skip).take(taken));
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut body: Vec<&str> = lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or(l.trim_start()))
        .collect();
    if place.heading.is_some() {
        body.insert(1, "…");
    }
    let more = hit.end_line + 1 - hit.start_line > skip + taken;
    let longest_run = body
        .iter()
        .flat_map(|l| l.split(|c| c != '`'))
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest_run.max(2) + 1);
    let language = hit.path.rsplit('.').next().filter(|ext| !ext.contains('/'));
    format!(
        "{fence}{}\n{}{}\n{fence}\n",
        language.unwrap_or(""),
        body.join("\n"),
        if more { "\n…" } else { "" }
    )
}

fn first_code_line(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| {
            !l.is_empty()
                && !l.starts_with("//")
                && !l.starts_with('#')
                && !l.starts_with("/*")
                && !l.starts_with('*')
        })
        .or_else(|| text.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("");
    line.chars().take(80).collect()
}
