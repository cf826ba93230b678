#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Command-line behaviour of cordonc and cordon: help, version, exit codes,
# determinism, and "no output file on error".
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
APP="$SRC/examples/cafe/app.yaml"
TOOLS="$SRC/examples/cafe/tools.yaml"

# Help and version, for both binaries and every cordonc command.
expect_rc 0 "$CORDONC" --help;   expect_out "usage: cordonc COMMAND"
expect_rc 0 "$CORDONC" --version; expect_out "blob format 3.6"
expect_rc 0 "$CORDON" --help;    expect_out "check-policy"
expect_rc 0 "$CORDON" --version; expect_out "blob format 3.6"
for c in compile inspect verify keygen sign help; do
	expect_rc 0 "$CORDONC" "$c" --help; expect_out "usage: cordonc $c"
done
expect_rc 0 "$CORDONC" help compile; expect_out "usage: cordonc compile"
expect_rc 2 "$CORDONC";                 expect_err "usage: cordonc"
expect_rc 2 "$CORDONC" frobnicate;      expect_err "unknown command 'frobnicate'"
expect_rc 2 "$CORDON" frobnicate;       expect_err "unknown command 'frobnicate'"
expect_rc 2 "$CORDONC" compile "$APP" "$TOOLS";      expect_err "missing -o OUTPUT"
expect_rc 2 "$CORDONC" compile "$APP" -o "$T/x";     expect_err "at least one tool inventory"
expect_rc 2 "$CORDONC" compile --bogus "$APP" "$TOOLS" -o "$T/x"
expect_rc 2 "$CORDONC" compile "$T/missing.yaml" "$TOOLS" -o "$T/x"
expect_err "cannot read"
expect_rc 2 "$CORDONC" compile "$SRC/examples" "$TOOLS" -o "$T/x"
[ ! -e "$T/x" ] || die "output written for bad input"

# Deterministic: two compiles, identical bytes; options before or after.
expect_rc 0 "$CORDONC" compile "$APP" "$TOOLS" -o "$T/a.cpol"
expect_rc 0 "$CORDONC" compile -o "$T/b.cpol" "$APP" "$TOOLS"
cmp -s "$T/a.cpol" "$T/b.cpol" || die "two compiles differ"

# An error keeps an existing output file as it was (write + rename).
cp "$T/a.cpol" "$T/keep.cpol"
printf 'version: 1\napp: x\nexecution: { runtime: { timeout: 30 } }\n' >"$T/bad.yaml"
expect_rc 2 "$CORDONC" compile "$T/bad.yaml" "$TOOLS" -o "$T/keep.cpol"
cmp -s "$T/a.cpol" "$T/keep.cpol" || die "failed compile changed the existing output"
ls "$T"/keep.cpol.tmp* >/dev/null 2>&1 && die "temporary file left behind"

# Every error of a file in one run, each with a caret.
printf 'version: 1\napp: x\nexecution:\n  runtime: { timeout: 30, pids: 0, memory: 1x }\n' >"$T/many.yaml"
expect_rc 2 "$CORDONC" compile "$T/many.yaml" "$TOOLS" -o "$T/x"
[ "$(grep -c ': error: ' "$_err")" -eq 3 ] || die "want 3 errors in one run"
expect_err "cordonc: 3 errors; no output written"

# inspect / verify / check-policy on good and bad blobs.
expect_rc 0 "$CORDONC" inspect "$T/a.cpol";        expect_out "tools: 3"
expect_rc 0 "$CORDONC" inspect --json "$T/a.cpol"; expect_out '"app":'
expect_rc 0 "$CORDONC" verify "$T/a.cpol";         expect_out "valid policy blob"
expect_rc 0 "$CORDON" check-policy "$T/a.cpol";    expect_out "ok: app cafe"
printf 'not a blob at all, but long enough to hold a header......................................................................................................................................................................................................................................................................................................................................................................................................\n' >"$T/junk.cpol"
expect_rc 1 "$CORDONC" inspect "$T/junk.cpol";     expect_err "[field header.magic, byte 0]"
expect_rc 1 "$CORDON" check-policy "$T/junk.cpol"; expect_err "[field header.magic, byte 0]"
: >"$T/empty.cpol"
expect_rc 2 "$CORDON" check-policy "$T/empty.cpol"
expect_rc 2 "$CORDON" check-policy "$T/nonexistent.cpol"
expect_rc 2 "$CORDON" check-policy
pass "help, version, exit codes, determinism, atomic output"

