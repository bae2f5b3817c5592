#!/usr/bin/env python3
"""Mine ranking queries with known answers from repositories' own histories (issue #52).

For each repository of sources.tsv (a bare snapshot under /work/.mirror/<owner>+<name>/repo):
  - choose SNAPSHOTS commits on HEAD's first-parent history, spread over its last few years;
  - for the commits that follow each snapshot (reachable from the next snapshot, or HEAD for the
    last one, and not from the snapshot itself; at most MAX_WINDOW of them, the oldest first),
    emit a query: the commit's subject and body, trailers and issue-number-only lines stripped;
    the answer: the non-test source files it changed that exist at the snapshot, by their path
    at the snapshot (renames between the snapshot and the commit followed back).
The snapshot is what gets indexed later: its history holds none of its queries' commits.

Output: one JSONL per repository, .tmp/rank/queries/<owner>+<name>.jsonl: a first line
{"meta": ...} (repository, language, license, split, HEAD, snapshots, counts of what each filter
dropped), then one query a line. A repository whose file exists is not mined again (delete the
file to redo it); a file is written to .part and renamed when complete. Deterministic: the same
snapshot gives the same file.

Usage: nice -n 19 python3 train/rank/mine.py [--only owner/name ...] [--limit N]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
from datetime import datetime, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import sources  # noqa: E402  (train/rank/sources.py: sources.tsv, exclusions)
from sources import embed_mine  # noqa: E402  (train/mine.py: its filters, reused)

OUT_DIR = os.environ.get("RANK_QUERIES", os.path.join(ROOT, ".tmp", "rank", "queries"))

SNAPSHOTS = 3            # snapshot commits a repository
YEARS = 4                # spread over the first-parent history of the last YEARS years of HEAD...
MIN_SPAN_COMMITS = 300   # ...or over at least this many first-parent commits when those years hold fewer
MAX_WINDOW = 1500        # candidate commits after a snapshot (the oldest first: closest to the index)
MAX_SOURCE_FILES = 8     # more non-test source files changed = a mass change, dropped
MAX_FILES = 40           # more files of any kind changed = a mass change, dropped
MIN_WORDS = 4            # words (2+ letters) left in the message after cleaning
MAX_QUERY_CHARS = 4000

# The parsed languages' extensions (train/mine.py's, plus a few C++ and TypeScript spellings).
SOURCE_EXT = dict(embed_mine.EXT_LANG)
SOURCE_EXT.update({".c++": "c", ".h++": "c", ".hxx": "c", ".ipp": "c", ".inl": "c", ".cts": "js", ".pyi": "python"})

TEST_PATH = re.compile(
    r"(^|/)(tests?|testing|__tests__|__mocks__|spec|specs|testdata|test-data|test_data|fixtures?|"
    r"testutils?|testlib|e2e|integration[-_]tests?|unittests?)/"
    r"|(_test\.go|(^|/)test_[^/]*\.py|_tests?\.py|(^|/)tests?\.py|(^|/)conftest\.py|"
    r"\.(test|spec|e2e)\.[cm]?[jt]sx?|Tests?\.java|TestCase\.java|IT\.java|_test\.(c|cc|cpp|h|rs)|"
    r"[-_](unit)?tests?\.(c|cc|cpp|cxx|h|hh|hpp|rs|js|ts)|(^|/)tests?_[^/]*\.(c|cc|cpp|h))$", re.I)
# Not tests, not answers: vendored, generated, build output, docs, examples, benchmarks.
OTHER_PATH = re.compile(
    r"(^|/)(vendor|vendored|third[_-]?party|3rdparty|node_modules|"
    r"examples?|samples?|demos?|benchmarks?|benches|docs?|documentation|website|"
    r"generated|\.github)/"
    r"|^(build|dist|out|external|extern|deps|bench|site|gen)/"
    r"|(\.min\.js|\.d\.ts|\.d\.mts|\.pb\.go|_pb2\.py|\.pb\.(cc|h)|\.generated\.\w+|_generated\.\w+)$",
    re.I)

BOT = re.compile(r"\[bot\]|dependabot|renovate|greenkeeper|snyk|github-actions|pre-commit-ci|mergify|"
                 r"allcontributors|all-contributors|imgbot|semantic-release|k8s-ci-robot|"
                 r"bors\b|weblate|transifex|crowdin|gitter-badger|codecov|deepsource|restyled|"
                 r"\bbot@|-bot\b|\bbot\b", re.I)
# Subjects that are not questions about code: train/mine.py's (releases, version bumps,
# changelogs, formatting, lint, typos, dependency bumps, copyright), and a few more.
NOISE_SUBJECT = embed_mine.NOISE_SUBJECT
MORE_NOISE = re.compile(
    r"^\s*(fixup!|squash!|amend!|revert\b|\"?revert |reapply\b|back-?port\b|cherry[- ]pick|auto-?merge|sync(ing)? (with|from) |"
    r"update (version|release|submodule|deps|dependenc)|bump\b|(minor )?whitespace|spelling|"
    r"fix(ed|es)? (a |some |the )?(typos?|spelling|whitespace|lint|formatting)\b|"
    r"(apply|run|ran) (clang-format|black|isort|ruff|prettier|eslint|gofmt|rustfmt|cargo fmt|formatter|linter)|"
    r"(update|regenerate|regen) (generated|lock ?file|the lock|yarn\.lock|package-lock|cargo\.lock|go\.sum)|"
    r"rename[ds]? [^ ]+ (to|->) [^ ]+$|wip\b|\.$|tmp\b|temp\b|test commit|initial commit|"
    r"release\b|prepare (for )?(release|v?\d)|v?\d+\.\d+\.\d+\S*$)", re.I)
REVERT_BODY = re.compile(r"This reverts commit [0-9a-f]{7,40}", re.I)

TRAILER = re.compile(
    r"^\s*([A-Za-z][A-Za-z-]*-by|Change-Id|Signed-off|Closes|Close|Closed|Fix|Fixes|Fixed|Resolves?|Resolved|"
    r"Refs?|References?|See|See also|Related|Related-to|PR-URL|PR|Pull-Request|Pull Request resolved|"
    r"Reviewed-on|Reviewed By|Differential Revision|fbshipit-source-id|Bug|Bugs|Issue|Issues|Cc|Pick-to|"
    r"Task-number|Co-Authored-By|git-svn-id|Backport-PR-URL|Backport-of|Part-of|Jira|Ticket|"
    r"Release-Notes?|Changelog|Changelog-entry|Milestone|Tracking-issue|X-[A-Za-z-]+)\s*:", re.I)
CHERRY = re.compile(r"^\s*\(cherry[ -]picked from commit [0-9a-f]+\)\s*$", re.I)
ISSUE_ONLY = re.compile(r"^[\s\-*>(\[]*((fix(es|ed)?|close[sd]?|resolve[sd]?|ref(s|erences?)?|see|"
                        r"part of|related( to)?|for|issue|pr)\s*:?\s*)?"
                        r"([\w.-]+/[\w.-]+)?#\d+([\s,;&]*(and\s+)?([\w.-]+/[\w.-]+)?#\d+)*[\s.)\]]*$", re.I)
GERRIT = re.compile(r"^\s*(R|TBR|BUG|TEST|NOTRY|NOPRESUBMIT|NOTREECHECKS)=", re.I)
RULE = re.compile(r"^\s*[-=*_#~]{3,}\s*$")
SKIP_TAGS = re.compile(r"\[(skip ci|ci skip|no ci|skip actions|skip changelog|changelog skip)\]", re.I)
URL = re.compile(r"https?://\S+")
SHA = re.compile(r"\b[0-9a-f]{12,40}\b")


def git(gd, *args):
    r = subprocess.run(["git", "--git-dir", gd, *args], capture_output=True)
    if r.returncode != 0:
        raise RuntimeError(f"git {' '.join(args[:3])} failed: {r.stderr[:300]!r}")
    return r.stdout.decode("utf-8", "replace")


def kind_of(path):
    """'source', 'test', 'other' (vendored, generated, docs, examples, benchmarks) or None (not a
    file of a parsed language)."""
    if os.path.splitext(path)[1].lower() not in SOURCE_EXT:
        return None
    if TEST_PATH.search(path):
        return "test"
    if OTHER_PATH.search(path):
        return "other"
    return "source"


def clean_message(msg):
    """Subject and body without trailers, issue-number-only lines, cherry-pick notes, URLs,
    issue/PR references and hashes; whitespace inside lines collapsed, blank runs cut to one."""
    out = []
    for line in msg.replace("\r", "").split("\n"):
        if TRAILER.match(line) or CHERRY.match(line) or ISSUE_ONLY.match(line) or GERRIT.match(line) \
                or RULE.match(line):
            continue
        line = SKIP_TAGS.sub(" ", line)
        line = URL.sub(" ", line)
        line = re.sub(r"\(\s*(([\w.-]+/[\w.-]+)?#\d+[\s,]*)+\)", " ", line)   # (#123), (org/repo#12)
        line = re.sub(r"(?<![\w&/])([\w.-]+/[\w.-]+)?#\d+\b", " ", line)       # #123, org/repo#12
        line = re.sub(r"\bgh-\d+\b", " ", line, flags=re.I)
        line = SHA.sub(" ", line)
        line = re.sub(r"[ \t]+", " ", line).strip()
        if not line and out and not out[-1]:
            continue
        out.append(line)
    text = "\n".join(out).strip()
    # a "Merge pull request" style or "Summary:" (Phabricator) prefix adds nothing
    text = re.sub(r"^Summary:\s*", "", text)
    return text[:MAX_QUERY_CHARS]


def words(s):
    return len(re.findall(r"[A-Za-z]{2,}", s))


def first_parent(gd):
    """[(sha, committer time)] of HEAD's first-parent history, newest first."""
    out = git(gd, "rev-list", "--first-parent", "--format=%H %ct", "--no-commit-header", "HEAD")
    res = []
    for line in out.split("\n"):
        if line.strip():
            sha, ct = line.split()
            res.append((sha, int(ct)))
    return res


