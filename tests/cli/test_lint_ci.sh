#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cordonc lint where CI lives (issue 17): the JUnit, checkstyle, GitLab Code
# Quality and GitHub Actions outputs checked against their schemas or
# documented shape (tests/lint/fixtures/), colour only at a terminal,
# compiled blobs refused, rules named by name, and .cordonlint.yaml: every
# key, bad keys and values located, upward discovery, --config,
# --no-config, flags over the file.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
L="$SRC/tests/lint"
FX="$L/fixtures"
HOSTOFF="--rule CDN203=off --rule CDN204=off"
C303="$L/cases/CDN303-trigger"
command -v xmllint >/dev/null 2>&1 || die "xmllint missing: scripts/install-deps installs libxml2-utils"

# lint_in DIR ARGS...: lint from DIR (relative paths in the report), with
# no config file found by accident.
lint_in() { d=$1; shift; ( cd "$d" && "$CORDONC" lint --no-config $HOSTOFF "$@" ); }
# findings FILE.json: "rule file line col severity fingerprint" per active finding.
findings() {
	python3 -c 'import json,sys
for f in json.load(open(sys.argv[1]))["findings"]:
    print(f["rule"], f["file"], f["line"], f["column"], f["severity"], f["fingerprint"])' "$1"
}

# --- JUnit -------------------------------------------------------------------
lint_in "$C303" -f junit app.yaml ../../base/tools.yaml >"$T/j.xml"; [ $? -eq 1 ] || die "junit: want exit 1"
xmllint --noout --schema "$FX/junit.xsd" "$T/j.xml" 2>"$T/xl" || { cat "$T/xl"; die "JUnit with findings"; }
lint_in "$C303" -f json app.yaml ../../base/tools.yaml >"$T/j.json"
nfail=$(grep -c '<failure ' "$T/j.xml"); nfind=$(findings "$T/j.json" | wc -l)
[ "$nfail" -eq "$nfind" ] && [ "$nfind" -gt 0 ] || die "junit: $nfail failures for $nfind findings"
grep -q '<testsuite name="cordonc lint" tests="[0-9]*" failures="'"$nfind"'"' "$T/j.xml" || die "junit: suite counts"
[ "$(grep -c '<testsuite ' "$T/j.xml")" -eq 1 ] || die "junit: not one testsuite"
grep -q 'classname="app.yaml" name="CDN303 container-runtime-socket at 22:19"' "$T/j.xml" || die "junit: case name"
# Below the fail level: a passing case, no failure element.
lint_in "$C303" -f junit --fail-level error --rule CDN303=warning app.yaml ../../base/tools.yaml >"$T/jw.xml" ||
	die "junit: warnings under --fail-level error must pass"
xmllint --noout --schema "$FX/junit.xsd" "$T/jw.xml" 2>/dev/null || die "JUnit below the fail level"
grep -q '<failure' "$T/jw.xml" && die "junit: failure below the fail level"
grep -q '<system-out>app.yaml:22:19: warning: ' "$T/jw.xml" || die "junit: finding below the fail level not shown"
# Suppressed findings are skipped with their reason; a clean run is not empty.
lint_in "$L/cases/supp-multi" -f junit app.yaml ../../base/tools.yaml >"$T/js.xml"
xmllint --noout --schema "$FX/junit.xsd" "$T/js.xml" 2>/dev/null || die "JUnit with suppressions"
[ "$(grep -c '<skipped>suppressed: builder, SEC-12</skipped>' "$T/js.xml")" -eq 2 ] || die "junit: skipped reasons"
lint_in "$L/base" -f junit app.yaml tools.yaml >"$T/je.xml" || die "junit: clean run must exit 0"
xmllint --noout --schema "$FX/junit.xsd" "$T/je.xml" 2>/dev/null || die "empty JUnit"
grep -q 'failures="0"' "$T/je.xml" && grep -q 'classname="cordon.rules" name="CDN303 container-runtime-socket"' "$T/je.xml" ||
	die "junit: a clean run lists the rules that passed"
grep -q 'name="CDN203 ' "$T/je.xml" && die "junit: a rule turned off is listed"
# The check can fail: a case without a name is refused.
sed '0,/ name="CDN303/s// nom="CDN303/' "$T/j.xml" >"$T/bad.xml"
xmllint --noout --schema "$FX/junit.xsd" "$T/bad.xml" 2>/dev/null && die "junit.xsd accepted a broken document"
pass "JUnit valid against the Jenkins/Ant junit schema: failures, passes, skips"

