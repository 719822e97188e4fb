"""Checks the relative links of Markdown files: each must name a file that
exists, and an anchor must name one of that file's headings (as GitHub and
mdBook make them). Prints every dead link; exits 1 if there is one.

usage: python3 scripts/lib/check_links.py FILE.md...
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

LINK = re.compile(r"\[(?:[^\]]|\][^(])*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def slug(heading: str) -> str:
    """A heading's anchor: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[|\]\([^)]*\)", "", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text())
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.M)}


def dead_links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text())
    dead = []
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        if not linked.exists():
            dead.append(f"{path}: {target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            dead.append(f"{path}: {target}: no heading #{anchor} in {linked.name}")
    return dead


def main(files: list[str]) -> int:
    dead = [line for f in files for line in dead_links(Path(f))]
    for line in dead:
        print(line, file=sys.stderr)
    return 1 if dead else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
