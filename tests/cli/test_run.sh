#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cordon run end to end: the café demo (checked by substituting the answer
# back into the receipts, not against a pasted answer), the run directory's
# layout, the three lanes of the result (harness, program, output contract)
# and their exit codes, and that nothing is left behind.  As root, and again
# as an unprivileged user (created here) when run as root.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
PY=/usr/bin/python3

cp "$SRC/examples/cafe/app.yaml" "$SRC/examples/cafe/tools.yaml" "$SRC/examples/cafe/user_code.py" \
	"$SRC/examples/cafe/receipts.json" "$T/"
mkdir "$T/bin" && cp "$CORDONC" "$CORDON" "$T/bin/" && chmod 755 "$T" "$T/bin" "$T/bin/"* && chmod 644 "$T/"*.*
"$CORDONC" compile "$T/app.yaml" "$T/tools.yaml" -o "$T/cafe.cpol" >"$_out" 2>"$_err" || die "compile"
chmod 644 "$T/cafe.cpol"
sed 's/^    timeout: 30s$/    timeout: 2s/' "$T/app.yaml" >"$T/short.yaml"
grep -q '^    timeout: 2s$' "$T/short.yaml" || die "short.yaml: the cafe's timeout line moved"
"$CORDONC" compile "$T/short.yaml" "$T/tools.yaml" -o "$T/short.cpol" >"$_out" 2>"$_err" || die "compile short"
chmod 644 "$T/short.cpol"

