#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cordonc describe --format openai|anthropic|mcp: the tool definitions in
# the shapes of three model APIs (docs/describe-apis.md).
#  - every output validates against its format's schema under
#    tests/fixtures/model-apis/ (MCP's published one, OpenAI's and
#    Anthropic's documented shapes), through /usr/bin/python3 and
#    python3-jsonschema; for the cafe example and for a tool set with every
#    parameter type, enums, nested arrays and objects, constraints and
#    optional parameters (shapes.tools.yaml), all tools and each agent;
#  - each tool says what --format jsonschema says: the same description and
#    parameters, plus a required message_id for a side-effect tool; every
#    parameters schema is a valid JSON Schema 2020-12; a call built from it
#    validates, calls with an unknown, missing, mistyped or out-of-range
#    parameter do not;
#  - names map back to ids ("__" as '.'; MCP: the id itself); strict only
#    where the schema fits OpenAI's strict subset; MCP's hints follow
#    side_effect and replay;
#  - an id the format cannot name, and a message_id parameter beside a side
#    effect, are errors that name the tool; the checker itself is shown to
#    refuse a broken output.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
PY=/usr/bin/python3
FIX="$SRC/tests/fixtures/model-apis"

"$PY" -c 'import jsonschema; jsonschema.Draft202012Validator' 2>/dev/null ||
	die "python3-jsonschema with Draft 2020-12 support is needed (Debian: python3-jsonschema)"

expect_rc 0 "$CORDONC" compile "$SRC/examples/cafe/app.yaml" "$SRC/examples/cafe/tools.yaml" -o "$T/cafe.cpol"
expect_rc 0 "$CORDONC" compile "$FIX/shapes.app.yaml" "$FIX/shapes.tools.yaml" -o "$T/shapes.cpol"

# One run: BLOB AGENT ("" for all tools) -> $T/<blob>-<agent>-<format>.json
# for the three formats and jsonschema, and inspect --json once per blob.
emit() {
	blob=$1 agent=$2
	set --
	[ -n "$agent" ] && set -- --agent "$agent"
	for f in jsonschema openai anthropic mcp; do
		expect_rc 0 "$CORDONC" describe --format "$f" "$@" "$T/$blob.cpol"
		cp "$_out" "$T/$blob-${agent:-all}-$f.json"
	done
	echo "$T/$blob-${agent:-all}" >>"$T/runs"
}
: >"$T/runs"
for blob in cafe shapes; do
	expect_rc 0 "$CORDONC" inspect --json "$T/$blob.cpol"; cp "$_out" "$T/$blob-inspect.json"
done
emit cafe ""
for a in analyst cashier; do emit cafe "$a"; done
emit shapes good

cat >"$T/check.py" <<'EOF'
import copy, json, re, sys
from jsonschema import Draft202012Validator as V

fix = sys.argv[1]
bad = []
fail = bad.append

def load(p):
    with open(p) as f:
        return json.load(f)

# The formats' own schemas; MCP's: the tools/list result and one Tool.
fmt_schema = {"openai": load(f"{fix}/openai-chat-tools.schema.json"),
              "anthropic": load(f"{fix}/anthropic-tools.schema.json")}
mcp = load(f"{fix}/mcp-2025-11-25.schema.json")
mcp_result = dict(mcp, **{"$ref": "#/$defs/ListToolsResult"})
for s in list(fmt_schema.values()) + [mcp_result]:
    V.check_schema(s)
# MCP 2025-11-25, server/tools "Tool Names" (a SHOULD the schema leaves out).
MCP_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
# OpenAI's strict subset, per type (docs/describe-apis.md cites the page).
STRICT_KEYS = {"object": {"type", "properties", "required", "additionalProperties", "description"},
               "string": {"type", "enum", "pattern", "format", "description"},
               "integer": {"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
                           "description"},
               "array": {"type", "items", "minItems", "maxItems", "description"},
               "boolean": {"type", "description"}}