def choose_snapshots(fp):
    """SNAPSHOTS commits on the first-parent history, oldest first, evenly spread (by position)
    over the last YEARS years before HEAD (at least MIN_SPAN_COMMITS commits back), so each
    snapshot has the commits after it to draw queries from. HEAD itself is never a snapshot."""
    if len(fp) < 2 * SNAPSHOTS:
        return []
    head_t = fp[0][1]
    cut = head_t - int(YEARS * 365.25 * 86400)
    span = sum(1 for _, t in fp if t >= cut)
    span = min(max(span, MIN_SPAN_COMMITS), len(fp) - 1)
    pos = [round(span * (SNAPSHOTS - i) / SNAPSHOTS) for i in range(SNAPSHOTS)]  # oldest first
    seen, snaps = set(), []
    for p in pos:
        p = max(1, min(p, len(fp) - 1))
        if p not in seen:
            seen.add(p)
            snaps.append(fp[p][0])
    return snaps


def tree_paths(gd, rev):
    return set(p for p in git(gd, "ls-tree", "-r", "--name-only", "-z", rev).split("\0") if p)


def parse_log(text):
    """`git log --name-status -z` records -> [(sha, parents, author name, author email, committer
    time, message, [(status, old, new)])]."""
    commits = []
    for rec in text.split("\x1e")[1:]:
        head, _, rest = rec.partition("\x1d")
        sha, parents, an, ae, ct, msg = head.split("\x1f", 5)
        fields = rest.strip("\n\0").split("\0")
        changes, i = [], 0
        while i < len(fields):
            st = fields[i].strip()
            if not st:
                i += 1
                continue
            if st[0] in "RC":
                if i + 2 >= len(fields):
                    break
                changes.append((st, fields[i + 1], fields[i + 2]))
                i += 3
            else:
                if i + 1 >= len(fields):
                    break
                changes.append((st, fields[i + 1], fields[i + 1]))
                i += 2
        commits.append((sha, parents.split(), an, ae, int(ct), msg, changes))
    return commits


