#!/usr/bin/env python3
"""The repositories train/rank mines, their licenses and splits.

`candidates.txt` lists candidate repositories (owner/name language). This script reads each
fetched candidate's license file in its snapshot (/work/.mirror/<owner>+<name>/repo, HEAD),
classifies it, and writes `sources.tsv` (permissive ones only) and `skipped.tsv` (the rest,
with the reason). The split is by repository, from a hash of the lowercased name.

Excluded, whatever the candidates say: every repository of ../shared/benchmark-repos.txt,
every repository bench/localization asks about (questions.json, holdout.json) and
train/mine.py's EVAL_REPOS. mine.py checks the same list again before it mines.

Usage: python3 train/rank/sources.py            # rewrite sources.tsv / skipped.tsv
"""
import hashlib
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

def _load_embed_mine():
    """train/mine.py (the embedding model's miner: EVAL_REPOS, the benchmark list, its filters),
    loaded by path under another name: train/rank/mine.py is also called mine."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("embed_mine", os.path.join(ROOT, "train", "mine.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


embed_mine = _load_embed_mine()

MIRROR = os.environ.get("MIRROR", "/work/.mirror")
CANDIDATES = os.path.join(HERE, "candidates.txt")
SOURCES = os.path.join(HERE, "sources.tsv")
SKIPPED = os.path.join(HERE, "skipped.tsv")

PERMISSIVE = {"MIT", "BSD-2-Clause", "BSD-3-Clause", "BSD", "Apache-2.0", "ISC", "MPL-2.0", "Unlicense"}


def excluded_repos():
    """Lowercased owner/name of every repository we must never mine."""
    out = set(embed_mine.excluded_repos())  # EVAL_REPOS + ../shared/benchmark-repos.txt (exits if absent)
    for f in ("questions.json", "holdout.json"):
        path = os.path.join(ROOT, "bench", "localization", f)
        data = json.load(open(path))
        items = data if isinstance(data, list) else data.get("questions", [])
        for q in items:
            if isinstance(q, dict) and q.get("repo"):
                out.add(q["repo"].lower())
    return out


# The salt was fixed once, as the first of "", "rank-1:", "rank-2:", ... giving every language at
# least 2 repositories in valid and in test (the unsalted hash left none of Java or TypeScript in
# test). A repository's split depends only on its name: adding sources never moves another.
SPLIT_SALT = "rank-2:"


def split_of(repo):
    """train / valid / test, about 80/10/10, by a salted hash of the repository's lowercased name."""
    h = int(hashlib.sha256((SPLIT_SALT + repo.lower()).encode()).hexdigest()[:8], 16) % 100
    return "train" if h < 80 else ("valid" if h < 90 else "test")


def mirror_dir(repo):
    return os.path.join(MIRROR, repo.replace("/", "+"), "repo")


LICENSE_FILE = re.compile(r"^(licen[cs]e|copying|unlicense)([-._][A-Za-z0-9.-]*)?$", re.I)


def classify(text):
    """One license id from a license file's text, or a description of what it is."""
    t = " ".join(text.split())
    low = t.lower()
    # MPL-2.0 names the GPL family itself (its "Secondary Licenses"): test it first
    if low.lstrip("# ").startswith("mozilla public license version 2.0") or \
            ("mozilla public license" in low[:300] and "2.0" in low[:300]):
        return "MPL-2.0"
    if "european union public licen" in low:
        return "EUPL"
    if re.search(r"gnu (lesser |library )?general public license|gnu affero", low) and \
            "apache license" not in low and "permission is hereby granted" not in low:
        return "GPL-family"
    if "business source license" in low:
        return "BUSL"
    if "server side public license" in low:
        return "SSPL"
    if "elastic license" in low:
        return "Elastic"
    if "apache license" in low and ("version 2.0" in low or "2.0" in low[:300]):
        return "Apache-2.0"
    if "free and unencumbered software released into the public domain" in low:
        return "Unlicense"
    if "permission is hereby granted, free of charge" in low:
        return "MIT"
    if "redistribution and use in source and binary forms" in low:
        if "neither the name" in low or "the names of its contributors may not" in low or \
                "name of the copyright holder nor" in low or "names of its contributors may be used" in low:
            return "BSD-3-Clause"
        return "BSD-2-Clause"
    if re.search(r"permission to use, copy, modify, and(/or)? distribute this software for any purpose "
                 r"with or without fee is hereby granted", low):
        if "except as contained in this notice" in low:
            return "X11-style"  # curl's and similar: permissive, but not on our list
        return "ISC"
    if "zlib" in low and "altered source versions must be plainly marked" in low:
        return "Zlib"
    return "unknown"


