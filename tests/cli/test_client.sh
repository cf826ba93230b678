#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The executor's Python client (runtime/client/cordon_tools.py) against a
# fake supervisor (tests/client/test_cordon_tools.py), and the copy of it
# embedded in the runtime (scripts/embed) byte for byte the same as the
# source.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"

SRC="$SRC" python3 -B "$SRC/tests/client/test_cordon_tools.py" >"$T/py.out" 2>&1 ||
	die "cordon_tools.py: $(tail -30 "$T/py.out")"
grep -q '^OK' "$T/py.out" || die "the client tests did not report OK: $(tail -5 "$T/py.out")"

# The generated C holds the module as octal escapes; decode it back.
gen="$BUILD/gen/client/cordon_tools_py.c"
[ -f "$gen" ] || die "no $gen: the runtime does not embed the client"
python3 - "$gen" "$SRC/runtime/client/cordon_tools.py" >"$T/embed.out" 2>&1 <<'PY' || die "embedded client: $(cat "$T/embed.out")"
import re, sys
c = open(sys.argv[1]).read()
body = c[c.index("stubs_client_py[] =") : c.index(";", c.index("stubs_client_py[] ="))]
data = bytes(int(o, 8) for o in re.findall(r"\\([0-7]{3})", body))
n = int(re.search(r"stubs_client_py_len = (\d+);", c).group(1))
src = open(sys.argv[2], "rb").read()
if data != src or n != len(src):
    sys.exit("the embedded module (%d bytes, len %d) is not the source (%d bytes)" % (len(data), n, len(src)))
PY
nm "$BUILD/cordon" | grep -q ' stubs_client_py$' || die "cordon does not hold stubs_client_py"
pass "cordon_tools.py against a fake supervisor; embedded copy identical"
