#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every source file we wrote carries the licence's SPDX line near its top
# (LICENSE: Apache-2.0): C, headers, the grammar, Python, shell, the
# Makefile, scripts/ and any other file that starts with "#!".  Inputs the
# tests read (tests/corpus/, the fuzz seeds) and vendored files (the SARIF
# schema) are data, not sources, and other extensions are not looked at.
# The list comes from git when SRC is a checkout, else from find.
set -u
: "${SRC:?}"
BUILD=${BUILD:-$SRC/build}
. "$SRC/tests/cli/lib.sh"

LINE='SPDX-License-Identifier: Apache-2.0'

# spdx_sources ROOT: the files held to the rule, one a line, relative to ROOT.
spdx_sources() {
	if git -C "$1" rev-parse --show-toplevel 2>/dev/null | grep -qxF "$(cd "$1" && pwd -P)"; then
		git -C "$1" ls-files
	else
		(cd "$1" && find . -path ./.git -prune -o -path './build*' -prune -o -type f -print | sed 's|^\./||')
	fi | while IFS= read -r f; do
		case "$f" in
		tests/corpus/* | tests/fuzz/corpus/* | tests/lint/cases/*) continue ;;
		*.c | *.h | *.l | *.y | *.py | *.sh | Makefile | */Makefile | scripts/*) echo "$f" ;;
		*) [ -f "$1/$f" ] && [ "$(head -c2 "$1/$f")" = '#!' ] && echo "$f" ;;
		esac
	done
}

# spdx_missing ROOT: the sources under ROOT without the line in their first 5 lines.
spdx_missing() {
	spdx_sources "$1" | while IFS= read -r f; do
		head -5 "$1/$f" | grep -qF "$LINE" || echo "$f"
	done
}

# The check must be able to fail: a small tree (not a checkout: find) with
# one file of each kind lacking the line, one carrying it, and data files.
mkdir -p "$T/tree/scripts" "$T/tree/tests/corpus" "$T/tree/tools"
printf '/* %s */\nint x;\n' "$LINE" >"$T/tree/ok.c"
printf 'int y;\n' >"$T/tree/bad.c"
printf '#!/bin/sh\necho\n' >"$T/tree/tools/bad-tool"
printf '#!/bin/sh\n# %s\necho\n' "$LINE" >"$T/tree/scripts/ok"
printf 'x: 1\n' >"$T/tree/data.yaml"
printf 'int z;\n' >"$T/tree/tests/corpus/input.c"
got=$(spdx_missing "$T/tree" | sort | tr '\n' ' ')
[ "$got" = "bad.c tools/bad-tool " ] || die "in a test tree, missing SPDX lines found: '$got', want 'bad.c tools/bad-tool '"

n=$(spdx_sources "$SRC" | wc -l)
[ "$n" -gt 100 ] || die "found only $n source files under $SRC: the file list is broken"
missing=$(spdx_missing "$SRC")
[ -z "$missing" ] || die "no '$LINE' in the first 5 lines of:
$missing"
pass "all $n source files carry '$LINE'; a file without it is named"
