#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cordonc describe: what the model reads must be what the blob enforces.
#  - describe --json against inspect --json of the same blob: every limit,
#    mount, output, tool, param bound and constraint count (the comparison
#    itself is shown to fail on a blob whose timeout or a param bound
#    differs);
#  - the constraint texts, written back into the inventory, compile to the
#    same blob (same sha256; a changed text gives another);
#  - the Python version is the interpreter's own answer;
#  - the Markdown names every tool, constraint, stub signature and limit;
#  - --python imports with a fake cordon_tools and every stub sends its call;
#  - --agent, usage errors, a hostile description.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
APP="$SRC/examples/cafe/app.yaml"
TOOLS="$SRC/examples/cafe/tools.yaml"

expect_rc 0 "$CORDONC" describe --help;  expect_out "usage: cordonc describe"
expect_rc 0 "$CORDONC" help describe;    expect_out "--python"
expect_rc 0 "$CORDONC" compile "$APP" "$TOOLS" -o "$T/a.cpol"
expect_rc 0 "$CORDONC" inspect --json "$T/a.cpol"; cp "$_out" "$T/inspect.json"
expect_rc 0 "$CORDONC" describe --json "$T/a.cpol"; cp "$_out" "$T/describe.json"
schema_ok describe "$T/describe.json"
expect_rc 0 "$CORDONC" describe "$T/a.cpol";        cp "$_out" "$T/describe.md"
expect_rc 0 "$CORDONC" describe --python "$T/a.cpol"; cp "$_out" "$T/tools.py"

# The comparison, in one place: compare.py DESCRIBE.json INSPECT.json [AGENT]
cat >"$T/compare.py" <<'EOF'
import json, subprocess, sys

d = json.load(open(sys.argv[1]))
i = json.load(open(sys.argv[2]))
agent = sys.argv[3] if len(sys.argv) > 3 else None
bad = []

def same(what, a, b):
    if a != b:
        bad.append("%s: describe says %r, the blob %r" % (what, a, b))

def strip(params):
    # describe adds the stub's Python type; everything else must be inspect's
    out = {}
    for name, spec in params.items():
        spec = dict(spec)
        spec.pop("pythonType", None)
        if "items" in spec:
            spec["items"] = strip({"": spec["items"]})[""]
        if "properties" in spec:
            spec["properties"] = strip(spec["properties"])
        out[name] = spec
    return out

def num(v):
    # how the words write a bound: shortest exact decimal, no ".0"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e17:
        return str(int(v))
    return repr(v) if isinstance(v, float) else str(v)

def words(tool, lines, params, depth):
    # each param's line in the words says its required-ness and every bound
    # (an array's items' bounds inline on the same line)
    for name, spec in params.items():
        line = next((l for l in lines if l.startswith(" " * depth + name + ": ")), None)
        if line is None:
            bad.append("%s: no words for %s" % (tool, name))
            continue
        if ("required" if spec["required"] else "optional") not in line:
            bad.append("%s: %s: required-ness wrong in %r" % (tool, name, line))
        s = spec
        while s is not None:
            want = []
            if "min" in s and "max" in s:
                want.append("from %s to %s" % (num(s["min"]), num(s["max"])))
            elif "min" in s or "max" in s:
                want.append("at least %s" % num(s["min"]) if "min" in s else "at most %s" % num(s["max"]))
            if "minLength" in s and "maxLength" in s:
                if s["minLength"] == s["maxLength"]:
                    want.append("exactly %d byte" % s["maxLength"])
                else:
                    want.append("%d to %d byte" % (s["minLength"], s["maxLength"]))
            elif "minLength" in s or "maxLength" in s:
                want.append("at least %d byte" % s["minLength"] if "minLength" in s
                            else "at most %d byte" % s["maxLength"])
            if "maxItems" in s:
                want.append("at most %d item" % s["maxItems"])
            for w in want:
                if w not in line:
                    bad.append("%s: %s: %r not in %r" % (tool, name, w, line))
            for e in s.get("enum", []):
                if json.dumps(e) not in line:
                    bad.append("%s: %s: enum value %r not in %r" % (tool, name, e, line))
            if "properties" in s:
                words(tool, lines, s["properties"], depth + 4)
            s = s.get("items")

same("policy sha256", d["policySha256"], i["format"]["sha256"])
same("app", d["app"], i["meta"]["app"])
same("limit names", sorted(d["limits"]), sorted(i["limits"]))
for k, v in i["limits"].items():
    same("limits." + k, d["limits"].get(k), v)