# field FILE EXPR: print a Python expression over the result r.
field() { $PY -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# as_user CMD...: run as the test's unprivileged user when mode is rootless.
as_user() {
	if [ "$mode" = rootless ]; then setpriv --reuid=cordon-test --regid=cordon-test --clear-groups "$@"
	else "$@"; fi
}

leftovers() {
	# cgroups are named cordon-<supervisor pid>-<id>: one whose supervisor
	# is gone was left behind (live ones may belong to concurrent runs).
	for d in $(find /sys/fs/cgroup -maxdepth 6 -type d -name 'cordon-[0-9]*' 2>/dev/null); do
		p=$(basename "$d" | cut -d- -f2)
		kill -0 "$p" 2>/dev/null || die "$mode: cgroup left behind: $d"
	done
	ls "$TMPDIR_RUN" | grep -q cordon-run && die "$mode: temporary run directory left behind"
	grep -q "$T" /proc/self/mountinfo && die "$mode: a mount under the test dir is visible on the host"
	return 0
}

modes_set
for mode in $modes; do
	TMPDIR_RUN=$(mktemp -d "$T/tmp.XXXXXX"); chmod 1777 "$TMPDIR_RUN"
	export TMPDIR="$TMPDIR_RUN"
	rd="$TMPDIR_RUN/run1"

	# 1. The café demo.
	expect_rc 0 as_user "$T/bin/cordon" run --policy "$T/cafe.cpol" --code "$T/user_code.py" \
		--input "$T/receipts.json" --run-dir "$rd"
	cp "$_out" "$T/r.json" && schema_ok result "$T/r.json"
	[ "$(field "$T/r.json" 'r["status"]')" = succeeded ] || die "$mode: cafe status: $(cat "$_out")"
	$PY - "$T/r.json" "$T/receipts.json" <<'PYEOF' || die "$mode: the solution does not satisfy the receipts"
import json, sys
r = json.load(open(sys.argv[1]))
data = json.load(open(sys.argv[2]))
sol = r["result"]["solution"]
assert set(sol) == set(data["items"]), sol
for rec in data["receipts"]:
    total = sum(n * sol[item] for item, n in rec["bought"].items())
    assert abs(total - rec["paid"]) < 0.015, (rec, total)
PYEOF
	for k in namespaces filesystem network identity memory pids landlock seccomp capabilities rlimits; do
		[ -n "$(field "$T/r.json" "r['enforcement'].get('$k','')")" ] || die "$mode: enforcement lacks $k"
	done
	case "$mode" in
	root) want_mem=cgroup-v1 ;;
	*) want_mem=rlimit-as-per-process ;;
	esac
	# Where the host's cgroup v1 memory hierarchy is writable (this project's
	# machines), root gets it; elsewhere the result must say which it used.
	if [ "$mode" = root ] && [ -w /sys/fs/cgroup/memory ]; then
		[ "$(field "$T/r.json" 'r["enforcement"]["memory"]')" = "$want_mem" ] || die "$mode: memory layer"
	fi
	[ "$mode" = rootless ] && { [ "$(field "$T/r.json" 'r["enforcement"]["memory"]')" = rlimit-as-per-process ] || die "rootless memory layer"; }
	[ "$(field "$T/r.json" 'r["artifacts"][0]["path"]')" = summary.txt ] || die "$mode: artifact"
	# The workspace was the sandbox's own tmpfs: a kept run directory has
	# the supervisor's copies of out/ and logs/executor/, all private.
	for f in out/result.json out/summary.txt result.json logs/tool-calls.jsonl logs/supervisor.log; do
		[ -f "$rd/$f" ] || die "$mode: run directory lacks $f"
	done
	[ -e "$rd/work" ] && die "$mode: the run directory keeps work/"
	schema_ok result "$rd/result.json"
	schema_ok --lines audit-line "$rd/logs/tool-calls.jsonl"
	[ "$(stat -c %a "$rd")" = 700 ] || die "$mode: run directory mode $(stat -c %a "$rd")"
	[ "$(stat -c %a "$rd/out/summary.txt")" = 600 ] || die "$mode: out/summary.txt mode"
	id=$(field "$T/r.json" 'r["executionId"]')
	cmp -s "$rd/executed_programs/$id/user_code.py" "$T/user_code.py" || die "$mode: executed program not kept verbatim"
	leftovers
	pass "$mode: cafe demo solved (checked against the receipts), evidence for every layer, run dir complete"

	# Without --run-dir a run touches no disk (issue 13): nothing is
	# made under TMPDIR, not even for a moment, so a killed supervisor
	# has nothing to leave there and there is nothing to sweep.
	before=$(ls -A "$TMPDIR_RUN" | wc -l)
	expect_rc 1 as_user "$T/bin/cordon" run --policy "$T/cafe.cpol" --code "$T/user_code.py"
	[ "$(ls -A "$TMPDIR_RUN" | wc -l)" = "$before" ] || die "$mode: a run without --run-dir made $(ls -A "$TMPDIR_RUN")"
	cp "$_out" "$T/r.json" && schema_ok result "$T/r.json"
	[ "$(field "$T/r.json" 'r["runDir"]')" = "" ] || die "$mode: runDir of a run that keeps none"
	pass "$mode: a run without --run-dir makes nothing under TMPDIR"

	# 2. Program lane: an exception is "failed", exit 1, stderr captured.
	printf 'raise SystemExit(3)\n' >"$T/fail.py"; chmod 644 "$T/fail.py"
	expect_rc 1 as_user "$T/bin/cordon" run --policy "$T/cafe.cpol" --code "$T/fail.py"
	cp "$_out" "$T/r.json" && schema_ok result "$T/r.json"
	[ "$(field "$T/r.json" 'r["status"], r["exitCode"], r["error"]["code"]')" = "('failed', 3, 'program_failed')" ] ||
		die "$mode: failing program: $(cat "$_out")"
	# Output-contract lane: exits 0 but the required summary.txt is missing.
	printf 'print("no outputs")\n' >"$T/noout.py"; chmod 644 "$T/noout.py"
	expect_rc 1 as_user "$T/bin/cordon" run --policy "$T/cafe.cpol" --code "$T/noout.py"
	cp "$_out" "$T/r.json" && schema_ok result "$T/r.json"
	[ "$(field "$T/r.json" 'r["status"], r["exitCode"], r["error"]["code"], r["violations"][0]["code"]')" = \
		"('failed', 0, 'output_contract', 'missing_required')" ] || die "$mode: output contract: $(cat "$_out")"
	# Bounded capture: 200 KiB of output keeps max_output_bytes (64k).
	printf 'import sys\nsys.stdout.write("x" * 200000)\n' >"$T/big.py"; chmod 644 "$T/big.py"
	expect_rc 1 as_user "$T/bin/cordon" run --policy "$T/cafe.cpol" --code "$T/big.py"
	cp "$_out" "$T/r.json" && schema_ok result "$T/r.json"
	[ "$(field "$T/r.json" 'len(r["stdout"]), r["truncated"]["stdout"]')" = "(65536, True)" ] ||
		die "$mode: capture not bounded"
	pass "$mode: program failure, output contract and bounded capture are told apart"
	# Output is bytes, the result is text (issue 12 item 6): a NUL does
	# not cut stdout short, invalid UTF-8 becomes U+FFFD, the counts say
	# how many, and the whole result decodes as strict UTF-8 JSON.
	printf 'import sys\nsys.stdout.buffer.write(b"a\\x00b\\xff\\xfe c")\nsys.stderr.buffer.write(b"\\xc3(")\n' \
		>"$T/bytes.py"; chmod 644 "$T/bytes.py"
	expect_rc 1 as_user "$T/bin/cordon" run --policy "$T/cafe.cpol" --code "$T/bytes.py"
	$PY - "$_out" <<'PYEOF' || die "$mode: result with NUL and invalid UTF-8: $(cat "$_out")"
