#!/usr/bin/env python3
"""Runs the localization eval: for each question, checks the repository out at its base
commit, asks `copilot-ls ask --json` with no model, and scores the files it cites against
the answer files; a plain whole-file BM25 over the same checkout is scored beside it.

Usage (from the repository root, after `cargo build --release`):
    python3 bench/localization/run.py            # the tuning split (questions.json)
    python3 bench/localization/run.py --holdout  # the frozen holdout only
    python3 bench/localization/run.py --all      # both, reported apart
    python3 bench/localization/run.py --fresh    # the second holdout (fresh.json)
    options: --limit N (first N questions of each split), --repo OWNER/NAME, --id ID,
             --no-bm25, --binary PATH, --verbose, --cold (each ask on an empty cache,
             without `copilot-ls index` first: what a first-time CLI user gets),
             --no-history (the old checkouts: git archive trees, no history)

Metrics: file Acc@1/Acc@5 over distinct cited files, the share of tests/docs among the top
5, and for real issues, per answer file among the top 5 (its first citation):
- "line in def": the cited line is inside a definition the fix changed, that is the
  innermost definition (namespaces and modules aside) holding a line the fix changed
  (git diff -U0 base fix, base side), by `copilot-ls tool file_outline` at the base; a
  change outside any definition must be cited at its own line;
- "range holds a change": the cited [line, endLine] holds a changed line (lenient: a
  whole-class range holds any change in the class, so the median range is shown too).

Checkouts go to .tmp/localization/h-<name>-<commit12> (made once, then reused): git
repositories sharing the mirror's objects, HEAD detached at the base, so the server sees the
history up to it. A real issue whose base's last 300 first-parent ancestors include commits
naming it (`#N`: earlier parts of the fix) is checked out at the first parent of the oldest
of them instead, and its fix diffed from there. `--no-history` makes the old checkouts,
.tmp/localization/<name>-<commit12> (git archive, the tree alone, each question at its own
base). Results go to .tmp/localization/results.json (results-no-history.json,
results-cold.json). COPILOT_LS_HISTORY, COPILOT_LS_CODE_MODEL and their _FUSION parameters, and COPILOT_LS_LEARNED_RANKER, when set, are passed on
to the asks; other
COPILOT_LS_* variables are not. The repositories come from bare mirrors under
$LOCALIZATION_MIRRORS (default /work/.mirror/OWNER+NAME/repo), which the agent's `fetch`
tool makes (`fetch github:OWNER/NAME`); CI has no such tool, so this eval is not part of CI.
"""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import is_non_source, mirror_dir  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TMP = os.path.join(ROOT, ".tmp", "localization")
ASK_TIMEOUT_SECS = 300


