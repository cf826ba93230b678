#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cordonc compile refuses a tool whose exec[0] someone other than root or
# the compiling user could swap (docs/tools.md, "Identity and cgroup"; the
# same check the supervisor makes before every call), with file:line:col at
# exec[0]; a path that does not exist on the compiling host is left to the
# run.  Each refusal has its control: the same inventory with the tree put
# right compiles.
#
# The tree lives under $BUILD, not /tmp: a sticky world-writable /tmp above
# it would fail the controls too.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
W=$(mktemp -d "$BUILD/tool-path.XXXXXX") || die "mktemp under $BUILD"
trap 'rm -rf "$T" "$W"' EXIT
chmod 755 "$W"
mkdir -m 755 "$W/tools"
printf '#!/bin/sh\necho "{}"\n' >"$W/tools/t"
chmod 755 "$W/tools/t"

inventory() { # exec path -> $T/tools.yaml; exec[0] sits at line 6, column 12
	cat >"$T/tools.yaml" <<EOF
version: 1
tools:
  - id: t.run
    description: A tool whose path is judged.
    timeout: 1s
    exec: [$1]
EOF
}
inventory "$W/tools/t"
printf 'version: 1\napp: tool-path\nagents:\n  a: { tools: [t.run] }\n' >"$T/app.yaml"
compile() { expect_rc "$1" "$CORDONC" compile "$T/app.yaml" "$T/tools.yaml" -o "$T/o.cpol"; }

# Control: root- (or our-) owned, 0755 all the way: compiles.
compile 0
pass "a tool under a trusted tree compiles"

# The directory made writable by all (the issue's 0777), then sticky.
chmod 777 "$W/tools"
compile 2
expect_err "tools.yaml:6:12: error: tools.t.run.exec[0]: $W/tools/t may be replaced by someone other than root or uid $(id -u): $W/tools is writable by others (mode 0777)"
chmod 1777 "$W/tools"
compile 2
expect_err "$W/tools is writable by others (mode 1777)"
chmod 755 "$W/tools"
compile 0

# The file itself group-writable.
chmod 775 "$W/tools/t"
compile 2
expect_err "$W/tools/t is writable by its group (mode 0775)"
chmod 755 "$W/tools/t"

# A link to the tool from a writable directory: the link's directory is
# judged, not only the target.
mkdir -m 777 "$W/open" && ln -s ../tools/t "$W/open/link"
inventory "$W/open/link"
compile 2
expect_err "$W/open is writable by others (mode 0777)"
inventory "$W/tools/t"
compile 0
pass "world-, sticky- and group-writable directories, a writable file and a link in a writable directory are refused at exec[0]"

# As root: the issue's case exactly, a 0777 directory owned by nobody.
if [ "$(id -u)" -eq 0 ]; then
	chown 65534 "$W/tools"
	chmod 777 "$W/tools"
	compile 2
	expect_err "tools.yaml:6:12: error: tools.t.run.exec[0]: $W/tools/t may be replaced by someone other than root or uid 0: $W/tools is owned by uid 65534"
	chown 0 "$W/tools"
	chmod 755 "$W/tools"
	compile 0
	pass "a 0777 directory owned by uid 65534 is refused (root)"
fi

# A path that does not exist here compiles: it is judged at run time.
inventory "$W/tools/not-installed"
compile 0
pass "a path missing on the compiling host is left to the run"
