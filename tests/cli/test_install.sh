#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make install / uninstall, as a package build drives them: DESTDIR and
# PREFIX (/usr and /opt/x) honoured; the binaries stripped (INSTALL_STRIP=
# keeps the symbols) and free of any build path; the installed cordonc
# compiles with the installed profiles and never the source tree's; the
# pkg-config file links a C program against the installed libcordon_tools;
# the bash completions register; the systemd unit names the installed
# binary; uninstall removes every file install put.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
SANV="${SAN:-0}"

files_under() { (cd "$1" && find . ! -type d | sort); }

for prefix in /opt/x /usr; do
	R="$T/root$(echo "$prefix" | tr / _)"
	P="$R$prefix"
	mkdir -p "$R"
	expect_rc 0 make -s -C "$SRC" install SAN="$SANV" DESTDIR="$R" PREFIX="$prefix"
	for f in bin/cordonc bin/cordon share/man/man1/cordonc.1 share/man/man1/cordon.1 \
		share/bash-completion/completions/cordonc share/bash-completion/completions/cordon \
		lib/libcordon_tools.a lib/pkgconfig/cordon-tools.pc include/cordon_tools.h \
		lib/systemd/system/cordon-serve.service; do
		[ -e "$P/$f" ] || die "$prefix: not installed: $f"
	done
	for p in "$SRC"/policies/*.policy; do
		[ -e "$P/share/cordon/policies/$(basename "$p")" ] || die "$prefix: policy not installed: $p"
	done
	for b in cordonc cordon; do
		expect_rc 0 "$P/bin/$b" --version
		readelf -S "$P/bin/$b" | grep -q '\.symtab' && die "$prefix: bin/$b is not stripped"
		# Neither the source tree nor the build tree may be named (the
		# unstripped build binary names them in its debug info and
		# its marker file; the installed one must not know either).
		# A path below either, or either alone ("$SRC" bare would also
		# match /workspace/work/main.py when the tree is /work/main).
		strings "$P/bin/$b" | grep -F -e "$SRC/" -e "$BUILD/" >"$T/paths"
		strings "$P/bin/$b" | grep -xF -e "$SRC" -e "$BUILD" >>"$T/paths"
		[ -s "$T/paths" ] && die "$prefix: bin/$b names a build path: $(head -3 "$T/paths")"
	done
	grep -q "^ExecStart=$prefix/bin/cordon serve" "$P/lib/systemd/system/cordon-serve.service" ||
		die "$prefix: the unit's ExecStart does not name $prefix/bin/cordon"

	# The installed cordonc finds the installed profiles from its own path,
	# and only them: with those moved away it fails although the source
	# tree's are there.
	expect_rc 0 env -u CORDON_POLICY_PATH "$P/bin/cordonc" compile "$SRC/examples/cafe/app.yaml" \
		"$SRC/examples/cafe/tools.yaml" -o "$T/cafe.cpol"
	mv "$P/share/cordon/policies" "$T/moved"
	expect_rc 2 env -u CORDON_POLICY_PATH "$P/bin/cordonc" compile "$SRC/examples/cafe/app.yaml" \
		"$SRC/examples/cafe/tools.yaml" -o "$T/cafe.cpol"
	expect_err "python-compute' not found"
	mv "$T/moved" "$P/share/cordon/policies"

	# pkg-config through PKG_CONFIG_PATH (the .pc names the final prefix;
	# the sysroot maps it into DESTDIR), and a program linked with it.
	export PKG_CONFIG_PATH="$P/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$R"
	expect_rc 0 pkg-config --cflags cordon-tools
	expect_out "-I$P/include"
	expect_rc 0 pkg-config --libs cordon-tools
	expect_out "-L$P/lib"
	expect_out "-lcordon_tools"
	cat >"$T/use.c" <<'C'
#include <stdio.h>
#include <cordon_tools.h>
int main(void)
{
	printf("%s\n", cordon_tool_code_name(CORDON_TOOL_OK));
	return 0;
}
C
	# A SAN=1 build installs an instrumented static library: its user must
	# link the same runtimes, as any program built against it would.
	san_flags=
	[ "$SANV" = 1 ] && san_flags="-fsanitize=address,undefined"
	# shellcheck disable=SC2046,SC2086
	expect_rc 0 cc -o "$T/use" "$T/use.c" $san_flags $(pkg-config --cflags --libs cordon-tools)
	unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
	expect_rc 0 "$T/use"
	[ -s "$_out" ] || die "$prefix: the program linked against libcordon_tools printed nothing"

	for b in cordonc cordon; do
		expect_rc 0 bash -c ". '$P/share/bash-completion/completions/$b' && complete -p $b"
		expect_out "-F _$b $b"
	done

	expect_rc 0 make -s -C "$SRC" uninstall SAN="$SANV" DESTDIR="$R" PREFIX="$prefix"
	[ -z "$(files_under "$R")" ] || die "$prefix: uninstall left: $(files_under "$R" | head -5)"
	[ -e "$P/share/cordon" ] && die "$prefix: uninstall left share/cordon"
done
pass "make install DESTDIR PREFIX=/opt/x and /usr: stripped, no build path, own profiles, pkg-config, completion, unit; uninstall removes all"

# INSTALL_STRIP= keeps the symbols (dh_strip splits them into -dbgsym).
R="$T/unstripped"
expect_rc 0 make -s -C "$SRC" install SAN="$SANV" DESTDIR="$R" PREFIX=/usr INSTALL_STRIP=
readelf -S "$R/usr/bin/cordonc" | grep -q '\.symtab' || die "INSTALL_STRIP= stripped bin/cordonc"

# The build-tree binary still finds the source tree's profiles, unset
# CORDON_POLICY_PATH (make cli sets it).
expect_rc 0 env -u CORDON_POLICY_PATH "$BUILD/cordonc" compile "$SRC/examples/cafe/app.yaml" \
	"$SRC/examples/cafe/tools.yaml" -o "$T/cafe.cpol"
pass "INSTALL_STRIP= keeps symbols; the build tree's cordonc finds the source tree's profiles"
