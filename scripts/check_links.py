#!/usr/bin/env python3
"""Checks that every relative link in the Markdown files under a folder resolves to a file
or folder inside it (the release archive's, which ships without the repository around it).

Usage: check_links.py DIR    exit 0 when every link resolves, 1 with each broken one listed.
Links with a scheme (https:, mailto:) and pure anchors (#section) are not checked; a link's
own anchor is dropped before the file is looked up.
"""

import os
import re
import sys

# [text](target) and [text](target "title"), images included; code spans are skipped.
LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def links(path):
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            line = re.sub(r"`[^`]*`", "", line)
            for match in LINK.finditer(line):
                yield number, match.group(1)


def broken(root):
    root = os.path.realpath(root)
    for folder, _, files in os.walk(root):
        for name in sorted(files):
            if not name.endswith(".md"):
                continue
            path = os.path.join(folder, name)
            for number, target in links(path):
                if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
                    continue
                file_part = target.split("#", 1)[0]
                resolved = os.path.realpath(os.path.join(folder, file_part))
                inside = resolved == root or resolved.startswith(root + os.sep)
                if not inside or not os.path.exists(resolved):
                    yield f"{os.path.relpath(path, root)}:{number}: {target}"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    problems = list(broken(sys.argv[1]))
    for problem in problems:
        print(f"broken link: {problem}", file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
