#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Provenance (format 3.5): cordonc compile records the SHA-256 of every
# source and the lint verdict; inspect shows them (the hashes checked here
# against sha256sum, not against pasted values); verify --sources passes
# on the same files and reports a changed descriptor, a changed policy
# file, a missing and an extra file, exit 1; the compile is the same bytes
# from another checkout; cordon run --require-lint-clean refuses a blob
# whose verdict has errors (as root and as an unprivileged user) and a blob
# without a verdict.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
PY=/usr/bin/python3
BT="$PY $SRC/tests/cli/blobtool.py"

mkdir "$T/a" "$T/pol"
cp "$SRC/examples/cafe/app.yaml" "$SRC/examples/cafe/tools.yaml" "$SRC/examples/cafe/user_code.py" \
	"$SRC/examples/cafe/receipts.json" "$T/a/"
cp "$SRC/policies/"*.policy "$T/pol/"
cd "$T/a" || die "cd"
expect_rc 0 "$CORDONC" compile -I "$T/pol" app.yaml tools.yaml -o "$T/c.cpol"

# inspect: every source with the digest sha256sum gives, the verdict.
expect_rc 0 "$CORDONC" inspect --json "$T/c.cpol"
cp "$_out" "$T/c.json"
$PY - "$T/c.json" "$T/a" "$T/pol" <<'PYEOF' || die "inspect --json provenance does not match the files"
import hashlib, json, os, sys
p = json.load(open(sys.argv[1]))["provenance"]
roles = [s["role"] for s in p["sources"]]
assert roles[0] == "descriptor" and roles[1] == "inventory", roles
assert set(roles[2:]) == {"policy"}, roles
for s in p["sources"]:
    base = sys.argv[2] if s["role"] != "policy" else sys.argv[3]
    want = hashlib.sha256(open(os.path.join(base, s["name"]), "rb").read()).hexdigest()
    assert s["sha256"] == want, (s, want)
assert [s["name"] for s in p["sources"][:2]] == ["app.yaml", "tools.yaml"], p["sources"]
lint = p["lint"]
assert lint["catalogue"] and set(lint["counts"]) == {"error", "warning", "note"}, lint
assert lint["suppressed"] >= len(lint["suppressedRules"]), lint
PYEOF
expect_rc 0 "$CORDONC" inspect "$T/c.cpol"
expect_out "format 3.5"
expect_out "descriptor $(sha256sum app.yaml | cut -c1-64)  app.yaml"
expect_out "inventory  $(sha256sum tools.yaml | cut -c1-64)  tools.yaml"
expect_out "lint (catalogue "
[ "$($BT section "$T/c.cpol" sources | cut -d' ' -f3)" -ge 3 ] || die "sources section count"
pass "compile records the sources and the verdict; inspect shows them"

# Reproducible: the same sources from another directory give the same bytes.
mkdir "$T/b" && cp app.yaml tools.yaml "$T/b/"
(cd "$T/b" && "$CORDONC" compile -I "$T/pol" app.yaml tools.yaml -o "$T/b.cpol") >/dev/null 2>&1 || die "compile b"
cmp -s "$T/c.cpol" "$T/b.cpol" || die "the same sources in another directory gave another blob"
"$CORDONC" compile -I "$T/pol" "$T/a/app.yaml" "$T/a/tools.yaml" -o "$T/abs.cpol" >/dev/null 2>&1 || die "compile abs"
cmp -s "$T/c.cpol" "$T/abs.cpol" || die "absolute paths gave another blob"
pass "same sources, same bytes, wherever they lie"

# verify --sources: exactly these.
expect_rc 0 "$CORDONC" verify "$T/c.cpol" --sources -I "$T/pol" app.yaml tools.yaml
expect_out "matched    descriptor app.yaml"
expect_out "matched    inventory  tools.yaml"
expect_out "built from exactly these"
# A policy file given outright counts as that source.
expect_rc 0 "$CORDONC" verify "$T/c.cpol" --sources app.yaml tools.yaml "$T/pol/base.policy" -I "$T/pol"
expect_out "matched    policy     base.policy ($T/pol/base.policy)"

# An older descriptor: the blob came from it, not from today's file.
cp app.yaml app.yaml.orig
sed 's/^    timeout: 30s$/    timeout: 20s/' app.yaml.orig >app.yaml
cmp -s app.yaml app.yaml.orig && die "the descriptor edit changed nothing"
expect_rc 1 "$CORDONC" verify "$T/c.cpol" --sources -I "$T/pol" app.yaml tools.yaml
expect_out "changed    descriptor app.yaml: recorded sha256 $(sha256sum app.yaml.orig | cut -c1-64), file has $(sha256sum app.yaml | cut -c1-64)"
expect_out "1 of "
cp app.yaml.orig app.yaml

