#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# cordonc describe --format jsonschema: the tool definitions that cordon
# serve's capabilities endpoint hands out (runtime/client/agent_doc.h).
#  - every "parameters" is a valid JSON Schema 2020-12 (the metaschema,
#    through /usr/bin/python3 and python3-jsonschema), for the cafe example
#    as a whole and for each agent;
#  - each schema says what the blob's signature says (inspect --json):
#    types, required, enums, bounds, items, properties, every object closed;
#  - calls the supervisor takes pass the schema, calls it refuses for a
#    reason JSON Schema can say fail it;
#  - the description carries the constraints, decompiled, as describe --json
#    shows them; names are <ns>_<action>;
#  - a preload list reaches the Markdown and the JSON, not the tools;
#  - an unknown agent and a bad format are usage errors.
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
PY=/usr/bin/python3
APP="$SRC/examples/cafe/app.yaml"
TOOLS="$SRC/examples/cafe/tools.yaml"

"$PY" -c 'import jsonschema; jsonschema.Draft202012Validator' 2>/dev/null ||
	die "python3-jsonschema with Draft 2020-12 support is needed (Debian: python3-jsonschema)"

expect_rc 0 "$CORDONC" compile "$APP" "$TOOLS" -o "$T/cafe.cpol"
expect_rc 0 "$CORDONC" inspect --json "$T/cafe.cpol"; cp "$_out" "$T/inspect.json"
expect_rc 0 "$CORDONC" describe --json "$T/cafe.cpol"; cp "$_out" "$T/describe.json"
expect_rc 0 "$CORDONC" describe --format jsonschema "$T/cafe.cpol"; cp "$_out" "$T/all.json"
agents=$("$PY" -c 'import json,sys; print(" ".join(sorted(json.load(open(sys.argv[1]))["agents"])))' "$T/inspect.json")
[ -n "$agents" ] || die "the cafe example has no agents"
for a in $agents; do
	expect_rc 0 "$CORDONC" describe --format jsonschema --agent "$a" "$T/cafe.cpol"; cp "$_out" "$T/agent-$a.json"
done

cat >"$T/check.py" <<'EOF'
import json, re, sys
from jsonschema import Draft202012Validator as V

inspect = json.load(open(sys.argv[1]))
tools = {t["id"]: t for t in inspect["tools"]}
describe = json.load(open(sys.argv[2]))
bad = []
INT_LIMIT = 2 ** 53

def fail(msg):
    bad.append(msg)

def same_signature(where, schema, spec):
    """The schema against inspect's view of one parameter."""
    t = spec["type"]
    if schema.get("type") != t:
        fail(f"{where}: type {schema.get('type')!r}, the blob {t!r}")
        return
    want = {"type"}
    if t == "string":
        for k in ("minLength", "maxLength", "enum"):
            if k in spec:
                want.add(k)
                if schema.get(k) != spec[k]:
                    fail(f"{where}.{k}: {schema.get(k)!r}, the blob {spec[k]!r}")
        if "minLength" in spec or "maxLength" in spec:
            want.add("description")
            if "bytes" not in schema.get("description", ""):
                fail(f"{where}: a byte length without the words")
    elif t == "integer":
        want |= {"minimum", "maximum"}
        lo = max(spec.get("min", -INT_LIMIT), -INT_LIMIT)
        hi = min(spec.get("max", INT_LIMIT), INT_LIMIT)
        if (schema.get("minimum"), schema.get("maximum")) != (lo, hi):
            fail(f"{where}: bounds {schema.get('minimum')}..{schema.get('maximum')}, want {lo}..{hi}")
    elif t == "number":
        for k, s in (("min", "minimum"), ("max", "maximum")):
            if k in spec:
                want.add(s)
                if schema.get(s) != spec[k]:
                    fail(f"{where}.{s}: {schema.get(s)!r}, the blob {spec[k]!r}")
    elif t == "array":
        want.add("items")
        if "maxItems" in spec:
            want.add("maxItems")
            if schema.get("maxItems") != spec["maxItems"]:
                fail(f"{where}.maxItems: {schema.get('maxItems')!r}, the blob {spec['maxItems']!r}")
        same_signature(where + "[]", schema.get("items", {}), spec["items"])
    elif t == "object":
        same_object(where, schema, spec.get("properties", {}))
        return
    if set(schema) != want:
        fail(f"{where}: keywords {sorted(schema)}, want {sorted(want)}")

def same_object(where, schema, props):
    if schema.get("type") != "object" or schema.get("additionalProperties") is not False:
        fail(f"{where}: not a closed object schema")
    if set(schema) != {"type", "properties", "required", "additionalProperties"}:
        fail(f"{where}: keywords {sorted(schema)}")
    if set(schema.get("properties", {})) != set(props):
        fail(f"{where}: properties {sorted(schema.get('properties', {}))}, the blob {sorted(props)}")
    req = sorted(n for n, s in props.items() if s["required"])
    if sorted(schema.get("required", [])) != req:
        fail(f"{where}: required {schema.get('required')}, the blob {req}")
    for n, s in props.items():
        if n in schema.get("properties", {}):
            same_signature(f"{where}.{n}", schema["properties"][n], s)

