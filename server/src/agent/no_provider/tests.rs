//! The no-model answer's choices: which places, in which order, cited from which lines.

use super::*;

fn candidate(path: &str, line: usize, ranked_down: bool) -> Candidate {
    Candidate {
        hit: super::super::spread::test_hit(path, line, ranked_down),
        place: Place {
            line,
            end_line: line + 2,
            heading: None,
            symbol: None,
            unnamed: false,
        },
        label: format!("f{line}"),
    }
}

#[test]
fn each_files_first_place_comes_first_and_a_ranked_down_file_waits_with_the_seconds() {
    let candidates = [
        candidate("src/a.rs", 1, false),
        candidate("src/a.rs", 10, false),
        candidate("tests/a.rs", 1, true),
        candidate("src/a.rs", 20, false),
        candidate("src/b.rs", 1, false),
        candidate("src/c.rs", 1, false),
        candidate("src/d.rs", 1, false),
    ];
    let listed: Vec<(&str, usize)> = choose(&candidates, &[])
        .iter()
        .map(|c| (c.hit.path.as_str(), c.place.line))
        .collect();
    assert_eq!(
        listed,
        [
            ("src/a.rs", 1),
            ("src/b.rs", 1),
            ("src/c.rs", 1),
            ("src/d.rs", 1),
            ("src/a.rs", 10),
        ]
    );
    // With fewer files, the rest keep the retrieval's order.
    let listed: Vec<(&str, usize)> = choose(&candidates[..4], &[])
        .iter()
        .map(|c| (c.hit.path.as_str(), c.place.line))
        .collect();
    assert_eq!(
        listed,
        [
            ("src/a.rs", 1),
            ("src/a.rs", 10),
            ("tests/a.rs", 1),
            ("src/a.rs", 20)
        ]
    );
}

const PY: &str = "import os\n\nclass Bucket:\n    \"\"\"A bucket.\"\"\"\n\n    @property\n    def level(self):\n        a = 1\n        b = 2\n        return a + b\n\n    def drain(self):\n        pass\n";

fn parsed(path: &str, text: &str) -> Vec<Symbol> {
    syntax::symbols_for_path(path, text).unwrap().unwrap()
}

#[test]
fn a_chunk_inside_a_method_is_cited_from_the_method_line_to_its_end() {
    let lines: Vec<&str> = PY.lines().collect();
    // The chunk is lines 9-10 (1-based), the body of `level`.
    let place = parsed_place(&parsed("b.py", PY), &lines, 8, 10, Some("level"), &[]).unwrap();
    assert_eq!((place.line, place.end_line), (7, 10));
    assert_eq!(place.heading.as_deref(), Some("    def level(self):"));
}

#[test]
fn the_named_definition_wins_over_its_container_and_its_decorator_is_not_the_line() {
    let lines: Vec<&str> = PY.lines().collect();
    // The chunk starts at the decorator above `level` and runs past `drain`.
    let place = parsed_place(&parsed("b.py", PY), &lines, 5, 13, Some("drain"), &[]).unwrap();
    assert_eq!((place.line, place.end_line), (12, 13));
    let place = parsed_place(&parsed("b.py", PY), &lines, 5, 13, Some("level"), &[]).unwrap();
    assert_eq!((place.line, place.end_line), (7, 10));
    assert!(place.heading.is_none());
}

#[test]
fn a_module_is_not_a_place_and_a_chunk_outside_every_definition_has_none() {
    let rs = "mod inner {\n    const A: u32 = 1;\n}\n\nuse std::io;\n";
    let lines: Vec<&str> = rs.lines().collect();
    assert!(parsed_place(&parsed("a.rs", rs), &lines, 0, 1, Some("inner"), &[]).is_none());
    assert!(parsed_place(&parsed("a.rs", rs), &lines, 4, 5, Some("io"), &[]).is_none());
}

#[test]
fn a_chunk_named_after_a_definition_above_it_is_labelled_by_its_own_line() {
    // The chunker names a run of imports after the function before it; the place is
    // the first line of code after the imports, and its label must be that line, not
    // the function's name (label, line and range from the same text).
    let text = "def check(version):\n    return version\n\n\nimport os\nfrom b import (\n    c,\n)\nos.environ.setdefault(\"LOG\", \"1\")\n";
    let (_dir, workspace) = one_file_workspace("pkg/__init__.py", text);
    let hit = |start, end| hit_on("pkg/__init__.py", text, (start, end), "check", None);
    let places = locate(&workspace, &[hit(5, 9)], "log level");
    assert_eq!(places.len(), 1);
    assert_eq!((places[0].line, places[0].end_line), (9, 9));
    assert_eq!(places[0].label, "os.environ.setdefault(\"LOG\", \"1\")");
    assert_eq!(places[0].symbol, None);
    // The chunk that is the function keeps its name.
    let places = locate(&workspace, &[hit(1, 2)], "check the version");
    assert_eq!((places[0].line, places[0].label.as_str()), (1, "check"));
}

/// A workspace holding one file, `path` with `text`.
fn one_file_workspace(path: &str, text: &str) -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(path);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(file, text).unwrap();
    let workspace = Workspace::new(
        crate::workspace::sandbox::Sandbox::new(dir.path()).unwrap(),
        std::sync::Arc::new(crate::workspace::NoDocuments),
    );
    (dir, workspace)
}