# --- checkstyle --------------------------------------------------------------
lint_in "$C303" -f checkstyle app.yaml ../../base/tools.yaml >"$T/c.xml"; [ $? -eq 1 ] || die "checkstyle: exit"
xmllint --noout --schema "$FX/checkstyle.xsd" "$T/c.xml" 2>/dev/null || die "checkstyle with findings"
[ "$(grep -c '<error line=' "$T/c.xml")" -eq "$nfind" ] || die "checkstyle: one error per finding"
grep -q '<error line="22" column="19" severity="error" message="host path /var/run/docker.sock' "$T/c.xml" ||
	die "checkstyle: place and severity"
lint_in "$L/cases/CDN401-trigger" -f checkstyle app.yaml ../../base/tools.yaml >"$T/cn.xml"
xmllint --noout --schema "$FX/checkstyle.xsd" "$T/cn.xml" 2>/dev/null || die "checkstyle with a note"
grep -q 'severity="info"' "$T/cn.xml" || die "checkstyle: a note is info"
lint_in "$L/base" -f checkstyle app.yaml tools.yaml >"$T/ce.xml" || die "checkstyle: clean exit"
xmllint --noout --schema "$FX/checkstyle.xsd" "$T/ce.xml" 2>/dev/null || die "empty checkstyle"
sed 's/severity="error"/severity="fatal"/' "$T/c.xml" >"$T/bad.xml"
xmllint --noout --schema "$FX/checkstyle.xsd" "$T/bad.xml" 2>/dev/null && die "checkstyle.xsd accepted a bad severity"
pass "checkstyle valid against its schema"

# --- GitLab Code Quality -----------------------------------------------------
gl_check() {
	python3 - "$FX/gitlab-codequality.schema.json" "$@" <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
jsonschema.Draft4Validator(schema).validate(doc)
if len(sys.argv) > 3:
    # Each issue is a finding of the JSON report: same rule, place, fingerprint.
    want = sorted((f["rule"], f["file"], f["line"], f["fingerprint"],
                   {"error": "critical", "warning": "major", "note": "info"}[f["severity"]])
                  for f in json.load(open(sys.argv[3]))["findings"])
    got = sorted((i["check_name"], i["location"]["path"], i["location"]["lines"]["begin"], i["fingerprint"],
                  i["severity"]) for i in doc)
    assert got == want, (got, want)
    assert len({i["fingerprint"] for i in doc}) == len(doc), "fingerprints not unique"
PY
}
lint_in "$C303" -f gitlab app.yaml ../../base/tools.yaml >"$T/g.json"; [ $? -eq 1 ] || die "gitlab: exit"
gl_check "$T/g.json" "$T/j.json" || die "GitLab report with findings"
lint_in "$L/cases/CDN401-trigger" -f gitlab app.yaml ../../base/tools.yaml >"$T/gn.json"
lint_in "$L/cases/CDN401-trigger" -f json app.yaml ../../base/tools.yaml >"$T/gn-j.json"
gl_check "$T/gn.json" "$T/gn-j.json" || die "GitLab report with a note"
lint_in "$L/base" -f gitlab app.yaml tools.yaml >"$T/ge.json" || die "gitlab: clean exit"
gl_check "$T/ge.json" && [ "$(tr -d ' \n\t' <"$T/ge.json")" = "[]" ] || die "empty GitLab report"
# Fingerprints are the SARIF ones, and survive lines moving.
lint_in "$C303" -f sarif app.yaml ../../base/tools.yaml >"$T/g.sarif"
python3 - "$T/g.json" "$T/g.sarif" <<'PY' || die "gitlab fingerprints are not SARIF's"
import json, sys
g = sorted(i["fingerprint"] for i in json.load(open(sys.argv[1])))
s = sorted(r["partialFingerprints"]["cordonFingerprint/v1"] for r in json.load(open(sys.argv[2]))["runs"][0]["results"])
assert g == s, (g, s)
PY
mkdir -p "$T/mv" && { printf '# moved\n# down\n'; cat "$C303/app.yaml"; } >"$T/mv/app.yaml"
( cd "$T/mv" && "$CORDONC" lint --no-config $HOSTOFF -f gitlab app.yaml "$L/base/tools.yaml" >"$T/gm.json" )
python3 -c 'import json,sys
a=[i["fingerprint"] for i in json.load(open(sys.argv[1]))]; b=[i["fingerprint"] for i in json.load(open(sys.argv[2]))]
assert a == b and a, (a, b)' "$T/g.json" "$T/gm.json" || die "gitlab fingerprints move with lines"
printf '[{"description": "x", "check_name": "c", "fingerprint": "f", "severity": "high", "location": {"path": "a", "lines": {"begin": 1}}}]' >"$T/bad.json"
gl_check "$T/bad.json" 2>/dev/null && die "the GitLab schema accepted severity high"
pass "GitLab Code Quality valid, fingerprints SARIF's and stable"