def load(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return json.load(f)["questions"]


def need_mirror(repo):
    """The repository's bare mirror, or exit saying how to bring it."""
    gd = mirror_dir(repo)
    if not os.path.isdir(gd):
        sys.exit(
            f"no mirror of {repo} at {gd}.\n"
            f"Bring it with the agent's fetch tool: fetch github:{repo} (it makes a bare git "
            f"dir under /work/.mirror/), or point LOCALIZATION_MIRRORS at a folder holding "
            f"OWNER+NAME/repo bare clones (git clone --mirror). CI cannot fetch; this eval "
            f"runs by hand.")
    return gd


def checkout(repo, commit, history=True):
    """The repository at `commit`, made once into .tmp; an interrupted one is never
    mistaken for a finished one (it is built in a `.partial` dir renamed when complete).

    With `history` (the default): a real git repository, `h-<name>-<commit12>`, cloned
    from the mirror with `--shared` (its objects read through alternates, nothing copied)
    and checked out with HEAD detached at `commit`, so the commits reachable from HEAD
    are the history up to it. The mirror's branches come along as remote refs (some run
    past `commit`, as in any clone), but HEAD is `commit`. Without: the tree alone,
    `<name>-<commit12>`, extracted with `git archive` (the runner before 2026-12-05)."""
    name = repo.split('/')[1]
    dest = os.path.join(TMP, f"{'h-' if history else ''}{name}-{commit[:12]}")
    if os.path.isdir(dest):
        if history and dest not in _verified:
            head = subprocess.run(["git", "-C", dest, "rev-parse", "HEAD"],
                                  capture_output=True, text=True).stdout.strip()
            if head != commit:
                sys.exit(f"{dest}: HEAD is {head or '?'}, not {commit}; remove the folder "
                         f"and run again")
            _verified.add(dest)
        return dest
    gd = need_mirror(repo)
    part = dest + ".partial"
    shutil.rmtree(part, ignore_errors=True)
    if history:
        for cmd in (["git", "clone", "--shared", "--no-checkout", "-q", gd, part],
                    ["git", "-C", part, "config", "gc.auto", "0"],
                    ["git", "-C", part, "checkout", "--detach", "-q", commit]):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"{' '.join(cmd)} failed: {r.stderr.strip()[:500]}")
        head = subprocess.run(["git", "-C", part, "rev-parse", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
        if head != commit:
            sys.exit(f"{part}: HEAD is {head or '?'} after checking out {commit}")
    else:
        os.makedirs(part)
        arch = subprocess.Popen(["git", "--git-dir", gd, "archive", "--format=tar", commit],
                                stdout=subprocess.PIPE)
        with tarfile.open(fileobj=arch.stdout, mode="r|") as tar:
            tar.extractall(part, filter="tar") if hasattr(tarfile, "data_filter") else \
                tar.extractall(part)
        if arch.wait() != 0:
            sys.exit(f"git archive {commit} failed in {gd}")
    os.rename(part, dest)
    _verified.add(dest)
    return dest


_verified = set()

# ---- the history base: no part of the fix in the history --------------------------------

ISSUE_URL = re.compile(r"/issues/(\d+)/?$")
HISTORY_DEPTH = 300  # first-parent ancestors of the base searched for the issue's number
_history_base_cache = {}


def issue_ref(number):
    """`#N` as a whole token: not `#N0`, not `x#N` nor `/#N` (a URL's anchor), not `&#N;`
    (an HTML character reference: jsoup's `&#36;` is no reference to issue 36)."""
    return re.compile(r"(?<![\w/&])#" + str(number) + r"\b")


def history_base(q):
    """The commit a real issue is checked out at when the checkout carries history, and
    the commits that moved it there: the question's base, unless one of the base's last
    300 first-parent ancestors (the base included) names the issue (`#N`), that is an
    earlier part of the fix (or its test, or its docs) already in the history the server
    reads; then the first parent of the oldest of them, so that none of the fix can vote.
    Written questions, and sources that are no issue URL, keep their base."""
    m = ISSUE_URL.search(q.get("source") or "")
    if q["kind"] not in ("bug", "feature") or not m:
        return q["base"], []
    key = (q["repo"], q["base"], m.group(1))
    if key not in _history_base_cache:
        r = subprocess.run(["git", "--git-dir", need_mirror(q["repo"]), "log", "--first-parent",
                            "-n", str(HISTORY_DEPTH), "--format=%H%x1f%P%x1f%B%x1e",
                            q["base"]], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"git log {q['base']} failed for {q['id']}: {r.stderr.strip()[:500]}")
        ref = issue_ref(m.group(1))
        naming = []  # newest first
        for rec in r.stdout.split("\x1e"):
            rec = rec.strip("\n")
            if not rec:
                continue
            sha, parents, body = rec.split("\x1f", 2)
            if ref.search(body):
                naming.append({"commit": sha, "parent": (parents.split() or [None])[0],
                               "subject": body.strip().splitlines()[0] if body.strip() else ""})
        if not naming:
            _history_base_cache[key] = (q["base"], [])
        elif naming[-1]["parent"] is None:
            sys.exit(f"{q['id']}: the root commit {naming[-1]['commit']} names #{m.group(1)}")
        else:
            _history_base_cache[key] = (naming[-1]["parent"],
                                        [{"commit": c["commit"], "subject": c["subject"]}
                                         for c in naming])
    return _history_base_cache[key]


# `--cold` points every ask at an empty cache of its own (a machine that has never seen
# the project); otherwise all asks share this one, built beforehand.
CACHE = os.path.join(TMP, "cache")


def ask_env():
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY") and not k.startswith("COPILOT_LS_")}
    env["COPILOT_LS_PROVIDER"] = "none"
    env["COPILOT_LS_CACHE_DIR"] = CACHE
    # The history signal's switch, passed on as the caller set it (to compare with and
    # without it on the same checkouts).
    # The fusion's parameters too (`COPILOT_LS_HISTORY_FUSION=k,weight,voters,files`,
    # index/past_changes.rs), for deciding them on the tuning split; and the code model's
    # (`COPILOT_LS_CODE_MODEL=off`, `COPILOT_LS_CODE_MODEL_FUSION=k,weight,files`, index/semantic.rs:
    # a weight of 0 is the lexical ranking alone, a negative one the model alone).
    # And the learned ranker's (`COPILOT_LS_LEARNED_RANKER=PATH|off`, index/learned.rs).
    for name in ("COPILOT_LS_HISTORY", "COPILOT_LS_HISTORY_FUSION", "COPILOT_LS_CODE_MODEL",
                 "COPILOT_LS_CODE_MODEL_FUSION", "COPILOT_LS_LEARNED_RANKER"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


_indexed = set()


def ensure_index(binary, workspace):
    """Brings the checkout's persistent index up to date once per run (`copilot-ls index`),
    so an ask measures the ranking, not whether the index build beat the ask's 2 s wait
    for the first refresh (a slow or debug binary would answer from an empty index)."""
    if (binary, workspace) in _indexed:
        return
    r = subprocess.run([binary, "index", "--workspace", workspace], capture_output=True,
                       text=True, env=ask_env(), timeout=ASK_TIMEOUT_SECS)
    if r.returncode != 0:
        raise RuntimeError(f"index exited {r.returncode}: {r.stderr.strip()[:500]}")
    _indexed.add((binary, workspace))


def ask(binary, workspace, question):
    """The distinct cited files in order, each file's first cited [line, endLine], and the
    seconds the ask took."""
    t = time.monotonic()
    r = subprocess.run([binary, "ask", "--json", "--workspace", workspace, "--", question],
                       capture_output=True, text=True, env=ask_env(), timeout=ASK_TIMEOUT_SECS)
    secs = time.monotonic() - t
    if r.returncode != 0:
        raise RuntimeError(f"ask exited {r.returncode}: {r.stderr.strip()[:500]}")
    files, spans = [], {}
    for c in json.loads(r.stdout)["citations"]:
        p = c["path"].replace("\\", "/")
        if p not in files:
            files.append(p)
            spans[p] = [c["line"], c.get("endLine", c["line"])]
    return files, spans, secs


# ---- the cited line against the fix -----------------------------------------------------

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.M)
_changed_cache = {}


def changed_lines(repo, base, fix, path):
    """The base-side lines the fixing commit changed in `path` (from `git diff -U0`
    hunks): the removed or modified lines; for a pure insertion after line a, lines a
    and a+1 (the place it went in)."""
    key = (repo, base, fix, path)
    if key not in _changed_cache:
        r = subprocess.run(["git", "--git-dir", mirror_dir(repo), "diff", "-U0", "--no-color",
                            base, fix, "--", path], capture_output=True, text=True)
        lines = set()
        for m in HUNK.finditer(r.stdout if r.returncode == 0 else ""):
            start, count = int(m.group(1)), int(m.group(2) or "1")
            if count == 0:
                lines.update({start, start + 1})
            else:
                lines.update(range(start, start + count))
        _changed_cache[key] = lines
    return _changed_cache[key]


OUTLINE_LINE = re.compile(r"^\s*(\d+)-(\d+) (\S+) ")
CONTAINERS = {"namespace", "module", "package", "mod"}


def outline(binary, workspace, path):
    """The file's definitions as (first line, last line, kind), 1-based, from the
    `file_outline` tool (the same tree-sitter grammars the index uses)."""
    r = subprocess.run([binary, "tool", "file_outline", "--workspace", workspace,
                        json.dumps({"path": path})], capture_output=True, text=True,
                       env=ask_env(), timeout=ASK_TIMEOUT_SECS)
    out = []
    for line in r.stdout.splitlines():
        m = OUTLINE_LINE.match(line)
        if m:
            out.append((int(m.group(1)), int(m.group(2)), m.group(3)))
    return out


def changed_definitions(binary, workspace, q, path):
    """The innermost definitions (namespaces and modules aside) holding a line the fix
    changed, and the changed lines outside any definition."""
    defs, loose = set(), set()
    symbols = [s for s in outline(binary, workspace, path) if s[2] not in CONTAINERS]
    for n in changed_lines(q["repo"], q["base"], q["fix"], path):
        holding = [s for s in symbols if s[0] <= n <= s[1]]
        if holding:
            defs.add(min(holding, key=lambda s: s[1] - s[0]))
        else:
            loose.add(n)
    return defs, loose


def cited_in_definition(binary, workspace, q, files, spans):
    """For a real issue: per answer file among the top 5, (the first citation's line is
    inside a definition the fix changed, its [line, endLine] holds a changed line).
    None for written questions."""
    if not q.get("fix"):
        return None
    out = []
    for f in files[:5]:
        if f in q["answers"]:
            changed = changed_lines(q["repo"], q["base"], q["fix"], f)
            line, end = spans[f]
            defs, loose = changed_definitions(binary, workspace, q, f)
            in_def = any(s <= line <= e for s, e, _ in defs) or line in loose
            out.append((in_def, any(line <= n <= end for n in changed)))
    return out


# ---- plain BM25 over whole files -------------------------------------------------------

WORD = re.compile(r"[A-Za-z0-9_]+")
CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
MAX_FILE_BYTES = 1_000_000


def tokens(text):
    """Identifiers and their camelCase / snake_case parts, lowercased."""
    out = []
    for w in WORD.findall(text):
        lw = w.lower()
        out.append(lw)
        parts = [p.lower() for piece in w.split("_") for p in CAMEL.findall(piece)]
        if len(parts) > 1:
            out.extend(parts)
    return out


class Bm25:
    """Okapi BM25 (k1 1.2, b 0.75) with each file one document; its path's words count too."""

    def __init__(self, root):
        self.paths, self.tf, self.len = [], [], []
        df = Counter()
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                full = os.path.join(dirpath, name)
                try:
                    if os.path.getsize(full) > MAX_FILE_BYTES:
                        continue
                    with open(full, "rb") as f:
                        data = f.read()
                except OSError:
                    continue
                if b"\0" in data[:8192]:
                    continue
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                tf = Counter(tokens(rel + "\n" + data.decode("utf-8", "replace")))
                self.paths.append(rel)
                self.tf.append(tf)
                self.len.append(sum(tf.values()))
                df.update(tf.keys())
        n = len(self.paths)
        self.avg = (sum(self.len) / n) if n else 1.0
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}

    def rank(self, question, k=10):
        q = Counter(t for t in tokens(question) if t in self.idf)
        scores = []
        for i, tf in enumerate(self.tf):
            s = 0.0
            norm = 1.2 * (0.25 + 0.75 * self.len[i] / self.avg)
            for t, qn in q.items():
                f = tf.get(t)
                if f:
                    s += qn * self.idf[t] * f * 2.2 / (f + norm)
            if s > 0:
                scores.append((-s, self.paths[i]))
        scores.sort()
        return [p for _, p in scores[:k]]


# ---- scoring --------------------------------------------------------------------------

def score(files, answers):
    top5 = files[:5]
    return {
        "acc1": bool(files) and files[0] in answers,
        "acc5": any(f in answers for f in top5),
        "top5": len(top5),
        "top5_non_source": sum(is_non_source(f) for f in top5),
    }


def summarize(rows, key):
    n = len(rows)
    if not n:
        return None
    places = sum(r[key]["top5"] for r in rows)
    cited = [hit for r in rows for hit in (r.get("cited_in_def") or [])] if key == "ours" else []
    in_def = [c[0] for c in cited]
    holds = [c[1] for c in cited]
    # How long the cited ranges are (a whole-file range would contain any change).
    spans = sorted(e - s + 1 for r in rows for s, e in (r.get("ours_spans") or {}).values())
    return {
        "n": n,
        "median_cited_lines": spans[len(spans) // 2] if spans else None,
        "cited_in_def": (sum(in_def) / len(in_def)) if in_def else None,
        "range_holds_change": (sum(holds) / len(holds)) if holds else None,
        "cited_pairs": len(cited),
        "acc1": sum(r[key]["acc1"] for r in rows) / n,
        "acc5": sum(r[key]["acc5"] for r in rows) / n,
        "top5_non_source": (sum(r[key]["top5_non_source"] for r in rows) / places) if places else 0.0,
    }


def table(groups, with_bm25):
    head = ("| split | kind | n | ours Acc@1 | ours Acc@5 | ours top-5 tests/docs "
            "| ours line in def (pairs) | ours range holds a change | ours median cited lines |")
    line = "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    if with_bm25:
        head += " BM25 Acc@1 | BM25 Acc@5 | BM25 top-5 tests/docs |"
        line += " ---: | ---: | ---: |"
    out = [head, line]
    for (split, kind), rows in groups:
        o = summarize(rows, "ours")
        cells = [split, kind, str(o["n"]), f"{o['acc1']:.3f}", f"{o['acc5']:.3f}",
                 f"{o['top5_non_source']:.2f}",
                 f"{o['cited_in_def']:.3f} ({o['cited_pairs']})" if o["cited_pairs"] else "—",
                 f"{o['range_holds_change']:.3f}" if o["cited_pairs"] else "—",
                 str(o["median_cited_lines"]) if o["median_cited_lines"] is not None else "—"]
        if with_bm25:
            b = summarize(rows, "bm25")
            cells += [f"{b['acc1']:.3f}", f"{b['acc5']:.3f}", f"{b['top5_non_source']:.2f}"]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--holdout", action="store_true", help="the frozen holdout only")
    g.add_argument("--all", action="store_true", help="both splits")
    g.add_argument("--fresh", action="store_true",
                   help="the second holdout only (fresh.json: repositories in neither split)")
    ap.add_argument("--limit", type=int, help="first N questions of each split")
    ap.add_argument("--repo", help="only this OWNER/NAME")
    ap.add_argument("--id", help="only this question id")
    ap.add_argument("--no-bm25", action="store_true")
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "copilot-ls"))
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("--cold", action="store_true",
                    help="every ask on an empty cache, with no `copilot-ls index` before it")
    ap.add_argument("--no-history", action="store_true",
                    help="the old checkouts: the base's tree alone (git archive), no git "
                         "history, and every question at its own base")
    a = ap.parse_args()
    global CACHE
    if not os.access(a.binary, os.X_OK):
        sys.exit(f"no binary at {a.binary}: run `cargo build --release` first")
    splits = ["holdout"] if a.holdout else (["tune", "holdout"] if a.all else ["tune"])
    if a.fresh:
        splits = ["fresh"]
    todo = []
    for split in splits:
        qs = load({"tune": "questions.json", "holdout": "holdout.json",
                   "fresh": "fresh.json"}[split])
        qs = [q for q in qs if (not a.repo or q["repo"] == a.repo) and (not a.id or q["id"] == a.id)]
        todo += [(split, q) for q in qs[: a.limit] if True]
    os.makedirs(TMP, exist_ok=True)
    bm25_cache, rows = {}, []
    started = time.monotonic()
    history = not a.no_history
    moved = []
    for i, (split, q) in enumerate(todo, 1):
        base, naming = history_base(q) if history else (q["base"], [])
        if naming:
            moved.append((q, base, naming))
        ws = checkout(q["repo"], base, history)
        # The fix is diffed from the commit checked out, the outline read there.
        q_at = dict(q, base=base)
        missing = [f for f in q["answers"] if not os.path.isfile(os.path.join(ws, f))]
        if missing:
            print(f"{q['id']}: answer files not in the checkout at {base[:12]}: "
                  f"{', '.join(missing)}", file=sys.stderr)
        try:
            if a.cold:
                CACHE = os.path.join(TMP, "cold-cache")
                shutil.rmtree(CACHE, ignore_errors=True)
            else:
                ensure_index(a.binary, ws)
            ours, spans, secs = ask(a.binary, ws, q["question"])
        except (RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError) as e:
            print(f"{q['id']}: {e}", file=sys.stderr)
            ours, spans, secs = [], {}, None
        row = {"id": q["id"], "split": split, "kind": q["kind"], "repo": q["repo"],
               "answers": q["answers"], "checkout_base": base,
               "base_moved_by": naming, "ours_files": ours[:10],
               "ours_spans": {f: spans[f] for f in ours[:5]}, "ask_secs": secs,
               "ours": score(ours, q["answers"]),
               "cited_in_def": cited_in_definition(a.binary, ws, q_at, ours, spans)}
        if not a.no_bm25:
            if ws not in bm25_cache:
                bm25_cache.clear()  # one checkout's index at a time keeps memory small
                bm25_cache[ws] = Bm25(ws)
            bm = bm25_cache[ws].rank(q["question"])
            row["bm25_files"] = bm
            row["bm25"] = score(bm, q["answers"])
        rows.append(row)
        if a.verbose:
            mark = "1" if row["ours"]["acc1"] else ("5" if row["ours"]["acc5"] else "-")
            cited = "".join("L" if c[0] else "l" for c in row["cited_in_def"] or [])
            print(f"[{i}/{len(todo)}] {mark}{cited} {q['id']} -> "
                  f"{', '.join(f'{f}:{spans[f][0]}-{spans[f][1]}' for f in ours[:5])}",
                  file=sys.stderr)
    groups = []
    for split in splits + (["all"] if len(splits) > 1 else []):
        in_split = [r for r in rows if split == "all" or r["split"] == split]
        if not in_split:
            continue
        groups.append(((split, "all"), in_split))
        for kind in ("bug", "feature", "written", "paraphrased"):
            k = [r for r in in_split if r["kind"] == kind]
            if k:
                groups.append(((split, kind), k))
    if not groups:
        sys.exit("no questions matched")
    with_bm25 = not a.no_bm25
    print(table(groups, with_bm25))
    per_repo = defaultdict(list)
    for r in rows:
        per_repo[r["repo"]].append(r)
    print()
    print(table([((repo, "all"), rs) for repo, rs in sorted(per_repo.items())], with_bm25)
          .replace("| split |", "| repo |"))
    timed = [r["ask_secs"] for r in rows if r["ask_secs"] is not None]
    if timed:
        timed.sort()
        print(f"\nask: median {timed[len(timed) // 2]:.2f} s, max {timed[-1]:.2f} s "
              + ("(each on an empty cache: the index built by the ask itself)" if a.cold else
                 "(the checkout's index built beforehand by `copilot-ls index`)")
              + f"; {time.monotonic() - started:.0f} s in all")
    if history:
        print(f"\ncheckouts with history (HEAD detached at the base); {len(moved)} "
              f"question{'s' if len(moved) != 1 else ''} moved their base before earlier "
              f"commits of their fix" + (":" if moved and a.verbose else ""))
        if a.verbose:
            for q, base, naming in moved:
                n = len(naming)
                print(f"  {q['id']}: {q['base'][:12]} -> {base[:12]}, before "
                      f"{n} commit{'s' if n != 1 else ''} naming "
                      f"#{ISSUE_URL.search(q['source']).group(1)}: "
                      + "; ".join(f"{c['commit'][:12]} {c['subject'][:60]!r}" for c in naming))
    else:
        print("\ncheckouts without history (--no-history: git archive, each question at "
              "its own base)")
    result = {
        "binary": a.binary,
        "history": history,
        "moved_bases": {q["id"]: {"base": q["base"], "checkout_base": base,
                                  "commits_naming_the_issue": naming}
                        for q, base, naming in moved},
        "summary": {f"{s}/{k}": {"ours": summarize(rs, "ours"),
                                 **({"bm25": summarize(rs, "bm25")} if with_bm25 else {})}
                    for (s, k), rs in groups},
        "rows": rows,
    }
    out = os.path.join(TMP, "results" + ("-cold" if a.cold else "")
                       + ("-no-history" if a.no_history else "") + ".json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    print(f"results: {os.path.relpath(out, ROOT)}")


if __name__ == "__main__":
    main()