STRICT_KEYS["number"] = STRICT_KEYS["integer"]
STRICT_DEPTH = 5
MESSAGE_ID = {"type": "string", "pattern": "^[!-~]{1,128}$"}

def strict_fits(s, depth=0):
    t = s.get("type")
    if set(s) - STRICT_KEYS.get(t, set()):
        return False
    if t == "array":
        return strict_fits(s["items"], depth)
    if t != "object":
        return True
    props = s.get("properties", {})
    return (depth < STRICT_DEPTH and s.get("additionalProperties") is False
            and sorted(s.get("required", [])) == sorted(props)
            and all(strict_fits(p, depth + 1) for p in props.values()))

def sample(s):
    """A value the schema takes, every optional member included."""
    t = s["type"]
    if t == "object":
        return {k: sample(v) for k, v in s.get("properties", {}).items()}
    if t == "array":
        return [sample(s["items"])] if s.get("maxItems", 1) >= 1 else []
    if t == "boolean":
        return True
    if t in ("integer", "number"):
        return max(s.get("minimum", 0), min(s.get("maximum", 0), 0))
    if "enum" in s:
        return s["enum"][-1]
    if "pattern" in s:
        return "m-1"
    return "x" * max(s.get("minLength", 1), 1)

def wrong(s):
    """Calls the schema must refuse, each with why."""
    good = sample(s)
    out = [("an unknown parameter", dict(good, cordon_unknown=1))]
    for k in s.get("required", []):
        out.append((f"{k} missing", {n: v for n, v in good.items() if n != k}))
    for k, p in s.get("properties", {}).items():
        out.append((f"{k} mistyped", dict(good, **{k: None})))
        if p["type"] in ("integer", "number") and "maximum" in p:
            out.append((f"{k} over its maximum", dict(good, **{k: p["maximum"] + 1})))
        if "enum" in p:
            out.append((f"{k} outside its enum", dict(good, **{k: "cordon-not-in-enum"})))
        if p["type"] == "array" and "maxItems" in p:
            out.append((f"{k} too long", dict(good, **{k: [sample(p["items"])] * (p["maxItems"] + 1)})))
    return out

def entry(fmt, t):
    """(name, description, parameters, extra keys) of one output tool."""
    if fmt == "openai":
        f = t["function"]
        return f["name"], f["description"], f["parameters"], {"strict": f["strict"]}
    key = "input_schema" if fmt == "anthropic" else "inputSchema"
    return t["name"], t["description"], t[key], {"annotations": t.get("annotations")}

