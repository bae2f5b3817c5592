//! The ranker's signals, each against a fixture plain BM25 gets wrong.

use super::*;
use crate::index::tests::index_of;
use crate::index::RetrievalIndex;

fn top_paths(index: &RetrievalIndex, query: &str, ranking: Ranking) -> Vec<String> {
    index
        .search_with(query, 5, ranking)
        .into_iter()
        .map(|hit| hit.path)
        .collect()
}

const SOURCE: &str = "\
/// A channel with a bounded buffer: senders wait while it is full.
pub struct BoundedChannel {
buffer: Vec<u8>,
}
";
const TEST: &str = "\
fn senders_wait_when_bounded_channel_buffer_is_full() {
let channel = bounded_channel();
fill_buffer(&channel);
assert!(channel.buffer.full());
let senders = spawn_senders(channel);
assert!(senders.wait());
assert!(channel.buffer.full());
}
";
const CHANGELOG: &str = "\
- bounded channel: senders now wait when the buffer is full (bounded channel buffer).
";

#[test]
fn definitions_beat_mentions_and_tests_are_demoted() {
    // Unrelated files give the terms realistic document frequencies.
    let fillers: Vec<(String, String)> = (0..20)
        .map(|i| {
            (
                format!("src/module{i}.rs"),
                format!("pub fn helper{i}(input: &str) -> usize {{\n    input.len() + {i}\n}}\n"),
            )
        })
        .collect();
    let mut files: Vec<(&str, &str)> = fillers
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    files.extend([
        ("tests/bounded_channel.rs", TEST),
        ("CHANGELOG.md", CHANGELOG),
        ("src/channel.rs", SOURCE),
    ]);
    let index = index_of(&files);
    let question = "what happens to senders when a bounded channel buffer is full";
    let plain = top_paths(&index, question, Ranking::PlainBm25);
    assert_ne!(
        plain[0], "src/channel.rs",
        "the fixture should fool plain BM25: {plain:?}"
    );
    let tuned = top_paths(&index, question, Ranking::Tuned);
    assert_eq!(tuned[0], "src/channel.rs", "{tuned:?}");
    // Asking for tests or changes lifts the demotion.
    let tests = top_paths(&index, "tests for the bounded channel", Ranking::Tuned);
    assert_eq!(tests[0], "tests/bounded_channel.rs", "{tests:?}");
    let changes = top_paths(
        &index,
        "what changed for bounded channel senders",
        Ranking::Tuned,
    );
    assert_eq!(changes[0], "CHANGELOG.md", "{changes:?}");
}

#[test]
fn a_named_test_file_lifts_tests_only_when_it_exists() {
    let mut files = vec![
        (
            "src/prompt.rs",
            "/// Asks yes or no.\npub fn confirm(prompt: &str) -> bool {\n    strip(prompt)\n}\n"
                .to_string(),
        ),
        (
            "tests/prompt.rs",
            "#[test]\nfn confirm_case() {\n    assert!(confirm(\"y\"));\n}\n".to_string(),
        ),
    ];
    // Tests of other things, so "test" is as common as in a real project.
    let others = ["tests/a.rs", "tests/b.rs", "tests/c.rs", "tests/d.rs"];
    for (i, path) in others.iter().enumerate() {
        files.push((
            path,
            format!("#[test]\nfn case_{i}() {{\n    assert_eq!(parse_{i}(), {i});\n}}\n"),
        ));
    }
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    let index = index_of(&files);
    // The reporter's own script: the project has no such file.
    let report = "ANSI codes are not stripped from confirm prompts, see test_repro.py";
    assert_eq!(
        top_paths(&index, report, Ranking::Tuned)[0],
        "src/prompt.rs"
    );
    // The project's test file, named.
    let named = "ANSI codes are not stripped from confirm prompts, see tests/prompt.rs";
    assert_eq!(
        top_paths(&index, named, Ranking::Tuned)[0],
        "tests/prompt.rs"
    );
}

#[test]
fn a_bug_report_naming_the_docs_file_it_feeds_in_is_answered_by_source() {
    let parser = "/// Reads the book's summary: chapters get numbers in order, and a horizontal\n\
        /// rule is a separator between parts.\n\
        pub fn parse_summary(text: &str) -> Vec<Chapter> {\n    number_chapters(text)\n}\n";
    let format = "# The summary format\n\nA list of chapters, numbered, with a separator \
        between parts.\n";
    let index = index_of(&[
        ("src/summary.rs", parser),
        ("guide/format/summary.md", format),
        ("guide/SUMMARY.md", "# Summary\n\n- [Intro](./intro.md)\n"),
    ]);
    let report = "Chapters are numbered wrong after a separator\n\n\
        With this `SUMMARY.md` the chapter numbers after the horizontal rule are off by one:\n\n\
        ```markdown\n- [Chapter 1](./chapter_1.md)\n---\n- [Chapter 2](./chapter_2.md)\n```\n";
    let top = top_paths(&index, report, Ranking::Tuned);
    assert_eq!(top[0], "src/summary.rs", "{top:?}");
    // A short question naming it asks for documentation of that kind.
    let top = top_paths(
        &index,
        "what does SUMMARY.md say about separators?",
        Ranking::Tuned,
    );
    assert_ne!(top[0], "src/summary.rs", "{top:?}");
}

