#!/usr/bin/env python3
"""Mine (text -> code) training pairs from public, permissively licensed repositories.

Kind 1: commit subject + body -> each definition the commit changed, as it was at the parent.
Kind 2: doc comment / docstring -> the definition it documents (comment removed from the code).

Repositories are bare git dirs under /work/.mirror/<owner>+<name>/repo (brought by the `fetch`
tool). Tokens come from `copilot-ls-dev dev terms` (exactly the index's terms), definitions from
`copilot-ls-dev dev symbols`. Mined pairs are cached per repository under
.tmp/train/pairs/<owner>+<name>.jsonl; a cached repository is not mined again.

Usage: python3 train/mine.py [--jobs 2] [--only owner/name ...]
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import time
from multiprocessing import Pool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIRROR = os.environ.get("MIRROR", "/work/.mirror")
BIN = os.environ.get("COPILOT_LS_DEV", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "target", "release", "copilot-ls"))
PAIRS_DIR = os.path.join(ROOT, ".tmp", "train", "pairs")

# repo -> (language, split, license as read from the LICENSE file at the mined commit)
REPOS = {
    # Python
    "psf/black": ("python", "train", "MIT"),
    "pallets/werkzeug": ("python", "train", "BSD-3-Clause"),
    "pallets/jinja": ("python", "train", "BSD-3-Clause"),
    "tornadoweb/tornado": ("python", "train", "Apache-2.0"),
    "encode/starlette": ("python", "train", "BSD-3-Clause"),
    "numpy/numpy": ("python", "train", "BSD-3-Clause"),
    "marshmallow-code/marshmallow": ("python", "train", "MIT"),
    "pydantic/pydantic": ("python", "train", "MIT"),
    "python-attrs/attrs": ("python", "val", "MIT"),
    # Rust
    "hyperium/hyper": ("rust", "train", "MIT"),
    "alacritty/alacritty": ("rust", "train", "Apache-2.0 OR MIT"),
    "rust-lang/cargo": ("rust", "train", "MIT OR Apache-2.0"),
    "rust-lang/regex": ("rust", "train", "MIT OR Apache-2.0"),
    "tokio-rs/mio": ("rust", "train", "MIT"),
    "rust-lang/rustfmt": ("rust", "train", "MIT OR Apache-2.0"),
    "tokio-rs/axum": ("rust", "val", "MIT"),
    # Go
    "spf13/viper": ("go", "train", "MIT"),
    "prometheus/prometheus": ("go", "train", "Apache-2.0"),
    "etcd-io/etcd": ("go", "train", "Apache-2.0"),
    "gohugoio/hugo": ("go", "train", "Apache-2.0"),
    "caddyserver/caddy": ("go", "train", "Apache-2.0"),
    "junegunn/fzf": ("go", "val", "MIT"),
    # JavaScript / TypeScript
    "lodash/lodash": ("js", "train", "MIT"),
    "webpack/webpack": ("js", "train", "MIT"),
    "prettier/prettier": ("js", "train", "MIT"),
    "eslint/eslint": ("js", "train", "MIT"),
    "jestjs/jest": ("js", "train", "MIT"),
    "mozilla/pdf.js": ("js", "train", "Apache-2.0"),
    "typeorm/typeorm": ("js", "train", "MIT"),
    "chartjs/Chart.js": ("js", "train", "MIT"),
    "vitejs/vite": ("js", "train", "MIT"),
    "date-fns/date-fns": ("js", "val", "MIT"),
    # Java
    "apache/commons-lang": ("java", "train", "Apache-2.0"),
    "apache/commons-collections": ("java", "train", "Apache-2.0"),
    "apache/commons-text": ("java", "train", "Apache-2.0"),
    "square/javapoet": ("java", "train", "Apache-2.0"),
    "square/retrofit": ("java", "train", "Apache-2.0"),
    "apache/commons-io": ("java", "val", "Apache-2.0"),
    # C / C++
    "curl/curl": ("c", "train", "curl"),
    "google/leveldb": ("c", "train", "BSD-3-Clause"),
    "madler/zlib": ("c", "train", "Zlib"),
    "tmux/tmux": ("c", "train", "ISC"),
    "google/googletest": ("c", "train", "BSD-3-Clause"),
    "nginx/nginx": ("c", "train", "BSD-2-Clause"),
    "google/re2": ("c", "train", "BSD-3-Clause"),
    "jemalloc/jemalloc": ("c", "train", "BSD-2-Clause"),
    "libuv/libuv": ("c", "val", "MIT"),
}

# Never train on these: public localization benchmarks and our own evaluation repositories.
EVAL_REPOS = {
    "CLIUtils/CLI11", "Genymobile/scrcpy", "Textualize/rich", "casey/just", "encode/httpx",
    "gabime/spdlog", "gin-gonic/gin", "jhy/jsoup", "jqlang/jq", "markedjs/marked",
    "networkx/networkx", "pallets/click", "rust-lang/mdBook", "sharkdp/hyperfine", "spf13/cobra",
    "sqlalchemy/sqlalchemy", "tj/commander.js", "urfave/cli", "yargs/yargs",
}


# The public localization benchmarks' repositories, kept beside the repository
# (`../shared/benchmark-repos.txt`; `COPILOT_LS_BENCHMARK_REPOS` names another copy).
BENCHMARK_LIST = os.environ.get(
    "COPILOT_LS_BENCHMARK_REPOS",
    os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                 "shared", "benchmark-repos.txt"))


def excluded_repos():
    """Our evaluation's repositories and the benchmarks' (mining refuses to run without
    the benchmarks' list: a repository it names must never be trained on)."""
    out = set(r.lower() for r in EVAL_REPOS)
    if not os.path.exists(BENCHMARK_LIST):
        sys.exit(f"mine.py: no list of benchmark repositories at {BENCHMARK_LIST}; "
                 "set COPILOT_LS_BENCHMARK_REPOS to it")
    for line in open(BENCHMARK_LIST):
        line = line.strip()
        if line and not line.startswith("#"):
            out.add(line.lower())
    return out


EXT_LANG = {
    ".py": "python", ".rs": "rust", ".go": "go",
    ".js": "js", ".mjs": "js", ".cjs": "js", ".jsx": "js", ".ts": "js", ".tsx": "js", ".mts": "js",
    ".java": "java",
    ".c": "c", ".h": "c", ".cc": "c", ".cpp": "c", ".cxx": "c", ".hpp": "c", ".hh": "c",
}
NOISE_PATH = re.compile(
    r"(^|/)(tests?|testing|__tests__|__mocks__|spec|specs|testdata|test-data|fixtures?|vendor|vendored|"
    r"third[_-]?party|node_modules|dist|build|out|examples?|benchmarks?|benches|docs?|website|"
    r"generated|gen)/"
    r"|(_test\.go|(^|/)test_[^/]*\.py|_test\.py|\.test\.[cm]?[jt]sx?|\.spec\.[cm]?[jt]sx?|Tests?\.java|"
    r"\.min\.js|\.d\.ts|\.pb\.go|_pb2\.py|\.generated\.\w+|conftest\.py)$",
    re.I)
GENERATED = re.compile(r"Code generated|DO NOT EDIT|@generated|autogenerated|auto-generated", re.I)
NOISE_SUBJECT = re.compile(
    r"^\s*(\[?(bump|release|releasing|version|prepare|preparing)\b|v?\d+\.\d+(\.\d+)?\b|"
    r"(update|add|edit)\s+(the\s+)?(changelog|changes|news|release notes)|changelog|merge\b|"
    r"(re)?format|run (black|prettier|rustfmt|gofmt|clang-format|cargo fmt)|apply (black|prettier|rustfmt)|"
    r"cargo fmt|gofmt|clang-format|lint\b|style\b|typo|fix typo|chore\(deps|chore\(release|"
    r"chore: (release|bump|update dep)|build\(deps|deps\b|update dependencies|upgrade dependencies|"
    r"update copyright|copyright)",
    re.I)
TRAILER = re.compile(r"^\s*([A-Za-z][A-Za-z-]*-by|Change-Id|Signed-off|Closes|Fixes|Refs?|See|PR-URL|"
                     r"Reviewed-on|Bug|Issue|Cc|Pick-to|Task-number|Co-Authored-By)\s*:", re.I)
SKIP_KINDS = {"constant", "variable", "field", "module", "package", "namespace", "import", "macro"}

MAX_COMMITS = 4000
MAX_DOC_FILES = 4000
MAX_FILE_BYTES = 300_000
MAX_FILES_PER_COMMIT = 10
MAX_DEFS_PER_COMMIT = 30
MAX_CODE_LINES = 120
MAX_CODE_CHARS = 6000
MAX_TEXT_CHARS = 1500
MAX_STORED_TERMS = 512
MAX_PAIRS_PER_KIND = 20000


def git(gd, *args, input=None):
    r = subprocess.run(["git", "--git-dir", gd, *args], input=input, capture_output=True)
    if r.returncode != 0:
        raise RuntimeError(f"git {args[:3]} failed: {r.stderr[:300]!r}")
    return r.stdout


def cat_blobs(gd, specs):
    """specs: list of 'rev:path' or blob sha. Returns list of str or None."""
    if not specs:
        return []
    inp = ("\n".join(specs) + "\n").encode()
    out = git(gd, "cat-file", "--batch", input=inp)
    res, pos = [], 0
    for _ in specs:
        nl = out.index(b"\n", pos)
        header = out[pos:nl].split()
        pos = nl + 1
        if len(header) < 3 or header[-1] == b"missing" or header[1] != b"blob":
            if len(header) >= 3 and header[1] != b"blob" and header[-1] != b"missing":
                pos += int(header[2]) + 1
            res.append(None)
            continue
        size = int(header[2])
        data = out[pos:pos + size]
        pos += size + 1
        res.append(data.decode("utf-8", "replace") if b"\0" not in data[:8000] else None)
    return res


def run_lines(cmd, items):
    """Stream JSON lines through ONE process; return parsed output lines."""
    if not items:
        return []
    inp = "".join(json.dumps(x) + "\n" for x in items).encode()
    r = subprocess.run(cmd, input=inp, capture_output=True)
    if r.returncode != 0:
        raise RuntimeError(f"{cmd} failed: {r.stderr[:500]!r}")
    lines = r.stdout.decode().splitlines()
    if len(lines) != len(items):
        raise RuntimeError(f"{cmd}: {len(items)} in, {len(lines)} out")
    return [json.loads(l) for l in lines]


def symbols(files):
    """files: list of (path, text) -> list of definitions or None, via chunks of one process each."""
    out = []
    for i in range(0, len(files), 500):
        chunk = files[i:i + 500]
        out.extend(run_lines([BIN, "dev", "symbols"], [{"path": p, "text": t} for p, t in chunk]))
    return out


def terms(texts):
    out = []
    for i in range(0, len(texts), 20000):
        out.extend(run_lines([BIN, "dev", "terms"], texts[i:i + 20000]))
    return out


def lang_of(path):
    return EXT_LANG.get(os.path.splitext(path)[1].lower())


def clip_code(lines):
    text = "\n".join(lines[:MAX_CODE_LINES])
    return text[:MAX_CODE_CHARS]


# ---------------------------------------------------------------- doc comments
COMMENT_PREFIX = re.compile(r"^\s*(///?!?|/\*\*?|\*/|\*|#|--)\s?")
HTML_TAG = re.compile(r"</?[a-zA-Z][^>]*>")


def clean_comment(lines):
    out = []
    for l in lines:
        s = l.strip()
        if not s:
            continue
        if s.startswith("#[") or s.startswith("#!["):  # Rust attributes
            continue
        if s.startswith("@") and not s.startswith("@param") and not s.startswith("@return"):
            continue  # decorators / annotations outside comments
        if not (s.startswith("//") or s.startswith("/*") or s.startswith("*") or s.startswith("#")):
            continue  # not a comment line (e.g. attribute continuation)
        s = COMMENT_PREFIX.sub("", s)
        s = s.replace("*/", "").strip()
        s = HTML_TAG.sub(" ", s)
        if s:
            out.append(s)
    return " ".join(out)


def words(s):
    return len(re.findall(r"[A-Za-z]{2,}", s))


PY_DOC_START = re.compile(r'^\s*[rRuUbB]{0,2}("""|\'\'\')')


def python_docstring(lines, d):
    """Returns (doc, code_lines_without_doc) or None."""
    span = python_docstring_span(lines, d)
    if span is None:
        return None
    doc, j, k = span
    return doc, lines[d["line"]:j] + lines[k + 1:d["endLine"] + 1]


def python_docstring_span(lines, d):
    """Returns (doc, first line, last line) of the definition's docstring, or None."""
    start, end = d["line"], d["endLine"]
    sig_end = None
    for i in range(start, min(end, start + 30) + 1):
        code = lines[i].split("#")[0].rstrip()
        if code.endswith(":"):
            sig_end = i
            break
    if sig_end is None:
        return None
    j = sig_end + 1
    while j <= end and not lines[j].strip():
        j += 1
    if j > end:
        return None
    m = PY_DOC_START.match(lines[j])
    if not m:
        return None
    q = m.group(1)
    first = lines[j][m.end():]
    if q in first:
        doc = first[:first.index(q)]
        k = j
    else:
        parts = [first]
        k = j + 1
        while k <= end and q not in lines[k]:
            parts.append(lines[k])
            k += 1
        if k > end:
            return None
        parts.append(lines[k][:lines[k].index(q)])
        doc = "\n".join(parts)
    return " ".join(doc.split()), j, k


def mine_docs(gd, rev, lang_want):
    tree = git(gd, "ls-tree", "-r", "-l", rev).decode("utf-8", "replace").splitlines()
    cands = []
    for row in tree:
        meta, path = row.split("\t", 1)
        parts = meta.split()
        if parts[1] != "blob" or not parts[3].isdigit() or int(parts[3]) > MAX_FILE_BYTES:
            continue
        if lang_of(path) is None or NOISE_PATH.search(path):
            continue
        cands.append((path, parts[2]))
    random.Random(0).shuffle(cands)
    cands = sorted(cands[:MAX_DOC_FILES])
    texts = cat_blobs(gd, [sha for _, sha in cands])
    files = [(p, t) for (p, _), t in zip(cands, texts) if t and not GENERATED.search(t[:1000])]
    defs = symbols(files)
    pairs = []
    for (path, text), ds in zip(files, defs):
        if not ds:
            continue
        lines = text.split("\n")
        lang = lang_of(path)
        for d in ds:
            if d["kind"] in SKIP_KINDS or d["endLine"] >= len(lines):
                continue
            if lang == "python":
                got = python_docstring(lines, d)
                if not got:
                    continue
                doc, code_lines = got
            else:
                if d["docLine"] >= d["line"]:
                    continue
                doc = clean_comment(lines[d["docLine"]:d["line"]])
                code_lines = lines[d["line"]:d["endLine"] + 1]
            # Go-style docs open with the name itself: drop it, questions do not carry it
            if d["name"] and doc.startswith(d["name"] + " "):
                doc = doc[len(d["name"]) + 1:]
            if words(doc) < 5 or len(code_lines) < 2:
                continue
            pairs.append({"kind": 2, "lang": lang, "path": path, "name": d["qualifiedName"],
                          "text": doc[:MAX_TEXT_CHARS], "code": clip_code(code_lines),
                          "group": f"doc:{path}:{d['line']}"})
    return pairs


# ---------------------------------------------------------------- commits
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def clean_message(msg):
    out = []
    for l in msg.split("\n"):
        if TRAILER.match(l):
            continue
        l = re.sub(r"https?://\S+", " ", l)
        l = re.sub(r"\(#\d+\)|#\d+\b|\b[0-9a-f]{12,40}\b", " ", l)
        out.append(l)
    return "\n".join(out).strip()


def mine_commits(gd, rev):
    raw = git(gd, "log", "--no-merges", "--no-renames", f"-n{MAX_COMMITS}", "--format=%x1e%H%x1f%P%x1f%B%x1d",
              "--name-only", rev).decode("utf-8", "replace")
    keep = []  # (sha, parent, message, [paths])
    for rec in raw.split("\x1e")[1:]:
        head, _, files = rec.partition("\x1d")
        sha, parents, msg = head.split("\x1f", 2)
        parents = parents.split()
        if len(parents) != 1:
            continue
        files = [f for f in files.split("\n") if f.strip()]
        if not files or len(files) > MAX_FILES_PER_COMMIT:
            continue
        subject = msg.strip().split("\n")[0]
        if NOISE_SUBJECT.search(subject) or "dependabot" in msg.lower():
            continue
        msg = clean_message(msg)
        if words(msg) < 5:
            continue
        src = [f for f in files if lang_of(f) and not NOISE_PATH.search(f)]
        if not src:
            continue
        keep.append((sha, parents[0], msg[:MAX_TEXT_CHARS], src))
    pairs = []
    for c0 in range(0, len(keep), 400):
        chunk = keep[c0:c0 + 400]
        # one diff-tree process for the chunk: old-side hunks of the source files
        inp = "".join(f"{sha}\n" for sha, _, _, _ in chunk).encode()
        allsrc = sorted({f for _, _, _, src in chunk for f in src})
        diff = git(gd, "diff-tree", "--stdin", "-p", "-U0", "--no-renames", "--diff-filter=M",
                   "--no-color", "--", *allsrc, input=inp).decode("utf-8", "replace")
        hunks = {}  # sha -> path -> [old lines 0-based]
        cur_sha = cur_path = None
        shaset = {c[0] for c in chunk}
        for line in diff.split("\n"):
            if len(line) == 40 and line in shaset:
                cur_sha, cur_path = line, None
                continue
            if line.startswith("--- "):
                cur_path = line[6:] if line.startswith("--- a/") else None
                continue
            m = HUNK.match(line)
            if m and cur_sha and cur_path:
                a = int(m.group(1))
                b = int(m.group(2)) if m.group(2) is not None else 1
                lines = list(range(a - 1, a - 1 + b)) if b > 0 else [max(a - 1, 0)]
                hunks.setdefault(cur_sha, {}).setdefault(cur_path, []).extend(lines)
        srcfiles = {c[0]: set(c[3]) for c in chunk}
        reqs = [(sha, parent, path) for sha, parent, _, _ in chunk
                for path in hunks.get(sha, {}) if path in srcfiles[sha]]
        texts = cat_blobs(gd, [f"{parent}:{path}" for _, parent, path in reqs])
        ok = [(r, t) for r, t in zip(reqs, texts)
              if t and len(t) <= MAX_FILE_BYTES and not GENERATED.search(t[:1000])]
        defs = symbols([(r[2], t) for r, t in ok])
        per_commit = {}
        for ((sha, parent, path), text), ds in zip(ok, defs):
            if not ds:
                continue
            lines = text.split("\n")
            cands = [d for d in ds if d["kind"] not in SKIP_KINDS and d["endLine"] < len(lines)]
            hit = {}
            for ln in hunks[sha][path]:
                best = None
                for d in cands:
                    if d["docLine"] <= ln <= d["endLine"]:
                        if best is None or d["endLine"] - d["docLine"] < best["endLine"] - best["docLine"]:
                            best = d
                if best is not None:
                    hit[(best["line"], best["qualifiedName"])] = best
            for d in hit.values():
                code_lines = lines[d["docLine"]:d["endLine"] + 1]
                if len(code_lines) < 2:
                    continue
                per_commit.setdefault(sha, []).append(
                    (path, d["qualifiedName"], clip_code(code_lines), lang_of(path)))
        msgs = {c[0]: c[2] for c in chunk}
        for sha, items in per_commit.items():
            if len(items) > MAX_DEFS_PER_COMMIT:
                continue
            for path, name, code, lang in items:
                pairs.append({"kind": 1, "lang": lang, "path": path, "name": name, "text": msgs[sha],
                              "code": code, "group": f"commit:{sha}"})
    return pairs


def mine_repo(repo):
    try:
        return _mine_repo(repo)
    except Exception as e:  # one bad repository must not stop the others
        return repo, f"FAILED: {e!r}"[:400], 0.0


def _mine_repo(repo):
    name = repo.replace("/", "+")
    out_path = os.path.join(PAIRS_DIR, name + ".jsonl")
    if os.path.exists(out_path):
        return repo, "cached", 0.0
    gd = os.path.join(MIRROR, name, "repo")
    if not os.path.isdir(gd):
        return repo, "missing", 0.0
    t0 = time.time()
    rev = git(gd, "rev-parse", "HEAD").decode().strip()
    lang = REPOS[repo][0]
    docs = mine_docs(gd, rev, lang)
    commits = mine_commits(gd, rev)
    rnd = random.Random(1)
    pairs = []
    for kind_pairs in (commits, docs):
        seen, uniq = set(), []
        for p in kind_pairs:
            key = (p["text"], p["code"])
            if key not in seen:
                seen.add(key)
                uniq.append(p)
        if len(uniq) > MAX_PAIRS_PER_KIND:
            rnd.shuffle(uniq)
            uniq = uniq[:MAX_PAIRS_PER_KIND]
        pairs.extend(uniq)
    toks = terms([p["text"] for p in pairs] + [p["code"] for p in pairs])
    n = len(pairs)
    os.makedirs(PAIRS_DIR, exist_ok=True)
    tmp = out_path + ".part"
    kept = 0
    with open(tmp, "w") as f:
        f.write(json.dumps({"meta": {"repo": repo, "commit": rev, "lang": REPOS[repo][0],
                                     "split": REPOS[repo][1], "license": REPOS[repo][2]}}) + "\n")
        for i, p in enumerate(pairs):
            tt, ct = toks[i], toks[n + i]
            if len(tt) < 3 or len(ct) < 5:
                continue
            p["text_terms"] = tt[:MAX_STORED_TERMS]
            p["code_terms"] = ct[:MAX_STORED_TERMS]
            p["repo"] = repo
            f.write(json.dumps(p) + "\n")
            kept += 1
    os.replace(tmp, out_path)
    return repo, f"{kept} pairs (commits {len(commits)}, docs {len(docs)})", time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    bad = excluded_repos()
    repos = args.only or list(REPOS)
    for r in repos:
        if r.lower() in bad:
            sys.exit(f"refusing excluded repository {r}")
    t0 = time.time()
    # biggest first so the pool stays busy
    with Pool(args.jobs) as pool:
        for repo, status, dt in pool.imap_unordered(mine_repo, repos):
            print(f"[mine] {repo}: {status} ({dt:.0f}s)", flush=True)
    print(f"[mine] done in {time.time() - t0:.0f}s", flush=True)


if __name__ == "__main__":
    main()
