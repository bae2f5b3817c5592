//! What a question asks for beyond source code (tests, benches, examples, the
//! changelog, docs), from explicit signals only, and the prose's content words.

use super::super::tokenize::{is_stop_word, words};

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

/// What the question asks for beyond code. Explicit signals only: a mentioned path of
/// that kind (not one only linked to: "I've checked the [FAQ](…/FAQ.md)"), or a question
/// mostly about it (at least a sixth of its content words). A
/// word the user owns ("my test fails", "our docs") is about their own project, not
/// this one's tests or docs, and does not count.
pub fn about(prose: &str) -> About {
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

/// "my", "our": the reporter owns the word that follows.
pub fn is_possessive(word: &str) -> bool {
    matches!(word, "my" | "our" | "your" | "their" | "own")
}

/// The content words of prose, lowercased, with the word before each (for possessives).
pub fn content_words(text: &str) -> Vec<(String, Option<String>)> {
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

#[cfg(test)]
mod tests {
    use super::super::terms::OWNED_WORD_WEIGHT;
    use super::super::{parse, weighted_terms};

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
        // A report written as a test names its own test and the framework's base class,
        // which is no test: SQLAlchemy's `def test_case` (the SQL CASE construct) must
        // not take `TestCase` for a test the report names.
        let scaffold = parse(
            "Calling aliased(union(q1, q2)) fails\n\n```py\nclass ReproTest(TestCase):\n    def test_repro(self):\n        aliased(union(q1, q2))\n```",
        );
        assert_eq!(scaffold.test_names, ["ReproTest", "test_repro"]);
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
}