same("result.maxBytes", d["result"]["maxBytes"], i["limits"]["maxResultBytes"])
same("toolCalls.maxRequestBytes", d["toolCalls"]["maxRequestBytes"], i["limits"]["maxToolRequestBytes"])
same("network", d["network"], i["executor"]["network"])
same("uid", d["uid"], i["executor"]["uid"])
same("gid", d["gid"], i["executor"]["gid"])
same("interpreter", d["python"]["interpreter"], i["executor"]["interpreter"])
for k, v in i["env"].items():
    same("env." + k, d["env"].get(k), v)
same("outputs", d["outputs"], i["outputs"])
files = {f["path"]: f for f in d["files"]}
for m in i["mounts"]:
    f = files.get(m["target"])
    if f is None:
        bad.append("mount %s is not described" % m["target"])
        continue
    same("writable " + m["target"], f["writable"], m["rw"] or m["type"] == "tmpfs")
    if m["type"] == "tmpfs":
        same("size of " + m["target"], f.get("sizeBytes"), m["sizeBytes"])
for w in ("/workspace/out", "/workspace/work"):
    same("writable " + w, files.get(w, {}).get("writable"), True)

want = [t["id"] for t in i["tools"]]
if agent is not None:
    want = i["agents"][agent]
same("tool ids", [t["id"] for t in d["tools"]], want)
itools = {t["id"]: t for t in i["tools"]}
for t in d["tools"]:
    b = itools.get(t["id"])
    if b is None:
        continue
    for k in ("description", "sideEffect", "replay", "timeoutMs", "maxCalls", "maxCallsPerDay"):
        same(t["id"] + "." + k, t[k], b[k])
    same(t["id"] + ".messageIdRequired", t["messageIdRequired"], b["sideEffect"])
    same(t["id"] + ".params", strip(t["params"]), b["params"])
    same(t["id"] + " constraint count", len(t["constraints"]), b["constraints"])
    words(t["id"], t["paramsText"].splitlines(), b["params"], 0)
    if t["stub"] is not None and not t["stub"].startswith("tools.%s(" % t["id"]):
        bad.append("%s: stub %r" % (t["id"], t["stub"]))

probe = subprocess.run([i["executor"]["interpreter"], "-I", "-c", "import sys;print(sys.version)"],
                       capture_output=True, text=True, env={})
same("python version", d["python"]["version"], probe.stdout.strip().replace("\n", " "))

for b in bad:
    print(b)
sys.exit(1 if bad else 0)
EOF
python3 "$T/compare.py" "$T/describe.json" "$T/inspect.json" >"$T/cmp.out" 2>&1 ||
	die "describe --json disagrees with inspect --json: $(cat "$T/cmp.out")"

# The comparison is not vacuous: a blob with another timeout, or another
# param bound, or one constraint less, must fail it.
sed 's/^    timeout: 30s$/    timeout: 31s/' "$APP" >"$T/app31.yaml"
cmp -s "$APP" "$T/app31.yaml" && die "could not make a variant of the app (timeout)"
sed 's/max_length: 200,/max_length: 201,/' "$TOOLS" >"$T/tools201.yaml"
cmp -s "$TOOLS" "$T/tools201.yaml" && die "could not make a variant of the tools (max_length)"
expect_rc 0 "$CORDONC" compile "$T/app31.yaml" "$TOOLS" -o "$T/v1.cpol"
expect_rc 0 "$CORDONC" compile "$APP" "$T/tools201.yaml" -o "$T/v2.cpol"
for v in v1 v2; do
	expect_rc 0 "$CORDONC" inspect --json "$T/$v.cpol"; cp "$_out" "$T/$v.json"
	python3 "$T/compare.py" "$T/describe.json" "$T/$v.json" >"$T/cmp.out" 2>&1 &&
		die "the comparison did not notice the change in $v"
done
grep -q 'limits.timeoutMs' "$T/cmp.out" && die "v2 should differ in params, not the timeout"
grep -q 'mail.send.params' "$T/cmp.out" || die "v2's difference not found: $(cat "$T/cmp.out")"

# The constraint texts compile back to the same blob.  rewrite.py puts
# describe's texts in place of each tool's constraints in the inventory.
cat >"$T/rewrite.py" <<'EOF'
import json, re, sys

d = json.load(open(sys.argv[1]))
texts = {t["id"]: t["constraints"] for t in d["tools"]}
if len(sys.argv) > 4:  # tool, index, new text: a deliberate change
    texts[sys.argv[4]][int(sys.argv[5])] = sys.argv[6]

def quoted(s):
    if "'" not in s:
        return "'" + s + "'"
    if '"' not in s and "\\" not in s:
        return '"' + s + '"'
    raise SystemExit("cannot write %r in YAML without escapes" % s)