def window_commits(gd, snap, upto):
    """The non-merge commits reachable from `upto` and not from `snap`, oldest first (topological),
    at most MAX_WINDOW, each with its name-status against its parent (renames detected)."""
    fmt = "%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%ct%x1f%B%x1d"
    shas = git(gd, "rev-list", "--reverse", "--topo-order", "--no-merges", f"{snap}..{upto}").split()
    shas = shas[:MAX_WINDOW]
    if not shas:
        return []
    out = []
    for i in range(0, len(shas), 300):
        chunk = shas[i:i + 300]
        try:
            out.extend(parse_log(show(gd, fmt, chunk, True)))
        except RuntimeError:
            # a snapshot lacks blobs of 4 MiB and more, which rename detection may need:
            # commit by commit, without rename detection where it fails, skipped if unreadable
            for sha in chunk:
                for renames in (True, False):
                    try:
                        out.extend(parse_log(show(gd, fmt, [sha], renames)))
                        break
                    except RuntimeError:
                        continue
    return out


def show(gd, fmt, shas, renames):
    return git(gd, "show", "--no-walk=unsorted", "-z", "--name-status", "-M" if renames else "--no-renames",
               "--diff-merges=off", f"--format={fmt}", *shas)


class PathMap:
    """Follows renames from a snapshot forward: a path in a later commit -> its path at the snapshot
    (or None when the file did not exist there). Commits are applied in topological order; on
    side branches this is an approximation, and the path is checked against the snapshot's tree."""

    def __init__(self, snap_paths):
        self.snap = snap_paths
        self.to_snap = {}   # current path -> snapshot path (only for renamed / deleted ones)

    def at_snapshot(self, path):
        p = self.to_snap.get(path, path)
        return p if p in self.snap else None

    def apply(self, changes):
        for st, old, new in changes:
            if st[0] == "R":
                self.to_snap[new] = self.to_snap.get(old, old)
                self.to_snap[old] = None
            elif st[0] == "A" and new in self.to_snap:
                self.to_snap[new] = None  # a new file at a path an older file left


