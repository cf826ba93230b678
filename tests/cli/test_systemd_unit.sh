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
