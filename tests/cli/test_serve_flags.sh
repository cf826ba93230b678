#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cordon serve's command line: every bad flag is a usage error (exit 2)
# that names the flag, and a policy directory that does not load is a
# failed start (exit 1) whose log line names the blob, before anything
# listens.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"

"$CORDONC" compile "$SRC/examples/cafe/app.yaml" "$SRC/examples/cafe/tools.yaml" -o "$T/a.cpol" >/dev/null 2>&1 \
	|| die "compile"
"$CORDONC" keygen -p "$T/k.pub" -s "$T/k.sec" >/dev/null 2>&1 || die "keygen"
mkdir "$T/pols"
ok="--policies $T/pols --trusted-key $T/k.pub --socket $T/s.sock --work-dir $T/work"

usage() { # usage MESSAGE ARGS...: exit 2 and MESSAGE on stderr
	msg=$1; shift
	expect_rc 2 "$CORDON" serve "$@"
	expect_err "$msg"
	expect_err "Try 'cordon --help'."
}
usage "needs --policies DIR" --trusted-key "$T/k.pub" --socket "$T/s.sock"
usage "needs --socket PATH, --listen ADDR:PORT, or both" --policies "$T/pols" --trusted-key "$T/k.pub"
usage "--listen needs --tokens FILE" $ok --listen 127.0.0.1:8080
usage "--tokens applies to --listen only" $ok --tokens "$T/tokens"
usage "--listen 'localhost': ADDR:PORT" $ok --listen localhost
usage "--listen '127.0.0.1:0x50'" $ok --listen 127.0.0.1:0x50 --tokens "$T/tokens"
usage "--listen '127.0.0.1:65536'" $ok --listen 127.0.0.1:65536 --tokens "$T/tokens"
usage "--socket-mode '0999'" $ok --socket-mode 0999
usage "--socket-mode '01777'" $ok --socket-mode 01777
usage "--socket-mode and --socket-group need --socket PATH" --policies "$T/pols" --trusted-key "$T/k.pub" \
	--listen 127.0.0.1:8080 --tokens "$T/tokens" --socket-group nogroup
usage "--pool '65': a count from 0 to 64" $ok --pool 65
usage "--pool '-1'" $ok --pool -1
usage "--pool ' 2'" $ok --pool " 2"
usage "--max-concurrency '0'" $ok --max-concurrency 0
usage "--queue 'many'" $ok --queue many
usage "--queue-timeout '3601'" $ok --queue-timeout 3601
usage "--max-body '100': bytes" $ok --max-body 100
usage "--max-body '2g'" $ok --max-body 2g
usage "--max-body '1x'" $ok --max-body 1x
usage "--body-timeout '0'" $ok --body-timeout 0
usage "--inline-max 'k'" $ok --inline-max k
usage "--retain-seconds '604801'" $ok --retain-seconds 604801
usage "--grace '1.5'" $ok --grace 1.5
usage "--max-sessions '0': a count from 1 to 4096" $ok --max-sessions 0
usage "--max-sessions '4097'" $ok --max-sessions 4097
usage "--work-dir 'rel': an absolute path" $ok --work-dir rel
usage "unexpected argument 'extra'" $ok extra
usage "" $ok --no-such-flag
if [ "$(id -u)" -eq 0 ]; then
	usage "" $ok --host-ids nonsense
fi
pass "usage errors"

# A start that cannot load its policies: exit 1, the blob named, nothing
# listening, the work directory not even made.
expect_rc 1 "$CORDON" serve $ok
expect_err "cannot start: policies: $T/pols: no *.cpol policy blobs"
cp "$T/a.cpol" "$T/pols/cafe.cpol"
expect_rc 1 "$CORDON" serve $ok
expect_err_re "cannot start: policies: .*/pols/cafe.cpol: refused: policy is not signed"
"$CORDONC" sign -s "$T/k.sec" "$T/pols/cafe.cpol" >/dev/null 2>&1 || die "sign"
cp "$T/pols/cafe.cpol" "$T/pols/again.cpol"
expect_rc 1 "$CORDON" serve $ok
expect_err "app 'cafe' is also the app of"
[ -e "$T/s.sock" ] && die "a socket was made by a server that did not start"
[ -e "$T/work" ] && die "a work directory was made by a server that did not start"
# No --trusted-key and a trust directory without keys: nothing could sign.
mkdir -m 755 "$T/nokeys"
expect_rc 1 "$CORDON" serve --policies "$T/pols" --trust-dir "$T/nokeys" --socket "$T/s.sock" --work-dir "$T/work"
expect_err "no --trusted-key, and trust directory $T/nokeys holds no *.pub key: a server runs signed policies only"
[ -e "$T/s.sock" ] && die "a socket was made by a server without keys"
pass "a policy directory that does not load is a failed start"

# Issue 15: serve opens the ledger at start.  A fresh state directory is
# a clean start, the ledger made there before anything listens; once that
# ledger is emptied (its ledger.id still names it) the next start stops,
# and nothing listens.
rm "$T/pols/again.cpol"
mkdir "$T/state"
"$CORDON" serve $ok --pool 0 --state-dir "$T/state" 2>"$T/serve.err" &
spid=$!
i=0
while [ ! -S "$T/s.sock" ] && [ $i -lt 100 ] && kill -0 $spid 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
[ -S "$T/s.sock" ] || { kill -9 $spid 2>/dev/null; die "serve did not start on a fresh state dir: $(cat "$T/serve.err")"; }
[ -s "$T/state/ledger.sqlite3" ] && [ -s "$T/state/ledger.id" ] ||
	{ kill -9 $spid; die "serve listened before making its ledger in $T/state"; }
kill -TERM $spid; wait $spid
rm -f "$T/s.sock"
: > "$T/state/ledger.sqlite3"
expect_rc 1 "$CORDON" serve $ok --state-dir "$T/state"
expect_err "cannot start"
expect_err "ledger.sqlite3 is empty"
[ -e "$T/s.sock" ] && die "a socket was made by a server whose ledger was refused"
pass "serve opens the ledger at start; one that fails its checks stops the start"
