#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# execution.executor.packages end to end (issue 14): a package that does not
# import ends `cordon run` as a harness error naming it and its ImportError,
# before any program code runs; packages that import are there when the
# program starts, and `cordonc describe` tells the model about them
# (Markdown and JSON).  As root, and again as an unprivileged user (created
# here) when run as root.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
PY=/usr/bin/python3

cp "$SRC/examples/cafe/app.yaml" "$SRC/examples/cafe/tools.yaml" "$T/"
mkdir "$T/bin" && cp "$CORDONC" "$CORDON" "$T/bin/" && chmod 755 "$T" "$T/bin" "$T/bin/"* && chmod 644 "$T/"*.*

# mk NAME LIST: the cafe descriptor with packages: LIST after its preload.
mk() {
	sed "s/^    preload: \[numpy\]\$/    preload: [numpy]\n    packages: $2/" "$T/app.yaml" >"$T/$1.yaml"
	grep -q "^    packages: " "$T/$1.yaml" || die "the cafe descriptor changed shape: no place for packages"
	expect_rc 0 "$CORDONC" compile "$T/$1.yaml" "$T/tools.yaml" -o "$T/$1.cpol"
	chmod 644 "$T/$1.cpol"
}
mk bad '[json, nosuchpkg_xyz]'
mk good '[json, csv]'

