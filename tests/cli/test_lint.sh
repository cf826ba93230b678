#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cordonc lint and cordonc explain: every rule at its exact line and column
# (tests/lint/cases), silence on safe descriptors (tests/lint/good and the
# examples), SARIF valid against the OASIS schema, the JSON report,
# suppressions, baselines, exit statuses, and docs/rules.md in step with the
# catalogue.  tests/lint/README.md describes the cases.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
L="$SRC/tests/lint"
SCHEMA="$L/sarif-2.1.0.schema.json"
# Host-dependent rules (the account database) stay out of exact checks.
HOSTOFF="--rule CDN203=off --rule CDN204=off"

# Every case, against its expect file.
n=0
for d in "$L"/cases/*/; do
	name=$(basename "$d")
	sh "$L/run-case.sh" "$CORDONC" "$d" >"$T/got" 2>&1
	if ! cmp -s "$T/got" "$d/expect"; then
		diff -u "$d/expect" "$T/got" | head -30
		die "case $name differs from its expect file"
	fi
	n=$((n + 1))
done
# Each rule of the catalogue has a trigger and a clean case (CDN0xx: supp-*).
for id in $("$CORDONC" explain --all | sed -n 's/^\(CDN[1-9][0-9][0-9]\) .*/\1/p'); do
	[ -f "$L/cases/$id-trigger/expect" ] && [ -f "$L/cases/$id-clean/expect" ] || die "rule $id has no trigger/clean case"
	grep -q "\[$id\]\$" "$L/cases/$id-trigger/expect" || die "$id-trigger does not fire $id"
	grep -q '^cordonc lint: 0 errors, 0 warnings, 0 notes (passed)$' "$L/cases/$id-clean/expect" ||
		die "$id-clean is not clean"
done
pass "$n lint cases, each at its line and column"

# Safe descriptors: nothing at warning level or above.
for g in "$L"/good/*/ $(ls -d "$SRC"/examples/*/ | while read -r e; do [ -f "$e/app.yaml" ] && echo "$e"; done); do
	expect_rc 0 "$CORDONC" lint --fail-level warning "$g/app.yaml" "$g/tools.yaml"
	grep -qE ': (error|warning): ' "$_out" && die "a finding in safe descriptor $g"
done
pass "safe descriptors and the examples are clean"

# The done-when check: a docker socket mount, exact place, exit 1.
C303="$L/cases/CDN303-trigger"
expect_rc 1 "$CORDONC" lint $HOSTOFF "$C303/app.yaml" "$L/base/tools.yaml"
expect_out "$C303/app.yaml:22:19: error: host path /var/run/docker.sock is a container runtime socket: root on the host [CDN303]"
expect_out "          - { source: /var/run/docker.sock, target: /run/docker.sock }"
expect_out "                      ^"
expect_out "    hint: Remove the mount"
pass "docker socket: line, column, caret, hint, exit 1"

# SARIF: schema-valid with findings, with a suppressed one, and empty.
( cd "$C303" && "$CORDONC" lint $HOSTOFF -f sarif app.yaml ../../base/tools.yaml >"$T/a.sarif" )
[ $? -eq 1 ] || die "sarif run: want exit 1"
python3 "$L/check_sarif.py" "$SCHEMA" "$T/a.sarif" 3 || die "SARIF with findings"
# cJSON puts a tab after each colon.
has() { grep -qE "\"$1\":[[:space:]]*$2" "$3"; }
has uri '"app.yaml"' "$T/a.sarif" || die "SARIF uri is not the relative path"
has startLine 22, "$T/a.sarif" && has startColumn 19, "$T/a.sarif" && has endColumn 39 "$T/a.sarif" ||
	die "SARIF region of the socket mount"
has security-severity '"9.8"' "$T/a.sarif" || die "SARIF security-severity"
# The catalogue's version (lint/catalogue_version.c) rides in the driver.
has catalogueVersion '"[0-9A-Za-z.-]+"' "$T/a.sarif" || die "SARIF lacks the catalogue version"
( cd "$L/cases/supp-multi" && "$CORDONC" lint $HOSTOFF -f sarif app.yaml ../../base/tools.yaml >"$T/s.sarif" )
python3 "$L/check_sarif.py" "$SCHEMA" "$T/s.sarif" 3 || die "SARIF with suppressions"
has justification '"builder, SEC-12"' "$T/s.sarif" || die "SARIF suppression justification"
expect_rc 0 "$CORDONC" lint $HOSTOFF -f sarif -o "$T/e.sarif" "$L/base/app.yaml" "$L/base/tools.yaml"
python3 "$L/check_sarif.py" "$SCHEMA" "$T/e.sarif" 0 || die "empty SARIF"
has results '\[\]' "$T/e.sarif" || die "empty SARIF has no results array"
# A broken document must fail the checker: the check can fail.
sed 's/"startLine"/"startLigne"/' "$T/a.sarif" >"$T/bad.sarif"
python3 "$L/check_sarif.py" "$SCHEMA" "$T/bad.sarif" >/dev/null && die "checker accepted a broken SARIF"
pass "SARIF validates against the 2.1.0 schema"

