#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cordonc lint CDN715 (tool-exec-host-writable) judges a tool's code by the
# owner and mode of the file and of every directory on its way, on the
# linting host, symlinks followed: a tree made here with chown and chmod
# flips the finding on and off.  The file judged is an interpreter's script
# (the compiler already refuses an unsafe exec[0]), and each finding has a
# control: the same tree put right lints clean.
#
# Needs root (files are given to cordon-test, the ordinary user); the last
# part lints as cordon-test, whose own program the compiler accepts and lint
# does not.  The tree
# lives under /run, a root-owned 0755 directory on every Debian host: /tmp
# (sticky, world-writable) above it would be a finding itself, and so would
# a checkout that belongs to an ordinary user.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
if [ "$(id -u)" -ne 0 ]; then
	pass "skipped: chown needs root"
	exit 0
fi
modes_set
W=$(mktemp -d /run/cordon-lint-host.XXXXXX) || die "mktemp under /run"
trap 'rm -rf "$T" "$W"' EXIT
chmod 755 "$W"
mkdir -m 755 "$W/lib" "$W/other"
printf 'print("{}")\n' >"$W/lib/tool.py"
chmod 644 "$W/lib/tool.py"

# The script operand sits at line 6, column 30.
inventory() {
	cat >"$T/tools.yaml" <<EOF
version: 1
tools:
  - id: t.run
    description: A tool whose script is judged.
    timeout: 1s
    exec: [/usr/bin/python3, $1]
EOF
}
printf 'version: 1\napp: lint-host\nagents:\n  a: { tools: [t.run] }\n' >"$T/app.yaml"
# lint_expect N [TEXT]: N findings of CDN715 (other rules fire on this
# bare descriptor and are not judged here); TEXT must be in the one.
lint_expect() {
	"$CORDONC" lint "$T/app.yaml" "$T/tools.yaml" >"$_out" 2>"$_err"
	[ $? -le 1 ] || die "lint failed"
	got=$(grep -c '\[CDN715\]$' "$_out")
	[ "$got" -eq "$1" ] || { grep 'CDN715' "$_out"; die "$got CDN715 findings, want $1"; }
	[ "$1" -eq 0 ] || expect_out "tools.yaml:6:30: error: tool t.run runs $2"
}

inventory "$W/lib/tool.py"
lint_expect 0
pass "a script in a root-owned 0755 tree is clean"

chown cordon-test "$W/lib/tool.py"
lint_expect 1 "$W/lib/tool.py: on this host $W/lib/tool.py is owned by uid $(id -u cordon-test)"
chown root "$W/lib/tool.py"
chown cordon-test "$W/lib"
lint_expect 1 "$W/lib/tool.py: on this host $W/lib is owned by uid"
chown root "$W/lib"
lint_expect 0
pass "a script or its directory owned by an ordinary user is a finding"

chmod 664 "$W/lib/tool.py"
lint_expect 1 "$W/lib/tool.py: on this host $W/lib/tool.py is writable by its group (mode 0664)"
chmod 644 "$W/lib/tool.py"
chmod 1777 "$W/lib"
lint_expect 1 "$W/lib/tool.py: on this host $W/lib is writable by others (mode 1777)"
chmod 755 "$W/lib"
lint_expect 0
pass "group- and world-writable (sticky or not) are findings"

# A safe link to a script in an unsafe directory: the target is judged.
mv "$W/lib/tool.py" "$W/other/tool.py"
ln -s ../other/tool.py "$W/lib/tool.py"
lint_expect 0
chown cordon-test "$W/other"
lint_expect 1 "$W/lib/tool.py: on this host $W/other is owned by uid"
chown root "$W/other"
pass "a symlink is followed to its target's directory"

# Missing file: the existing directories above it are still judged.
inventory "$W/lib/missing.py"
lint_expect 0
chmod 775 "$W/lib"
lint_expect 1 "$W/lib/missing.py: on this host $W/lib is writable by its group (mode 0775)"
chmod 755 "$W/lib"
pass "a path missing here is judged by the directories that exist"

# Rootless: the compiler trusts the compiling user with exec[0] (the
# supervisor will run as that user), lint trusts only root and the cordon
# service account.  As cordon-test, a program cordon-test owns compiles and
# is still a finding; as root the compile itself refuses it.
case $modes in *rootless*) ;; *) pass "rootless part skipped"; exit 0 ;; esac
mkdir -m 755 "$W/rl"
printf '#!/bin/sh\necho "{}"\n' >"$W/rl/tool"
chmod 755 "$W/rl/tool"
chown cordon-test "$W/rl/tool"
cp "$T/app.yaml" "$W/rl/app.yaml"
inventory "$W/rl/tool"
sed 's|exec: \[/usr/bin/python3, \(.*\)\]|exec: [\1]|' "$T/tools.yaml" >"$W/rl/tools.yaml"
chmod 644 "$W/rl/app.yaml" "$W/rl/tools.yaml"
setpriv --reuid=cordon-test --regid=cordon-test --clear-groups \
	"$CORDONC" lint "$W/rl/app.yaml" "$W/rl/tools.yaml" >"$_out" 2>"$_err"
[ $? -eq 1 ] || die "lint as cordon-test did not report"
expect_out "tools.yaml:6:12: error: tool t.run runs $W/rl/tool: on this host $W/rl/tool is owned by uid $(id -u cordon-test)"
expect_rc 2 "$CORDONC" lint "$W/rl/app.yaml" "$W/rl/tools.yaml"
expect_err "may be replaced by someone other than root"
pass "rootless: the linting user's own program is a finding, though it compiles"
