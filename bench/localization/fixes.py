#!/usr/bin/env python3
"""For issue (or PR) numbers of a fetched repository, lists the commits whose message
mentions #N, with the non-test source files each changed. A helper for building the set by
hand: the fix commit and its first parent are chosen by a person reading this output.
Usage: python3 bench/localization/fixes.py OWNER/NAME N [N ...]
"""
import re
import subprocess
import sys

from common import is_source, mirror_dir


def git(gd, *args):
    return subprocess.run(["git", "--git-dir", gd, *args], capture_output=True, text=True).stdout


def main():
    repo, nums = sys.argv[1], sys.argv[2:]
    gd = mirror_dir(repo)
    for n in nums:
        pat = re.compile(rf"#{n}\b")
        out = git(gd, "log", "HEAD", f"--grep=#{n}", "--format=%x00%H%x01%P%x01%s%x01%b")
        hits = []
        for rec in out.split("\x00")[1:]:
            h, parents, subj, body = rec.split("\x01", 3)
            # The subject and body apart: joined, "fixes #12" + "Reusing" is "#12Reusing".
            if not pat.search(subj + "\n" + body) or not parents:
                continue
            names = git(gd, "diff", "--name-only", parents.split()[0], h).split()
            src = [x for x in names if is_source(x)]
            hits.append(f"  {h[:12]} p={len(parents.split())} {subj[:80]}\n      src: {' '.join(src)}")
        print(f"#{n}: {len(hits)} commit(s)")
        print("\n".join(hits[:6]))


if __name__ == "__main__":
    main()