out, tool, block = [], None, None
for line in open(sys.argv[2]):
    m = re.match(r"\s*- id: (\S+)", line)
    if m:
        tool, block = m.group(1), None
    indent = len(line) - len(line.lstrip())
    if block is not None:
        if line.strip() == "" or line.lstrip().startswith("#"):
            out.append(line)
            continue
        if indent > block and line.lstrip().startswith("- "):
            continue
        block = None
    if re.match(r"\s*constraints:\s*$", line):
        block = indent
        out.append(line)
        out.extend(" " * (indent + 2) + "- " + quoted(t) + "\n" for t in texts.pop(tool))
        continue
    out.append(line)
if any(texts.values()):
    raise SystemExit("constraints not found in the inventory: %r" % texts)
open(sys.argv[3], "w").write("".join(out))
EOF
# Each rewrite sits beside a copy of the app under the original names, so
# the blobs record the same source names and differ, if at all, in the
# sources' SHA-256 (same_policy below looks past those).
mkdir "$T/rt" "$T/ch" && cp "$APP" "$T/rt/app.yaml" && cp "$APP" "$T/ch/app.yaml" || die "copy app"
python3 "$T/rewrite.py" "$T/describe.json" "$TOOLS" "$T/rt/tools.yaml" || die "rewrite.py failed"
expect_rc 0 "$CORDONC" compile "$T/rt/app.yaml" "$T/rt/tools.yaml" -o "$T/rt.cpol"
# same_policy A B: the blobs are the same bytes up to their provenance
# (the rewritten inventory is other bytes, so its recorded SHA-256 differs,
# and with it the blob's hash).
same_policy() {
	python3 - "$SRC/tests/cli" "$1" "$2" <<'PYEOF'
import sys
sys.path.insert(0, sys.argv[1])
import blobtool
def policy_bytes(path):
    buf = open(path, "rb").read()
    t = blobtool.table(buf)
    # Entries 1..14 of the table and the bytes of those sections: all but
    # SOURCES, LINT and SIGNATURE; the offsets are the same in both when
    # the sections are.
    return buf[64:64 + 14 * 24] + buf[t["strtab"][0]:t["sources"][0]]
sys.exit(0 if policy_bytes(sys.argv[2]) == policy_bytes(sys.argv[3]) else 1)
PYEOF
}
same_policy "$T/a.cpol" "$T/rt.cpol" || die "the described constraints compile to another policy"
python3 "$T/rewrite.py" "$T/describe.json" "$TOOLS" "$T/ch/tools.yaml" calc.solve 0 "len(unknowns) >= 2" ||
	die "rewrite.py failed"
expect_rc 0 "$CORDONC" compile "$T/ch/app.yaml" "$T/ch/tools.yaml" -o "$T/ch.cpol"
same_policy "$T/a.cpol" "$T/ch.cpol" && die "a changed constraint compiled to the same policy: the check above is vacuous"

# The Markdown says it all: each tool, signature, constraint; the limits.
python3 - "$T/describe.json" "$T/describe.md" >"$T/md.out" 2>&1 <<'EOF' || die "Markdown: $(cat "$T/md.out")"
import json, sys
d = json.load(open(sys.argv[1]))
md = open(sys.argv[2]).read()
need = ["## Tools (%d)" % len(d["tools"]), d["python"]["version"], d["policySha256"],
        "at most %d." % d["limits"]["pids"], "`/workspace/out`", "/workspace/out/result.json"]
for t in d["tools"]:
    need += ["### `%s`" % t["id"], t["description"], t["stub"], t["budget"]] + t["constraints"]
    need += [line for line in t["paramsText"].splitlines()]
for o in d["outputs"]:
    need.append("`%s`" % o["path"])
missing = [n for n in need if n not in md]
if missing:
    sys.exit("missing: %r" % missing)
EOF
expect_rc 0 grep -q '^- \*\*Time limit\*\*: 30 s' "$T/describe.md"
expect_rc 0 grep -q '^- \*\*Memory\*\*: 1 GiB' "$T/describe.md"

# The stubs import, and every stub sends its call through cordon_tools.
mkdir "$T/py"
cp "$T/tools.py" "$T/py/tools.py"
cat >"$T/py/cordon_tools.py" <<'EOF'
calls = []
def tool_call(tool, params, message_id=None, timeout=None):
    calls.append((tool, params, message_id))
    return {"echo": tool}
EOF
cat >"$T/py/check.py" <<'EOF'
import inspect, json, sys
import cordon_tools, tools
d = json.load(open(sys.argv[1]))

def value(spec):
    t = spec["type"]
    if t == "string":
        return spec["enum"][0] if "enum" in spec else "x" * max(1, spec.get("minLength", 0))
    if t in ("integer", "number"):
        return spec.get("min", 0)
    if t == "boolean":
        return True
    if t == "array":
        return [value(spec["items"])]
    return {k: value(v) for k, v in spec.get("properties", {}).items() if v["required"]}

