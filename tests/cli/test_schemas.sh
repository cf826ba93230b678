#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# docs/schemas: each file a valid Draft 2020-12 schema with its $id and a
# description on every property; tests/lib/schema_check.py fails with the
# JSON path of the first error; the result schema says what
# docs/openapi.yaml's Result says (descriptions aside); and the request
# context schema takes every context runtime/context.c takes and refuses
# the ones it refuses (tests/unit/test_context.c), but for those listed
# here that JSON Schema cannot say.  Every other test that produces one of
# these documents holds it to its schema (docs/schemas.md).
set -u
: "${BUILD:?}" "${SRC:?}"
. "$SRC/tests/cli/lib.sh"
PY=/usr/bin/python3
CHECK="$SRC/tests/lib/schema_check.py"

# 1. The schemas themselves.
$PY -B - "$SRC" >"$_out" 2>&1 <<'PY' || die "schemas: $(cat "$_out")"
import json, os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "tests", "lib"))
import jsonschema, schema_check
bad = []
def undescribed(node, where):
    if isinstance(node, dict):
        for k, v in (node.get("properties") or {}).items():
            if isinstance(v, dict) and "description" not in v:
                bad.append("%s.%s has no description" % (where, k))
        for k, v in node.items():
            if k not in ("if", "then", "else", "not"):  # conditions restate properties described above
                undescribed(v, where + "/" + k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            undescribed(v, "%s/%d" % (where, i))
for name in schema_check.NAMES:
    s = json.load(open(schema_check.schema_path(name)))
    jsonschema.Draft202012Validator.check_schema(s)
    if s.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
        bad.append(name + ": $schema")
    if s.get("$id") != "https://cordon.invalid/schemas/%s.schema.json" % name:
        bad.append(name + ": $id " + str(s.get("$id")))
    if not s.get("description"):
        bad.append(name + ": no description")
    undescribed(s, name)
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY

# 2. The checker fails, and says where.
printf '{"schema":"cordon-diff/1","old":{"path":"a","sha256":"%064d"},"new":{"path":"b","sha256":"%064d"},"widens":true,"widening":0,"narrowing":0,"neutral":0,"changes":[{"kind":"wider","path":"x","old":"","new":""}]}' 0 0 >"$T/diff.json"
expect_rc 1 $PY -B "$CHECK" diff "$T/diff.json"; expect_out '$.changes[0].kind'
printf '{"schema":"cordon-diff/1"' >"$T/cut.json"
expect_rc 2 $PY -B "$CHECK" diff "$T/cut.json"; expect_out "not JSON"
expect_rc 2 $PY -B "$CHECK" nosuch "$T/cut.json"; expect_err "unknown schema"
printf '{"user":"u"}\n\n{"user":7}\n' | $PY -B "$CHECK" --lines context >"$_out" 2>"$_err"
[ $? -eq 1 ] || die "--lines: a bad second line passed"
expect_out "line 3: \$.user"
printf '{}' | $PY -B "$CHECK" context >"$_out" 2>"$_err" || die "stdin: {} is a context: $(cat "$_out")"

# 3. The result schema and docs/openapi.yaml's Result: the same constraints.
$PY -B - "$SRC" >"$_out" 2>&1 <<'PY' || die "result.schema.json and docs/openapi.yaml disagree: $(cat "$_out")"
import json, os, sys, yaml
src = sys.argv[1]
api = yaml.safe_load(open(os.path.join(src, "docs", "openapi.yaml")))["components"]["schemas"]
mine = json.load(open(os.path.join(src, "docs", "schemas", "result.schema.json")))
NOISE = ("description", "title", "$schema", "$id", "$defs", "$comment")
def norm(node, defs, prefix, seen=()):
    """node with every $ref inlined and the words left out."""
    if isinstance(node, list):
        return [norm(v, defs, prefix, seen) for v in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        name = node["$ref"][len(prefix):]
        assert node["$ref"].startswith(prefix) and name not in seen, node["$ref"]
        rest = {k: v for k, v in node.items() if k not in NOISE + ("$ref",)}
        assert not rest, rest
        return norm(defs[name], defs, prefix, seen + (name,))
    return {k: norm(v, defs, prefix, seen) for k, v in node.items() if k not in NOISE}
a = norm(api["Result"], api, "#/components/schemas/")
b = norm(mine, mine["$defs"], "#/$defs/")
def diff(x, y, where="$"):
    if type(x) != type(y):
        return ["%s: %r vs %r" % (where, x, y)]
    if isinstance(x, dict):
        out = []
        for k in sorted(set(x) | set(y)):
            if k not in x or k not in y:
                out.append("%s.%s only in %s" % (where, k, "openapi.yaml" if k in x else "result.schema.json"))
            else:
                out += diff(x[k], y[k], where + "." + k)
        return out
    if isinstance(x, list):
        if len(x) != len(y):
            return ["%s: %d vs %d items" % (where, len(x), len(y))]
        return sum((diff(p, q, "%s[%d]" % (where, i)) for i, (p, q) in enumerate(zip(x, y))), [])
    return [] if x == y else ["%s: %r (openapi.yaml) vs %r (result.schema.json)" % (where, x, y)]
d = diff(a, b)
print("\n".join(d[:20]))
sys.exit(1 if d else 0)
PY

# 4. The request context: what runtime/context.c takes validates; what it
# refuses fails (as JSON or against the schema), except what JSON Schema
# cannot say, which is listed and must still pass the schema (so the list
# stays true).  The texts are tests/unit/test_context.c's.
$PY -B - "$SRC" >"$_out" 2>&1 <<'PY' || die "context schema: $(cat "$_out")"
import json, os, sys
sys.path.insert(0, os.path.join(sys.argv[1], "tests", "lib"))
import schema_check
taken = [
    b'{"tenant":"t","user":"caf\xc3\xa9 \xf0\x9f\x98\x80","roles":["a","b"],"tools":[],'
    b'"accounting":{"cost":"c-1","quota":9007199254740992,"low":-9007199254740992,"rate":0.25}}',
    b'{}', b'{"user":"\\u00e9\\ud83d\\ude00"}',
    b'{"accounting":{' + b",".join(b'"k%d":%d' % (i, i) for i in range(32)) + b'}}',
    b'{"user":"' + b"a" * 256 + b'"}',
]
refused = [
    b'[]', b'{', b'{"role":"x"}', b'{"tennat":"x"}', b'{"zzz":"x"}', b'{"user":1}', b'{"roles":[1]}',
    b'{"accounting":{"a":true}}', b'{"user":"a\\u0000b"}',
    b'{"user":"ab\xff"}', b'{"user":"\xc0\xaf"}', b'{"user":"\xed\xa0\x80"}', b'{"user":"\xf4\x90\x80\x80"}',
    b'{"accounting":{"quota":1e999}}', b'{"accounting":{"quota":-1e999}}',
    b'{"accounting":{"id":12345678901234567890}}',
    b'{"accounting":{' + b",".join(b'"k%d":%d' % (i, i) for i in range(33)) + b'}}',
    b'{"user":"' + b"a" * 257 + b'"}', b'{"roles":["' + b"a" * 257 + b'"]}',
    b'{"accounting":{"' + b"k" * 257 + b'":1}}', b'{"accounting":{"k":{"x":1}}}', b'{"tools":"t"}',
]
# cordon refuses these; JSON Schema holds a parsed value and cannot:
cannot = {
    b'{"user":"a","user":"b"}': "a duplicate key (a JSON parser keeps one of the two)",
    b'{"user":"\\ud800"}': "a lone surrogate escape (Python's json takes it; cJSON does not)",
    b'{"user":"' + "\u00e9".encode() * 129 + b'"}': "258 bytes in 129 characters (maxLength counts characters, cordon bytes)",
}
bad = []
def verdict(text):
    try:
        value = json.loads(text.decode("utf-8"))
    except ValueError as e:
        return "not JSON: %s" % e
    errs = schema_check.check("context", value)
    return errs[0] if errs else None
for t in taken:
    if verdict(t) is not None:
        bad.append("cordon takes %r, the schema refuses it: %s" % (t[:80], verdict(t)))
for t in refused:
    if verdict(t) is None:
        bad.append("cordon refuses %r, the schema takes it" % t[:80])
for t, why in cannot.items():
    if verdict(t) is not None:
        bad.append("listed as beyond the schema, but it refuses %r: drop it from the list" % t[:80])
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
# and cordon does refuse the ones listed (the list is not of accepted ones).
chmod 755 "$T"
"$CORDONC" compile "$SRC/examples/cafe/app.yaml" "$SRC/examples/cafe/tools.yaml" -o "$T/cafe.cpol" >"$_out" 2>"$_err" ||
	die "compile cafe"
printf 'pass\n' >"$T/p.py"
for ctx in '{"user":"a","user":"b"}' '{"user":"\ud800"}'; do
	printf '%s' "$ctx" >"$T/ctx.json"
	expect_rc 125 "$CORDON" run --policy "$T/cafe.cpol" --code "$T/p.py" --context "$T/ctx.json"
	expect_out exec.harness.context
	schema_ok context "$T/ctx.json"
done
pass "schemas: valid 2020-12, described; the checker names the path; result = openapi Result; context cases"
