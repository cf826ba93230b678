#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The host-side Python client (clients/python): its unit tests against a
# fake cordon serve on a Unix socket and on TCP, then that it installs
# with pip from the checkout offline, with Debian's own packages only:
# --no-index (no registry), --no-build-isolation (Debian's setuptools and
# wheel instead of fetched ones), --no-deps (it has none), --target (a
# plain directory: PEP 668's EXTERNALLY-MANAGED marker guards the system
# site-packages, not a target, so no venv is needed for the check).  The
# build runs on a copy, so the checkout gets no build/ or egg-info.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
PY=/usr/bin/python3

(cd "$SRC" && $PY -B -m unittest discover -s clients/python/tests -t clients/python/tests) >"$T/ut.out" 2>&1 ||
	die "clients/python unit tests: $(tail -30 "$T/ut.out")"
grep -q '^OK' "$T/ut.out" || die "the client tests did not report OK: $(tail -5 "$T/ut.out")"
n=$(sed -n 's/^Ran \([0-9]*\) tests.*/\1/p' "$T/ut.out")
[ "${n:-0}" -ge 40 ] || die "only ${n:-0} client tests ran"
grep -q 'skipped' "$T/ut.out" && die "client tests skipped (python3-yaml or python3-jsonschema missing?): $(tail -3 "$T/ut.out")"

$PY -m pip --version >/dev/null 2>&1 || die "no pip for $PY (scripts/install-deps installs python3-pip)"
cp -r "$SRC/clients/python" "$T/src"
env HOME="$T" PIP_CONFIG_FILE=/dev/null PIP_NO_INDEX=1 $PY -m pip install --no-index --no-deps \
	--no-build-isolation --no-cache-dir --disable-pip-version-check --root-user-action=ignore \
	--target "$T/site" "$T/src" >"$T/pip.out" 2>&1 || die "pip install: $(tail -20 "$T/pip.out")"
[ -f "$T/site/cordon_client/__init__.py" ] || die "pip installed no cordon_client: $(ls "$T/site")"
ls -d "$T/site/cordon_client-"*.dist-info >/dev/null 2>&1 || die "no dist-info: $(ls "$T/site")"
[ -e "$T/site/tests" ] && die "the tests were installed as a package"
(cd / && PYTHONPATH="$T/site" $PY -B -c '
import sys, cordon_client
assert cordon_client.__file__.startswith(sys.argv[1]), cordon_client.__file__
from cordon_client import Client, CordonError, Overloaded, chat_tools
print(cordon_client.__version__)
' "$T/site") >"$_out" 2>"$_err" || die "the installed client does not import"
grep -qx "$(cat "$SRC/VERSION")" "$_out" || die "cordon_client.__version__ $(cat "$_out") is not VERSION $(cat "$SRC/VERSION")"
grep -q "^version = \"$(cat "$SRC/VERSION")\"" "$SRC/clients/python/pyproject.toml" ||
	die "clients/python/pyproject.toml's version is not VERSION"
pass "cordon_client: $n unit tests (Unix socket and TCP); pip install --no-index from the checkout"
