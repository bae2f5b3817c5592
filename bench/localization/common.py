"""Shared helpers for the localization eval: where mirrors live, what counts as a source
file (not a test, doc, example, benchmark or fixture)."""
import os
import re

MIRRORS = os.environ.get("LOCALIZATION_MIRRORS", "/work/.mirror")

SOURCE_EXT = {
    ".py", ".rs", ".go", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".java", ".kt",
    ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx",
}

# Path parts that mark tests, docs, examples, benchmarks, fixtures and vendored code.
NON_SOURCE_PART = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec|specs|testdata|test_data|fixtures?|docs?|doc_src|"
    r"examples?|example|benches|benchmarks?|bench|vendor|third_party|3rdparty|\.github)(/|$)",
    re.I,
)
TEST_FILE = re.compile(
    r"(^|/)(test_[^/]*|[^/]*_test\.[a-z]+|[^/]*_tests\.[a-z]+|[^/]*\.test\.[a-z]+|"
    r"[^/]*\.spec\.[a-z]+|[^/]*Test\.java|[^/]*Tests\.java|conftest\.py)$"
)


def mirror_dir(repo):
    """The bare git dir the `fetch` tool brings github:OWNER/NAME to."""
    return os.path.join(MIRRORS, repo.replace("/", "+"), "repo")


def is_non_source(path):
    """True for tests, docs, examples, benchmarks, fixtures, vendored code and non-code text."""
    return bool(NON_SOURCE_PART.search(path) or TEST_FILE.search(path)) or \
        os.path.splitext(path)[1].lower() in {".md", ".rst", ".txt", ".adoc", ".html"}


def is_source(path):
    return os.path.splitext(path)[1].lower() in SOURCE_EXT and not is_non_source(path)