# --- GitHub Actions workflow commands ----------------------------------------
# A file name and a mount source with every character GitHub escapes.
W="$T/gh"; mkdir -p "$W"
sed 's|/srv/ci/podman.sock|"/srv/c%i,x:y/podman.sock"|' "$C303/app.yaml" >"$W/we%ird,na:me.yaml"
grep -q 'c%i,x:y' "$W/we%ird,na:me.yaml" || die "github fixture: no odd mount source"
lint_in "$W" -f github "we%ird,na:me.yaml" "$L/base/tools.yaml" >"$T/gh.txt"; [ $? -eq 1 ] || die "github: exit"
lint_in "$W" -f json "we%ird,na:me.yaml" "$L/base/tools.yaml" >"$T/gh.json"
lint_in "$L/cases/CDN401-trigger" -f github app.yaml ../../base/tools.yaml >"$T/ghn.txt"
python3 - "$T/gh.txt" "$T/gh.json" "$T/ghn.txt" <<'PY' || die "github workflow commands"
import json, re, sys
# The documented shape, one command a line; a property value holds no raw
# ',' ':' CR or LF, the message no CR or LF, and every '%' starts an escape.
LINE = re.compile(r"^::(error|warning|notice) file=([^,:\r\n]+),line=([1-9]\d*),col=([1-9]\d*),"
                  r"endLine=([1-9]\d*),endColumn=([1-9]\d*),title=([^,:\r\n]+)::([^\r\n]*)$")
ESC = {"%25": "%", "%0D": "\r", "%0A": "\n", "%3A": ":", "%2C": ","}
def unescape(s, prop):
    allowed = ESC if prop else {k: v for k, v in ESC.items() if k in ("%25", "%0D", "%0A")}
    assert re.fullmatch(r"([^%]|%(25|0D|0A|3A|2C))*" if prop else r"([^%]|%(25|0D|0A))*", s), s
    return re.sub(r"%(25|0D|0A|3A|2C)", lambda m: allowed[m.group(0)], s)
def parse(path):
    out = []
    for raw in open(path, newline="").read().split("\n")[:-1]:
        m = LINE.match(raw)
        assert m, "bad line: %r" % raw
        out.append(m)
    return out
cmds = parse(sys.argv[1])
want = json.load(open(sys.argv[2]))["findings"]
assert len(cmds) == len(want) == 3, (len(cmds), len(want))
for m, f in zip(cmds, want):
    assert m.group(1) == {"error": "error", "warning": "warning", "note": "notice"}[f["severity"]]
    assert unescape(m.group(2), True) == f["file"] == "we%ird,na:me.yaml", m.group(2)
    assert [int(m.group(i)) for i in (3, 4, 5, 6)] == [f["line"], f["column"], f["end_line"], f["end_column"]]
    assert unescape(m.group(7), True) == f["rule"] + " " + f["name"]
    assert unescape(m.group(8), False) == "%s [%s]\nhint: %s" % (f["message"], f["rule"], f["hint"])
assert any("c%i,x:y" in f["message"] for f in want)
notes = parse(sys.argv[3])
assert notes and all(m.group(1) == "notice" for m in notes)
PY
lint_in "$L/base" -f github app.yaml tools.yaml >"$T/ghe.txt" || die "github: clean exit"
[ -s "$T/ghe.txt" ] && die "github: a clean run printed something"
pass "GitHub workflow commands: shape of every line, escaping round trip, notice for notes"

# --- colour ------------------------------------------------------------------
ESCB=$(printf '\033[')
lint_in "$C303" app.yaml ../../base/tools.yaml >"$T/plain.txt"
grep -qF "$ESCB" "$T/plain.txt" && die "colour into a pipe"
lint_in "$C303" --color=always app.yaml ../../base/tools.yaml >"$T/col.txt"
grep -qF "${ESCB}1;31merror:" "$T/col.txt" || die "--color=always has no red error"
# Without the escapes it is the plain report.
sed 's/\x1b\[[0-9;]*m//g' "$T/col.txt" | cmp -s - "$T/plain.txt" || die "colour changed the text"
NO_COLOR=1 lint_in "$C303" --color=always app.yaml ../../base/tools.yaml | grep -qF "$ESCB" ||
	die "--color=always must beat NO_COLOR"