def check(path, ids):
    arr = json.load(open(path))
    if not isinstance(arr, list):
        fail(f"{path}: not an array")
        return
    if [t.get("id") for t in arr] != ids:
        fail(f"{path}: tools {[t.get('id') for t in arr]}, want {ids}")
    names = [t.get("name") for t in arr]
    if len(set(names)) != len(names):
        fail(f"{path}: names repeat: {names}")
    for t in arr:
        tid = t.get("id")
        if set(t) != {"name", "id", "description", "parameters"}:
            fail(f"{tid}: keys {sorted(t)}")
            continue
        if t["name"] != tid.replace(".", "_") or not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", t["name"]):
            fail(f"{tid}: name {t['name']!r}")
        try:
            V.check_schema(t["parameters"])
        except Exception as e:  # SchemaError: the metaschema refuses it
            fail(f"{tid}: not a JSON Schema 2020-12: {e}")
            continue
        tool = tools[tid]
        same_object(tid, t["parameters"], tool["params"])
        d = t["description"]
        if not d.startswith(tool["description"]):
            fail(f"{tid}: the description does not start with the tool's own")
        dt = next(x for x in describe["tools"] if x["id"] == tid)
        for c in dt["constraints"]:
            if "\n- " + c not in d:
                fail(f"{tid}: constraint {c!r} not in the description")
        if dt["sideEffect"] != ("message_id" in d):
            fail(f"{tid}: the side effect is not said")

check(sys.argv[3], sorted(tools))
for path in sys.argv[4:]:
    agent = re.search(r"agent-(.*)\.json$", path).group(1)
    check(path, sorted(inspect["agents"][agent]))

# Calls against mail.send's schema: what the supervisor takes passes, what
# it refuses for a reason a schema can say fails.
arr = json.load(open(sys.argv[3]))
mail = V(next(t for t in arr if t["id"] == "mail.send")["parameters"])
good = {"to": "ops@example.org", "subject": "Order", "body": "12 cups"}
for call in (good, dict(good, priority="high")):
    errs = list(mail.iter_errors(call))
    if errs:
        fail(f"mail.send refuses a good call {call}: {errs[0].message}")
for why, call in (("unknown name", dict(good, cc="x@example.org")),
                  ("missing required", {"to": "ops@example.org"}),
                  ("too short", dict(good, to="a")),
                  ("not in enum", dict(good, priority="urgent")),
                  ("mistyped", dict(good, subject=3)),
                  ("null", dict(good, priority=None))):
    if mail.is_valid(call):
        fail(f"mail.send's schema takes a call with a {why}: {call}")
solve = V(next(t for t in arr if t["id"] == "calc.solve")["parameters"])
if solve.is_valid({"unknowns": ["x"], "equations": [{"coefficients": [1], "equals": 2, "extra": 1}]}):
    fail("calc.solve's schema takes an unknown name inside an item")

if bad:
    print("\n".join(bad))
    sys.exit(1)
EOF
"$PY" "$T/check.py" "$T/inspect.json" "$T/describe.json" "$T/all.json" "$T"/agent-*.json >"$T/check.out" 2>&1 ||
	{ cat "$T/check.out"; die "the tool definitions do not match the blob or the metaschema"; }

# The checker itself notices a schema that breaks the metaschema or
# loosens a bound.
sed 's/"maxItems":	8/"maxItems":	-1/' "$T/all.json" >"$T/broken.json"
"$PY" "$T/check.py" "$T/inspect.json" "$T/describe.json" "$T/broken.json" >"$T/check.out" 2>&1 &&
	die "the check took a schema the metaschema refuses"
grep -q "not a JSON Schema 2020-12" "$T/check.out" || { cat "$T/check.out"; die "the metaschema check did not fire"; }
sed 's/"maxLength":	254/"maxLength":	999/' "$T/all.json" >"$T/loose.json"
"$PY" "$T/check.py" "$T/inspect.json" "$T/describe.json" "$T/loose.json" >"$T/check.out" 2>&1 &&
	die "the check took a loosened bound"

# A preload list: said in the Markdown and the JSON; the tools do not change.
# (the cafe example preloads numpy: the list is widened in place)
sed 's/^    preload: \[numpy\]$/    preload: [numpy, json]/' "$APP" >"$T/pre.app.yaml"
grep -q "preload: \[numpy, json\]" "$T/pre.app.yaml" || die "the cafe descriptor changed shape: no place for preload"
expect_rc 0 "$CORDONC" compile "$T/pre.app.yaml" "$TOOLS" -o "$T/pre.cpol"
expect_rc 0 "$CORDONC" describe --agent analyst "$T/pre.cpol"
expect_out '- **Preloaded modules**: `numpy`, `json`: imported before your program starts'
sed '/^    preload: /d' "$APP" >"$T/nopre.app.yaml"
expect_rc 0 "$CORDONC" compile "$T/nopre.app.yaml" "$TOOLS" -o "$T/nopre.cpol"
expect_rc 0 "$CORDONC" describe --agent analyst "$T/nopre.cpol"
grep -q "Preloaded" "$_out" && die "a policy without preloads mentions them"
expect_rc 0 "$CORDONC" describe --json "$T/pre.cpol"
"$PY" -c 'import json,sys; assert json.load(open(sys.argv[1]))["python"]["preload"] == ["numpy", "json"]' "$_out" ||
	die "describe --json lacks python.preload"
expect_rc 0 "$CORDONC" describe --format jsonschema "$T/pre.cpol"
cmp -s "$_out" "$T/all.json" || die "the tool definitions changed with the preload list"

# Usage.
expect_rc 2 "$CORDONC" describe --format jsonschema --agent nosuch "$T/cafe.cpol"; expect_err "no agent 'nosuch'"
expect_rc 2 "$CORDONC" describe --format yaml "$T/cafe.cpol"; expect_err "--format takes"
expect_rc 2 "$CORDONC" describe --format jsonschema --json "$T/cafe.cpol"; expect_err "exclude each other"
expect_rc 0 "$CORDONC" describe --format json --json "$T/cafe.cpol"
expect_rc 0 "$CORDONC" describe --help; expect_out "jsonschema"

pass "describe --format jsonschema: 2020-12 schemas that say what the blob says; preload in the description"