assert sorted(tools.__all__) == sorted({t["id"].split(".")[0] for t in d["tools"]}), tools.__all__
for t in d["tools"]:
    ns, action = t["id"].split(".")
    f = getattr(getattr(tools, ns), action)
    args = {k: value(v) for k, v in t["params"].items() if v["required"]}
    if t["messageIdRequired"]:
        args["message_id"] = "m-" + t["id"]
    assert f(**args) == {"echo": t["id"]}
    tool, params, mid = cordon_tools.calls[-1]
    args.pop("message_id", None)
    assert (tool, params, mid) == (t["id"], args, "m-" + t["id"] if t["messageIdRequired"] else None), cordon_tools.calls[-1]
    sig = "tools.%s%s" % (t["id"], inspect.signature(f))
    for c in t["constraints"]:
        assert c in f.__doc__, (c, f.__doc__)
    assert t["description"] in f.__doc__, f.__doc__
print(len(d["tools"]), "stubs called")
EOF
(cd "$T/py" && python3 -E -s -B check.py "$T/describe.json") >"$T/py.out" 2>&1 || die "stubs: $(cat "$T/py.out")"

# --agent: that agent's tools only, everywhere.
expect_rc 0 "$CORDONC" describe --json --agent cashier "$T/a.cpol"; cp "$_out" "$T/cashier.json"
schema_ok describe "$T/cashier.json"
python3 "$T/compare.py" "$T/cashier.json" "$T/inspect.json" cashier >"$T/cmp.out" 2>&1 ||
	die "describe --agent cashier: $(cat "$T/cmp.out")"
expect_rc 0 "$CORDONC" describe --agent cashier "$T/a.cpol"
grep -q 'mail.send' "$_out" && die "the cashier's description shows mail.send"
expect_rc 0 "$CORDONC" describe --python --agent cashier "$T/a.cpol"
grep -q 'class mail' "$_out" && die "the cashier's stubs have mail"
expect_rc 2 "$CORDONC" describe --agent nobody "$T/a.cpol"; expect_err "no agent 'nobody'"; expect_err "cashier"

# Usage and bad input.
expect_rc 2 "$CORDONC" describe --json --python "$T/a.cpol"; expect_err "exclude each other"
expect_rc 2 "$CORDONC" describe;                            expect_err "exactly one blob"
expect_rc 2 "$CORDONC" describe "$T/missing.cpol"
head -c 300 "$T/a.cpol" >"$T/short.cpol"
expect_rc 1 "$CORDONC" describe "$T/short.cpol";            expect_err "invalid policy blob"

# A description that tries to end the stubs' docstring and run code.
cat >"$T/evil.yaml" <<'EOF'
version: 1
tools:
  - id: evil.run
    description: "Ends \"\"\" here; __import__('os').system('touch PWNED') \\ trailing backslash \\"
    params:
      q: { type: string, required: true }
    constraints:
      - 'q != "\"\"\""'
    exec: [/bin/true]
EOF
printf 'version: 1\napp: evil\nexecution: { runtime: { timeout: 5s } }\nagents: { a: { tools: [evil.run] } }\n' \
	>"$T/evil-app.yaml"
expect_rc 0 "$CORDONC" compile "$T/evil-app.yaml" "$T/evil.yaml" -o "$T/evil.cpol"
expect_rc 0 "$CORDONC" describe --python "$T/evil.cpol"; cp "$_out" "$T/py/tools.py"
(cd "$T/py" && python3 -E -s -B -c '
import os, tools
assert not os.path.exists("PWNED")
assert "Ends \"\"\" here; __import__(" in tools.evil.run.__doc__
assert "trailing backslash \\\n" in tools.evil.run.__doc__
tools.evil.run(q="x")
') >"$T/py.out" 2>&1 || die "hostile description: $(cat "$T/py.out")"
[ -e "$T/py/PWNED" ] && die "the description ran"
expect_rc 0 "$CORDONC" describe "$T/evil.cpol"; expect_out 'q != "\"\"\""'
# describe --json of a tool without a stub, a tool of every flag, inputs:
# the schema's other branches.
expect_rc 0 "$CORDONC" describe --json "$T/evil.cpol"; cp "$_out" "$T/evil.json"
expect_rc 0 "$CORDONC" describe --json --input "$T/x.csv" --input "$T/y.json" "$T/a.cpol"; cp "$_out" "$T/in.json"
schema_ok describe "$T/evil.json" "$T/in.json"
pass "describe: JSON = inspect, constraints compile back, Markdown complete, stubs import and call"
