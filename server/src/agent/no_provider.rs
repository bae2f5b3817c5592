//! The answer when no model is configured: the most relevant places for the question,
//! found by the server's own retrieval, so the tool is useful on a fresh machine.

use super::citations::{check, CitedLines};
use super::definition_extent::{definition_end, indent};
use super::place_lines::{self, first_code_line, name_overlap};
use super::related_changes;
use super::spread::{self, files_first};
use super::{AgentOutcome, AskInput, AskStats, StopReason};
use crate::history::History;
use crate::index::RetrievalHit;
use crate::syntax::{self, Symbol, SymbolKind};
use crate::text::PositionEncoding;
use crate::workspace::redact::redact;
use crate::workspace::Workspace;

mod locate_question;
pub use locate_question::locate_question;

/// Places listed in a no-provider answer.
pub const PLACES: usize = 5;
/// Retrieved chunks the places are chosen from: more than `PLACES`, since a chunk that
/// holds only a module docstring, imports or a guard is no place and is passed over.
pub const CANDIDATES: usize = 12;
/// Chunks they are chosen from when the first `CANDIDATES` hold fewer than `PLACES`
/// files the index did not rank down (`place_candidates`).
pub const WIDER_CANDIDATES: usize = super::spread::MODEL_CANDIDATES;

/// The retrieved chunks a no-model answer's places are chosen from, `search(n)` giving
/// the best `n`: `CANDIDATES` of them, or `WIDER_CANDIDATES` when those hold fewer than
/// `PLACES` files the index did not rank down. In a project with a large test suite the
/// first twelve chunks can all be tests and second chunks (a report written as a
/// `TestCase`), and the source files after them are what the places should list first
/// (`spread::files_first`). Searching again only then keeps the usual ask as cheap as
/// before: reading twice as many chunks for every ask cost a short question a third
/// more time.
pub fn place_candidates(search: &dyn Fn(usize) -> Vec<RetrievalHit>) -> Vec<RetrievalHit> {
    let hits = search(CANDIDATES);
    if hits.len() < CANDIDATES || spread::leading_files(&hits) >= PLACES {
        return hits;
    }
    search(WIDER_CANDIDATES)
}

/// The retrieved chunks a model's context is chosen from (`spread::for_model`).
pub fn model_candidates(search: &dyn Fn(usize) -> Vec<RetrievalHit>) -> Vec<RetrievalHit> {
    search(spread::MODEL_CANDIDATES)
}

/// The places for the question, then the past changes that match it strongly and
/// changed the cited files (from each root's history, `histories`, when it has one).
pub fn answer(
    workspace: &Workspace,
    input: &AskInput,
    encoding: PositionEncoding,
    histories: &[(&str, &History)],
) -> AgentOutcome {
    let preamble = "No model is configured, so this answer lists the places in the workspace that best match your question, found by copilot-ls's own search. \
         To get written answers, set `provider` (`openai` or `anthropic`) and the API key variable, or point `baseUrl` at a local server such as Ollama or llama.cpp.\n\n";
    let mut outcome = ranked_places(workspace, input, encoding, preamble);
    if !histories.is_empty() {
        let mut cited: Vec<String> = outcome.citations.iter().map(|c| c.path.clone()).collect();
        cited.dedup();
        outcome.answer.push_str(&related_changes::section(
            histories,
            &input.question,
            &cited,
        ));
    }
    outcome
}

/// The same places without the note about configuring a model: what was asked for
/// (ACP's `/locate`), whether or not a model is configured.
pub fn places(workspace: &Workspace, input: &AskInput, encoding: PositionEncoding) -> AgentOutcome {
    ranked_places(workspace, input, encoding, "")
}