/// A hit on the 1-based lines `start..=end` of `text`, the file `path`, named `symbol`,
/// with `recorded` as the index's parse of the file.
fn hit_on(
    path: &str,
    text: &str,
    (start_line, end_line): (usize, usize),
    symbol: &str,
    recorded: Option<Vec<Symbol>>,
) -> RetrievalHit {
    RetrievalHit {
        path: path.to_string(),
        start_line,
        end_line,
        score: 1.0,
        symbol: Some(symbol.to_string()),
        ranked_down: false,
        text: text
            .lines()
            .skip(start_line - 1)
            .take(end_line - start_line + 1)
            .collect::<Vec<_>>()
            .join("\n"),
        file_symbols: recorded.map(std::sync::Arc::new),
    }
}

#[test]
fn the_index_parse_of_a_file_serves_while_it_fits_the_text() {
    let text = "def refill(bucket):\n    bucket.tokens = bucket.size\n    return bucket\n\n\ndef other():\n    pass\n";
    let mut recorded = parsed("pkg/mod.py", text);
    // Marked, so the place shows which parse it came from: the parse of the text ends
    // `refill` at its line 3.
    recorded[0].end_line = 1;
    let (_dir, workspace) = one_file_workspace("pkg/mod.py", text);
    let hit = hit_on("pkg/mod.py", text, (1, 3), "refill", Some(recorded));
    let places = locate(&workspace, &[hit], "refill the bucket");
    assert_eq!((places[0].line, places[0].end_line), (1, 2));
}

#[test]
fn the_index_parse_of_a_file_changed_since_is_not_trusted() {
    let old = "def refill(bucket):\n    bucket.tokens = bucket.size\n    return bucket\n";
    // Two lines were added above since the index parsed the file.
    let now = format!("import os\n\n{old}");
    let (_dir, workspace) = one_file_workspace("pkg/mod.py", &now);
    let recorded = parsed("pkg/mod.py", old);
    let hit = hit_on("pkg/mod.py", &now, (3, 5), "refill", Some(recorded));
    let places = locate(&workspace, &[hit], "refill the bucket");
    assert_eq!((places[0].line, places[0].end_line), (3, 5));
    assert_eq!(places[0].label, "refill");
}

/// A search over `ranked`, best first, recording how many hits it was asked for.
fn recorded_search<'a>(
    ranked: &'a [RetrievalHit],
    asked: &'a std::cell::RefCell<Vec<usize>>,
) -> impl Fn(usize) -> Vec<RetrievalHit> + 'a {
    move |n| {
        asked.borrow_mut().push(n);
        ranked.iter().take(n).cloned().collect()
    }
}

#[test]
fn places_are_chosen_from_more_chunks_only_when_the_first_hold_too_few_files() {
    use super::super::spread::test_hit as hit;
    // A large test suite: the first twelve chunks are three files' tests, and the source
    // files come after them.
    let mut suite: Vec<RetrievalHit> = (0..CANDIDATES)
        .map(|i| hit(&format!("test/test_{}.py", i % 3), i * 10, true))
        .collect();
    suite.extend((0..6).map(|i| hit(&format!("lib/m{i}.py"), 1, false)));
    let asked = std::cell::RefCell::new(Vec::new());
    let hits = place_candidates(&recorded_search(&suite, &asked));
    assert_eq!(*asked.borrow(), [CANDIDATES, WIDER_CANDIDATES]);
    let listed: Vec<usize> = files_first(&hits).into_iter().take(PLACES).collect();
    assert!(
        listed.iter().all(|&i| hits[i].path.starts_with("lib/")),
        "{:?}",
        listed.iter().map(|&i| &hits[i].path).collect::<Vec<_>>()
    );

    // Five files the ranker kept among the first twelve: one search, as before.
    let usual: Vec<RetrievalHit> = (0..20)
        .map(|i| hit(&format!("src/f{}.rs", i % 5), i, false))
        .collect();
    let asked = std::cell::RefCell::new(Vec::new());
    assert_eq!(
        place_candidates(&recorded_search(&usual, &asked)).len(),
        CANDIDATES
    );
    assert_eq!(*asked.borrow(), [CANDIDATES]);

    // Fewer chunks than asked for: there are no more to find.
    let few = &suite[..4];
    let asked = std::cell::RefCell::new(Vec::new());
    assert_eq!(place_candidates(&recorded_search(few, &asked)).len(), 4);
    assert_eq!(*asked.borrow(), [CANDIDATES]);
}

fn excerpt_of(text: &str, start_line: usize, line: usize, end_line: usize) -> String {
    let mut hit = super::super::spread::test_hit("src/a.py", start_line, false);
    hit.end_line = start_line + text.lines().count() - 1;
    hit.text = text.to_string();
    let place = Place {
        line,
        end_line,
        heading: None,
        symbol: None,
        unnamed: false,
    };
    excerpt(&hit, &place)
}

#[test]
fn an_excerpt_shows_the_cited_lines_and_nothing_after_them() {
    // A one-line constant in a chunk that goes on: its line only.
    let text = "LIMIT = 3\nOTHER = 4\n\ndef f():\n    pass";
    assert_eq!(excerpt_of(text, 32, 32, 32), "```py\nLIMIT = 3\n```\n");
    // A two-line function followed by the next one in the same chunk.
    let text = "def a():\n    return 1\n\ndef b():\n    return 2\n    # more";
    assert_eq!(
        excerpt_of(text, 672, 672, 673),
        "```py\ndef a():\n    return 1\n```\n"
    );
    // A place longer than the excerpt says it goes on.
    let text = "def a():\n    x = 1\n    x = 2\n    x = 3\n    x = 4\n    x = 5\n    return x";
    assert!(excerpt_of(text, 10, 10, 16).ends_with("    x = 5\n…\n```\n"));
    // A place that ends in this chunk's last line shown says nothing more.
    assert!(excerpt_of(text, 10, 10, 15).ends_with("    x = 5\n```\n"));
}
