#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Hold a JSON document (or each line of a JSON-lines file) to one of the
schemas in docs/schemas/.

    import schema_check
    errs = schema_check.check("result", value)      # [] or ["$.path: message", ...]
    schema_check.assert_valid("audit-line", value)  # raises AssertionError

    schema_check.py SCHEMA [FILE...]        # FILE or stdin; JSON, or --lines
    schema_check.py --lines audit-line logs/tool-calls.jsonl

SCHEMA is a name (result, audit-line, lint, diff, describe, context, stream-event) or
a path to a *.schema.json.  Exit 0 when every document matches; 1 with the
file, the line (JSON lines), the JSON path of the first error and its
message when one does not; 2 on a usage error or a file that is not JSON.

Python's standard library and python3-jsonschema (Debian, >= 4.0 for
Draft 2020-12) only.
"""
import json
import os
import sys

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
# docs/schemas of this checkout; a suite rerun as cordon-test from a copy
# of the tree it can read has them beside this file (lib/schemas).
SCHEMA_DIR = next((d for d in (os.path.join(HERE, "..", "..", "docs", "schemas"), os.path.join(HERE, "schemas"))
                   if os.path.isdir(d)), os.path.join(HERE, "..", "..", "docs", "schemas"))
NAMES = ("result", "audit-line", "lint", "diff", "describe", "context", "stream-event")

_cache = {}


def schema_path(name):
    if name.endswith(".json"):
        return name
    return os.path.join(SCHEMA_DIR, name + ".schema.json")


def load(name):
    """The schema called name, read once and checked against the 2020-12
    metaschema (a schema with a typo must not pass everything)."""
    path = schema_path(name)
    if path not in _cache:
        with open(path, encoding="utf-8") as f:
            schema = json.load(f)
        jsonschema.Draft202012Validator.check_schema(schema)
        _cache[path] = jsonschema.Draft202012Validator(
            schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    return _cache[path]


def _where(err):
    return "$" + "".join("[%d]" % p if isinstance(p, int) else ".%s" % p for p in err.absolute_path)


def check(name, value):
    """[] when value matches the schema, else each error as "$.path: message",
    the first in document order first."""
    errs = sorted(load(name).iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path])
    return ["%s: %s" % (_where(e), e.message) for e in errs]


def assert_valid(name, value, what="document"):
    errs = check(name, value)
    if errs:
        raise AssertionError("%s does not match docs/schemas/%s.schema.json: %s"
                             % (what, name, "; ".join(errs[:3])))


def check_lines(name, text):
    """Each non-empty line of a JSON-lines text: [] or ["line N: ..."]."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError as e:
            out.append("line %d: not JSON: %s" % (n, e))
            continue
        out.extend("line %d: %s" % (n, e) for e in check(name, value))
    return out


def main(argv):
    lines = False
    args = list(argv[1:])
    if args and args[0] == "--lines":
        lines = True
        args.pop(0)
    if not args or args[0] in ("-h", "--help"):
        sys.stderr.write(__doc__)
        return 2
    name, files = args[0], args[1:] or ["-"]
    if not name.endswith(".json") and name not in NAMES:
        sys.stderr.write("schema_check: unknown schema %r (known: %s)\n" % (name, ", ".join(NAMES)))
        return 2
    rc = 0
    for path in files:
        try:
            if path == "-":
                text = sys.stdin.buffer.read().decode("utf-8")
            else:
                with open(path, "rb") as f:
                    text = f.read().decode("utf-8")
            errs = check_lines(name, text) if lines else check(name, json.loads(text))
        except (OSError, ValueError) as e:
            print("%s: not JSON: %s" % (path, e))
            return 2
        if errs:
            print("%s: %s" % (path, errs[0]))
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