fn ranked_places(
    workspace: &Workspace,
    input: &AskInput,
    encoding: PositionEncoding,
    preamble: &str,
) -> AgentOutcome {
    let mut answer = String::from(preamble);
    let mut citations = Vec::new();
    for place in locate(workspace, &input.context, &input.question) {
        let citation = check(
            workspace,
            &CitedLines {
                path: place.path.clone(),
                line: place.line,
                end_line: place.end_line,
                note: Some(place.label.clone()),
            },
            encoding,
        );
        answer.push_str(&format!(
            "{}. `{}:{}` — `{}`\n\n{}\n",
            citations.len() + 1,
            place.path,
            place.line,
            place.label.replace('`', "'"),
            place.excerpt
        ));
        citations.push(citation);
    }
    if citations.is_empty() {
        answer.push_str(if input.index.still_building() {
            "The index is still being built and holds nothing that matches the question's words yet; ask again when indexing is done.\n"
        } else {
            "The search found nothing that matches the question's words.\n"
        });
    }
    AgentOutcome {
        answer,
        citations,
        edits: Vec::new(),
        steps: Vec::new(),
        stop_reason: StopReason::NoProvider,
        history: input.history.clone(),
        stats: AskStats::default(),
        notice: None,
    }
}

/// One place a no-model answer lists.
#[derive(Clone, Debug)]
pub struct LocatedPlace {
    /// Workspace-relative, `/` separators.
    pub path: String,
    /// 1-based: the line defining the place (see `place`).
    pub line: usize,
    pub end_line: usize,
    /// The definition's name, or the first code line of the place.
    pub label: String,
    /// The definition cited, if any.
    pub symbol: Option<String>,
    /// A few lines of it, fenced with the file's language (secrets redacted).
    pub excerpt: String,
}

/// The places a no-model answer lists for `question`, chosen from its retrieved `hits`
/// (best first; pass `place_candidates`): at most `PLACES`, each with its defining
/// line, last line and excerpt, file text redacted as in tool output. A chunk that holds
/// only a docstring, imports or a guard is passed over (see `place` and `choose`).
/// `copilot-ls mcp`'s `locate` tool answers with the same.
pub fn locate(workspace: &Workspace, hits: &[RetrievalHit], question: &str) -> Vec<LocatedPlace> {
    let question = place_lines::words(question);
    let candidates: Vec<Candidate> = hits
        .iter()
        .filter_map(|hit| {
            // The excerpts and labels show file text: secrets redacted as in tool output.
            let hit = RetrievalHit {
                text: redact(&hit.text).into_owned(),
                ..hit.clone()
            };
            // A chunk of docstring, imports and guards alone is no place: the next one is.
            let place = place(workspace, &hit, &question)?;
            let label = cited_symbol(&place, &hit)
                .unwrap_or_else(|| label_line(&hit.text, place.line - hit.start_line));
            Some(Candidate { hit, place, label })
        })
        .collect();
    choose(&candidates, &question)
        .into_iter()
        .map(|Candidate { hit, place, label }| LocatedPlace {
            path: hit.path.clone(),
            line: place.line,
            end_line: place.end_line,
            label: label.clone(),
            symbol: cited_symbol(place, hit),
            excerpt: excerpt(hit, place),
        })
        .collect()
}

/// `locate`'s text for `places`: numbered, `path:line-end label`, then the excerpt.
pub fn places_text(places: &[LocatedPlace]) -> String {
    let mut text = String::new();
    for (i, place) in places.iter().enumerate() {
        text.push_str(&format!(
            "{}. {}:{}-{} {}\n{}\n",
            i + 1,
            place.path,
            place.line,
            place.end_line.max(place.line),
            place.label,
            place.excerpt
        ));
    }
    text
}

/// The definition a place cites: its own, else the chunk's when that one holds it.
fn cited_symbol(place: &Place, hit: &RetrievalHit) -> Option<String> {
    place
        .symbol
        .clone()
        .or_else(|| hit.symbol.clone().filter(|_| !place.unnamed))
}

/// A retrieved chunk that is a place, with what the answer calls it.
struct Candidate {
    hit: RetrievalHit,
    place: Place,
    label: String,
}