if command -v script >/dev/null 2>&1; then
	# A terminal: colour unless NO_COLOR or --color=never.
	tty_lint() { script -qec "cd '$C303' && $* '$CORDONC' lint --no-config $HOSTOFF app.yaml ../../base/tools.yaml" /dev/null; }
	tty_lint "" | grep -qF "$ESCB" || die "no colour at a terminal"
	tty_lint "NO_COLOR=1" | grep -qF "$ESCB" && die "colour with NO_COLOR=1"
	tty_lint "NO_COLOR=" | grep -qF "$ESCB" || die "an empty NO_COLOR must not turn colour off"
	script -qec "cd '$C303' && '$CORDONC' lint --no-config --color=never $HOSTOFF app.yaml ../../base/tools.yaml" /dev/null |
		grep -qF "$ESCB" && die "colour with --color=never"
	script -qec "cd '$C303' && '$CORDONC' lint --no-config $HOSTOFF -o '$T/o.txt' app.yaml ../../base/tools.yaml" /dev/null
	grep -qF "$ESCB" "$T/o.txt" && die "colour into -o FILE"
fi
expect_rc 2 "$CORDONC" lint --color=sometimes "$C303/app.yaml" "$L/base/tools.yaml"
pass "colour at a terminal only, NO_COLOR, --color=never|always"

# --- a compiled blob given as input -----------------------------------------
expect_rc 0 "$CORDONC" compile "$L/base/app.yaml" "$L/base/tools.yaml" -o "$T/p.cpol"
expect_rc 2 "$CORDONC" lint --no-config "$T/p.cpol" "$L/base/tools.yaml"
expect_err "$T/p.cpol: this is a compiled blob; lint its sources (cordonc inspect $T/p.cpol shows it)"
grep -q "UTF-8" "$_err" && die "blob reported as invalid UTF-8"
[ "$(tr -d '\n -~' <"$_err" | wc -c)" -eq 0 ] || die "binary bytes printed for a blob"
expect_rc 2 "$CORDONC" lint --no-config "$L/base/app.yaml" "$T/p.cpol"
expect_err "$T/p.cpol: this is a compiled blob"
pass "a compiled blob is named as one"

# --- rules by name -----------------------------------------------------------
expect_rc 0 "$CORDONC" explain container-runtime-socket; expect_out "CDN303 container-runtime-socket (error"
expect_rc 0 "$CORDONC" lint --explain writable-host-mount; expect_out "CDN301 writable-host-mount"
expect_rc 2 "$CORDONC" explain container-runtime-sockte; expect_err "did you mean 'container-runtime-socket'?"
expect_rc 2 "$CORDONC" explain CDN330; expect_err "unknown rule 'CDN330'; did you mean 'CDN303'?"
expect_rc 0 "$CORDONC" lint --no-config $HOSTOFF --rule container-runtime-socket=off "$C303/app.yaml" "$L/base/tools.yaml"
expect_rc 2 "$CORDONC" lint --no-config --rule container-runtime-sockte=off "$C303/app.yaml" "$L/base/tools.yaml"
expect_err "did you mean 'container-runtime-socket'?"
pass "explain and --rule take a rule's name; unknown ones get a did-you-mean"

# --- .cordonlint.yaml ----------------------------------------------------------
R="$T/repo"; mkdir -p "$R/.git" "$R/policy/deep" "$R/ci"
cp "$C303/app.yaml" "$R/policy/app.yaml"; cp "$L/base/tools.yaml" "$R/policy/tools.yaml"
cfg() { cat >"$R/.cordonlint.yaml"; }
run_deep() { ( cd "$R/policy/deep" && "$CORDONC" lint "$@" ../app.yaml ../tools.yaml ) >"$_out" 2>"$_err"; }
# rules (by id and by name, plain off), fail-level, format: found two levels up.
cfg <<'Y'
rules:
  CDN203: off
  gid-host-group: "off"
  container-runtime-socket: warning
fail-level: error
format: gitlab
Y
run_deep; [ $? -eq 0 ] || die "config: warnings under fail-level error must pass"
grep -q '"severity":[[:space:]]*"major"' "$_out" || die "config: format gitlab / rule level not applied"
# Flags beat the file.
run_deep -f text --fail-level warning --rule CDN303=error; [ $? -eq 1 ] || die "flags over the file: exit"
expect_out "3 errors, 0 warnings"
# inline-suppressions: false, and the flag turning them back on.
mkdir -p "$R/s" && cp "$L/cases/supp-multi/app.yaml" "$R/s/app.yaml" && cp "$L/base/tools.yaml" "$R/s/"
printf 'rules: {CDN203: off, CDN204: off}\ninline-suppressions: false\n' | cfg
( cd "$R/s" && "$CORDONC" lint app.yaml tools.yaml ) >"$_out" 2>&1; grep -q "suppressed" "$_out" && die "inline-suppressions: false ignored"
( cd "$R/s" && "$CORDONC" lint --inline-suppressions app.yaml tools.yaml ) >"$_out" 2>&1
grep -q "2 suppressed" "$_out" || die "--inline-suppressions must beat the file"
# baseline: relative to the file, not to the working directory.
printf 'rules: {CDN203: off, CDN204: off}\n' | cfg
( cd "$R" && "$CORDONC" lint --write-baseline ci/base.json policy/app.yaml policy/tools.yaml ) 2>/dev/null ||
	die "write baseline"
