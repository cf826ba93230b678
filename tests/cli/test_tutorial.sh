#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# docs/tutorial.md runs as written: its ```sh blocks in order, as root, in a
# directory of their own with the built binaries on PATH; ```sh rootless
# blocks as cordon-test; ```sh notest blocks (make, the reader's own
# directory) are skipped.  Then what the tutorial says they show is checked:
# both runs succeed, the second call of one message id is replayed, and the
# guestbook holds one line per ledger.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
command -v jq >/dev/null || die "no jq (scripts/install-deps installs it)"
[ "$(id -u)" -eq 0 ] || { pass "skipped: not root"; exit 0; }
modes_set

# Tools may not sit under /tmp (StrictModes): a root-owned directory in
# /var/lib, readable by cordon-test.
W=$(mktemp -d -p /var/lib cordon-tutorial.XXXXXX) || die "mktemp"
trap 'rm -rf "$T" "$W"' EXIT
chmod 0755 "$W"
mkdir -p "$W/home-test" && chown cordon-test "$W/home-test"

# blocks KIND: the sh blocks whose info string is exactly "sh KIND" ("sh"
# for KIND ""), each followed by a line "#---".
/usr/bin/python3 - "$SRC/docs/tutorial.md" "$T/blocks" <<'PY' || die "cannot split docs/tutorial.md"
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
n = 0
for info, body in re.findall(r"^```(sh[^\n]*)\n(.*?)^```$", text, re.M | re.S):
    kind = info[2:].strip() or "root"
    n += 1
    with open("%s.%02d.%s" % (sys.argv[2], n, kind), "w") as f:
        f.write(body)
PY
ls "$T"/blocks.*.root >/dev/null 2>&1 || die "docs/tutorial.md has no sh blocks"
ls "$T"/blocks.*.rootless >/dev/null 2>&1 || die "docs/tutorial.md has no rootless block"
for b in "$T"/blocks.*; do
	case "$b" in
	*.notest) continue ;;
	*.root) (cd "$W" && PATH="$BUILD:$PATH" sh -e "$b") >"$T/out.$(basename "$b")" 2>&1 \
		|| { cat "$T/out.$(basename "$b")"; die "tutorial block $(basename "$b") failed"; } ;;
	*.rootless) cp "$b" "$W/home-test/block.sh"; (cd "$W" && HOME="$W/home-test" PATH="$BUILD:$PATH" \
		setpriv --reuid=cordon-test --regid=cordon-test --clear-groups sh -e "$W/home-test/block.sh") \
		>"$T/out.$(basename "$b")" 2>&1 \
		|| { cat "$T/out.$(basename "$b")"; die "tutorial rootless block $(basename "$b") failed"; } ;;
	*) die "unknown block kind: $b" ;;
	esac
done

# What the tutorial says the root run shows.
[ "$(jq -r .status "$W/result.json")" = succeeded ] || die "root run: $(jq -c '{status,error,stderr}' "$W/result.json")"
[ "$(jq -r '[.toolCalls[].decision] | join(",")' "$W/result.json")" = "allowed,allowed" ] \
	|| die "root run tool calls: $(jq -c .toolCalls "$W/result.json")"
[ "$(jq -r '.toolCalls[1].replayed' "$W/result.json")" = true ] || die "the repeated message id was not replayed"
grep -q "^succeeded " "$T"/out.*rootless || die "rootless run: $(cat "$T"/out.*rootless) $(jq -c "{status,error,stderr,toolCalls}" "$W/home-test/result.json")"
[ "$(jq -r .status "$W/home-test/result.json")" = succeeded ] || die "rootless result not succeeded"
[ "$(cat "$W"/outbox/*-hello-1 | grep -c '^Ada$')" = 2 ] \
	|| die "the guestbook should have one signature per ledger (2): $(ls -l "$W/outbox")"
[ "$(jq -r '.stdout | fromjson | .first.signatures' "$W/result.json")" = 1 ] || die "the root run's answer did not count one signature"
pass "docs/tutorial.md runs as written, root and rootless; replay and results as it says"
