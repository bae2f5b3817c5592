"""Questions of the written kind for the learned ranker (issue #52): a definition's doc
comment as the question, the file that defines it as the answer, with the comment taken
out of the checkout before it is indexed, so the index cannot answer by matching the
comment's own words.

Commit messages read like bug reports; a question such as "how does a table decide the
width of each column?" describes what code does, as a doc comment does. Without such
queries the model learns only the first kind (docs/retrieval.md, "The learned ranker").

`strip_and_ask(binary, checkout, language, snapshot)` picks up to MAX_QUERIES documented
definitions (at most one a file, in a fixed pseudo-random order of the source files),
blanks their comment lines in place (line numbers unchanged) and returns the queries, in
mine.py's query shape with `kind: "doc"`. Deterministic for a snapshot.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

import mine  # train/rank/mine.py: its path kinds (tests, vendored, docs are no answers)
from sources import embed_mine  # train/mine.py: doc comment readers, shared with the code model

MAX_QUERIES = 60
MAX_FILES = 600
MAX_FILE_BYTES = 200_000
MIN_WORDS = 6
MAX_CHARS = 400
# Vendored copies the miner's path kinds miss (pip's `_vendor/`): not the project's own code.
VENDORED = re.compile(r"(^|/)_?vendor(ed)?/|(^|/)third_party/", re.I)
SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]`'\"])[.!?](\s|$)")


def _order(path: str, snapshot: str) -> str:
    return hashlib.sha256(f"{snapshot}:{path}".encode()).hexdigest()


def _source_files(checkout: Path) -> list[str]:
    out = []
    for root, dirs, names in os.walk(checkout):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            path = os.path.relpath(os.path.join(root, name), checkout).replace(os.sep, "/")
            if embed_mine.lang_of(path) is None or mine.kind_of(path) != "source" or VENDORED.search(path):
                continue
            try:
                if os.path.getsize(os.path.join(root, name)) > MAX_FILE_BYTES:
                    continue
            except OSError:
                continue
            out.append(path)
    return out


def _symbols(binary: str, files: list[tuple[str, str]]) -> list:
    lines = "".join(json.dumps({"path": p, "text": t}) + "\n" for p, t in files)
    done = subprocess.run([binary, "dev", "symbols"], input=lines, capture_output=True, text=True, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


def _question(doc: str, name: str) -> str | None:
    """The comment's first sentences as a question: a Go-style leading name dropped,
    cut at a sentence end past MAX_CHARS/2 or at MAX_CHARS."""
    doc = " ".join(doc.split())
    if name and doc.startswith(name + " "):
        doc = doc[len(name) + 1:]
    for stop in ("@param", "@return", ":param", ":return", "Args:", "Returns:", "Parameters", "# Examples",
                 "# Errors", "# Panics", "Example:", ">>>", "```"):
        cut = doc.find(stop)
        if cut > 0:
            doc = doc[:cut]
    if len(doc) > MAX_CHARS:
        ends = [m.end() for m in SENTENCE_END.finditer(doc) if m.end() <= MAX_CHARS]
        doc = doc[:ends[-1]] if ends and ends[-1] > MAX_CHARS // 4 else doc[:MAX_CHARS]
    doc = doc.strip()
    return doc if embed_mine.words(doc) >= MIN_WORDS else None


def _documented(path: str, text: str, definitions) -> tuple[str, int, int] | None:
    """The file's first documented definition worth a question: (question, first line,
    last line) of its comment, 0-based, inclusive."""
    lines = text.split("\n")
    language = embed_mine.lang_of(path)
    for d in definitions or []:
        if d["kind"] in embed_mine.SKIP_KINDS or d["endLine"] >= len(lines) or d["endLine"] - d["line"] < 2:
            continue
        if language == "python":
            span = embed_mine.python_docstring_span(lines, d)
            if not span:
                continue
            doc, first, last = span
        else:
            if d["docLine"] >= d["line"]:
                continue
            first, last = d["docLine"], d["line"] - 1
            doc = embed_mine.clean_comment(lines[first:last + 1])
        question = _question(doc, d.get("name") or "")
        if question:
            return question, first, last
    return None


def strip_and_ask(binary: str, checkout: Path, language: str, snapshot: str) -> list[dict]:
    paths = sorted(_source_files(checkout), key=lambda p: _order(p, snapshot))[:MAX_FILES]
    files = []
    for path in paths:
        try:
            files.append((path, (checkout / path).read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    queries = []
    for (path, text), definitions in zip(files, _symbols(binary, files)):
        if len(queries) >= MAX_QUERIES:
            break
        found = _documented(path, text, definitions)
        if not found:
            continue
        question, first, last = found
        lines = text.split("\n")
        for i in range(first, last + 1):
            lines[i] = ""
        (checkout / path).write_text("\n".join(lines), encoding="utf-8")
        queries.append({"snapshot": snapshot, "commit": f"doc:{path}:{first + 1}", "query": question,
                        "answer": [path], "kind": "doc"})
    return queries