# A policy file changed on the policy path.
cp "$T/pol/base.policy" "$T/base.orig"
echo "# a comment" >>"$T/pol/base.policy"
expect_rc 1 "$CORDONC" verify "$T/c.cpol" --sources -I "$T/pol" app.yaml tools.yaml
expect_out "changed    policy     base.policy (found at $T/pol/base.policy)"
cp "$T/base.orig" "$T/pol/base.policy"

# Missing inventory, extra file.
expect_rc 1 "$CORDONC" verify "$T/c.cpol" --sources -I "$T/pol" app.yaml receipts.json
expect_out "missing    inventory  tools.yaml"
expect_out "extra      inventory  receipts.json"
expect_rc 2 "$CORDONC" verify "$T/c.cpol" app.yaml
pass "verify --sources: matched, changed descriptor, changed policy file, missing, extra"

# A blob without provenance: a 3.4 blob, made by hand from the provenance
# one is not possible (its bytes differ), so the one the unit tests write.
if [ -f "$SRC/tests/fuzz/corpus/blob/cafe.cpol" ]; then
	expect_rc 1 "$CORDONC" verify "$SRC/tests/fuzz/corpus/blob/cafe.cpol" --sources app.yaml tools.yaml
	expect_err "records no sources"
fi

# --require-lint-clean: a clean blob runs, one with an error-level finding
# (a credential in the environment, which still compiles) is refused before
# anything runs, naming the counts; an old blob without a verdict too.
sed 's/^      LANG: C.UTF-8$/      LANG: C.UTF-8\n      DEPLOY_ID: AKIAQ3X7L2M9V4T8Z1K6/' app.yaml >bad.yaml
grep -q DEPLOY_ID bad.yaml || die "bad.yaml: the cafe's env moved"
expect_rc 0 "$CORDONC" compile -I "$T/pol" bad.yaml tools.yaml -o "$T/bad.cpol"
expect_rc 0 "$CORDONC" inspect --json "$T/bad.cpol"
[ "$($PY -c 'import json,sys; print(json.load(sys.stdin)["provenance"]["lint"]["counts"]["error"])' <"$_out")" -ge 1 ] \
	|| die "bad.cpol records no lint error"
mkdir "$T/bin" && cp "$CORDON" "$T/bin/" && chmod 755 "$T" "$T/a" "$T/bin" "$T/bin/cordon"
chmod 644 "$T/a/"* "$T/c.cpol" "$T/bad.cpol"
field() { $PY -c 'import json,sys; r=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1" <"$_out"; }
any=$($PY -c 'import json,sys; c=json.load(open(sys.argv[1]))["provenance"]["lint"]["counts"]; print(sum(c.values()))' \
	"$T/c.json")
modes_set
for mode in $modes; do
	export TMPDIR="$T/tmp-$mode"; mkdir -m 1777 "$TMPDIR"
	expect_rc 0 as_user "$T/bin/cordon" run --policy "$T/c.cpol" --code user_code.py --input receipts.json \
		--require-lint-clean
	[ "$(field 'r["status"]')" = succeeded ] || die "$mode: the clean blob did not run"
	expect_rc 125 as_user "$T/bin/cordon" run --policy "$T/bad.cpol" --code user_code.py --input receipts.json \
		--require-lint-clean
	expect_out "--require-lint-clean: the policy's recorded lint verdict"
	expect_out "has 1 error, "
	[ "$(field 'r["exitCode"]')" = None ] || die "$mode: the refused blob ran"
	# Without the flag the same blob runs: the verdict is information.
	expect_rc 0 as_user "$T/bin/cordon" run --policy "$T/bad.cpol" --code user_code.py --input receipts.json
	# =note refuses any finding at all: the clean blob runs exactly when
	# its recorded counts are all zero.
	want=0; [ "$any" -gt 0 ] && want=125
	expect_rc $want as_user "$T/bin/cordon" run --policy "$T/c.cpol" --code user_code.py --input receipts.json \
		--require-lint-clean=note
	[ $want -eq 0 ] || expect_out "--require-lint-clean=note: the policy's recorded lint verdict"
	expect_rc 2 as_user "$T/bin/cordon" run --policy "$T/c.cpol" --code user_code.py --require-lint-clean=loud
	expect_err "--require-lint-clean takes error, warning or note"
	if [ -f "$SRC/tests/fuzz/corpus/blob/cafe.cpol" ]; then
		cp "$SRC/tests/fuzz/corpus/blob/cafe.cpol" "$T/old.cpol"; chmod 644 "$T/old.cpol"
		expect_rc 125 as_user "$T/bin/cordon" run --policy "$T/old.cpol" --code user_code.py --require-lint-clean
		expect_out "records no lint verdict (format 3."
	fi
	pass "$mode: --require-lint-clean runs a clean blob, refuses errors and a blob without a verdict"
done
