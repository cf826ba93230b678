#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""doc_links.py ROOT [FILE...]: check the links of our Markdown.

Every relative link must resolve to a file or folder inside ROOT (and, for
`file.md#anchor` or `#anchor`, to a heading of that Markdown file, slugged
as GitHub does); no link may leave the tree (`../` past ROOT, an absolute
path, `file:`); http(s) links are allowed (public standards: the licence,
SARIF) but listed with -v.  Links inside fenced code blocks and inline code
are not links.  Prints one line per broken link, `file:line: target: why`,
and exits 1 when there is one.  Without FILEs: README.md, CHANGELOG.md and
every *.md under docs/ and examples/.
"""
import os
import re
import sys

INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
FENCE = re.compile(r"^\s{0,3}(```|~~~)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def slug(text):
    """GitHub's heading anchor: formatting dropped, lower case, punctuation
    other than '-' and '_' removed, each space a '-'."""
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[*_]{2}([^*_]+)[*_]{2}", r"\1", text)
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def lines_outside_code(path):
    """(line number, text with inline code blanked) outside fences."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line)
            if m:
                if fence is None:
                    fence = m.group(1)
                elif m.group(1) == fence:
                    fence = None
                continue
            if fence is None:
                yield n, re.sub(r"`[^`]*`", "``", line)


def check_file(root, path, external):
    bad = []
    rel = os.path.relpath(path, root)
    for n, line in lines_outside_code(path):
        targets = [m.group(1) for m in INLINE.finditer(line)]
        m = REFDEF.match(line)
        if m:
            targets.append(m.group(1))
        for t in targets:
            why = check_target(root, path, t)
            if why == "external":
                external.append("%s:%d: %s" % (rel, n, t))
            elif why:
                bad.append("%s:%d: %s: %s" % (rel, n, t, why))
    return bad


def check_target(root, path, t):
    if re.match(r"^https?://", t):
        return "external"
    if re.match(r"^[a-z][a-z0-9+.-]*:", t, re.I):
        return "a %s link leaves the repository" % t.split(":", 1)[0]
    if t.startswith("/"):
        return "an absolute path leaves the repository"
    file_part, _, anchor = t.partition("#")
    target = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
    real_root = os.path.realpath(root)
    real = os.path.realpath(target)
    if real != real_root and not real.startswith(real_root + os.sep):
        return "points outside the repository"
    if not os.path.exists(target):
        return "no such file"
    if anchor:
        if not target.endswith(".md") or not os.path.isfile(target):
            return "an anchor into a file that is not Markdown"
        if anchor not in anchors_of(target):
            return "no heading with anchor #%s in %s" % (anchor, os.path.relpath(target, root))
    return None


def anchors_of(path):
    """Anchors of a Markdown file, from its headings with code spans kept."""
    seen = {}
    out = set()
    fence = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = FENCE.match(line)
            if m:
                fence = m.group(1) if fence is None else (None if m.group(1) == fence else fence)
                continue
            if fence is not None:
                continue
            m = HEADING.match(line)
            if not m:
                continue
            s = slug(m.group(2))
            k = seen.get(s, 0)
            seen[s] = k + 1
            out.add(s if k == 0 else "%s-%d" % (s, k))
    # Explicit anchors: <a id="x"></a> / <a name="x">.
    with open(path, encoding="utf-8") as f:
        out.update(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", f.read()))
    return out


def default_files(root):
    files = [os.path.join(root, f) for f in ("README.md", "CHANGELOG.md") if os.path.exists(os.path.join(root, f))]
    for top in ("docs", "examples"):
        for d, _, names in os.walk(os.path.join(root, top)):
            files += [os.path.join(d, n) for n in sorted(names) if n.endswith(".md")]
    return files


def main(argv):
    verbose = "-v" in argv
    argv = [a for a in argv if a != "-v"]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[0]
    files = [os.path.join(root, f) for f in argv[1:]] or default_files(root)
    bad, external = [], []
    for f in files:
        bad += check_file(root, f, external)
    for line in bad:
        print(line)
    if verbose:
        for line in external:
            print("external " + line)
    print("%d files, %d broken links, %d external" % (len(files), len(bad), len(external)), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
