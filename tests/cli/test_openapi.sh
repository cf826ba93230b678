#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# docs/openapi.yaml against the real thing: the checker's self-test (the
# document's own shape, good and bad sample answers), then the result JSON
# of real `cordon run` executions in every lane serve can answer with
# (succeeded with an artifact and a denied tool call, output contract
# broken, program failed with bytes that are not UTF-8, killed by a signal,
# cancelled, harness errors) held to the 200 of POST /v1/executions: serve
# answers with exactly this JSON, so a key the runtime adds or drops fails
# here until the document says so.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
PY=/usr/bin/python3
CHECK="$SRC/tests/serve/openapi_check.py"

$PY -B "$CHECK" >"$_out" 2>"$_err" || die "openapi_check self-test: $(cat "$_out")"
expect_out "self-test OK"

# The executor (uid 1001) must reach the inputs and the program.
chmod 755 "$T"
cp "$SRC/examples/cafe/user_code.py" "$SRC/examples/cafe/receipts.json" "$T/" && chmod 644 "$T/"*.*
"$CORDONC" compile "$SRC/examples/cafe/app.yaml" "$SRC/examples/cafe/tools.yaml" -o "$T/cafe.cpol" \
	>"$_out" 2>"$_err" || die "compile cafe"
chmod 644 "$T/cafe.cpol"

# run NAME WANT_STATUS CODE [cordon run flags...]: one execution, its result
# kept as $T/NAME.json and its status checked.
run() {
	name=$1 want=$2 code=$3; shift 3
	printf '%s\n' "$code" >"$T/$name.py" && chmod 644 "$T/$name.py"
	"$CORDON" run --policy "$T/cafe.cpol" --code "$T/$name.py" "$@" >"$T/$name.json" 2>"$_err"
	got=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["status"])' "$T/$name.json" 2>/dev/null)
	[ "$got" = "$want" ] || die "$name: status $got, want $want: $(head -c 600 "$T/$name.json")"
}

# 1. succeeded: no agent, so calc.check is refused (a denied call's entry).
"$CORDON" run --policy "$T/cafe.cpol" --code "$T/user_code.py" --input "$T/receipts.json" \
	>"$T/cafe.json" 2>"$_err" || die "cafe: $(head -c 600 "$T/cafe.json")"
$PY - "$T/cafe.json" <<'PY' || die "cafe: not the lane this test needs"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "succeeded" and r["artifacts"], r
assert r["toolCalls"] and r["toolCalls"][0]["decision"] == "denied", r["toolCalls"]
PY
# 2. exit 0 without the required summary.txt: the output contract.
run contract failed 'pass'
# 3. a non-zero exit, with bytes that are not UTF-8 on stdout.
run program failed 'import sys; sys.stdout.buffer.write(b"\xff\x00ok\n"); sys.exit(3)'
# 4. killed by a signal: exitCode null, signal named.  The program is pid 1
# of its namespace, where a SIGKILL of its own is ignored; a fault is not.
run signal failed 'import ctypes; ctypes.string_at(0)'
# 5. harness errors: a reserved input name; a policy that does not exist.
cp "$T/receipts.json" "$T/main.py"
run harness error 'pass' --input "$T/main.py"
"$CORDON" run --policy "$T/none.cpol" --code "$T/contract.py" >"$T/nopolicy.json" 2>"$_err"
# 6. cancelled: SIGTERM to cordon run while the program sleeps.
printf 'import time\nprint("started", flush=True)\ntime.sleep(30)\n' >"$T/sleep.py" && chmod 644 "$T/sleep.py"
"$CORDON" run --policy "$T/cafe.cpol" --code "$T/sleep.py" >"$T/cancel.json" 2>"$_err" &
pid=$!
i=0
while [ $i -lt 50 ] && ! ls /sys/fs/cgroup/*/cordon-$pid-* >/dev/null 2>&1 && ! ls -d /sys/fs/cgroup/cordon-$pid-* \
	>/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); done
sleep 0.5
kill -TERM $pid
wait $pid

# 7. a CPU quota: enforcement.cpu and the throttle counts in usage (as root;
# rootless without a delegated cpu cgroup it is a harness error, also a
# result the schema must hold).
sed 's/^    pids: 64$/    pids: 64\n    cpu: 0.5/' "$SRC/examples/cafe/app.yaml" >"$T/cpu.app.yaml"
"$CORDONC" compile "$T/cpu.app.yaml" "$SRC/examples/cafe/tools.yaml" -o "$T/cpu.cpol" >"$_out" 2>"$_err" ||
	die "compile cafe with a CPU quota: $(cat "$_err")"
chmod 644 "$T/cpu.cpol"
"$CORDON" run --policy "$T/cpu.cpol" --code "$T/contract.py" >"$T/cpu.json" 2>"$_err"

$PY -B "$CHECK" --result "$T/cafe.json" "$T/contract.json" "$T/program.json" "$T/signal.json" \
	"$T/harness.json" "$T/nopolicy.json" "$T/cancel.json" "$T/cpu.json" >"$_out" 2>"$_err" ||
	die "a cordon run result does not match docs/openapi.yaml: $(cat "$_out")"
schema_ok result "$T/cafe.json" "$T/contract.json" "$T/program.json" "$T/signal.json" "$T/harness.json" \
	"$T/nopolicy.json" "$T/cancel.json" "$T/cpu.json"
$PY - "$T" <<'PY' || die "a lane did not give the result this test needs"
import json, os, sys
d = sys.argv[1]
r = lambda n: json.load(open(os.path.join(d, n + ".json")))
assert r("contract")["violations"][0]["code"] == "missing_required", r("contract")
assert r("program")["exitCode"] == 3 and r("program")["replaced"]["stdout"] == 2, r("program")
assert r("signal")["signal"] == "SEGV" and r("signal")["exitCode"] is None, r("signal")
assert r("harness")["error"]["details"]["where"] == "exec.harness.inputs", r("harness")
assert r("nopolicy")["policy"] == {"app": "", "sha256": ""}, r("nopolicy")
assert r("cancel")["status"] == "cancelled", r("cancel")
q = r("cpu")
assert (q["enforcement"]["cpu"].startswith("cgroup") and "cpuThrottledPeriods" in q["usage"]
        if q["status"] != "error" else "CPU quota" in q["error"]["message"]), q
assert r("cafe")["enforcement"]["cpu"] == "none", r("cafe")["enforcement"]
PY
pass "docs/openapi.yaml: self-test; 8 real cordon run results (every lane, a CPU quota) match the result schema"
