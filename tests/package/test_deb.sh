#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The Debian packages of make package (DEB, build/deb/) installed into a
# minimal Debian 12 root, the honest test of their Depends:
#   - lintian: no tag but the ones debian/*.lintian-overrides explain;
#   - cordonc alone (a CI host's install) pulls no runtime: --version, and
#     lint and compile of a small app with the installed profiles alone;
#   - cordon: the postinst's group, the state directory's mode, the unit
#     naming /usr/bin/cordon; `cordon run` of a trivial program, a program
#     that fails, and a write to the read-only root refused;
#   - libcordon-tools-dev's files; purge leaves no file of theirs.
# The root is mmdebstrap --variant=apt (Debian's mirror; MIRROR to change
# it), kept as a tarball under CACHE so that reruns skip the download;
# each run unpacks a fresh copy.  Everything that mounts (proc, sys, dev)
# does so in a mount namespace of its own, which pivot_root()s into the
# root: a user namespace cannot be made under chroot(2) alone (EPERM), and
# the mounts go away with the namespace, so nothing is left mounted here.
set -u
: "${SRC:?}" "${DEB:?}" "${CACHE:?}"
MIRROR=${MIRROR:-http://deb.debian.org/debian}
# lib.sh's helpers (die, pass, expect_rc, $T); its CORDONC and CORDON
# are not used: the binaries are the installed ones.
BUILD=${BUILD:-unused}
. "$SRC/tests/cli/lib.sh"
[ "$(id -u)" -eq 0 ] || die "needs root (mmdebstrap, mounts, chroot)"
debs=$(ls "$DEB"/*.deb 2>/dev/null | grep -v -- -dbgsym_) || die "no .deb in $DEB: run make package"

# lintian: errors, warnings and even info tags fail unless overridden.
expect_rc 0 lintian --fail-on error,warning,info -I "$DEB"/*.deb
pass "lintian: clean but the overrides in debian/*.lintian-overrides"

# mount (umount) for in_root's own setup; nothing of cordon's uses it.
base="$CACHE/bookworm-apt-mount.tar"
if [ ! -s "$base" ]; then
	mkdir -p "$CACHE"
	# mmdebstrap picks the format from the name's ending: .tar.
	mmdebstrap --variant=apt --include=mount --quiet bookworm "$CACHE/partial.tar" "deb $MIRROR bookworm main" \
		"deb $MIRROR bookworm-updates main" >"$_out" 2>"$_err" || die "mmdebstrap"
	mv "$CACHE/partial.tar" "$base"
fi
R="$T/root"
mkdir "$R" && tar -xf "$base" -C "$R" || die "unpack $base"
cp /etc/resolv.conf "$R/etc/resolv.conf"
mkdir "$R/debs" && cp $debs "$R/debs/"

# in_root CMD...: CMD in the root, with /proc, /sys and /dev.
in_root() {
	unshare --mount --propagation private sh -c '
		set -e; R=$1; shift
		mount --bind "$R" "$R"
		mount -t proc proc "$R/proc"
		mount --rbind /sys "$R/sys"
		mount --rbind /dev "$R/dev"
		mkdir -p "$R/.old"; cd "$R"; pivot_root . .old
		umount -l /.old; rmdir /.old
		exec env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"' sh "$R" "$@"
}
apt_in_root() { in_root env DEBIAN_FRONTEND=noninteractive apt-get -q -y "$@"; }

expect_rc 0 apt_in_root update
# deb NAME: the path in the root of package NAME's .deb (no shell there
# expands a glob).
deb() { echo /debs/$(cd "$R/debs" && ls "$1"_*.deb); }
expect_rc 0 apt_in_root install --no-install-recommends "$(deb cordonc)"
expect_rc 1 in_root dpkg -s cordon
expect_rc 0 in_root cordonc --version
grep -q "$(cat "$SRC/VERSION")" "$_out" || die "cordonc --version does not say $(cat "$SRC/VERSION"): $(cat "$_out")"

mkdir -p "$R/t"
cat >"$R/t/app.yaml" <<'YAML'
version: 1
app: hello
execution:
  runtime:
    mode: isolated
    timeout: 60s
    max_file_bytes: 1m
    max_exec_workspace_delta_bytes: 16m
    max_exec_workspace_bytes: 16m
    max_output_bytes: 64k
    max_result_bytes: 64k
    max_code_bytes: 64k
    memory: 512m   # cordon: allow CDN407 -- a test app; whichever layer the host gives
    pids: 32
    open_files: 64
  executor:
    interpreter: /usr/bin/python3
    uid: 1001
    gid: 1000
    network: none
    env: { LANG: C.UTF-8 }
    mounts:
      - { source: /usr, target: /usr }
      - { source: /lib, target: /lib }
      - { source: /lib64, target: /lib64 }
      - { type: tmpfs, target: /tmp, size: 16m }
    seccomp: { profile: python-compute }
    landlock: true
  outputs:
    - { path: "answer.txt", max_bytes: 1k, required: true }
YAML
printf 'version: 1\ntools: []\n' >"$R/t/tools.yaml"
expect_rc 0 in_root cordonc lint /t/app.yaml /t/tools.yaml
expect_rc 0 in_root cordonc compile /t/app.yaml /t/tools.yaml -o /t/hello.cpol
# The installed profiles and only them: moved away, the compile fails.
mv "$R/usr/share/cordon/policies" "$T/policies"
expect_rc 2 in_root cordonc compile /t/app.yaml /t/tools.yaml -o /t/none.cpol
mv "$T/policies" "$R/usr/share/cordon/policies"
pass "cordonc alone: installs without cordon; --version, lint, compile with the installed profiles"

expect_rc 0 apt_in_root install --no-install-recommends "$(deb cordon)" "$(deb libcordon-tools-dev)"
expect_rc 0 in_root getent group cordon
[ "$(stat -c %a "$R/var/lib/cordon")" = 700 ] || die "/var/lib/cordon is $(stat -c %a "$R/var/lib/cordon"), want 700"
grep -q '^ExecStart=/usr/bin/cordon serve' "$R/lib/systemd/system/cordon-serve.service" ||
	die "the unit's ExecStart does not name /usr/bin/cordon"
for f in /usr/include/cordon_tools.h "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libcordon_tools.a" \
	"/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/pkgconfig/cordon-tools.pc"; do
	[ -e "$R$f" ] || die "libcordon-tools-dev lacks $f"
done

field() { /usr/bin/python3 -c 'import json,sys; print(eval(sys.argv[2], {"r": json.load(open(sys.argv[1]))}))' "$1" "$2"; }
printf 'open("/workspace/out/answer.txt", "w").write(str(6 * 7))\n' >"$R/t/ok.py"
expect_rc 0 in_root cordon run --policy /t/hello.cpol --code /t/ok.py --out /t/out
cp "$_out" "$T/r.json"
[ "$(field "$T/r.json" 'r["status"]')" = succeeded ] || die "status: $(cat "$T/r.json")"
[ "$(cat "$R/t/out/answer.txt")" = 42 ] || die "answer.txt: $(cat "$R/t/out/answer.txt" 2>&1)"

printf 'import sys\nopen("/workspace/out/answer.txt", "w").write("x")\nsys.exit(3)\n' >"$R/t/fail.py"
expect_rc 1 in_root cordon run --policy /t/hello.cpol --code /t/fail.py
cp "$_out" "$T/r.json"
[ "$(field "$T/r.json" 'r["status"]')" = failed ] || die "a program exiting 3: $(cat "$T/r.json")"

printf 'open("/usr/pwned", "w")\nopen("/workspace/out/answer.txt", "w").write("x")\n' >"$R/t/ro.py"
expect_rc 1 in_root cordon run --policy /t/hello.cpol --code /t/ro.py
[ -e "$R/usr/pwned" ] && die "the sandbox wrote /usr/pwned"
pass "cordon: group, state dir, unit; cordon run from the package: succeeded (42), failed (exit 3), read-only /usr"

# Purge: no file of the packages left.
in_root dpkg -L cordon cordonc libcordon-tools-dev 2>/dev/null | while read -r f; do
	[ -f "$R$f" ] && echo "$f"; done >"$T/files"
[ -s "$T/files" ] || die "dpkg -L listed no file"
expect_rc 0 apt_in_root purge cordon cordonc libcordon-tools-dev
while read -r f; do [ -e "$R$f" ] && die "purge left $f"; done <"$T/files"
[ -e "$R/var/lib/cordon" ] && [ -n "$(ls -A "$R/var/lib/cordon")" ] && echo "note: purge keeps the ledger in /var/lib/cordon"
pass "purge removes every file the packages installed"
