#!/usr/bin/env python3
"""Builds the question files from the hand-written sources issues.txt (real issues),
written.txt (questions we wrote) and paraphrased.txt (questions worded without the code's own
words), resolving each fix commit in the fetched mirror.

- an issue's base commit is its fix commit's first parent; its answers are the non-test
  source files the fix changed (common.is_source) that exist at the base (a file the fix
  created is not an answer), unless its header says `answers=a,b`;
- a written or paraphrased question names its base commit and answers itself; they are
  checked to exist.

The split is frozen: a question already in questions.json or holdout.json keeps its side.
The first time (no question has a side yet) exactly 30% go to holdout.json, sampled with
random.Random(SEED); a question added later goes there when
random.Random(f"{SEED}:{id}").random() < 0.3, a coin that depends on its id alone.

`--fresh` builds the second holdout instead: the same three sources under fresh/, every
question of them into fresh.json (no split: it is all held out). It was written after the
first holdout had been looked at three times, about repositories in none of the other files.
Usage: python3 bench/localization/build.py [--fresh]
"""
import json
import os
import random
import re
import subprocess
import sys

from common import is_source, mirror_dir

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20261201
HOLDOUT_FRACTION = 0.3
MAX_QUESTION_BYTES = 20_000


def git(repo, *args):
    r = subprocess.run(["git", "--git-dir", mirror_dir(repo), *args], capture_output=True,
                       text=True)
    if r.returncode != 0:
        sys.exit(f"git {' '.join(args)} in {repo}: {r.stderr.strip()}")
    return r.stdout


def blocks(path):
    """(header fields, text) for each `=== ` block of a source file; `#` lines before the
    first block are comments."""
    with open(path, encoding="utf-8") as f:
        parts = re.split(r"^=== ", f.read(), flags=re.M)[1:]
    for part in parts:
        header, _, text = part.partition("\n")
        yield header.split(), text.strip()


def trim(text):
    data = text.encode("utf-8")
    if len(data) <= MAX_QUESTION_BYTES:
        return text
    return data[:MAX_QUESTION_BYTES].decode("utf-8", "ignore")


def opts(fields):
    return dict(f.split("=", 1) for f in fields if "=" in f)


def issue_questions(folder=HERE):
    for fields, text in blocks(os.path.join(folder, "issues.txt")):
        repo, fix, kind, url = fields[:4]
        assert kind in ("bug", "feature"), fields
        fix = git(repo, "rev-parse", fix + "^{commit}").strip()
        base = git(repo, "rev-parse", fix + "^1").strip()
        o = opts(fields[4:])
        at_base = set(git(repo, "ls-tree", "-r", "--name-only", base).split("\n"))
        if "answers" in o:
            answers = o["answers"].split(",")
            missing = [a for a in answers if a not in at_base]
            assert not missing, f"{url}: no {missing} at {base[:12]}"
        else:
            changed = git(repo, "diff", "--name-only", base, fix).split()
            # A file the fix created is not in the checkout the question is asked on, so
            # no ranker could cite it: it is not an answer.
            answers = [p for p in changed if is_source(p) and p in at_base]
        assert answers, f"{url}: the fix changed no source file that exists at its base"
        num = url.rstrip("/").rsplit("/", 1)[1]
        yield {
            "id": f"{repo.split('/')[1]}-{num}",
            "repo": repo,
            "base": base,
            "fix": fix,
            "kind": kind,
            "source": url,
            "answers": answers,
            "question": trim(text),
        }


def written_questions(folder=HERE, source="written.txt", kind="written", tag="w",
                      about="written for this set"):
    """Questions that name their base commit and answers (written.txt; paraphrased.txt with
    kind "paraphrased" and ids `<name>-p<k>`)."""
    path = os.path.join(folder, source)
    counters = {}
    for fields, text in blocks(path):
        repo, base = fields[:2]
        base = git(repo, "rev-parse", base + "^{commit}").strip()
        answers = opts(fields[2:])["answers"].split(",")
        files = set(git(repo, "ls-tree", "-r", "--name-only", base).split("\n"))
        missing = [a for a in answers if a not in files]
        assert not missing, f"{repo}@{base[:12]}: no {missing}"
        name = repo.split("/")[1]
        counters[name] = counters.get(name, 0) + 1
        yield {
            "id": f"{name}-{tag}{counters[name]}",
            "repo": repo,
            "base": base,
            "kind": kind,
            "source": about,
            "answers": answers,
            "question": text,
        }


def load(name):
    path = os.path.join(HERE, name)
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return json.load(f)["questions"]


ABOUT = ("Localization eval: which files answer this question? Real issues (bug, feature) are "
         "asked on the fix commit's first parent (base) and answered by the non-test source "
         "files the fix changed; written and paraphrased questions name their own answers. "
         "The split into questions.json and holdout.json is frozen; do not edit questions to "
         "fit a ranker.")


def paraphrased_questions(folder=HERE):
    return written_questions(folder, "paraphrased.txt", "paraphrased", "p",
                             "paraphrased for this set")


def all_questions(folder=HERE):
    qs = list(issue_questions(folder)) + list(written_questions(folder)) + \
        list(paraphrased_questions(folder))
    ids = [q["id"] for q in qs]
    dup = {i for i in ids if ids.count(i) > 1}
    assert not dup, f"duplicate ids {dup}"
    return qs


FRESH_ABOUT = ("Localization eval, the second holdout (fresh/): built as the first one, about "
               "repositories in none of the other files, frozen before any ranker was run on it. "
               "Every question is held out; do not edit questions to fit a ranker.")


def kinds_of(part):
    return {k: sum(q["kind"] == k for q in part) for k in ("bug", "feature", "written", "paraphrased")}


def build_fresh():
    qs = all_questions(os.path.join(HERE, "fresh"))
    seen = {q["repo"] for q in load("questions.json") + load("holdout.json")}
    again = sorted({q["repo"] for q in qs} & seen)
    assert not again, f"the fresh holdout must be about other repositories: {again}"
    with open(os.path.join(HERE, "fresh.json"), "w", encoding="utf-8") as f:
        json.dump({"about": FRESH_ABOUT, "split": "fresh", "questions": qs}, f, indent=1,
                  ensure_ascii=False)
        f.write("\n")
    print(f"fresh.json: {len(qs)} questions {kinds_of(qs)}")


def main():
    if sys.argv[1:] == ["--fresh"]:
        return build_fresh()
    if sys.argv[1:]:
        sys.exit(__doc__.rsplit("Usage: ", 1)[1])
    qs = all_questions()
    ids = [q["id"] for q in qs]
    side = {q["id"]: "tune" for q in load("questions.json")}
    side.update({q["id"]: "holdout" for q in load("holdout.json")})
    new = sorted(i for i in ids if i not in side)
    if len(new) == len(ids):  # the first split: exactly 30%, seeded
        rng = random.Random(SEED)
        held = set(rng.sample(new, round(HOLDOUT_FRACTION * len(new))))
    else:  # later additions: a seeded coin per id, so the old split never moves
        held = {i for i in new if random.Random(f"{SEED}:{i}").random() < HOLDOUT_FRACTION}
    for i in new:
        side[i] = "holdout" if i in held else "tune"
    for name, s in (("questions.json", "tune"), ("holdout.json", "holdout")):
        part = [q for q in qs if side[q["id"]] == s]
        with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
            json.dump({"about": ABOUT, "split": s, "questions": part}, f, indent=1,
                      ensure_ascii=False)
            f.write("\n")
        print(f"{name}: {len(part)} questions {kinds_of(part)}")


if __name__ == "__main__":
    main()