/// The places listed, best first: the first `PLACES` distinct candidates in
/// `spread::files_first`'s order (each file's first place before any file's second, a
/// file ranked down for its kind with the second places). Then a place holding a
/// definition that is a candidate too, but too far down to be listed, gives its slot to
/// that definition when its name shares as many of the question's words (a class cited
/// from its head, and the method of it that checks what was asked about: the index
/// ranks a file's later chunks down).
fn choose<'a>(candidates: &'a [Candidate], question: &[String]) -> Vec<&'a Candidate> {
    let same =
        |a: &Candidate, b: &Candidate| a.hit.path == b.hit.path && a.place.line == b.place.line;
    let order = files_first(candidates.iter().map(|c| &c.hit));
    let mut listed: Vec<usize> = Vec::new();
    for i in order {
        if listed.len() < PLACES && !listed.iter().any(|&l| same(&candidates[l], &candidates[i])) {
            listed.push(i);
        }
    }
    let overlap = |c: &Candidate| name_overlap(short_name(&c.label), question);
    let nests = |outer: &Candidate, inner: &Candidate| {
        outer.hit.path == inner.hit.path
            && outer.place.line < inner.place.line
            && inner.place.end_line <= outer.place.end_line
    };
    let mut taken: Vec<usize> = listed.clone();
    for slot in 0..listed.len() {
        let outer = &candidates[listed[slot]];
        let inner = (0..candidates.len()).find(|&j| {
            !taken.contains(&j)
                && !taken.iter().any(|&t| same(&candidates[t], &candidates[j]))
                && nests(outer, &candidates[j])
                && overlap(&candidates[j]) >= overlap(outer)
        });
        if let Some(inner) = inner {
            taken.push(inner);
            listed[slot] = inner;
        }
    }
    listed.into_iter().map(|i| &candidates[i]).collect()
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
    /// The definition cited, when it is not the chunk's own (another one defined in it
    /// is named more like the question).
    symbol: Option<String>,
    /// The chunk's own definition does not hold this place (a chunk of imports after
    /// it, named after it by the chunker): the place is labelled by its line, so that
    /// label, line and range come from the same text.
    unnamed: bool,
}

/// The place a hit stands for (PROTOCOL.md §3, `provider: none`): `line` is the line
/// naming its definition (not the doc comment, attribute or import above it), `endLine`
/// the definition's last line. A chunk cut from the middle of a long body is cited from
/// its definition's line above it. The definition's extent is read from indentation:
/// it ends before the next line indented no deeper than its defining line, keeping a
/// closing `}`/`)`/`end` at that depth. Prose (Markdown, text) and chunks without a
/// definition keep the chunk's range, from its first line of code. `None` for a chunk
/// that is no place: a module docstring, imports, an `if TYPE_CHECKING:` guard, and
/// nothing else.
fn place(workspace: &Workspace, hit: &RetrievalHit, question: &[String]) -> Option<Place> {
    let chunk: Vec<&str> = hit.text.lines().collect();
    let from = |offset: usize| Place {
        line: hit.start_line + offset,
        end_line: hit.end_line,
        heading: None,
        symbol: None,
        unnamed: false,
    };
    let fallback = || first_code_line(&chunk).map(from);
    let name = hit.symbol.as_deref().map(short_name);
    if is_prose(&hit.path) {
        let offset = name
            .and_then(|name| chunk.iter().position(|l| l.contains(name)))
            .or_else(|| chunk.iter().position(|l| is_code(l)))
            .unwrap_or(0);
        return Some(from(offset));
    }
    let Some(text) = workspace
        .resolve_readable(&hit.path)
        .and_then(|resolved| workspace.read_redacted(&resolved))
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
    // A language with a grammar: the parsed definition's own lines, not a guess from
    // braces or indentation. The index's parse of the file serves while the text read
    // now still fits it (`still_holds`); parsing each file again took most of an
    // answer's time.
    let parsed;
    let symbols = match hit.file_symbols.as_deref() {
        Some(recorded) if still_holds(recorded, &lines) => Some(Ok(recorded.as_slice())),
        _ => {
            parsed = syntax::symbols_for_path(&hit.path, &text);
            parsed.as_ref().map(|parsed| parsed.as_deref())
        }
    };
    if let Some(parsed) = symbols {
        return match parsed {
            // No definition named like the chunk holds it or starts in it: the chunk's
            // name is not this place's.
            Ok(symbols) => {
                parsed_place(symbols, &lines, start, end, name, question).or_else(|| {
                    fallback().map(|place| Place {
                        unnamed: true,
                        ..place
                    })
                })
            }
            Err(_) => fallback(),
        };
    }
    let Some(name) = name else {
        return fallback();
    };
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
    Some(Place {
        line: defining + 1,
        end_line: last + 1,
        // File text shown in the answer, from the redacted file.
        heading: (defining < start).then(|| lines[defining].to_string()),
        symbol: None,
        unnamed: false,
    })
}

