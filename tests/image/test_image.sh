#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# test_image.sh - the OCI archives of scripts/build-image, run with podman
# from a private storage root under build/ (the host's podman state is not
# touched, and the root is removed after):
#   cordonc:      --version, lint --format sarif on examples/cafe mounted
#                 read-only (checked by tests/lint/check_sarif.py), compile,
#                 keygen and sign, verify of the signed blob
#   cordon-serve: serve of that blob on a Unix socket in a mounted folder
#                 (no network), /v1/health, /v1/ready and /v1/apps answer;
#                 then, privileged, an execution with numpy
#   SRC=DIR [IMAGE_OUT=DIR] sh tests/image/test_image.sh     (as root)
# podman runs with runc (crun refuses this host's hybrid cgroups) and
# explicit ulimits.  Exit 1 when a check failed.
set -u
: "${SRC:?}"
OUT=${IMAGE_OUT:-$SRC/build/image}
VERSION=$(cat "$SRC/VERSION")
rc=0
ok() { echo "ok   image: $1"; }
fail() { echo "FAIL image: $1"; rc=1; }

[ "$(id -u)" -eq 0 ] || { echo "FAIL image: needs root"; exit 1; }
for f in cordonc cordon-serve; do
	[ -s "$OUT/$f.oci.tar" ] || { echo "FAIL image: no $OUT/$f.oci.tar (make image)"; exit 1; }
done
T=$(mktemp -d "$OUT/test.XXXXXX") || exit 1
P="podman --root $T/storage --runroot $T/run --storage-driver vfs --runtime runc --cgroup-manager cgroupfs --events-backend file"
RUN="$P run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024"
SERVE=""
# shellcheck disable=SC2317  # called by the trap
cleanup() {
	[ -n "$SERVE" ] && $P rm -f -t 0 "$SERVE" >/dev/null 2>&1
	$P rmi -a -f >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT

for f in cordonc cordon-serve; do
	$P load -q -i "$OUT/$f.oci.tar" >/dev/null 2>"$T/load.err" || { cat "$T/load.err"; fail "load $f"; exit 1; }
done
C="localhost/cordon/cordonc:$VERSION"
S="localhost/cordon/cordon-serve:$VERSION"

for k in org.opencontainers.image.version org.opencontainers.image.revision; do
	v=$($P image inspect --format "{{index .Labels \"$k\"}}" "$C")
	if [ -n "$v" ] && [ "$v" != "<no value>" ]; then ok "label $k=$v"; else fail "label $k missing"; fi
done

v=$($RUN "$C" --version 2>&1)
case "$v" in *"$VERSION"*) ok "cordonc --version: $v";; *) fail "cordonc --version said: $v";; esac

# lint: exit 0 (clean) or 1 (findings) both give a report; 2 is an error.
mkdir -p "$T/out" && chmod 777 "$T/out"
$RUN -v "$SRC/examples/cafe:/work/cafe:ro" "$C" lint cafe/app.yaml cafe/tools.yaml --format sarif \
	>"$T/out/cafe.sarif" 2>"$T/lint.err"
lrc=$?
if [ $lrc -le 1 ] && /usr/bin/python3 "$SRC/tests/lint/check_sarif.py" "$SRC/tests/lint/sarif-2.1.0.schema.json" \
	"$T/out/cafe.sarif" >"$T/sarif.err" 2>&1 && grep -q '"cafe/app.yaml"\|"results": *\[\]' "$T/out/cafe.sarif"; then
	ok "cordonc lint --format sarif (exit $lrc): valid SARIF"
else
	fail "cordonc lint --format sarif (exit $lrc): $(cat "$T/lint.err" "$T/sarif.err")"
fi

if $RUN -v "$SRC/examples/cafe:/work/cafe:ro" -v "$T/out:/out" "$C" \
		compile cafe/app.yaml cafe/tools.yaml -o /out/cafe.cpol >"$T/compile.err" 2>&1 &&
	$RUN -v "$T/out:/out" "$C" keygen -p /out/ops.pub -s /out/ops.sec >>"$T/compile.err" 2>&1 &&
	$RUN -v "$T/out:/out" "$C" sign -s /out/ops.sec /out/cafe.cpol >>"$T/compile.err" 2>&1 &&
	$RUN -v "$T/out:/out:ro" "$C" verify -k /out/ops.pub /out/cafe.cpol >>"$T/compile.err" 2>&1; then
	ok "cordonc compile, keygen, sign, verify"