#[test]
fn a_file_whose_head_says_it_is_generated_is_demoted() {
    let grammar = "%token NUMBER\n%%\nexpr: expr '+' term { $$ = add_terms($1, $3); }\n";
    let generated = "/* A Bison parser, made by GNU Bison 3.0.2.  */\n\nstatic int add_terms(int a, int b) {\n    return a + b; /* add terms of the expression */\n}\n";
    let index = index_of(&[("src/parser.y", grammar), ("src/parser.c", generated)]);
    let top = top_paths(
        &index,
        "where are the terms of an expression added (add_terms)?",
        Ranking::Tuned,
    );
    assert_eq!(top[0], "src/parser.y", "{top:?}");
}

#[test]
fn a_bug_report_is_cited_at_the_member_not_the_head_of_its_class() {
    let mut panel = String::from(
        "class Panel:\n    \"\"\"A console renderable that draws a border around its contents.\n\n    The panel has a title and a subtitle, each with a style and an alignment,\n    drawn in the top and bottom border of the panel.\n    \"\"\"\n\n    title_style = \"none\"\n    subtitle_style = \"none\"\n    border_style = \"none\"\n\n",
    );
    for i in 0..6 {
        panel.push_str(&format!(
            "    def helper_{i}(self, width):\n        return width - {i}\n\n"
        ));
    }
    panel.push_str(
        "    def render_title(self, title, width):\n        text = title.copy()\n        text.stylize(self.border_style)\n        # the title's own style is applied after the border's\n        text.stylize(self.title_style)\n        return text.truncate(width)\n",
    );
    let index = index_of(&[("rich/panel.py", panel.as_str())]);
    let report = "Panel title loses its style when the border has a style\n\n\
        When I draw a panel with a styled title and a border style, the title is drawn \
        with the border style instead of its own style. The text of the title is \
        stylized with the border style and then with the title style, but the result \
        shows the border colour. I expected the title to keep its own colour whatever \
        the border colour is, as it did in the previous release of the library, where \
        the title and the subtitle were both drawn in their own colours.";
    let hits = index.search(report, 3);
    assert_eq!(hits[0].symbol.as_deref(), Some("render_title"), "{hits:#?}");
    // A short question about the class is still answered by its head.
    let hits = index.search("What does the Panel class draw?", 3);
    assert_eq!(hits[0].symbol.as_deref(), Some("Panel"), "{hits:#?}");
}

#[test]
fn path_terms_count() {
    let index = index_of(&[
        ("src/timeout.rs", "pub fn limit(f: F, d: Duration) {}\n"),
        ("src/other.rs", "pub fn other(d: Duration) { limit(); }\n"),
    ]);
    let top = top_paths(&index, "give up after a timeout duration", Ranking::Tuned);
    assert_eq!(top[0], "src/timeout.rs", "{top:?}");
}

#[test]
fn results_are_spread_over_files() {
    let mut big = String::new();
    for i in 0..5 {
        big.push_str(&format!("/// Parses a header.\npub fn parse_header_{i}() {{\n    header();\n    a(); b(); c();\n    d();\n    e();\n}}\n\n"));
    }
    let index = index_of(&[
        ("src/big.rs", &big),
        (
            "src/small.rs",
            "/// Header parsing helper.\npub fn helper() {\n    header();\n}\n",
        ),
    ]);
    let top = top_paths(&index, "parse header", Ranking::Tuned);
    assert!(top[..3].contains(&"src/small.rs".to_string()), "{top:?}");
    let plain = top_paths(&index, "parse header", Ranking::PlainBm25);
    assert!(
        !plain[..3].contains(&"src/small.rs".to_string()),
        "{plain:?}"
    );
}

#[test]
fn best_symbol_matches_the_question() {
    let index = index_of(&[(
        "src/a.rs",
        "const A: u8 = 1;\nfn unrelated() {}\nfn read_line() {}\n",
    )]);
    let hit = &index.search("how do I read a line", 1)[0];
    assert_eq!(hit.symbol.as_deref(), Some("read_line"));
    // No definition shares a word with the question: the chunk's own symbol.
    let hit = &index.search("u8", 1)[0];
    assert_eq!(hit.symbol.as_deref(), Some("A"));
}