def skip_reason(commit):
    sha, parents, an, ae, ct, msg, changes = commit
    if len(parents) != 1:
        return "merge"
    if BOT.search(an) or BOT.search(ae):
        return "bot"
    subject = msg.strip().split("\n")[0] if msg.strip() else ""
    if REVERT_BODY.search(msg) or re.match(r"^\s*\"?revert", subject, re.I):
        return "revert"
    if NOISE_SUBJECT.search(subject) or MORE_NOISE.search(subject):
        return "noise subject (release, version, format, lint, typo, deps, rename...)"
    if "dependabot" in msg.lower() or "renovate" in msg.lower():
        return "bot"
    if not changes:
        return "no files"
    if len(changes) > MAX_FILES:
        return "mass change"
    kinds = [kind_of(new) for _, _, new in changes]
    nsrc = sum(1 for k in kinds if k == "source")
    if nsrc > MAX_SOURCE_FILES:
        return "mass change"
    if nsrc == 0:
        return "no source file (tests, docs, config only)"
    src_st = [st for (st, _, _), k in zip(changes, kinds) if k == "source"]
    if all(st.startswith("R100") for st in src_st):
        return "rename only"
    return None


def mine_repo(repo, lang, lic, split, bad):
    if repo.lower() in bad:
        raise SystemExit(f"refusing excluded repository {repo}")
    name = repo.replace("/", "+")
    out_path = os.path.join(OUT_DIR, name + ".jsonl")
    if os.path.exists(out_path):
        return "cached"
    gd = sources.mirror_dir(repo)
    if not os.path.isdir(gd):
        return "missing"
    t0 = time.time()
    head = git(gd, "rev-parse", "HEAD").strip()
    fp = first_parent(gd)
    snaps = choose_snapshots(fp)
    ends = snaps[1:] + [head]
    drops, queries, seen = {}, [], set()
    snap_info = []
    for snap, upto in zip(snaps, ends):
        snap_paths = tree_paths(gd, snap)
        snap_date = git(gd, "show", "-s", "--format=%cI", snap).strip()
        pm = PathMap(snap_paths)
        commits = window_commits(gd, snap, upto)
        n_before = len(queries)
        for c in commits:
            sha, parents, an, ae, ct, msg, changes = c
            why = skip_reason(c)
            if why is None:
                text = clean_message(msg)
                if words(text) < MIN_WORDS:
                    why = "message too short"
            if why is None:
                answer, added, tests, tests_added = [], [], [], []
                for st, old, new in changes:
                    k = kind_of(new)
                    if k not in ("source", "test"):
                        continue
                    at = pm.at_snapshot(old if st[0] in "RMD" or st[0] == "T" else new)
                    if k == "source":
                        (answer if at else added).append(at or new)
                    else:
                        (tests if at else tests_added).append(at or new)
                answer = sorted(set(answer))
                if not answer:
                    why = "no changed source file existed at the snapshot"
                else:
                    key = (text, tuple(answer))
                    if key in seen:
                        why = "duplicate"
                    else:
                        seen.add(key)
                        queries.append({
                            "repo": repo, "snapshot": snap, "commit": sha,
                            "date": datetime.fromtimestamp(ct, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                            "query": text, "answer": answer, "added": sorted(set(added)),
                            "tests": sorted(set(tests)), "tests_added": sorted(set(tests_added)),
                        })
            if why is not None:
                drops[why] = drops.get(why, 0) + 1
            pm.apply(changes)
        snap_info.append({"commit": snap, "date": snap_date, "until": upto, "commits": len(commits),
                          "queries": len(queries) - n_before})
    os.makedirs(OUT_DIR, exist_ok=True)
    tmp = out_path + ".part"
    meta = {"repo": repo, "language": lang, "license": lic, "split": split, "head": head,
            "snapshots": snap_info, "queries": len(queries), "dropped": dict(sorted(drops.items())),
            "params": {"snapshots": SNAPSHOTS, "years": YEARS, "max_window": MAX_WINDOW,
                       "max_source_files": MAX_SOURCE_FILES, "max_files": MAX_FILES, "min_words": MIN_WORDS}}
    with open(tmp, "w") as f:
        f.write(json.dumps({"meta": meta}) + "\n")
        for q in queries:
            f.write(json.dumps(q) + "\n")
    os.replace(tmp, out_path)
    return f"{len(queries)} queries from {sum(s['commits'] for s in snap_info)} commits " \
           f"({len(snaps)} snapshots, {time.time() - t0:.0f}s)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", help="owner/name ... (must be in sources.tsv)")
    ap.add_argument("--limit", type=int, default=0, help="mine at most N repositories not yet mined")
    args = ap.parse_args()
    bad = sources.excluded_repos()
    rows = sources.load_sources()
    for repo, *_ in rows:
        if repo.lower() in bad:
            sys.exit(f"refusing: sources.tsv names an excluded repository ({repo})")
    if args.only:
        want = {r.lower() for r in args.only}
        for r in want:
            if r in bad:
                sys.exit(f"refusing excluded repository {r}")
        rows = [r for r in rows if r[0].lower() in want]
    t0, done = time.time(), 0
    for repo, lang, lic, split in rows:
        if args.limit and done >= args.limit:
            break
        try:
            status = mine_repo(repo, lang, lic, split, bad)
        except SystemExit:
            raise
        except Exception as e:  # one bad repository must not stop the others
            status = f"FAILED: {e!r}"[:300]
        if status != "cached":
            done += 1
            print(f"[rank-mine] {repo}: {status}", flush=True)
    print(f"[rank-mine] done in {time.time() - t0:.0f}s", flush=True)


if __name__ == "__main__":
    main()
