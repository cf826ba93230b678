#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# packaging/systemd/cordon-serve.service: systemd-analyze verify accepts it
# (with ExecStart pointed at this build, as make install would place it),
# every capability it keeps is explained, and none of the options that
# would break a sandbox has crept in (the unit's comments say why each).
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
U="$SRC/packaging/systemd/cordon-serve.service"

for opt in RestrictNamespaces PrivateUsers ProtectKernelTunables ProtectKernelLogs ProtectProc ProcSubset \
	ProtectControlGroups ProtectHostname MemoryDenyWriteExecute PrivateNetwork OOMScoreAdjust; do
	grep -q "^$opt=" "$U" && die "$opt= is set; the unit says why it must not be"
done
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$U")
[ -n "$caps" ] || die "no CapabilityBoundingSet="
for c in $caps; do
	grep -q "^#.*$c" "$U" || die "$c is kept without a comment saying why"
done
grep -q '^KillMode=mixed$' "$U" || die "KillMode is not mixed: SIGTERM would reach every executor, not just serve"
grep -q '^Delegate=yes$' "$U" || die "Delegate=yes is missing: systemd would own the execution cgroups"

# The kept capabilities are enough: as root under exactly that bounding set
# (what systemd gives User=root), a run with a tool call succeeds.  Without
# CAP_SYS_PTRACE it failed at exec.harness.workspace: bounding the
# workspace enters the sandbox's namespaces, whose processes run as
# other ids.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1; then
	bset=-all
	for c in $caps; do bset="$bset,+$(echo "${c#CAP_}" | tr 'A-Z' 'a-z')"; done
	printf 'version: 1\ntools:\n  - id: echo.back\n    description: Answers its params.\n    timeout: 5s\n    params:\n      x: { type: integer, required: true }\n    exec: [/bin/cat]\n' >"$T/tools.yaml"
	printf 'version: 1\napp: unit-caps\nagents:\n  a: { tools: [echo.back] }\n' >"$T/app.yaml"
	printf 'from cordon_tools import tool_call\nprint(tool_call("echo.back", {"x": 7}))\n' >"$T/p.py"
	expect_rc 0 "$CORDONC" compile "$T/app.yaml" "$T/tools.yaml" -o "$T/u.cpol"
	chmod 755 "$T"; chmod 644 "$T/u.cpol" "$T/p.py"
	expect_rc 0 setpriv --bounding-set "$bset" "$CORDON" run --policy "$T/u.cpol" --agent a --code "$T/p.py" \
		--run-dir "$T/rd" --state-dir "$T/st"
	/usr/bin/python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))
sys.exit(not (r["status"] == "succeeded" and "7" in r["stdout"] and r["toolCalls"][0]["decision"] == "allowed"))' \
		"$T/rd/result.json" || die "under the unit's capabilities ($bset): $(head -c 600 "$T/rd/result.json")"
	pass "cordon-serve.service: a run with a tool call works under exactly the unit's capabilities"
fi

if ! command -v systemd-analyze >/dev/null 2>&1; then
	pass "cordon-serve.service: options and capabilities (systemd-analyze absent: not verified)"
	exit 0
fi
sed "s#/usr/local/bin/cordon#$BUILD/cordon#" "$U" >"$T/cordon-serve.service"
# man:cordon(1) is installed by make install, not here.
sed -i 's#^Documentation=.*#Documentation=https://localhost/serve#' "$T/cordon-serve.service"
SYSTEMD_LOG_LEVEL=warning systemd-analyze verify "$T/cordon-serve.service" >"$_out" 2>"$_err" ||
	die "systemd-analyze verify: $(cat "$_err")"
[ -s "$_err" ] && die "systemd-analyze verify warns: $(cat "$_err")"
pass "cordon-serve.service: systemd-analyze verify clean; capabilities explained; no sandbox-breaking option"
