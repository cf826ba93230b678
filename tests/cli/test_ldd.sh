#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The runtime never parses YAML or policy text and never compiles BPF: its
# binary must not even link libyaml or libseccomp (docs/runtime.md).
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
ldd "$CORDON" >"$T/ldd" 2>&1 || die "ldd failed"
grep -q libsodium "$T/ldd" || die "ldd output looks wrong (no libsodium): $(cat "$T/ldd")"
if grep -E "libyaml|libseccomp" "$T/ldd"; then die "cordon links a parser it must not have"; fi
# The compiler, by contrast, does link libyaml: the check above is not
# vacuous.  (libseccomp shows up in cordonc once seccomp generation uses it.)
ldd "$CORDONC" | grep -q libyaml || die "cordonc does not link libyaml?"
pass "cordon links neither libyaml nor libseccomp"
# Nor libmicrohttpd (and with it GnuTLS): only `cordon serve` needs HTTP
# and loads it when it starts (runtime/serve/mhd.h), so `cordon run` does
# not pay ~6 ms of library loading on every start.
if grep -E "libmicrohttpd|libgnutls" "$T/ldd"; then die "cordon links libmicrohttpd: every run pays for it"; fi
pass "cordon does not link libmicrohttpd (serve loads it)"