/// Whether definitions parsed from a file's text fit `lines`, the text as read now: the
/// line each one was found on still reads as its recorded signature (that line, trimmed
/// and maybe cut), and its body ends within the text.
fn still_holds(symbols: &[Symbol], lines: &[&str]) -> bool {
    symbols.iter().all(|s| {
        let Some(line) = lines.get(s.line) else {
            return false;
        };
        // The index stores a tab as a space.
        let line = line.trim().replace('\t', " ");
        let signature = s.signature.strip_suffix('…');
        s.end_line < lines.len()
            && match signature {
                Some(cut) => line.starts_with(cut),
                None => line == s.signature,
            }
    })
}

/// The place of a chunk (0-based lines `start..end`) in a parsed file: the innermost
/// definition named `name` that holds the chunk's start or starts inside the chunk, unless
/// another definition starting inside the chunk is named more like the question (a run
/// of constants is one chunk, named after its first); else the innermost definition
/// holding the chunk. A module or namespace holds the whole file, so the chunk itself is
/// the better place then (`None`).
fn parsed_place(
    symbols: &[Symbol],
    lines: &[&str],
    start: usize,
    end: usize,
    name: Option<&str>,
    question: &[String],
) -> Option<Place> {
    let holds = |s: &&Symbol| s.doc_line <= start && start <= s.end_line;
    let starts_inside = |s: &&Symbol| (start..end).contains(&s.line);
    let named = |s: &&Symbol| {
        name.is_some_and(|name| s.name == name || short_name(&s.qualified_name) == name)
    };
    let named_symbol = innermost(
        symbols
            .iter()
            .filter(|s| named(s) && (holds(s) || starts_inside(s))),
    );
    let overlap = |s: &Symbol| name_overlap(&s.name, question);
    // The first of the best named, among those defined in the chunk.
    let asked = symbols
        .iter()
        .filter(|s| starts_inside(s) && s.kind != SymbolKind::Module && overlap(s) > 0)
        .max_by_key(|s| (overlap(s), std::cmp::Reverse(s.line)));
    let symbol = match (named_symbol, asked) {
        (Some(named), Some(asked)) if overlap(asked) > overlap(named) => asked,
        (Some(named), _) => named,
        (None, Some(asked)) => asked,
        (None, None) => innermost(symbols.iter().filter(holds))?,
    };
    if symbol.kind == SymbolKind::Module || symbol.line >= lines.len() {
        return None;
    }
    Some(Place {
        line: symbol.line + 1,
        end_line: symbol.end_line.min(lines.len() - 1).max(symbol.line) + 1,
        // File text shown in the answer, from the redacted file.
        heading: (symbol.line < start).then(|| lines[symbol.line].to_string()),
        symbol: (!named(&symbol)).then(|| symbol.qualified_name.clone()),
        unnamed: false,
    })
}

/// The narrowest of `candidates` (the deepest when two are as long).
fn innermost<'a>(candidates: impl Iterator<Item = &'a Symbol>) -> Option<&'a Symbol> {
    candidates.min_by_key(|s| (s.end_line - s.line, usize::MAX - s.depth))
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
    // The place's own lines only: never past its last line into what follows it.
    let last = place.end_line.max(place.line);
    let taken = EXCERPT_LINES - lines.len();
    let from_chunk: Vec<&str> = hit
        .text
        .lines()
        .enumerate()
        .skip(skip)
        .take(taken)
        .take_while(|(i, _)| hit.start_line + i <= last)
        .map(|(_, line)| line)
        .collect();
    let shown_to = hit.start_line + skip + from_chunk.len();
    lines.extend(from_chunk);
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
    // The place goes on below what is shown (in this chunk or past it).
    let more = shown_to <= last;
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

/// A place's label when it names no definition: its first line of code, shortened.
fn label_line(text: &str, offset: usize) -> String {
    let line = text
        .lines()
        .skip(offset)
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    line.chars().take(80).collect()
}

#[cfg(test)]
mod tests;