import json, sys
r = json.loads(open(sys.argv[1], "rb").read().decode("utf-8", errors="strict"))
assert r["stdout"] == "a\ufffdb\ufffd\ufffd c", r["stdout"]
assert r["stderr"] == "\ufffd(", r["stderr"]
assert r["replaced"] == {"stdout": 3, "stderr": 1}, r["replaced"]
assert r["truncated"] == {"stdout": False, "stderr": False}, r["truncated"]
PYEOF
	pass "$mode: NUL and invalid UTF-8 in the output: the result is strict UTF-8 JSON, nothing after a NUL lost"

	# The program ends without the interpreter's finalization (issue 13):
	# what a program relies on at exit still holds.  A non-daemon thread
	# is joined, atexit handlers run, an open file's buffer reaches its
	# file, std streams are flushed, and the exit status is Python's.
	cat >"$T/atexit.py" <<'PYEOF'
import atexit, os, sys, threading, time
f = open('/workspace/out/unflushed.txt', 'w'); f.write('buffered')
g = open('/workspace/out/bin.dat', 'wb'); g.write(b'\x01' * 10)
atexit.register(lambda: open('/workspace/out/atexit.txt', 'w').write('ran'))
def slow():
    time.sleep(0.2); open('/workspace/out/thread.txt', 'w').write('joined')
