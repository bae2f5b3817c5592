#!/usr/bin/env python3
"""Lists candidate fix commits in a fetched mirror: commits whose message says it fixes,
closes or resolves an issue (#N), with the non-test source files they changed (1-3).

A helper for building questions.json by hand; it prints candidates, it decides nothing.
Usage: python3 bench/localization/mine.py OWNER/NAME [--max-files 3]
"""
import argparse
import re
import subprocess
import sys

from common import is_source, mirror_dir

REF = re.compile(r"\b(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?)\b:?\s+(?:issue\s+)?#(\d+)", re.I)


def git(gd, *args):
    return subprocess.run(["git", "--git-dir", gd, *args], capture_output=True, text=True,
                          check=True).stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("--max-files", type=int, default=3)
    a = ap.parse_args()
    gd = mirror_dir(a.repo)
    log = git(gd, "log", "--no-merges", "--format=%x00%H%x01%P%x01%s%x01%b")
    for rec in log.split("\x00")[1:]:
        h, parents, subj, body = rec.split("\x01", 3)
        refs = REF.findall(subj + "\n" + body)
        if not refs or not parents:
            continue
        names = git(gd, "diff", "--name-only", parents.split()[0], h).split()
        src = [n for n in names if is_source(n)]
        if not 1 <= len(src) <= a.max_files:
            continue
        print(f"{h} #{','.join(sorted(set(refs)))} {subj[:90]}\n    " + " ".join(src))


if __name__ == "__main__":
    sys.exit(main())