printf 'rules: {CDN203: off, CDN204: off}\nbaseline: ci/base.json\n' | cfg
run_deep; [ $? -eq 0 ] || die "config baseline (relative to the file) not applied"
expect_out "3 in the baseline (passed)"
# ignore: globs relative to the file, and --ignore relative to the working directory.
printf 'rules: {CDN203: off, CDN204: off}\nignore: ["policy/app.*"]\n' | cfg
run_deep; [ $? -eq 0 ] || die "config ignore glob"
expect_out "0 errors, 0 warnings, 0 notes (passed)"
printf 'rules: {CDN203: off, CDN204: off}\nignore: ["other/*"]\n' | cfg
run_deep; [ $? -eq 1 ] || die "an ignore glob that matches nothing dropped findings"
run_deep --ignore '../app.yaml'; [ $? -eq 0 ] || die "--ignore"
# --no-config ignores it; --config names another; discovery stops at .git.
printf 'fail-level: error\nrules: {CDN303: "off"}\n' | cfg
run_deep $HOSTOFF; [ $? -eq 0 ] || die "config CDN303 off"
run_deep --no-config $HOSTOFF; [ $? -eq 1 ] || die "--no-config still read the file"
printf 'rules: {CDN203: off, CDN204: off}\nformat: checkstyle\n' >"$T/other.yaml"
run_deep --config "$T/other.yaml"; [ $? -eq 1 ] && grep -q '<checkstyle' "$_out" || die "--config FILE"
mkdir -p "$T/outer/repo2/.git" "$T/outer/repo2/x"
printf 'format: json\n' >"$T/outer/.cordonlint.yaml"
( cd "$T/outer/repo2/x" && "$CORDONC" lint $HOSTOFF "$C303/app.yaml" "$L/base/tools.yaml" ) >"$_out" 2>&1
grep -q '"schema"' "$_out" && die "discovery went above the directory holding .git"
( cd "$T/outer/repo2" && rm -r .git && cd x && "$CORDONC" lint $HOSTOFF "$C303/app.yaml" "$L/base/tools.yaml" ) >"$_out" 2>&1
grep -q '"schema"' "$_out" || die "discovery did not find the config above"
expect_rc 2 "$CORDONC" lint --config "$T/none.yaml" "$C303/app.yaml" "$L/base/tools.yaml"; expect_err "cannot read"
expect_rc 2 "$CORDONC" lint --config "$T/other.yaml" --no-config "$C303/app.yaml" "$L/base/tools.yaml"
# A bad key and bad values: each at file:line:col with a caret and a hint.
cfg <<'Y'
rules:
  container-runtime-sockt: warning
  CDN303: loud
formt: json
fail-level: fatal
inline-suppressions: maybe
ignore: notalist
baseline: 3
Y
run_deep; [ $? -eq 2 ] || die "bad config: want exit 2"
C="$R/.cordonlint.yaml"
expect_err "$C:4:1: error: config: unknown key 'formt'; did you mean 'format'?"
expect_err "$C:2:3: error: rules: unknown rule 'container-runtime-sockt'; did you mean 'container-runtime-socket'?"
expect_err "$C:3:11: error: rules.CDN303: unknown value 'loud' (expected off, note, warning or error)"
expect_err "$C:5:13: error: fail-level: unknown value 'fatal'"
expect_err "$C:6:22: error: inline-suppressions: expected true or false"
expect_err "$C:7:9: error: ignore: expected a sequence"
expect_err "$C:8:11: error: baseline: expected a string"
expect_err "    formt: json"
expect_err "the config file cannot be used; nothing was linted"
printf 'format: sarfi\n' | cfg
run_deep; [ $? -eq 2 ] || die "bad format"
expect_err "format: unknown value 'sarfi'; did you mean 'sarif'?"
printf 'rules: &a {CDN303: off}\n' | cfg
run_deep; [ $? -eq 2 ] || die "an anchor in the config must be refused (the compiler's loader)"
pass ".cordonlint.yaml: every key, flags over it, discovery up to .git, --config, --no-config, located errors"