# JSON: summary, findings and the suppressed list with reasons.
( cd "$L/cases/supp-multi" && "$CORDONC" lint $HOSTOFF -f json app.yaml ../../base/tools.yaml >"$T/m.json" )
schema_ok lint "$T/m.json"
python3 - "$T/m.json" <<'PY' || die "JSON report"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "cordon-lint/1", d["schema"]
assert d["failed"] is True and d["fail_level"] == "warning"
assert d["summary"] == {"error": 1, "warning": 0, "note": 0, "suppressed": 2, "baselined": 0}, d["summary"]
f = d["findings"][0]
assert (f["rule"], f["file"], f["line"], f["column"], f["severity"]) == ("CDN302", "app.yaml", 23, 19, "error"), f
assert f["end_line"] == 23 and f["end_column"] == 24 and len(f["fingerprint"]) == 16
s = sorted(x["rule"] for x in d["suppressed"])
assert s == ["CDN301", "CDN303"], s
assert all(x["suppression"]["reason"] == "builder, SEC-12" and x["suppression"]["line"] == 22 for x in d["suppressed"])
assert d["baselined"] == []
PY
# A block scalar's region runs to the end of its last content line.
( cd "$L/cases/CDN602-trigger" && "$CORDONC" lint $HOSTOFF -f json app.yaml ../../base/tools.yaml >"$T/b.json" )
schema_ok lint "$T/b.json"
python3 - "$T/b.json" <<'PY' || die "block scalar region"
import json, sys
f = [x for x in json.load(open(sys.argv[1]))["findings"] if "SIGNING_PEM" in x["message"]][0]
assert (f["line"], f["column"], f["end_line"], f["end_column"]) == (22, 20, 25, 42), f
PY
pass "JSON report"

# Baseline round trip: known findings pass, lines may move, new ones fail.
cp "$C303/app.yaml" "$T/app.yaml"
expect_rc 0 "$CORDONC" lint $HOSTOFF --write-baseline "$T/base.json" "$T/app.yaml" "$L/base/tools.yaml"
expect_err "wrote 3 findings"
expect_rc 0 "$CORDONC" lint $HOSTOFF --baseline "$T/base.json" "$T/app.yaml" "$L/base/tools.yaml"
expect_out "3 in the baseline (passed)"
# the baselined list of cordon-lint/1, held to its schema
"$CORDONC" lint $HOSTOFF -f json --baseline "$T/base.json" "$T/app.yaml" "$L/base/tools.yaml" >"$T/bl.json"
schema_ok lint "$T/bl.json"
/usr/bin/python3 -c 'import json,sys; assert len(json.load(open(sys.argv[1]))["baselined"]) == 3' "$T/bl.json" ||
	die "lint -f json --baseline: not 3 baselined"
{ printf '# two lines more\n# move every finding down\n'; cat "$C303/app.yaml"; } >"$T/app.yaml"
expect_rc 0 "$CORDONC" lint $HOSTOFF --baseline "$T/base.json" "$T/app.yaml" "$L/base/tools.yaml"
expect_out "3 in the baseline (passed)"
sed 's|/srv/ci/podman.sock|/srv/ci/crio.sock|' "$T/app.yaml" >"$T/app2.yaml" && mv "$T/app2.yaml" "$T/app.yaml"
expect_rc 1 "$CORDONC" lint $HOSTOFF --baseline "$T/base.json" "$T/app.yaml" "$L/base/tools.yaml"
expect_out "app.yaml:26:19: error: host path /srv/ci/crio.sock is a container runtime socket"
expect_out "1 error, 0 warnings, 0 notes; 2 in the baseline"
expect_rc 1 "$CORDONC" lint $HOSTOFF -f sarif --baseline "$T/base.json" "$T/app.yaml" "$L/base/tools.yaml"
python3 "$L/check_sarif.py" "$SCHEMA" "$_out" 1 || die "SARIF with a baseline"
printf '{"schema": "cordon-lint-baseline/1", "findings": [{"rule": "CDN303"}]}' >"$T/broken.json"
expect_rc 2 "$CORDONC" lint --baseline "$T/broken.json" "$T/app.yaml" "$L/base/tools.yaml"
expect_err "entry 0 has no rule or fingerprint"
expect_rc 2 "$CORDONC" lint --baseline "$T/none.json" "$T/app.yaml" "$L/base/tools.yaml"
pass "baseline round trip"

