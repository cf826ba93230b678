#!/bin/sh
# cordon run's inputs and its one output (issue 15): a path given as
# --code, --input, --context, --policy or --trusted-key that is not a
# regular file is refused at once with its kind named (a FIFO used to hang
# the run forever); each refusal says its own cause, never a stale errno
# or another step's placeholder; a result that cannot be written to
# stdout is exit 125, said on stderr, not exit 0.  Each section is named
# after the bug it pins.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
PY=/usr/bin/python3

cp "$SRC/examples/cafe/app.yaml" "$SRC/examples/cafe/tools.yaml" "$T/"
"$CORDONC" compile "$T/app.yaml" "$T/tools.yaml" -o "$T/cafe.cpol" >"$_out" 2>"$_err" || die "compile"
"$CORDONC" keygen -p "$T/k.pub" -s "$T/k.sec" >"$_out" 2>"$_err" || die "keygen"
printf 'print("hi")\n' >"$T/p.py"
printf 'open("/workspace/out/summary.txt", "w").write("ok\\n")\n' >"$T/ok.py"
printf '{}\n' >"$T/ctx.json"
mkfifo "$T/fifo"
$PY -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/sock"
mkdir "$T/dir"

# where FILE: the result's status, error.details.where and error.message.
where() { $PY -c 'import json,sys; r=json.load(open(sys.argv[1])); e=r.get("error") or {}
print(r["status"], (e.get("details") or {}).get("where"), e.get("message"))' "$1"; }

# refused WHERE KIND ARGS...: cordon run ARGS ends at once (a hang is
# killed after 20 s and fails) with exit 125, the stage WHERE, and a
# message naming the path and, for a non-regular file, its KIND.
refused() {
	want_where=$1 want_msg=$2; shift 2
	expect_rc 125 timeout -s KILL 20 "$CORDON" run "$@"
	got=$(where "$_out") || die "no result JSON for: $*"
	case "$got" in
	"error exec.harness.$want_where "*"$want_msg"*) ;;
	*) die "want exec.harness.$want_where and '$want_msg', got: $got ($*)" ;;
	esac
	case "$got" in *Success*|*"no policy"*) die "stale or placeholder cause: $got" ;; esac
}

# 1. fifo_hangs_run: a FIFO as any file argument is refused without
# waiting for a writer (it used to block in open(2) forever, with SIGTERM
# blocked for the run's own signalfd).
P="--policy $T/cafe.cpol"
refused code "$T/fifo: not a regular file (a FIFO)" $P --code "$T/fifo"
refused inputs "$T/fifo: not a regular file (a FIFO)" $P --code "$T/p.py" --input "$T/fifo"
refused context "$T/fifo: not a regular file (a FIFO)" $P --code "$T/p.py" --context "$T/fifo"
refused signature "$T/fifo: public key is not a regular file" $P --code "$T/p.py" --trusted-key "$T/fifo"
refused policy "$T/fifo is not a regular file" --policy "$T/fifo" --code "$T/p.py"
pass "a FIFO as --code, --input, --context, --trusted-key or --policy is refused at once"

# 2. stale_errno_input_dir: a directory, a socket and a device are named
# as what they are ("Success" was printed for a directory).
refused inputs "$T/dir: not a regular file (a directory)" $P --code "$T/p.py" --input "$T/dir"
refused context "$T/dir: not a regular file (a directory)" $P --code "$T/p.py" --context "$T/dir"
refused code "$T/sock: not a regular file (a socket)" $P --code "$T/sock"
refused code "/dev/zero: not a regular file (a character device)" $P --code /dev/zero
refused code "$T/missing.py: No such file or directory" $P --code "$T/missing.py"
pass "a directory, a socket or a device is named as such; a missing file says so"

# 3. policy_error_masked: why the blob was refused is the message, not
# the sandbox's "no policy" placeholder.
refused policy "$T/missing.cpol: No such file or directory" --policy "$T/missing.cpol" --code "$T/p.py"
printf 'not a blob' >"$T/bad.cpol"
refused policy "invalid policy blob" --policy "$T/bad.cpol" --code "$T/p.py"
refused signature "policy is not signed" $P --code "$T/p.py" --trusted-key "$T/k.pub"
pass "a refused policy or signature reports its own cause"

# 4. result_lost_exit_0: the result written to /dev/full is a harness
# error (125) with the cause and the lost status on stderr.
# A run that succeeded: exit 0 was what the caller saw before.
expect_rc 0 "$CORDON" run $P --code "$T/ok.py"
[ "$(where "$_out")" = "succeeded None None" ] || die "ok.py did not succeed: $(cat "$_out")"
expect_rc 125 sh -c '"$1" run --policy "$2" --code "$3" >/dev/full' sh "$CORDON" "$T/cafe.cpol" "$T/ok.py"
expect_err "cordon run: the result could not be written to stdout: No space left on device"
expect_err "(the run's status was succeeded)"
expect_rc 1 sh -c '"$1" check-policy "$2" >/dev/full' sh "$CORDON" "$T/cafe.cpol"
expect_err "cordon check-policy: writing to stdout: No space left on device"
expect_rc 1 sh -c '"$1" --version >/dev/full' sh "$CORDON"
pass "a result or report that cannot be written to stdout is an error, not exit 0"