threading.Thread(target=slow).start()
sys.stdout.write('no newline'); sys.stderr.write('err no newline')
sys.exit(3)
PYEOF
	chmod 644 "$T/atexit.py"
	expect_rc 1 as_user "$T/bin/cordon" run --policy "$T/cafe.cpol" --code "$T/atexit.py" --run-dir "$TMPDIR_RUN/ae"
	cp "$_out" "$T/r.json" && schema_ok result "$T/r.json"
	[ "$(field "$T/r.json" 'r["exitCode"], r["stdout"], r["stderr"]')" = "(3, 'no newline', 'err no newline')" ] ||
		die "$mode: exit status or std streams at exit: $(cat "$_out")"
	for f in unflushed.txt:buffered atexit.txt:ran thread.txt:joined; do
		[ "$(cat "$TMPDIR_RUN/ae/out/${f%%:*}")" = "${f#*:}" ] || die "$mode: at exit: out/${f%%:*} is not ${f#*:}"
	done
	[ "$(wc -c <"$TMPDIR_RUN/ae/out/bin.dat")" = 10 ] || die "$mode: at exit: a binary file's buffer was lost"
	# Regression (issue 14): what a program printed before it was killed
	# at its timeout is in the result (the interpreter is unbuffered).
	printf 'import sys, time\nprint("before the timeout")\nsys.stderr.write("partial line")\ntime.sleep(30)\n' \
		>"$T/late.py"
	chmod 644 "$T/late.py"
	expect_rc 124 as_user "$T/bin/cordon" run --policy "$T/short.cpol" --code "$T/late.py"
	cp "$_out" "$T/r.json" && schema_ok result "$T/r.json"
	[ "$(field "$T/r.json" 'r["status"], r["stdout"], r["stderr"]')" = \
		"('timed_out', 'before the timeout\\n', 'partial line')" ] ||
		die "$mode: output printed before the timeout was lost: $(cat "$_out")"
	pass "$mode: output printed before a timeout kill is in the result"
	printf 'raise ValueError("boom")\n' >"$T/raise.py"; printf 'import sys\nsys.exit("bye")\n' >"$T/exitmsg.py"
	chmod 644 "$T/raise.py" "$T/exitmsg.py"
	expect_rc 1 as_user "$T/bin/cordon" run --policy "$T/cafe.cpol" --code "$T/raise.py"
	cp "$_out" "$T/r.json" && schema_ok result "$T/r.json"
	[ "$(field "$T/r.json" 'r["exitCode"], r["stderr"].endswith("ValueError: boom\n"), "user_code.py\", line 1" in r["stderr"]')" = \
		"(1, True, True)" ] || die "$mode: an uncaught exception at exit: $(cat "$_out")"
	expect_rc 1 as_user "$T/bin/cordon" run --policy "$T/cafe.cpol" --code "$T/exitmsg.py"
	cp "$_out" "$T/r.json" && schema_ok result "$T/r.json"
	[ "$(field "$T/r.json" 'r["exitCode"], r["stderr"]')" = "(1, 'bye\n')" ] || die "$mode: sys.exit(str): $(cat "$_out")"
	pass "$mode: at exit: threads joined, atexit run, file buffers written, streams flushed, Python's exit status"

	# 3. Harness lane: status error, exit 125, and the stage.
	printf 'not a blob' >"$T/bad.cpol"; chmod 644 "$T/bad.cpol"
	expect_rc 125 as_user "$T/bin/cordon" run --policy "$T/bad.cpol" --code "$T/fail.py"
	cp "$_out" "$T/r.json" && schema_ok result "$T/r.json"
	[ "$(field "$T/r.json" 'r["status"], r["error"]["code"], r["error"]["details"]["where"]')" = \
		"('error', 'sandbox_execution_failed', 'exec.harness.policy')" ] || die "$mode: bad blob: $(cat "$_out")"
	printf '{"user":"u","roles":["analyst"],"colour":"red"}' >"$T/ctx.json"; chmod 644 "$T/ctx.json"
	expect_rc 125 as_user "$T/bin/cordon" run --policy "$T/cafe.cpol" --code "$T/fail.py" --context "$T/ctx.json"
	expect_out "unknown key 'colour'"
	expect_out exec.harness.context
	# cJSON stops at a NUL: what follows it must not pass for the end.
	printf '{"user":"u"}\000{"roles":["admin"]}' >"$T/ctx.json"
	expect_rc 125 as_user "$T/bin/cordon" run --policy "$T/cafe.cpol" --code "$T/fail.py" --context "$T/ctx.json"
	expect_out "NUL byte at offset 12"
	# ... and a \u0000 escape ends a cJSON string early: "ana" would pass
	# for a user whose name goes on.
	printf '{"user":"ana\\u0000bob"}' >"$T/ctx.json"
	expect_rc 125 as_user "$T/bin/cordon" run --policy "$T/cafe.cpol" --code "$T/fail.py" --context "$T/ctx.json"
	expect_out 'u0000 in a string'
	# Identity fields are bounded (audit lines, ledger keys, tool env).
	printf '{"tenant":"%0257d"}' 0 >"$T/ctx.json"
	expect_rc 125 as_user "$T/bin/cordon" run --policy "$T/cafe.cpol" --code "$T/fail.py" --context "$T/ctx.json"
	expect_out "over 256 bytes"
	expect_rc 125 as_user "$T/bin/cordon" run --policy "$T/cafe.cpol" --code "$T/fail.py" --agent nobody
	expect_out "agent 'nobody' is not declared"
	expect_rc 125 as_user "$T/bin/cordon" run --policy "$T/cafe.cpol" --code "$T/fail.py" --run-dir "$rd"
	expect_out exec.harness.rundir
	head -c 70000 /dev/zero | tr '\0' '#' >"$T/huge.py"; chmod 644 "$T/huge.py"
	expect_rc 125 as_user "$T/bin/cordon" run --policy "$T/cafe.cpol" --code "$T/huge.py"
	expect_out "over max_code_bytes"
	# No silent downgrade: a required layer the host cannot give this
	# caller is a harness error.  Rootless there is no delegated cgroup here.
	# (Where a host delegates cgroup v2 to the user, the run goes ahead
	# and must then say it used cgroups.)
	sed 's/require: \[landlock\]/require: [landlock, cgroup]/' "$T/app.yaml" >"$T/req.yaml"
	grep -q 'require: \[landlock, cgroup\]' "$T/req.yaml" || die "could not make the require: cgroup policy"
	"$CORDONC" compile "$T/req.yaml" "$T/tools.yaml" -o "$T/req.cpol" >/dev/null 2>&1 || die "compile req"
	chmod 644 "$T/req.cpol"
	as_user "$T/bin/cordon" run --policy "$T/req.cpol" --code "$T/fail.py" >"$_out" 2>"$_err"
	if grep -q exec.harness "$_out"; then
		expect_out exec.harness.cgroup
		expect_out "requires cgroup limits"
		[ "$mode" = rootless ] || die "root was refused cgroups: $(cat "$_out")"
		req="refused"
	else
		cp "$_out" "$T/r.json" && schema_ok result "$T/r.json"
		case "$(field "$T/r.json" 'r["enforcement"]["memory"], r["enforcement"]["pids"]')" in
		"('cgroup-v"*", 'cgroup-v"*) req="used" ;;
		*) die "$mode: require: cgroup ran without cgroups: $(cat "$_out")" ;;
		esac
	fi
	leftovers
	pass "$mode: harness errors name their stage (policy, context, rundir, code) and exit 125; require: cgroup $req"
	rm -rf "$TMPDIR_RUN"
done

# 4. Usage errors: exit 2, nothing run.
expect_rc 2 "$CORDON" run --code x.py
expect_err "needs --policy BLOB and --code FILE"
expect_rc 2 "$CORDON" run --policy a --code b extra
expect_rc 2 "$CORDON" run --bogus
# --host-ids is checked before anything runs (runtime/hostid.h).
expect_rc 2 "$CORDON" run --policy a --code b --host-ids 0:100
expect_err "cordon run: --host-ids: '0:100' holds id 0 (root)"
expect_rc 2 "$CORDON" run --policy a --code b --host-ids 4294967000-4294967295
expect_err "which is (uid_t)-1"
expect_rc 2 "$CORDON" run --policy a --code b --host-ids 010:5
if [ "$(id -u)" -eq 0 ] && id cordon-test >/dev/null 2>&1; then
	expect_rc 2 setpriv --reuid=cordon-test --regid=cordon-test --clear-groups \
		"$T/bin/cordon" run --policy a --code b --host-ids 100000:10
	expect_err "--host-ids needs root"
fi
pass "usage errors exit 2"