# field FILE EXPR: print a Python expression over the result r.
field() { $PY -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

as_user() {
	if [ "$mode" = rootless ]; then setpriv --reuid=cordon-test --regid=cordon-test --clear-groups "$@"
	else "$@"; fi
}

# The program says whether the packages were imported before it, and
# leaves the output the cafe policy requires.  Its first line would show
# in the result's stdout had it run at all.
cat >"$T/prog.py" <<'PYEOF'
import sys
print("program ran")
print("before:", "csv" in sys.modules, "json" in sys.modules, "nosuchpkg_xyz" in sys.modules)
open("/workspace/out/summary.txt", "w").write("ok\n")
PYEOF
chmod 644 "$T/prog.py"

modes_set
for mode in $modes; do
	TMPDIR_RUN=$(mktemp -d "$T/tmp.XXXXXX"); chmod 1777 "$TMPDIR_RUN"
	export TMPDIR="$TMPDIR_RUN"

	# 1. A package that does not import: a harness error (exit 125)
	# naming it and Python's own message, and the program never ran.
	expect_rc 125 as_user "$T/bin/cordon" run --policy "$T/bad.cpol" --code "$T/prog.py"
	cp "$_out" "$T/r.json"
	[ "$(field "$T/r.json" 'r["status"], r["error"]["details"]["where"]')" = "('error', 'exec.harness.preload')" ] ||
		die "$mode: bad package: $(cat "$_out")"
	msg=$(field "$T/r.json" 'r["error"]["message"]')
	case "$msg" in
	*"package nosuchpkg_xyz does not import: ModuleNotFoundError: No module named 'nosuchpkg_xyz'") ;;
	*) die "$mode: the message does not name the package and its error: $msg" ;;
	esac
	case "$msg" in *json*) die "$mode: the message blames json, which imports: $msg" ;; esac
	grep -q "program ran" "$T/r.json" && die "$mode: the program ran although a package failed"
	pass "$mode: a package that does not import ends the run before the program, naming it and its ImportError"

	# 2. Packages that import: the program finds them imported.
	expect_rc 0 as_user "$T/bin/cordon" run --policy "$T/good.cpol" --code "$T/prog.py"
	cp "$_out" "$T/r.json"
	[ "$(field "$T/r.json" 'r["status"]')" = succeeded ] || die "$mode: good packages: $(cat "$_out")"
	[ "$(field "$T/r.json" 'r["stdout"]')" = "program ran
before: True True False" ] || die "$mode: the packages were not imported before the program: $(field "$T/r.json" 'r["stdout"]')"
	pass "$mode: packages that import are imported before the program starts"
done

# 3. describe lists the packages for the model, in Markdown and in JSON,
# and only when there are some.
expect_rc 0 "$CORDONC" describe "$T/good.cpol"
expect_out '- **Packages you can import**: `json`, `csv`: checked to import in this sandbox before your program starts.'
expect_rc 0 "$CORDONC" describe --json "$T/good.cpol"
$PY -c 'import json,sys; p = json.load(open(sys.argv[1]))["python"]; assert p["packages"] == ["json", "csv"], p; assert p["preload"] == ["numpy"], p' "$_out" ||
	die "describe --json: python.packages is not [json, csv]"
expect_rc 0 "$CORDONC" inspect --json "$T/good.cpol"
$PY -c 'import json,sys; assert json.load(open(sys.argv[1]))["executor"]["packages"] == ["json", "csv"]' "$_out" ||
	die "inspect --json: executor.packages is not [json, csv]"
expect_rc 0 "$CORDONC" compile "$T/app.yaml" "$T/tools.yaml" -o "$T/plain.cpol"
expect_rc 0 "$CORDONC" describe "$T/plain.cpol"
grep -q "Packages" "$_out" && die "a policy without packages mentions them"
pass "describe: the packages in Markdown and JSON, and no line without them"

# "and the input file names of the run when given": describe --input names
# them as `cordon run --input` places them (the last path component), in
# Markdown and JSON; a name the sandbox refuses is refused here too.
expect_rc 0 "$CORDONC" describe --input "$T/receipts.json" -i data/prices.csv "$T/good.cpol"
expect_out 'The input files of this run, in `/workspace/work` (the current directory): `receipts.json`, `prices.csv`.'
expect_rc 0 "$CORDONC" describe --json -i "$T/receipts.json" "$T/good.cpol"
$PY -c 'import json,sys; assert json.load(open(sys.argv[1]))["inputs"] == ["receipts.json"]' "$_out" ||
	die "describe --json --input: inputs is not [receipts.json]"
expect_rc 0 "$CORDONC" describe --json "$T/good.cpol"
$PY -c 'import json,sys; assert "inputs" not in json.load(open(sys.argv[1]))' "$_out" ||
	die "describe --json without --input names inputs"
expect_rc 2 "$CORDONC" describe -i x/main.py "$T/good.cpol"; expect_err '"main.py" cannot name an input'
expect_rc 2 "$CORDONC" describe -i a/x.csv -i b/x.csv "$T/good.cpol"; expect_err "x.csv is given twice"
expect_rc 2 "$CORDONC" describe --python -i a.csv "$T/good.cpol"
pass "describe --input: the run's input names in Markdown and JSON, reserved and repeated names refused"

# 3b. cordon serve checks the packages when it warms a sandbox: the pool
# logs the failure naming the package, and an execution (cold, as no warm
# sandbox is ready) ends in the same harness error.
S="$T/serve"; mkdir -p "$S/pol"
expect_rc 0 "$CORDONC" keygen -p "$S/k.pub" -s "$S/k.sec"
expect_rc 0 "$CORDONC" sign -s "$S/k.sec" -o "$S/pol/bad.cpol" "$T/bad.cpol"
"$CORDON" serve --policies "$S/pol" --trusted-key "$S/k.pub" --socket "$S/sock" --pool 1 \
	--work-dir "$S/work" --state-dir "$S/state" >"$S/log" 2>&1 &
spid=$!
i=0
until grep -q "sandbox not prepared.*package nosuchpkg_xyz does not import: ModuleNotFoundError" "$S/log"; do
	i=$((i + 1)); [ $i -lt 600 ] || { kill "$spid"; cat "$S/log"; die "serve: no warm-up failure logged"; }
	kill -0 "$spid" 2>/dev/null || { cat "$S/log"; die "serve ended"; }
	sleep 0.1
done
curl -s --unix-socket "$S/sock" -X POST http://cordon/v1/executions -H 'Content-Type: application/json' \
	-d '{"app":"cafe","code":"print(\"program ran\")"}' >"$T/r.json" || { kill "$spid"; die "serve: POST failed"; }
kill "$spid"; wait "$spid"
[ "$(field "$T/r.json" 'r["status"], r["error"]["details"]["where"]')" = "('error', 'exec.harness.preload')" ] ||
	die "serve: execution with a bad package: $(cat "$T/r.json")"
grep -q "package nosuchpkg_xyz does not import" "$T/r.json" || die "serve: the error does not name the package"
grep -q "program ran" "$T/r.json" && die "serve: the program ran although a package failed"
pass "serve: a package that does not import fails the warm-up (logged) and the execution, naming it"

# 4. The blob: the 56-byte EXECUTOR record (3.4) with packages, the 48-byte
# one without.  Both are minor 5 as cordonc writes them: every compile
# records its provenance (3.5); test_blob.c holds the minor of a blob
# without it to 4 with packages and below without.
exe_size() { $PY "$SRC/tests/cli/blobtool.py" section "$1" executor | cut -d' ' -f2; }
[ "$(exe_size "$T/good.cpol")" = 56 ] || die "a blob with packages has no 56-byte executor record"
[ "$(exe_size "$T/plain.cpol")" = 48 ] || die "a blob without packages has the long executor record"
pass "blob: the long executor record only with packages"
