#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
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
schema_ok context "$T/ctx.json"
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

# 2b. Issue 14: --code - and --code /dev/stdin read the program from
# standard input (a pipe), bounded by max_code_bytes as it arrives.
for c in - /dev/stdin; do
	printf 'print(6 * 7)\nopen("/workspace/out/summary.txt", "w").write("ok")\n' >"$T/stdin.py"
	expect_rc 0 sh -c '"$1" run --policy "$2" --code "$3" <"$4"' sh "$CORDON" "$T/cafe.cpol" "$c" "$T/stdin.py"
	[ "$($PY -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["status"], r["stdout"].strip())' "$_out")" = \
		"succeeded 42" ] || die "--code $c: $(cat "$_out")"
	expect_rc 0 sh -c 'cat "$4" | "$1" run --policy "$2" --code "$3"' sh "$CORDON" "$T/cafe.cpol" "$c" "$T/stdin.py"
done
expect_rc 125 sh -c 'head -c 70000 /dev/zero | "$1" run --policy "$2" --code -' sh "$CORDON" "$T/cafe.cpol"
case "$(where "$_out")" in
"error exec.harness.code standard input is over max_code_bytes (65536)") ;;
*) die "70000 bytes on standard input: $(where "$_out")" ;;
esac
pass "--code - and --code /dev/stdin read the program from standard input, bounded by max_code_bytes"

# 2c. Issue 14: files in out/ that no declared output matches are listed
# in the result's "undeclared" with their type (docs/descriptor.md said so;
# the result had no such list).
printf 'import os\nopen("/workspace/out/summary.txt", "w").write("ok")\nopen("/workspace/out/chart.png", "w").write("x")\nos.mkdir("/workspace/out/d")\nos.mkfifo("/workspace/out/d/f")\n' >"$T/undecl.py"
expect_rc 0 "$CORDON" run --policy "$T/cafe.cpol" --code "$T/undecl.py"
got=$($PY -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["undeclared"], [a["path"] for a in r["artifacts"]])' "$_out")
[ "$got" = "[{'path': 'chart.png', 'type': 'file'}, {'path': 'd/f', 'type': 'fifo'}] ['summary.txt']" ] ||
	die "undeclared outputs: $got"
pass "files no declared output matches are listed as undeclared, with their type"

# 2d. Issue 14: one thread per numeric library unless the policy says
# otherwise (a policy's MKL_NUM_THREADS stands; the cafe sets OMP and
# OPENBLAS itself).
sed 's/^      LANG: C.UTF-8$/      LANG: C.UTF-8\n      MKL_NUM_THREADS: "4"/; /OMP_NUM_THREADS\|OPENBLAS_NUM_THREADS/d' \
	"$T/app.yaml" >"$T/threads.yaml"
"$CORDONC" compile "$T/threads.yaml" "$T/tools.yaml" -o "$T/threads.cpol" >"$_out" 2>"$_err" || die "compile threads.yaml"
printf 'import os\nopen("/workspace/out/summary.txt", "w").write("ok")\nprint(sorted((k, v) for k, v in os.environ.items() if k.endswith("_THREADS")))\n' \
	>"$T/threads.py"
expect_rc 0 "$CORDON" run --policy "$T/threads.cpol" --code "$T/threads.py"
got=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["stdout"].strip())' "$_out")
[ "$got" = "[('MKL_NUM_THREADS', '4'), ('NUMEXPR_NUM_THREADS', '1'), ('OMP_NUM_THREADS', '1'), ('OPENBLAS_NUM_THREADS', '1')]" ] ||
	die "thread defaults: $got"
pass "numeric libraries get one thread each unless the policy sets their variable"

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

