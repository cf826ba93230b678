#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run-case.sh CORDONC CASE_DIR: lint one case as tests/cli/test_lint.sh does
# and print what its `expect` file holds: every finding's first line and the
# summary line, then "exit N".  Run from anywhere; paths in the output are
# relative to the case directory (../../base/ for the shared inputs).
# Host-dependent rules (CDN203, CDN204) are off except in their own cases.
set -u
cordonc=$1; dir=$2
cd "$dir" || exit 2
name=$(basename "$dir")
app=app.yaml; [ -f app.yaml ] || app=../../base/app.yaml
tools=tools.yaml; [ -f tools.yaml ] || tools=../../base/tools.yaml
set --
case $name in CDN203*|CDN204*) ;; *) set -- --rule CDN203=off --rule CDN204=off ;; esac
if [ -f args ]; then
	while IFS= read -r a; do [ -n "$a" ] && set -- "$@" "$a"; done <args
fi
out=$(mktemp) && err=$(mktemp) || exit 2
"$cordonc" lint "$@" "$app" "$tools" >"$out" 2>"$err"
rc=$?
grep -E '^[^ ].*: (error|warning|note): .*\[CDN[0-9]{3}\]$|^cordonc lint: ' "$out"
echo "exit $rc"
[ -s "$err" ] && sed 's/^/stderr: /' "$err"
rm -f "$out" "$err"
exit 0