# Issue 14: `defaults` in a mounts list brings the default mounts back, and
# a listed mount replaces the default one of its target.
/usr/bin/python3 - "$SRC/tests/corpus/good/app.yaml" "$T/defaults.yaml" <<'PYEOF'
import sys
s = open(sys.argv[1]).read()
a, e = s.index("    mounts:\n"), s.index("    seccomp:")
open(sys.argv[2], "w").write(s[:a] + """    mounts:
      - defaults
      - { source: /etc/ssl, target: /etc/ssl }
      - { type: tmpfs, target: /tmp, size: 256m }
""" + s[e:])
PYEOF
expect_rc 0 "$CORDONC" compile "$T/defaults.yaml" "$SRC/tests/corpus/good/tools.yaml" -o "$T/defaults.cpol"
expect_rc 0 "$CORDONC" inspect "$T/defaults.cpol"
want='mounts: 6
  bind  /etc/alternatives <- /etc/alternatives ro
  bind  /etc/ssl <- /etc/ssl ro
  bind  /lib <- /lib ro
  bind  /lib64 <- /lib64 ro
  tmpfs /tmp size 256m
  bind  /usr <- /usr ro'
[ "$(grep -A6 '^mounts:' "$_out")" = "$want" ] || die "defaults + two mounts: $(grep -A6 '^mounts:' "$_out")"
pass "mounts: defaults brings the default mounts back; a listed /tmp replaces the default one"

# Issue 14: network: loopback under a filter that refuses inet sockets is
# a warning at the key (the compiled filter is asked); under one that
# allows them, none.
sed 's/network: none/network: loopback/' "$SRC/tests/corpus/good/app.yaml" >"$T/loop.yaml"
grep -q 'network: loopback' "$T/loop.yaml" || die "the good descriptor's network line moved"
expect_rc 0 "$CORDONC" compile "$T/loop.yaml" "$SRC/tests/corpus/good/tools.yaml" -o "$T/loop.cpol"
expect_err_re "loop.yaml:[0-9]+:[0-9]+: warning: network: loopback changes nothing under seccomp profile 'python-compute'"
expect_err_re "use a profile that allows them \\(python-net-loopback"
# The shipped python-net-loopback profile allows them: no warning.
sed 's/profile: python-compute/profile: python-net-loopback/' "$T/loop.yaml" >"$T/loop3.yaml"
grep -q 'profile: python-net-loopback' "$T/loop3.yaml" || die "the good descriptor's profile line moved"
expect_rc 0 "$CORDONC" compile "$T/loop3.yaml" "$SRC/tests/corpus/good/tools.yaml" -o "$T/loop3.cpol"
grep -q "network: loopback changes nothing" "$_err" && die "a warning under python-net-loopback"
# python-common.policy is included by the python profiles, and is none:
# never offered as the profile one meant.
sed 's/profile: python-compute/profile: python-commo/' "$SRC/tests/corpus/good/app.yaml" >"$T/commo.yaml"
expect_rc 2 "$CORDONC" compile "$T/commo.yaml" "$SRC/tests/corpus/good/tools.yaml" -o "$T/commo.cpol"
expect_err_re "commo.yaml:[0-9]+:[0-9]+: error: .*python-commo"
grep -q "python-common" "$_err" && die "the include-only python-common offered as a profile"
expect_rc 0 env CORDON_POLICY_PATH="$SRC/tests/boundary/policies:$SRC/policies" "$CORDONC" compile \
	"$SRC/tests/boundary/loopback.yaml" "$SRC/tests/boundary/tools.yaml" -o "$T/loop2.cpol"
grep -q "network: loopback changes nothing" "$_err" && die "a warning for a profile that allows inet sockets"
pass "network: loopback under a filter without inet sockets is a warning at the key"

# A long line is quoted as a window around the column ("..." where cut),
# the caret under the column: a 1 MiB one-line file must not be printed
# whole under each of its findings.
/usr/bin/python3 - "$SRC/tests/corpus/good/app.yaml" "$T/oneline.yaml" <<'PY' || die "cannot write oneline.yaml"
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
d["execution"]["runtime"]["zzbogus"] = 1
d["aapad"] = "x" * 5000  # (sorted) before the key, and after it:
d["zzpad"] = "y" * 5000  # far from both ends
text = yaml.safe_dump(d, default_flow_style=True, width=float("inf"))
assert text.count("\n") == 1, "not one line"
open(sys.argv[2], "w").write(text)
PY
expect_rc 2 "$CORDONC" compile "$T/oneline.yaml" "$SRC/tests/corpus/good/tools.yaml" -o "$T/oneline.cpol"
/usr/bin/python3 - "$_err" <<'PY' || die "long-line excerpt: $(head -c 600 "$_err")"
import sys
lines = open(sys.argv[1]).read().split("\n")
i = next(k for k, l in enumerate(lines) if "zzbogus" in l and ": error: " in l)
text, caret = lines[i + 1], lines[i + 2]
assert len(text) <= 4 + 3 + 160 + 3, len(text)
assert text.startswith("    ...") and text.endswith("..."), text[:20] + " " + text[-20:]
col = caret.index("^")
assert caret[:col].strip() == "", caret
assert text[col:col + 7] == "zzbogus", text[col - 5:col + 12]
PY
pass "a long line is quoted as a window around the column, the caret under it"
