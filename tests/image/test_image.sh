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
#                 then, at least privilege, the café program with its tool
#                 call, and each needed setting taken away in turn
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

# A sandbox inside the container at least privilege (docs/image.md, "Least
# privilege"): cordon as the image's user 10001 (rootless cordon: its user
# namespace gives the sandbox's setup the capabilities it needs), every
# capability dropped, no_new_privs, the repository's seccomp profile
# (podman's default plus sethostname) and /proc unmasked.  The café
# program, its receipts and its governed calc.check call; the tools
# installed on the host by scripts/install-examples, mounted read-only.
[ -x /usr/local/libexec/cordon/examples/cafe/calc-check ] || sh "$SRC/scripts/install-examples" >/dev/null
PROFILE="$T/seccomp.json"
/usr/bin/python3 "$SRC/scripts/seccomp-container-profile" >"$PROFILE"
if cmp -s "$PROFILE" "$SRC/deploy/seccomp/cordon-serve.json"; then
	ok "deploy/seccomp/cordon-serve.json is podman's default profile plus sethostname"
else
	fail "deploy/seccomp/cordon-serve.json differs from scripts/seccomp-container-profile's output: regenerate it"
fi
LEAST="--read-only --user 10001:10001 --cap-drop ALL --security-opt no-new-privileges --security-opt seccomp=$PROFILE"
LEAST="$LEAST --security-opt unmask=/proc/*"
# serve_up NAME FLAGS...: serve in a container with FLAGS; $SOCK its socket.
serve_up() {
	name=$1; shift
	d="$T/ls-$name"; SOCK="$d/sock/serve.sock"
	mkdir -p "$d/sock" "$d/state" && chmod 777 "$d/sock" && chown "${STATE_OWNER:-10001}" "$d/state" && chmod 700 "$d/state"
	SERVE=$($P run -d --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 "$@" \
		-e SMTP_PASSWORD=not-used-by-this-test \
		-v /usr/local/libexec/cordon/examples:/usr/local/libexec/cordon/examples:ro \
		-v "$T/policies:/etc/cordon/policies:ro" -v "$d/sock:/run/cordon" -v "$d/state:/var/lib/cordon" "$S" \
		--policies /etc/cordon/policies --trusted-key /etc/cordon/policies/ops.pub \
		--socket /run/cordon/serve.sock --socket-mode 0666 --pool 1 \
		--state-dir /var/lib/cordon --work-dir /run/cordon/serve 2>"$T/serve.err") ||
		{ fail "serve $name start: $(cat "$T/serve.err")"; SERVE=""; return 1; }
	while [ ! -S "$SOCK" ] && [ "$($P inspect --format '{{.State.Running}}' "$SERVE" 2>/dev/null)" = true ]; do
		sleep 0.2
	done
	[ -S "$SOCK" ] || { fail "serve $name never made its socket: $($P logs "$SERVE" 2>&1 | tail -3)"; return 1; }
}
serve_down() { [ -n "$SERVE" ] && $P rm -f -t 0 "$SERVE" >/dev/null 2>&1; SERVE=""; }
# cafe_exec OUT: the café program through $SOCK, the answer in OUT.
cafe_exec() {
	/usr/bin/python3 - "$SRC/examples/cafe" >"$T/cafe-req.json" <<'PY'
import json, sys
d = sys.argv[1]
print(json.dumps({
    "app": "cafe", "agent": "analyst",
    "code": open(d + "/user_code.py").read(),
    "inputs": [{"name": "receipts.json", "content": open(d + "/receipts.json").read()}],
    "context": {"tenant": "t1", "user": "anna", "session": "s1", "roles": ["analyst"], "tools": ["calc.check"]},
}))
PY
	curl -s --unix-socket "$SOCK" http://localhost/v1/executions -H 'Content-Type: application/json' \
		--data-binary @"$T/cafe-req.json" >"$1"
}

if serve_up least $LEAST; then
	cafe_exec "$T/cafe.json"
	if /usr/bin/python3 - "$T/cafe.json" >"$T/cafe.why" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
e = r.get("enforcement", {})
calls = [c for c in r.get("toolCalls", []) if c.get("tool") == "calc.check"]
why = []
if r.get("status") != "succeeded": why.append("status %r %r" % (r.get("status"), r.get("error")))
if "checked by calc.check" not in (r.get("stdout") or ""): why.append("stdout %r" % r.get("stdout"))
if len(calls) != 1 or calls[0].get("decision") != "allowed": why.append("toolCalls %r" % r.get("toolCalls"))
for k, want in (("namespaces", "user,mount,pid,net"), ("landlock", "abi-"), ("seccomp", "filter("),
                ("capabilities", "none"), ("network", "none")):
    if want not in str(e.get(k)): why.append("enforcement.%s = %r" % (k, e.get(k)))
if e.get("noNewPrivs") is not True: why.append("noNewPrivs %r" % e.get("noNewPrivs"))
print("; ".join(why) or "ok")
sys.exit(1 if why else 0)
PY
	then
		ok "least privilege (uid 10001, no capabilities, seccomp profile, /proc unmasked): the café program succeeded, calc.check allowed, layers user/mount/pid/net ns, landlock, seccomp"
	else
		fail "least privilege: café: $(cat "$T/cafe.why") $(head -c 400 "$T/cafe.json")"
	fi
	serve_down
fi

# Each setting is needed: without it the execution fails as a harness error
# naming the step that could not be done (never a sandbox without it).
# minus_one NAME WANT FLAGS...
minus_one() {
	name=$1; want=$2; shift 2
	serve_up "$name" "$@" || return
	cafe_exec "$T/$name.json"
	w=$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); e=r.get("error") or {}; print(r.get("status"), (e.get("details") or {}).get("where"), e.get("message"))' "$T/$name.json" 2>&1)
	case "$w" in
	"error exec.harness.$want "*) ok "without $name: the run fails at exec.harness.$want (${w#* * })" ;;
	*) fail "without $name: want an error at exec.harness.$want, got: $w" ;;
	esac
	serve_down
}
BASE="--user 10001:10001 --cap-drop ALL --security-opt no-new-privileges"
minus_one seccomp-profile mounts $BASE --security-opt unmask=/proc/*
minus_one proc-unmask mounts $BASE --security-opt seccomp="$PROFILE"
# Root in the container without capabilities: the same flags for uid 0.
STATE_OWNER=0
minus_one non-root-user identity --cap-drop ALL --security-opt no-new-privileges \
	--security-opt seccomp="$PROFILE" --security-opt unmask=/proc/*
exit $rc
