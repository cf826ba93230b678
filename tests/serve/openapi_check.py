#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Hold answers of `cordon serve` to docs/openapi.yaml.

    import openapi_check
    api = openapi_check.load()                 # docs/openapi.yaml of this checkout
    errs = api.check_response("POST", "/v1/executions", 200, body, headers)
    api.assert_response(...)                   # raises AssertionError naming each error
    api.check_request("POST", "/v1/executions", body)

body may be bytes, str (JSON text for a JSON response) or an already
parsed value.  headers (optional, any case) is checked for the response's
required headers (Retry-After on 429, Allow on 405) and their schemas, and
its Content-Type against the documented media types.

Run as a program:
    openapi_check.py                     self-test (the document and sample bodies)
    openapi_check.py --result FILE...    each FILE a `cordon run` result: valid
                                         as the 200 of POST /v1/executions

Standard library, python3-jsonschema and python3-yaml (Debian packages)
only: no OpenAPI validator is packaged for Debian 12, so the document's own
shape is checked here by hand (every $ref resolves, every schema is a valid
2020-12 schema, every path parameter is declared).
"""
import json
import os
import re
import sys
import urllib.parse

import jsonschema
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DOC = os.path.join(HERE, "..", "..", "docs", "openapi.yaml")
# The document is registered under this URI so that its "#/components/..."
# references resolve whichever jsonschema API (RefResolver before 4.18,
# referencing after) does the resolving.
DOC_URI = "urn:cordon:openapi"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def _load_yaml(path):
    with open(path, encoding="utf-8") as f:
        # safe_load: a document is data, never a constructor of objects.
        return yaml.safe_load(f)


def _media_type(content_type):
    """'application/json; charset=utf-8' -> 'application/json'."""
    return content_type.split(";", 1)[0].strip().lower() if content_type else None


class OpenAPI:
    def __init__(self, doc):
        self.doc = doc
        self._routes = []
        for template, item in doc.get("paths", {}).items():
            # A template segment {x} matches one path segment, except the
            # last parameter of the artifact path, whose artifact path may
            # hold '/': a trailing {name} takes the rest.
            parts = re.split(r"(\{[^}]+\})", template)
            rx = ""
            for i, p in enumerate(parts):
                if p.startswith("{"):
                    last = i == len(parts) - 1 or (i == len(parts) - 2 and parts[-1] == "")
                    rx += "(?P<%s>%s)" % (p[1:-1], ".+" if last else "[^/]+")
                else:
                    rx += re.escape(p)
            self._routes.append((re.compile("^" + rx + "$"), template, item))
        # A path that fits a template segment by segment is that template's,
        # before one whose trailing parameter takes the rest
        # (/v1/sessions/{id}/cells is not /v1/sessions/{id}).
        self._routes.sort(key=lambda r: ".+" in r[0].pattern)
        self._validator_cls = jsonschema.validators.Draft202012Validator
        self._make_validator = self._validator_factory()

    # ---- resolving ---------------------------------------------------
    def _validator_factory(self):
        try:
            from referencing import Registry, Resource  # jsonschema >= 4.18
            from referencing.jsonschema import DRAFT202012

            registry = Registry().with_resource(
                DOC_URI, Resource.from_contents(self.doc, default_specification=DRAFT202012)
            )
            return lambda schema: self._validator_cls(schema, registry=registry)
        except ImportError:
            resolver = jsonschema.RefResolver(DOC_URI, self.doc, store={DOC_URI: self.doc})
            return lambda schema: self._validator_cls(schema, resolver=resolver)

    def pointer(self, ref):
        """The node a local reference ("#/components/...") names."""
        if not ref.startswith("#/"):
            raise KeyError("non-local $ref %s" % ref)
        node = self.doc
        for part in ref[2:].split("/"):
            node = node[_unescape(part)]
        return node

    def deref(self, node):
        """Follow $ref (and a $ref's $ref) to the node it stands for."""
        for _ in range(32):
            if not (isinstance(node, dict) and "$ref" in node and not _is_schema_context(node)):
                return node
            node = self.pointer(node["$ref"])
        raise KeyError("$ref loop")

    def _schema_errors(self, schema, value):
        # Local references are made absolute (the document's URI), so that
        # they resolve against the document wherever the schema sits.
        v = self._make_validator(_absolutize(schema))
        errs = []
        for e in sorted(v.iter_errors(value), key=lambda e: [str(p) for p in e.absolute_path]):
            at = "/".join(str(p) for p in e.absolute_path) or "(body)"
            errs.append("%s: %s" % (at, e.message))
        return errs

    # ---- finding the operation -----------------------------------------
    def route(self, path):
        """(template, path item, params) for a concrete path, else None."""
        path = path.split("?", 1)[0]
        for rx, template, item in self._routes:
            m = rx.match(path)
            if m:
                return template, item, m.groupdict()
        return None

    def operation(self, method, path):
        r = self.route(path)
        if r is None:
            raise KeyError("%s is not a path of the document" % path)
        template, item, params = r
        op = item.get(method.lower())
        if op is None:
            raise KeyError("%s %s (%s) is not an operation of the document" % (method, path, template))
        return template, item, op, params

    def response(self, method, path, status):
        """The response object for a status, falling back to 'default'."""
        template, _, op, _ = self.operation(method, path)
        responses = op.get("responses", {})
        for key in (str(status), "%dXX" % (status // 100), "default"):
            if key in responses:
                return self.deref(responses[key])
        raise KeyError("%s %s documents no %d answer" % (method, template, status))

    # ---- checking ------------------------------------------------------
    def check_response(self, method, path, status, body, headers=None):
        """A list of what is wrong with the answer (empty: it conforms)."""
        errs = []
        hdrs = {k.lower(): v for k, v in (headers or {}).items()}
        r = self.route(path)
        if r is None and status == 404:
            # Not an operation of the document: the NotFound answer every
            # unknown path gets (info.description).
            resp = self.pointer("#/components/responses/NotFound")
        elif r is not None and method.lower() not in r[1] and status == 405:
            resp = self.pointer("#/components/responses/MethodNotAllowed")
            allowed = sorted(m.upper() for m in METHODS if m in r[1])
            got = hdrs.get("allow")
            if got is not None and sorted(m.strip().upper() for m in got.split(",") if m.strip()) != allowed:
                errs.append("header Allow: %r, the document lists %s" % (got, ", ".join(allowed)))
        else:
            try:
                resp = self.response(method, path, status)
            except KeyError as e:
                return [str(e)]
        if headers is not None:
            for name, h in (resp.get("headers") or {}).items():
                h = self.deref(h)
                val = hdrs.get(name.lower())
                if val is None:
                    if h.get("required"):
                        errs.append("header %s is required" % name)
                    continue
                hs = h.get("schema", {})
                if self.deref(hs).get("type") == "integer":
                    if not re.fullmatch(r"[0-9]+", val.strip()):
                        errs.append("header %s: %r is not an integer" % (name, val))
        content = resp.get("content")
        if not content:
            return errs
        ctype = _media_type(hdrs.get("content-type"))
        documented = {_media_type(k): k for k in content}
        if ctype is not None and ctype not in documented:
            errs.append("Content-Type %s is not one of %s" % (ctype, sorted(documented)))
            return errs
        key = documented.get(ctype) if ctype else next(iter(content))
        media = content[key]
        if _media_type(key) in STREAM_TYPES and "schema" in media:
            try:
                events = _stream_events(body, _media_type(key))
            except ValueError as e:
                return errs + ["the stream is not events of JSON: %s" % e]
            for i, ev in enumerate(events):
                errs += ["event %d: %s" % (i, e) for e in self._schema_errors(media["schema"], ev)]
            return errs
        if _media_type(key) != "application/json":
            if not isinstance(body, (bytes, str)):
                errs.append("a %s body must be bytes or text" % key)
            return errs
        try:
            value = _parse_json(body)
        except ValueError as e:
            return errs + ["the body is not JSON: %s" % e]
        if "schema" in media:
            errs += self._schema_errors(media["schema"], value)
        return errs

    def check_request(self, method, path, body):
        """What is wrong with a request body and the path's parameters."""
        try:
            template, item, op, params = self.operation(method, path)
        except KeyError as e:
            return [str(e)]
        errs = []
        declared = list(item.get("parameters", [])) + list(op.get("parameters", []))
        for p in declared:
            p = self.deref(p)
            if p.get("in") == "path" and p["name"] in params:
                value = urllib.parse.unquote(params[p["name"]])
                errs += ["path parameter %s: %s" % (p["name"], e)
                         for e in self._schema_errors(p.get("schema", {}), value)]
        rb = op.get("requestBody")
        if rb is None:
            if body not in (None, b"", ""):
                errs.append("%s %s takes no body" % (method, template))
            return errs
        rb = self.deref(rb)
        try:
            value = _parse_json(body)
        except ValueError as e:
            return errs + ["the body is not JSON: %s" % e]
        return errs + self._schema_errors(rb["content"]["application/json"]["schema"], value)

    def assert_response(self, method, path, status, body, headers=None):
        errs = self.check_response(method, path, status, body, headers)
        if errs:
            raise AssertionError("%s %s -> %d does not match docs/openapi.yaml:\n  %s"
                                 % (method, path, status, "\n  ".join(errs)))

    # ---- the document itself -------------------------------------------
    def check_document(self):
        """What is wrong with the document's own shape."""
        errs = []
        if not str(self.doc.get("openapi", "")).startswith("3.1"):
            errs.append("openapi: not 3.1")
        if self.doc.get("jsonSchemaDialect") != "https://json-schema.org/draft/2020-12/schema":
            errs.append("jsonSchemaDialect: not JSON Schema 2020-12")
        for ref in _refs(self.doc):
            try:
                self.deref({"$ref": ref})
            except (KeyError, TypeError) as e:
                errs.append("$ref %s does not resolve: %s" % (ref, e))
        for name, schema in self.doc.get("components", {}).get("schemas", {}).items():
            try:
                self._validator_cls.check_schema(schema)
            except jsonschema.SchemaError as e:
                errs.append("components/schemas/%s: %s" % (name, e.message))
        schemes = self.doc.get("components", {}).get("securitySchemes", {})
        for req in self.doc.get("security", []):
            for s in req:
                if s not in schemes:
                    errs.append("security names an unknown scheme %s" % s)
        for template, item in self.doc.get("paths", {}).items():
            names = set(re.findall(r"\{([^}]+)\}", template))
            for method in METHODS:
                op = item.get(method)
                if op is None:
                    continue
                declared = {self.deref(p)["name"] for p in item.get("parameters", []) + op.get("parameters", [])
                            if self.deref(p).get("in") == "path"}
                if declared != names:
                    errs.append("%s %s: path parameters %s, template has %s"
                                % (method, template, sorted(declared), sorted(names)))
                if not op.get("responses"):
                    errs.append("%s %s: no responses" % (method, template))
                if not op.get("operationId"):
                    errs.append("%s %s: no operationId" % (method, template))
                for status, resp in op.get("responses", {}).items():
                    resp = self.deref(resp)
                    if "description" not in resp:
                        errs.append("%s %s %s: no description" % (method, template, status))
                    for mt, media in (resp.get("content") or {}).items():
                        if "schema" not in media:
                            errs.append("%s %s %s %s: no schema" % (method, template, status, mt))
                        # /v1/ready's 503 is a readiness answer, not an error.
                        if status[0] in "45" and _media_type(mt) == "application/json" and \
                                (template, status) != ("/v1/ready", "503") and \
                                self.deref(media["schema"]) is not self.doc["components"]["schemas"]["Error"]:
                            errs.append("%s %s %s: an error answer is not the Error body" % (method, template, status))
        return errs


def _is_schema_context(node):
    # In 2020-12 a $ref may sit beside other keywords (description, ...):
    # such a node is a schema that adds to its target, and is not
    # followed by deref() (the validator handles it).
    return any(k not in ("$ref", "description", "summary") for k in node)


def _absolutize(node):
    if isinstance(node, dict):
        return {k: (DOC_URI + v if k == "$ref" and isinstance(v, str) and v.startswith("#/") else _absolutize(v))
                for k, v in node.items()}
    if isinstance(node, list):
        return [_absolutize(v) for v in node]
    return node


def _refs(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                yield v
            else:
                yield from _refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from _refs(v)


def _unescape(s):
    return s.replace("~1", "/").replace("~0", "~")


def _parse_json(body):
    if isinstance(body, (bytes, bytearray)):
        body = body.decode("utf-8")
    if isinstance(body, str):
        return json.loads(body)
    return body


# A streamed answer: each event is held to the media type's schema.
STREAM_TYPES = ("text/event-stream", "application/x-ndjson")


def _stream_events(body, media):
    """The JSON events of an SSE or NDJSON body (keep-alives skipped)."""
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    if media == "application/x-ndjson":
        return [json.loads(line) for line in text.split("\n") if line.strip()]
    return [json.loads(line[len("data:"):].strip()) for line in text.split("\n") if line.startswith("data:")]


def load(path=None):
    return OpenAPI(_load_yaml(path or DEFAULT_DOC))


# ---- self-test ----------------------------------------------------------

# A real `cordon run` result (the café demo, examples/cafe), trimmed of
# nothing: every key build_result writes on a successful run.
SAMPLE_RESULT = {
    "policy": {"app": "cafe", "sha256": "5b7f6cf635885f60cfaba0201ae1e8be660580ec9a9802b6a93ceb432e26252b"},
    "executionId": "48434e6b5160c902d1cb7196a8524a1e", "agent": None, "runDir": "", "status": "succeeded",
    "exitCode": 0, "signal": None,
    "stdout": "prices: {'coffee': 2.5, 'croissant': 2.7, 'juice': 3.3}\n", "stderr": "",
    "truncated": {"stdout": False, "stderr": False}, "replaced": {"stdout": 0, "stderr": 0},
    "result": {"solution": {"coffee": 2.5, "croissant": 2.7, "juice": 3.3}}, "resultError": None,
    "durationMs": 334,
    "artifacts": [{"path": "summary.txt", "bytes": 41,
                   "sha256": "54507f15bc1b9dc3df0c9cd878229590bcbffe811a8868a0ef23f605bfa924a2",
                   "contentBase64": "cHJpY2VzOiBjb2ZmZWUgMi41LCBjcm9pc3NhbnQgMi43LCBqdWljZSAzLjMK"}],
    "violations": [],
    "toolCalls": [{"requestId": "r1", "tool": "calc.check", "decision": "allowed", "check": "exec",
                   "durationMs": 73, "toolMs": 63}],
    "peerRefusals": 0,
    "usage": {"cpuMs": 226, "cpuSource": "cgroup-v2", "maxRssKiB": 32028, "memoryPeakBytes": 51916800, "workspaceDeltaBytes": 8192,
              "workspaceEntries": 2},
    "enforcement": {"namespaces": "user,mount,pid,net,ipc,uts,cgroup",
                    "filesystem": "tmpfs root, 5 read-only binds, workspace rw, pivot_root", "network": "none",
                    "identity": "uid 1001 gid 1000 as host 1892418555/1892418555, no supplementary groups",
                    "memory": "cgroup-v1", "pids": "cgroup-v1", "cpu": "none", "landlock": "abi-7",
                    "seccomp": "filter(246 insns)", "capabilities": "none", "noNewPrivs": True,
                    "rlimits": "fsize,nofile,core", "timeout": "supervisor+pid-ns-init"},
    "error": None,
}

SAMPLE_HARNESS = {
    "policy": {"app": "", "sha256": ""}, "executionId": "0123456789abcdef0123456789abcdef", "agent": None, "runDir": "",
    "status": "error", "exitCode": None, "signal": None,
    "error": {"code": "sandbox_execution_failed", "message": "x: no such file",
              "details": {"where": "exec.harness.policy"}},
}


def _selftest():
    import copy

    api = load()
    fails = []

    def ok(desc, errs):
        if errs:
            fails.append("%s: expected to conform, got:\n    %s" % (desc, "\n    ".join(errs)))

    def bad(desc, errs, want=None):
        if not errs:
            fails.append("%s: expected an error, the check passed" % desc)
        elif want and not any(want in e for e in errs):
            fails.append("%s: expected an error about %r, got %s" % (desc, want, errs))

    ok("the document", api.check_document())
    J = {"Content-Type": "application/json"}
    # Good answers, one per operation.
    ok("health", api.check_response("GET", "/v1/health", 200, b'{"status":"ok"}', J))
    ok("ready", api.check_response("GET", "/v1/ready", 200, {"ready": True, "draining": False, "pools": [
        {"app": "cafe", "agent": "analyst", "warm": 2, "target": 2}]}, J))
    ok("ready 503", api.check_response("GET", "/v1/ready", 503, {"ready": False, "draining": True, "pools": []}, J))
    ok("metrics", api.check_response("GET", "/metrics", 200, b"cordon_executions_running 0\n",
                                     {"Content-Type": "text/plain; version=0.0.4"}))
    ok("apps", api.check_response("GET", "/v1/apps", 200, {"apps": [
        {"app": "cafe", "sha256": "ab" * 32, "keyId": "0011aabb", "agents": ["analyst"], "preload": ["numpy"],
         "packages": ["pandas"]}]}, J))
    caps = {"app": "cafe", "agent": "analyst", "sha256": "ab" * 32, "description": "# Sandbox of app `cafe`\n",
            "tools": [{"name": "calc_check", "id": "calc.check", "description": "Check.",
                       "parameters": {"type": "object", "properties": {"unknowns": {"type": "array"}},
                                      "required": ["unknowns"], "additionalProperties": False}}],
            "preload": [], "packages": []}
    ok("capabilities", api.check_response("GET", "/v1/apps/cafe/agents/analyst", 200, caps, J))
    ok("execute", api.check_response("POST", "/v1/executions", 200, json.dumps(SAMPLE_RESULT), J))
    ok("execute (harness error)", api.check_response("POST", "/v1/executions", 200, SAMPLE_HARNESS, J))
    failed = copy.deepcopy(SAMPLE_RESULT)
    failed.update(status="timed_out", exitCode=None, signal="KILL",
                  error={"code": "timeout", "message": "the program ran past the policy's timeout"})
    ok("execute (timed out)", api.check_response("POST", "/v1/executions", 200, failed, J))
    ok("cancel", api.check_response("POST", "/v1/executions/req-1/cancel", 202, {"cancelled": True}, J))
    ok("artifact", api.check_response("GET", "/v1/executions/%s/artifacts/files/a.csv" % ("0" * 32), 200, b"a,b\n",
                                      {"Content-Type": "application/octet-stream"}))
    err = {"error": {"code": "overloaded", "message": "busy"}}
    ok("429", api.check_response("POST", "/v1/executions", 429, err, dict(J, **{"Retry-After": "1"})))
    ok("405", api.check_response("GET", "/v1/executions", 405,
                                 {"error": {"code": "method_not_allowed", "message": "POST"}},
                                 dict(J, Allow="POST")))
    for st in (400, 401, 403, 404, 408, 409, 413, 415, 503):
        ok("error %d" % st, api.check_response("POST", "/v1/executions", st, err, J))
    # Bad answers: each must be caught, and named.
    bad("unknown path", api.check_response("GET", "/v1/nope", 200, {}), "not a path")
    bad("undocumented status", api.check_response("GET", "/v1/health", 502, {}), "documents no 502")
    ok("500", api.check_response("GET", "/v1/health", 500, {"error": {"code": "internal", "message": "m"}}, J))
    bad("health body", api.check_response("GET", "/v1/health", 200, {"status": "up"}, J), "status")
    bad("429 without Retry-After", api.check_response("POST", "/v1/executions", 429, err, J), "Retry-After")
    bad("429 Retry-After not a number", api.check_response("POST", "/v1/executions", 429, err,
                                                           dict(J, **{"Retry-After": "soon"})), "Retry-After")
    bad("405 without Allow", api.check_response("GET", "/v1/executions", 405, err, J), "Allow")
    bad("405 with a wrong Allow", api.check_response("GET", "/v1/executions", 405, err, dict(J, Allow="GET, POST")),
        "Allow")
    bad("405 for a documented method", api.check_response("POST", "/v1/executions", 405, err,
                                                          dict(J, Allow="POST")), "documents no 405")
    ok("404 for an unknown path", api.check_response("GET", "/v2/nothing", 404, err, J))
    bad("error body shape", api.check_response("POST", "/v1/executions", 400, {"error": "bad"}, J), "error")
    bad("wrong content type", api.check_response("GET", "/v1/apps", 200, {"apps": []},
                                                 {"Content-Type": "text/html"}), "Content-Type")
    bad("not JSON", api.check_response("GET", "/v1/apps", 200, b"{", J), "not JSON")
    for key in ("status", "stdout", "usage", "enforcement", "toolCalls", "executionId"):
        r = copy.deepcopy(SAMPLE_RESULT)
        del r[key]
        bad("result without %s" % key, api.check_response("POST", "/v1/executions", 200, r, J))
    r = copy.deepcopy(SAMPLE_RESULT)
    r["surprise"] = 1
    bad("result with an undocumented key", api.check_response("POST", "/v1/executions", 200, r, J), "surprise")
    r = copy.deepcopy(SAMPLE_RESULT)
    r["status"] = "ok"
    bad("result with an unknown status", api.check_response("POST", "/v1/executions", 200, r, J), "status")
    r = copy.deepcopy(SAMPLE_RESULT)
    r["error"] = {"code": "timeout", "message": "x"}
    bad("succeeded with an error", api.check_response("POST", "/v1/executions", 200, r, J), "error")
    r = copy.deepcopy(SAMPLE_RESULT)
    r["status"] = "failed"
    bad("failed without an error", api.check_response("POST", "/v1/executions", 200, r, J), "error")
    r = copy.deepcopy(SAMPLE_RESULT)
    r["artifacts"][0]["content"] = "x"
    bad("artifact with content (not contentBase64)", api.check_response("POST", "/v1/executions", 200, r, J),
        "content")
    c = copy.deepcopy(caps)
    c["tools"][0]["parameters"] = {"type": "string"}
    bad("tool parameters not an object schema", api.check_response("GET", "/v1/apps/a/agents/b", 200, c, J))
    # Requests.
    ok("request", api.check_request("POST", "/v1/executions", {
        "app": "cafe", "agent": "analyst", "code": "print(1)",
        "inputs": [{"name": "a.json", "content": "{}"}, {"name": "b.bin", "contentBase64": "AAE="}],
        "context": {"tenant": "t", "roles": ["analyst"], "tools": ["calc.check"], "accounting": {"cc": 1}},
        "requestId": "r-1"}))
    ok("minimal request", api.check_request("POST", "/v1/executions", {"app": "cafe", "code": ""}))
    ok("null agent/context/requestId", api.check_request("POST", "/v1/executions", {
        "app": "cafe", "code": "", "agent": None, "context": None, "requestId": None}))
    bad("request without code", api.check_request("POST", "/v1/executions", {"app": "cafe"}), "code")
    bad("input with both contents", api.check_request("POST", "/v1/executions", {
        "app": "a", "code": "", "inputs": [{"name": "x", "content": "", "contentBase64": ""}]}))
    for name in ("main.py", "user_code.py", "..", "a/b", ""):
        bad("input named %r" % name, api.check_request("POST", "/v1/executions", {
            "app": "a", "code": "", "inputs": [{"name": name, "content": ""}]}))
    bad("context with an unknown key", api.check_request("POST", "/v1/executions", {
        "app": "a", "code": "", "context": {"admin": True}}), "admin")
    bad("requestId with a space", api.check_request("POST", "/v1/executions", {
        "app": "a", "code": "", "requestId": "a b"}), "requestId")
    bad("cancel path with a bad requestId", api.check_request("POST", "/v1/executions/a%20b/cancel", None),
        "requestId")
    bad("GET with a body", api.check_request("GET", "/v1/apps", b"{}"), "no body")
    if fails:
        print("openapi_check: %d failed" % len(fails))
        for f in fails:
            print("FAIL " + f)
        return 1
    print("openapi_check: self-test OK")
    return 0


def main(argv):
    if len(argv) > 1 and argv[1] == "--result":
        api = load()
        rc = 0
        for path in argv[2:]:
            with open(path, "rb") as f:
                errs = api.check_response("POST", "/v1/executions", 200, f.read(),
                                          {"Content-Type": "application/json"})
            for e in errs:
                print("%s: %s" % (path, e))
            rc |= bool(errs)
        return rc
    if len(argv) > 1:
        print(__doc__)
        return 2
    return _selftest()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