# ---- usage: pids and CPU, root and rootless ------------------------------
sed -e 's/timeout: 5s/timeout: 4s/' -e 's/pids: 32/pids: 8/' "$SRC/tests/boundary/app.yaml" >"$T/lim.yaml"
cp "$SRC/tests/boundary/tools.yaml" "$T/"
"$CORDONC" compile "$T/lim.yaml" "$T/tools.yaml" -o "$T/lim.cpol" >"$_out" 2>"$_err" || die "compile lim"
# 20 children against pids: 8; the refused fork is not caught.
cat >"$T/forks.py" <<'EOF'
import os, time
for i in range(20):
    if os.fork() == 0:
        time.sleep(1)
        os._exit(0)
EOF
# Two children burn CPU until the timeout kills them; the parent reads
# what they used so far from /proc and prints it, then waits to be killed.
cat >"$T/burners.py" <<'EOF'
import os, time
kids = []
for i in range(2):
    pid = os.fork()
    if pid == 0:
        while True:
            pass
    kids.append(pid)
time.sleep(2.5)
tick = os.sysconf("SC_CLK_TCK")
used = 0
for pid in kids:
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    used += (int(f[11]) + int(f[12])) * 1000 // tick
print("children-ms", used, flush=True)
time.sleep(60)
EOF
mkdir "$T/bin" && cp "$CORDON" "$T/bin/" && chmod 755 "$T" "$T/bin" "$T/bin/cordon" && chmod 644 "$T/"*.*
modes=root
if [ "$(id -u)" -eq 0 ]; then
	id cordon-test >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin cordon-test \
		|| die "cannot create user cordon-test"
	modes="root rootless"
fi
as_mode() {
	if [ "$mode" = rootless ]; then
		setpriv --reuid=cordon-test --regid=cordon-test --clear-groups env HOME="$T" XDG_STATE_HOME="$T" "$@"
	else "$@"; fi
}
for mode in $modes; do
	# pids_limit_never_reported: a pids cgroup counts the refusals and
	# the failure is put down to the limit; RLIMIT_NPROC keeps no count,
	# so there the field is absent and the failure is the program's.
	expect_rc 1 as_mode "$T/bin/cordon" run --policy "$T/lim.cpol" --code "$T/forks.py"
	got=$($PY -c 'import json,sys; r=json.load(open(sys.argv[1])); u=r["usage"]
print(r["enforcement"]["pids"], r["status"], r["error"]["code"], u.get("pidsLimitHits"))' "$_out")
	case "$got" in
	cgroup-v[12]" limit_exceeded pids_limit "[1-9]*) ;;
	"rlimit-nproc failed program_failed None") ;;
	*) die "$mode: pids limit: $got" ;;
	esac
	if [ "$mode" = root ] && [ -w /sys/fs/cgroup/pids ]; then
		case "$got" in cgroup-v1*) ;; *) die "root: pids layer: $got" ;; esac
	fi
	pids=$got

	# cpu_ms_misses_killed_children: cpuMs is at least what the killed
	# children had used 1.5 s before the timeout, from the cgroup or, where
	# there is none, from rusage (init kills and reaps them when asked, so
	# wait4 counts them); the source is always named.
	expect_rc 124 as_mode "$T/bin/cordon" run --policy "$T/lim.cpol" --code "$T/burners.py"
	got=$($PY -c 'import json,sys; r=json.load(open(sys.argv[1])); u=r["usage"]
kids=[l.split()[1] for l in r["stdout"].splitlines() if l.startswith("children-ms")]
print(u.get("cpuSource"), u["cpuMs"], kids[0] if kids else "none")' "$_out")
	set -- $got
	case "$1" in
	cgroup-v2) [ "$3" != none ] && [ "$2" -ge "$3" ] || die "$mode: cpuMs $2 leaves out the children's $3 ms" ;;
	rusage) [ "$mode" = rootless ] || ! grep -q ' - cgroup2 ' /proc/self/mountinfo || die "root: cpuMs from rusage"
		[ "$3" != none ] && [ "$2" -ge "$3" ] || die "$mode: cpuMs $2 (rusage) leaves out the children's $3 ms" ;;
	*) die "$mode: cpuSource: $got" ;;
	esac
	pass "$mode: pids limit: $pids; cpuSource, cpuMs, children's ms: $got"
done