for run in open(sys.argv[2]).read().split():
    inspect = {t["id"]: t for t in load(f"{run.rsplit('-', 1)[0]}-inspect.json")["tools"]}
    ref = load(f"{run}-jsonschema.json")
    for fmt in ("openai", "anthropic", "mcp"):
        where = f"{run.rsplit('/', 1)[1]}-{fmt}"
        out = load(f"{run}-{fmt}.json")
        if fmt == "mcp":
            errs = list(V(mcp_result).iter_errors({"tools": out}))
        else:
            errs = list(V(fmt_schema[fmt]).iter_errors(out))
        for e in errs:
            fail(f"{where}: not the format's shape: {e.message} at {list(e.absolute_path)}")
        if not errs and len(out) != len(ref):
            fail(f"{where}: {len(out)} tools, jsonschema has {len(ref)}")
        if errs or len(out) != len(ref):
            continue
        names = set()
        for t, r in zip(out, ref):
            tid = r["id"]
            name, text, params, extra = entry(fmt, t)
            names.add(name)
            back = name if fmt == "mcp" else name.replace("__", ".")
            if back != tid:
                fail(f"{where}: {name!r} reads back as {back!r}, not {tid!r}")
            if fmt == "mcp" and not MCP_NAME.fullmatch(name):
                fail(f"{where}: {name!r} is outside MCP's name alphabet")
            if text != r["description"]:
                fail(f"{where}: {tid}: another description than jsonschema's")
            side = inspect[tid]["sideEffect"]
            want = copy.deepcopy(r["parameters"])
            if side:
                want["properties"]["message_id"] = dict(MESSAGE_ID)
                want["required"].append("message_id")
                mid = params.get("properties", {}).get("message_id", {})
                if "description" not in mid:
                    fail(f"{where}: {tid}: message_id without a description")
                else:
                    mid = dict(mid)
                    del mid["description"]
                    params = copy.deepcopy(params)
                    params["properties"]["message_id"] = mid
            if params != want:
                fail(f"{where}: {tid}: parameters differ from jsonschema's (+ message_id: {side})")
            try:
                V.check_schema(params)
            except Exception as e:  # SchemaError
                fail(f"{where}: {tid}: not a JSON Schema 2020-12: {e}")
                continue
            v = V(params)
            call = sample(params)
            for e in v.iter_errors(call):
                fail(f"{where}: {tid}: refuses the call it was built for {call}: {e.message}")
            for why, c in wrong(params):
                if v.is_valid(c):
                    fail(f"{where}: {tid}: takes a call with {why}: {c}")
            if fmt == "openai" and extra["strict"] != strict_fits(params):
                fail(f"{where}: {tid}: strict is {extra['strict']}, the schema "
                     f"{'fits' if strict_fits(params) else 'does not fit'} strict mode")
            if fmt == "mcp":
                a = extra["annotations"] or {}
                want_a = ({"readOnlyHint": False, "idempotentHint": inspect[tid]["replay"]} if side
                          else {"readOnlyHint": True})
                if a != want_a:
                    fail(f"{where}: {tid}: annotations {a}, want {want_a}")
        if len(names) != len(out):
            fail(f"{where}: names repeat")

# What the shapes tool set is for: each case reached.
if any("shapes-good" in r for r in open(sys.argv[2]).read().split()):
    o = {t["function"]["name"]: t["function"] for t in load(sys.argv[2].rsplit("/", 1)[0] + "/shapes-good-openai.json")}
    for n, s in (("shape__strict", True), ("log__write", True), ("shape__all", False), ("deep__nest", False),
                 ("mail__send", False)):
        if o.get(n, {}).get("strict") is not s:
            fail(f"shapes: {n} strict {o.get(n, {}).get('strict')!r}, want {s}")
    d = o.get("shape__all", {}).get("description", "")
    for c in ("!has(free) || free != count", "Budget: "):
        if c not in d:
            fail(f"shapes: shape.all's description lacks {c!r}")
    types = set()
    def walk(s):
        types.add(s["type"])
        for p in s.get("properties", {}).values():
            walk(p)
        if "items" in s:
            walk(s["items"])
    walk(o["shape__all"]["parameters"])
    if types != {"object", "array", "string", "integer", "number", "boolean"}:
        fail(f"shapes: shape.all's types {sorted(types)}")

if bad:
    print("\n".join(bad))
    sys.exit(1)
EOF
"$PY" "$T/check.py" "$FIX" "$T/runs" >"$T/check.out" 2>&1 ||
	{ cat "$T/check.out"; die "an output does not fit its format or does not say what jsonschema says"; }