else
	fail "cordonc compile/sign/verify: $(cat "$T/compile.err")"
fi

# serve: one app, no warm pool (a sandbox inside a container needs
# privileges this test does not grant), the socket in a mounted folder.
mkdir -p "$T/policies" "$T/sock" && cp "$T/out/cafe.cpol" "$T/out/ops.pub" "$T/policies/"
SERVE=$($P run -d --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
	-v "$T/policies:/etc/cordon/policies:ro" -v "$T/sock:/run/cordon" "$S" \
	--policies /etc/cordon/policies --trusted-key /etc/cordon/policies/ops.pub \
	--socket /run/cordon/serve.sock --socket-mode 0666 --pool 0 2>"$T/serve.err") ||
	{ fail "serve start: $(cat "$T/serve.err")"; SERVE=""; }
# Waits for the socket as long as the server lives: no timed assertion.
while [ -n "$SERVE" ] && [ ! -S "$T/sock/serve.sock" ] &&
	[ "$($P inspect --format '{{.State.Running}}' "$SERVE" 2>/dev/null)" = true ]; do sleep 0.2; done
if [ -S "$T/sock/serve.sock" ]; then
	h=$(curl -s --unix-socket "$T/sock/serve.sock" http://localhost/v1/health)
	if [ "$h" = '{"status":"ok"}' ]; then ok "serve /v1/health: $h"; else fail "serve /v1/health said: $h"; fi
	r=$(curl -s -o "$T/ready.json" -w '%{http_code}' --unix-socket "$T/sock/serve.sock" http://localhost/v1/ready)
	if [ "$r" = 200 ] && grep -q '"ready": *true' "$T/ready.json"; then ok "serve /v1/ready: 200"
	else fail "serve /v1/ready: $r $(cat "$T/ready.json")"; fi
	a=$(curl -s --unix-socket "$T/sock/serve.sock" http://localhost/v1/apps)
	case "$a" in *'"app":"cafe"'*|*'"app": "cafe"'*) ok "serve /v1/apps lists cafe";; *) fail "serve /v1/apps: $a";; esac
else
	fail "serve never made its socket: $($P logs "$SERVE" 2>&1 | tail -5)"
fi
[ -n "$SERVE" ] && $P rm -f -t 0 "$SERVE" >/dev/null 2>&1

# A sandbox inside the container: with --privileged and the host's cgroup
# file system (what this host needs today; issue 18 narrows it).
rm -f "$T/sock/serve.sock"
SERVE=$($P run -d --privileged --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
	-v /sys/fs/cgroup:/sys/fs/cgroup -v "$T/policies:/etc/cordon/policies:ro" -v "$T/sock:/run/cordon" "$S" \
	--policies /etc/cordon/policies --trusted-key /etc/cordon/policies/ops.pub \
	--socket /run/cordon/serve.sock --socket-mode 0666 --pool 0 2>"$T/serve.err") ||
	{ fail "serve --privileged start: $(cat "$T/serve.err")"; SERVE=""; }
while [ -n "$SERVE" ] && [ ! -S "$T/sock/serve.sock" ] &&
	[ "$($P inspect --format '{{.State.Running}}' "$SERVE" 2>/dev/null)" = true ]; do sleep 0.2; done
x=$(curl -s --unix-socket "$T/sock/serve.sock" http://localhost/v1/executions -H 'Content-Type: application/json' \
	-d '{"app": "cafe", "code": "import numpy; print(int(numpy.arange(7).sum()) * 2)"}')
printf '%s' "$x" >"$T/exec.json"
if /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(r.get("stdout") != "42\n" or r.get("exitCode") != 0)' \
	"$T/exec.json" 2>/dev/null; then
	ok "serve --privileged: an execution with numpy printed 42"
else
	fail "serve --privileged execution: $(printf '%s' "$x" | head -c 600)"
fi
exit $rc