# Fail levels, overrides, output file, usage and input errors.
S="$L/cases/CDN401-trigger"
expect_rc 0 "$CORDONC" lint $HOSTOFF "$S/app.yaml" "$L/base/tools.yaml"
expect_rc 1 "$CORDONC" lint $HOSTOFF --fail-level note "$S/app.yaml" "$L/base/tools.yaml"
expect_rc 0 "$CORDONC" lint $HOSTOFF --fail-level error "$L/cases/CDN101-trigger/app.yaml" "$L/base/tools.yaml"
expect_rc 0 "$CORDONC" lint $HOSTOFF --rule CDN303=off "$C303/app.yaml" "$L/base/tools.yaml"
expect_out "0 errors, 0 warnings, 0 notes (passed)"
expect_rc 2 "$CORDONC" lint --rule CDN999=off "$C303/app.yaml" "$L/base/tools.yaml"
expect_rc 2 "$CORDONC" lint --rule CDN303=loud "$C303/app.yaml" "$L/base/tools.yaml"
expect_rc 2 "$CORDONC" lint --format xml "$C303/app.yaml" "$L/base/tools.yaml"
expect_rc 2 "$CORDONC" lint --fail-level off "$C303/app.yaml" "$L/base/tools.yaml"
expect_rc 2 "$CORDONC" lint "$C303/app.yaml"; expect_err "at least one tool inventory"
expect_rc 2 "$CORDONC" lint "$T/missing.yaml" "$L/base/tools.yaml"; expect_err "cannot read"
printf 'version: 1\napp: x\nexecution: { runtime: { timout: 30s } }\n' >"$T/broken.yaml"
expect_rc 2 "$CORDONC" lint "$T/broken.yaml" "$L/base/tools.yaml"
expect_err "broken.yaml:3:25: error: execution.runtime: unknown key 'timout'"
expect_err "the inputs do not compile (1 error); nothing was linted"
expect_rc 1 "$CORDONC" lint $HOSTOFF -o "$T/report.txt" "$C303/app.yaml" "$L/base/tools.yaml"
[ -s "$_out" ] && die "-o still wrote to standard output"
grep -q '\[CDN303\]$' "$T/report.txt" || die "-o file lacks the findings"
expect_rc 0 "$CORDONC" lint --help; expect_out "usage: cordonc lint"
pass "fail levels, --rule, -o, usage and input errors"

# explain, and docs/rules.md generated from the catalogue.
expect_rc 0 "$CORDONC" explain CDN303; expect_out "CDN303 container-runtime-socket (error, security-severity 9.8)"
expect_out "Why it matters:"
expect_rc 0 "$CORDONC" explain cdn303
expect_rc 0 "$CORDONC" lint --explain CDN601; expect_out "TOKENIZERS_PARALLELISM"
expect_rc 2 "$CORDONC" explain CDN999; expect_err "unknown rule 'CDN999'"
expect_rc 2 "$CORDONC" explain
expect_rc 0 "$CORDONC" explain --help; expect_out "usage: cordonc explain"
"$CORDONC" explain --all --markdown >"$T/rules.md" || die "explain --all --markdown"
cmp -s "$T/rules.md" "$SRC/docs/rules.md" ||
	die "docs/rules.md is not the catalogue's: $CORDONC explain --all --markdown >docs/rules.md"
pass "explain, and docs/rules.md equals the catalogue"

# The pre-commit hook judges the staged descriptor, not the working tree.
command -v git >/dev/null 2>&1 || { pass "pre-commit hook skipped: no git"; exit 0; }
R="$T/repo"
mkdir -p "$R/policy" && cp "$L/base/app.yaml" "$L/base/tools.yaml" "$R/policy/"
(
	cd "$R" && git init -q . && git add policy &&
	CORDONC="$CORDONC" CORDON_LINT_ARGS="$HOSTOFF" sh "$SRC/scripts/pre-commit"
) >"$_out" 2>"$_err" || die "hook refused a clean descriptor"
cp "$C303/app.yaml" "$R/policy/app.yaml"
( cd "$R" && git add policy && CORDONC="$CORDONC" CORDON_LINT_ARGS="$HOSTOFF" sh "$SRC/scripts/pre-commit" ) \
	>"$_out" 2>"$_err" && die "hook let a docker socket mount through"
grep -q 'policy/app.yaml:22:19: error: .*\[CDN303\]' "$_out" || die "hook output lacks the finding"
# Stage the clean file again but leave the socket in the working tree.
( cd "$R" && cp "$L/base/app.yaml" policy/app.yaml && git add policy && cp "$C303/app.yaml" policy/app.yaml &&
	CORDONC="$CORDONC" CORDON_LINT_ARGS="$HOSTOFF" sh "$SRC/scripts/pre-commit" ) >"$_out" 2>"$_err" ||
	die "hook judged the working tree instead of the index"
pass "pre-commit hook"