# The checker refuses outputs broken as a bug would break them: a dotted
# name, a missing envelope, a dropped message_id, a wrong hint, a schema
# the metaschema refuses, strict on a schema that does not fit.
broken() {
	desc=$1 file=$2 sedexpr=$3
	cp "$T/$file" "$T/$file.orig"
	sed "$sedexpr" "$T/$file.orig" >"$T/$file"
	cmp -s "$T/$file" "$T/$file.orig" && die "the broken case '$desc' changed nothing"
	"$PY" "$T/check.py" "$FIX" "$T/runs" >"$T/check.out" 2>&1 && die "the check took $desc"
	cp "$T/$file.orig" "$T/$file"
}
broken "a dotted name" cafe-all-openai.json 's/"name":	"mail__send"/"name":	"mail.send"/'
broken "a dotted Anthropic name" cafe-all-anthropic.json 's/"name":	"calc__solve"/"name":	"calc.solve"/'
broken "a name that reads back wrong" cafe-all-anthropic.json 's/"name":	"calc__solve"/"name":	"calc_solve"/'
broken "an envelope without its type" cafe-all-openai.json 's/"type":	"function",//'
broken "a dropped message_id" shapes-good-mcp.json 's/, "message_id"\]/]/'
broken "a side effect said read-only" shapes-good-mcp.json 's/"readOnlyHint":	false/"readOnlyHint":	true/'
broken "a loosened bound" shapes-good-anthropic.json 's/"maxItems":	4/"maxItems":	40/'
broken "a bad metaschema value" cafe-all-mcp.json 's/"maxItems":	8/"maxItems":	-1/'
broken "strict on a schema nested too deep" shapes-good-openai.json '0,/"strict":	false/s//"strict":	true/'
"$PY" "$T/check.py" "$FIX" "$T/runs" >"$T/check.out" 2>&1 || { cat "$T/check.out"; die "the restored outputs fail"; }

# Ids the API names cannot carry: an error naming the tool, never a
# truncated or guessed name.  MCP takes them as they are.
for f in openai anthropic; do
	expect_rc 1 "$CORDONC" describe --format "$f" "$T/shapes.cpol"; expect_err "cordonc describe: "
	[ -s "$_out" ] && die "--format $f wrote output beside an error"
	expect_rc 1 "$CORDONC" describe --format "$f" --agent long "$T/shapes.cpol"
	expect_err "tool abcdefghijklmnopqrstuvwxyzabcdef.abcdefghijklmnopqrstuvwxyzabcdef: its name would be 66 characters long, this format allows 1 to 64"
	expect_rc 1 "$CORDONC" describe --format "$f" --agent odd "$T/shapes.cpol"
	expect_err "tool odd__ns.x: its name odd__ns__x would read back as odd.ns.x"
	expect_rc 1 "$CORDONC" describe --format "$f" --agent under "$T/shapes.cpol"
	expect_err "tool a_.b: its name a___b would read back as a._b"
done
for a in long odd under; do
	expect_rc 0 "$CORDONC" describe --format mcp --agent "$a" "$T/shapes.cpol"
	"$PY" -c 'import json,sys; t=json.load(open(sys.argv[1])); assert [x["name"] for x in t] == [sys.argv[2]], t' \
		"$_out" "$(sed -n "s/^  $a: { tools: \[\(.*\)\] }$/\1/p" "$FIX/shapes.app.yaml")" ||
		die "mcp does not name agent $a's tool by its id"
done
for f in openai anthropic mcp; do
	expect_rc 1 "$CORDONC" describe --format "$f" --agent clash "$T/shapes.cpol"
	expect_err "tool clash.send: a side-effect tool with a parameter called message_id"
done

# Usage.
expect_rc 2 "$CORDONC" describe --format openai --input "$T/x.csv" "$T/cafe.cpol"; expect_err "--input goes with"
expect_rc 2 "$CORDONC" describe --format mcp --agent nosuch "$T/cafe.cpol"; expect_err "no agent 'nosuch'"
expect_rc 2 "$CORDONC" describe --format anthropic --python "$T/cafe.cpol"; expect_err "exclude each other"
expect_rc 2 "$CORDONC" describe --format gemini "$T/cafe.cpol"; expect_err "openai, anthropic or mcp"
expect_rc 0 "$CORDONC" describe --help; expect_out "anthropic"; expect_out "mail__send"

pass "describe --format openai|anthropic|mcp: each output has its API's shape and says what jsonschema says"
