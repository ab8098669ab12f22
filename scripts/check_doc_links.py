#!/usr/bin/env python3
"""Checks that every relative link in Markdown files resolves.

    python3 scripts/check_doc_links.py PATH...

PATH is a Markdown file or a folder (searched for *.md). A link `[text](target)` or image
`![alt](target)` whose target is not a URL must name a file or folder that exists, relative to
the file that holds it; an anchor (`#the-shell`, `diagnosis.md#the-timeline-tree`) must be a
heading of the file it points into, spelled as GitHub spells heading anchors. Links inside code
blocks and code spans are not links. Prints each broken link as FILE:LINE: TARGET (why) and exits
1 when there is one, 0 otherwise (2 when a PATH does not exist or holds no Markdown).
"""
import os
import re
import sys

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # http:, https:, mailto:, ...


def slug(heading):
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as '-'."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip())
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link keeps its text
    text = text.lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def lines_outside_code(path, blank_code_spans=True):
    """(line number, text) of the lines outside fenced code blocks, code spans blanked (a
    heading's are kept: its anchor holds their text)."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            stripped = line.lstrip()
            if fence:
                if stripped.startswith(fence):
                    fence = None
                continue
            if stripped.startswith("```") or stripped.startswith("~~~"):
                fence = stripped[:3]
                continue
            yield number, re.sub(r"`[^`]*`", "", line) if blank_code_spans else line


def anchors(path, cache={}):
    """The anchors of a Markdown file's headings (a repeated heading's get -1, -2, ...)."""
    if path not in cache:
        counts, found = {}, set()
        for _, line in lines_outside_code(path, blank_code_spans=False):
            m = re.match(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            base = slug(m.group(1))
            n = counts.get(base, 0)
            found.add(base if n == 0 else f"{base}-{n}")
            counts[base] = n + 1
        with open(path, encoding="utf-8") as f:
            found.update(re.findall(r'<a\s+(?:name|id)="([^"]+)"', f.read()))
        cache[path] = found
    return cache[path]


def broken_links(path):
    for number, line in lines_outside_code(path):
        targets = [m.group(1) for m in LINK.finditer(line)]
        m = REFERENCE.match(line)
        if m:
            targets.append(m.group(1))
        for target in targets:
            if URL.match(target):
                continue
            file_part, _, anchor = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) \
                if file_part else path
            if not os.path.exists(resolved):
                yield number, target, f"no such file: {resolved}"
            elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                yield number, target, f"no heading #{anchor} in {resolved}"


def markdown_files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for name in sorted(files):
                    if name.endswith(".md"):
                        yield os.path.join(root, name)
        elif os.path.isfile(p):
            yield p
        else:
            print(f"check_doc_links: {p}: no such file or folder", file=sys.stderr)
            sys.exit(2)


def main(argv):
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    files = list(markdown_files(argv))
    if not files:
        print(f"check_doc_links: no Markdown in {' '.join(argv)}", file=sys.stderr)
        return 2
    failures = 0
    for path in files:
        for number, target, why in broken_links(path):
            print(f"{path}:{number}: {target} ({why})")
            failures += 1
    links = "1 broken link" if failures == 1 else f"{failures} broken links"
    print(f"check_doc_links: {len(files)} files, {links}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
