#!/bin/sh
# cordonc lint CDN715 (tool-exec-host-writable) judges a tool's code by the
# owner and mode of the file and of every directory on its way, on the
# linting host, symlinks followed: a tree made here with chown and chmod
# flips the finding on and off.  The file judged is an interpreter's script
# (the compiler already refuses an unsafe exec[0]), and each finding has a
# control: the same tree put right lints clean.
#
# Needs root (files are given to cordon-test, the ordinary user).  The tree
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
