#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_sarif.py SCHEMA FILE [N_RESULTS]: validate one `cordonc lint
--format sarif` document against the SARIF 2.1.0 schema, then against what
GitHub code scanning needs beyond the schema: rules with id, name, short and
full description, help and a numeric security-severity; every result with a
rule, a relative artifact URI whose uriBaseId originalUriBaseIds
defines, a region with start and end line and column,
and partialFingerprints; a results array even when empty.  With N_RESULTS,
the number of results must be exactly that."""
import json
import sys

import jsonschema


def fail(msg):
    print("check_sarif: " + msg)
    sys.exit(1)


def main():
    schema = json.load(open(sys.argv[1]))
    doc = json.load(open(sys.argv[2]))
    try:
        jsonschema.Draft4Validator(schema).validate(doc)
    except jsonschema.ValidationError as e:
        fail("schema: %s at %s" % (e.message, "/".join(str(p) for p in e.absolute_path)))
    if doc.get("version") != "2.1.0" or len(doc.get("runs", [])) != 1:
        fail("want version 2.1.0 and one run")
    run = doc["runs"][0]
    rules = run["tool"]["driver"].get("rules", [])
    if not rules:
        fail("no rules in tool.driver")
    ids = []
    for r in rules:
        for k in ("id", "name", "shortDescription", "fullDescription", "help"):
            if k not in r:
                fail("rule %s lacks %s" % (r.get("id"), k))
        sev = float(r["properties"]["security-severity"])
        if not 0.0 <= sev <= 10.0:
            fail("rule %s: security-severity %s out of range" % (r["id"], sev))
        ids.append(r["id"])
    if "results" not in run or not isinstance(run["results"], list):
        fail("no results array")
    for res in run["results"]:
        if res["ruleId"] not in ids or ids[res["ruleIndex"]] != res["ruleId"]:
            fail("result names rule %s at index %s" % (res["ruleId"], res.get("ruleIndex")))
        loc = res["locations"][0]["physicalLocation"]
        uri = loc["artifactLocation"]["uri"]
        if uri.startswith("/"):
            fail("absolute path as uri: " + uri)
        if not uri.startswith("file://"):
            base = loc["artifactLocation"].get("uriBaseId")
            root = run.get("originalUriBaseIds", {}).get(base, {}).get("uri", "")
            if not (root.startswith("file:///") and root.endswith("/")):
                fail("relative uri %s without a uriBaseId that originalUriBaseIds defines as a file:///.../ uri" % uri)
        reg = loc["region"]
        for k in ("startLine", "startColumn", "endLine", "endColumn"):
            if not isinstance(reg.get(k), int) or reg[k] < 1:
                fail("region lacks %s: %r" % (k, reg))
        if (reg["endLine"], reg["endColumn"]) <= (reg["startLine"], reg["startColumn"]):
            fail("empty region %r" % reg)
        if not res.get("partialFingerprints"):
            fail("result without partialFingerprints")
    if len(sys.argv) > 3 and len(run["results"]) != int(sys.argv[3]):
        fail("%d results, want %s" % (len(run["results"]), sys.argv[3]))


main()