def read_license(gd):
    """(license id, files read): from the root's license files at HEAD. Dual licenses
    (LICENSE-MIT + LICENSE-APACHE, or a file offering both) become 'A OR B'."""
    names = subprocess.run(["git", "--git-dir", gd, "ls-tree", "--name-only", "HEAD"],
                           capture_output=True, text=True).stdout.split("\n")
    files = sorted(n for n in names if LICENSE_FILE.match(n))
    found = []
    for f in files:
        text = subprocess.run(["git", "--git-dir", gd, "show", f"HEAD:{f}"], capture_output=True,
                              text=True, errors="replace").stdout
        lic = classify(text)
        if lic == "unknown" and f.lower().endswith(("-mit", ".mit")):
            lic = "MIT" if "permission is hereby granted" in text.lower() else lic
        if lic not in found:
            found.append(lic)
    if not found:
        return "none", files
    ok = [l for l in found if l in PERMISSIVE]
    bad = [l for l in found if l not in PERMISSIVE and l != "unknown"]
    if bad and not ok:
        return bad[0], files
    if ok:
        # a GPL file beside a permissive one (a dual licence, or a licence of one part)
        return " OR ".join(sorted(ok)) + (" (also: " + ", ".join(bad) + ")" if bad else ""), files
    return "unknown", files


def load_candidates():
    out = []
    for line in open(CANDIDATES):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        repo, lang = line.split()[:2]
        out.append((repo, lang))
    return out


def load_sources():
    """[(repo, language, license, split)] from sources.tsv."""
    out = []
    for line in open(SOURCES):
        if line.startswith("#") or not line.strip():
            continue
        repo, lang, lic, split = line.rstrip("\n").split("\t")[:4]
        out.append((repo, lang, lic, split))
    return out


def main():
    bad = excluded_repos()
    rows, skipped = [], []
    for repo, lang in load_candidates():
        if repo.lower() in bad:
            skipped.append((repo, lang, "excluded (benchmark / evaluation repository)"))
            continue
        gd = mirror_dir(repo)
        if not os.path.isdir(gd):
            skipped.append((repo, lang, "not fetched"))
            continue
        lic, files = read_license(gd)
        if "(also:" in lic:
            skipped.append((repo, lang, f"mixed license files: {lic} ({', '.join(files)})"))
            continue
        if not all(part in PERMISSIVE for part in lic.split(" OR ")):
            skipped.append((repo, lang, f"license {lic} ({', '.join(files) or 'no license file'})"))
            continue
        rows.append((repo, lang, lic, split_of(repo)))
    rows.sort(key=lambda r: r[0].lower())
    with open(SOURCES + ".part", "w") as f:
        f.write("# owner/name\tlanguage\tlicense (read from the snapshot's license files)\tsplit\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    os.replace(SOURCES + ".part", SOURCES)
    with open(SKIPPED + ".part", "w") as f:
        f.write("# owner/name\tlanguage\treason not used\n")
        for r in sorted(skipped, key=lambda r: r[0].lower()):
            f.write("\t".join(r) + "\n")
    os.replace(SKIPPED + ".part", SKIPPED)
    from collections import Counter
    print(f"{len(rows)} sources, {len(skipped)} skipped")
    print("splits:", dict(Counter(r[3] for r in rows)))
    print("languages:", dict(Counter(r[1] for r in rows)))
    print("licenses:", dict(Counter(r[2] for r in rows)))
    print("skipped:", dict(Counter(s[2].split(" (")[0] for s in skipped)))


if __name__ == "__main__":
    main()
