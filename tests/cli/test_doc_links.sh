#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The docs stand alone: every relative link of README.md, CHANGELOG.md,
# docs/ and examples/ resolves to a file (and heading) of this tree, and
# none leaves it (tests/cli/doc_links.py).  The checker is first run on a
# small tree with one link of each kind of breakage, so it can fail.
set -u
: "${SRC:?}"
BUILD=${BUILD:-$SRC/build}
. "$SRC/tests/cli/lib.sh"
PY=/usr/bin/python3

mkdir -p "$T/tree/docs" "$T/outside"
printf '# Top\n\n## A `b` c: d\n' >"$T/tree/docs/a.md"
cat >"$T/tree/README.md" <<'MD'
# R
[ok](docs/a.md) [ok anchor](docs/a.md#a-b-c-d) [self](#r) [web](https://www.apache.org/licenses/LICENSE-2.0)
[gone](docs/gone.md)
[bad anchor](docs/a.md#nope)
[escape](../outside)
[abs](/etc/passwd)
`[in code](docs/gone.md)`
```
[in a fence](docs/gone.md)
```
MD
expect_rc 1 "$PY" "$SRC/tests/cli/doc_links.py" "$T/tree"
got=$(cut -d: -f1,2 "$_out" | tr '\n' ' ')
[ "$got" = "README.md:3 README.md:4 README.md:5 README.md:6 " ] || die "checker on a test tree found '$got':
$(cat "$_out")"

expect_rc 0 "$PY" "$SRC/tests/cli/doc_links.py" "$SRC"
grep -rln 'DESIGN\.md\|\.\./shared/' "$SRC/README.md" "$SRC/docs" && die "a doc names a file outside the repository"
# Comments too: a reader of the code has the repository, not its makers' notes.
grep -rln --include='*.[chly]' --include='*.py' --include='*.sh' --include=Makefile 'DESIGN\.md' \
	"$SRC/runtime" "$SRC/compiler" "$SRC/common" "$SRC/include" "$SRC/bench" "$SRC/tests" "$SRC/scripts" "$SRC/Makefile" \
	2>/dev/null | grep -v 'tests/cli/test_doc_links.sh$' && die "source names a file outside the repository"
pass "every link of README.md, docs/ and examples/ stays in the tree and resolves; no source comment cites DESIGN.md"
