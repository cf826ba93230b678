# SPDX-License-Identifier: Apache-2.0
"""cordon_client: the host side's client of `cordon serve` (standard library only).

    from cordon_client import Client
    c = Client("/run/cordon/serve.sock")                     # the Unix socket: no token
    c = Client("http://127.0.0.1:8080", token="...")         # TCP: a bearer token
    caps = c.capabilities("cafe", "analyst")                 # description + tools (JSON Schema)
    r = c.execute("cafe", code, agent="analyst", inputs={"receipts.json": data})
    r.status, r.stdout, r.result, [a.content for a in r.artifacts]
    with c.session("cafe", "analyst", context={"tenant": "acme", "user": "ana"}) as s:
        s.run("import numpy as np; x = np.arange(10)")          # a code-interpreter session:
        s.run("x.sum()").stdout                                   # '45\n': the globals persist

The API is docs/openapi.yaml of the cordon repository; docs/serve.md is its
prose.  Every answer outside 2xx raises a CordonError subclass carrying the
HTTP status and the server's error code and message.  An execution that
fails, times out or hits a limit is not an exception: it is a Result whose
status says so, exactly as `cordon run` reports it.

Not to be confused with cordon_tools, the client a program uses *inside*
the sandbox to call governed tools.
"""
import base64
import hashlib
import http.client
import json
import socket
import urllib.parse

__all__ = [
    "Client", "Result", "Artifact", "Session", "chat_tools",
    "CordonError", "BadRequest", "Unauthorized", "Forbidden", "NotFound", "Conflict", "Overloaded",
    "Unavailable", "ConnectionFailed",
]
__version__ = "0.1.0"

DEFAULT_TIMEOUT = 120.0
# An answer this client reads into memory at most: a result is bounded by
# the policy (outputs, result.json) and the server's --inline-max, an
# artifact by its declared max_bytes; this only stops a runaway peer.
MAX_ANSWER_BYTES = 1 << 30


# ---- errors ---------------------------------------------------------------

class CordonError(Exception):
    """An answer outside 2xx: .status (HTTP), .code and .message (the error body)."""

    def __init__(self, status, code, message, headers=None):
        super().__init__("%s %s: %s" % (status, code, message) if status else "%s: %s" % (code, message))
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})


class BadRequest(CordonError):
    """400 (malformed, wrong type, bad name), 408 (body too slow), 413 (too large), 415 (not JSON)."""


class Unauthorized(CordonError):
    """401: TCP without a token, or with one the server does not hold."""


class Forbidden(CordonError):
    """403: the app is outside the token's scope."""


class NotFound(CordonError):
    """404: unknown app or agent, no such running execution, artifact unknown or expired."""


class Conflict(CordonError):
    """409: an execution with this request id is already running; for a
    session's cell, the session ended (code session_ended) or runs a cell
    (cell_running)."""


class _RetryAfter(CordonError):
    def __init__(self, status, code, message, headers=None):
        super().__init__(status, code, message, headers)
        self.retry_after = _retry_after(self.headers)


class Overloaded(_RetryAfter):
    """429: every slot and the queue are taken; .retry_after is the server's hint in seconds."""


class Unavailable(_RetryAfter):
    """503: the server is draining (SIGTERM); .retry_after when it gave one."""


class ConnectionFailed(CordonError):
    """The server could not be reached, or broke off the answer (status None)."""

    def __init__(self, message):
        super().__init__(None, "connection_failed", message)


_BY_STATUS = {400: BadRequest, 408: BadRequest, 413: BadRequest, 415: BadRequest, 401: Unauthorized,
              403: Forbidden, 404: NotFound, 409: Conflict, 429: Overloaded, 503: Unavailable}


def _retry_after(headers):
    for k, v in headers.items():
        if k.lower() == "retry-after":
            try:
                return max(0, int(v.strip()))
            except ValueError:
                return None  # an HTTP date: the server sends seconds; a proxy may not
    return None


def _error_from(status, headers, data):
    code, message = "http_%d" % status, ""
    try:
        err = json.loads(data.decode("utf-8"))["error"]
        code, message = str(err["code"]), str(err["message"])
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
        # Not the server's error body (a proxy's page, say): keep a bounded
        # piece of it so the caller sees what came back.
        message = data[:300].decode("utf-8", "replace")
    return _BY_STATUS.get(status, CordonError)(status, code, message, headers)


# ---- transport ------------------------------------------------------------

class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP/1.1 over an AF_UNIX stream socket: cordon serve's --socket."""

    def __init__(self, path, timeout=DEFAULT_TIMEOUT):
        # The host only fills the Host header; the server does not read it.
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.settimeout(self.timeout)
            s.connect(self.socket_path)
        except BaseException:
            s.close()
            raise
        self.sock = s


# ---- results --------------------------------------------------------------

class Artifact(dict):
    """One entry of a result's "artifacts": path, bytes (the size), sha256,
    and contentBase64 when the server inlined it.  .content gives the bytes,
    decoded or fetched, and checked against sha256."""

    def __init__(self, entry, client=None, execution_id=None):
        super().__init__(entry)
        self._client = client
        self._execution_id = execution_id
        self._content = None

    @property
    def path(self):
        return self["path"]

    @property
    def size(self):
        return self["bytes"]

    @property
    def sha256(self):
        return self["sha256"]

    @property
    def inline(self):
        return "contentBase64" in self

    @property
    def content(self):
        if self._content is None:
            if "contentBase64" in self:
                data = base64.b64decode(self["contentBase64"], validate=True)
            elif self._client is not None and self._execution_id:
                data = self._client.artifact(self._execution_id, self.path)
            else:
                raise CordonError(None, "not_inline", "%s was not inlined and no client can fetch it" % self.path)
            # The result names the bytes by hash: what arrived must be them.
            if hashlib.sha256(data).hexdigest() != self.sha256:
                raise CordonError(None, "artifact_mismatch", "%s: the bytes do not match the result's sha256"
                                  % self.path)
            self._content = data
        return self._content


class Result(dict):
    """The result JSON of an execution (the same as `cordon run` prints),
    as a dict, with typed accessors for the keys used most."""

    def __init__(self, value, client=None):
        super().__init__(value)
        self._artifacts = [Artifact(a, client, value.get("executionId")) for a in value.get("artifacts") or []]

    status = property(lambda self: self["status"])
    execution_id = property(lambda self: self.get("executionId"))
    exit_code = property(lambda self: self.get("exitCode"))
    signal = property(lambda self: self.get("signal"))
    stdout = property(lambda self: self.get("stdout", ""))
    stderr = property(lambda self: self.get("stderr", ""))
    result = property(lambda self: self.get("result"))
    error = property(lambda self: self.get("error"))
    tool_calls = property(lambda self: self.get("toolCalls", []))
    usage = property(lambda self: self.get("usage", {}))
    enforcement = property(lambda self: self.get("enforcement"))
    artifacts = property(lambda self: self._artifacts)
    # A session's cell only: {"sessionId", "cell", "state", "endReason", "endMessage"}.
    session = property(lambda self: self.get("session"))
    # [{name, data: {MIME: value}, truncated, error}]: docs/displays.md.
    displays = property(lambda self: self.get("displays", []))

    @property
    def succeeded(self):
        return self["status"] == "succeeded"

    def artifact(self, path):
        """The artifact whose path is path (KeyError when there is none)."""
        for a in self._artifacts:
            if a.path == path:
                return a
        raise KeyError(path)


class Session:
    """A code-interpreter session of `cordon serve` (docs/serve.md,
    "Sessions"): one sandbox whose interpreter runs each cell in the
    globals the cells before it left.  Made by Client.session(); a context
    manager that ends the session on exit.

    run(code) answers every cell with a Result (status, stdout, stderr,
    toolCalls, ...; .session says the cell's number and whether the session
    goes on).  A cell that raised is a Result with status "failed" and the
    session goes on; a cell that timed out or ended the interpreter ends
    the session (result.session["state"] == "ended"), and a further run()
    raises Conflict (session_ended).
    """

    def __init__(self, client, info, who):
        self._client = client
        self.info = info
        self._who = who  # {"tenant", "user"} of the creating context: the session's owner

    id = property(lambda self: self.info["sessionId"])
    execution_id = property(lambda self: self.info.get("executionId"))
    state = property(lambda self: self.info.get("state"))
    ended = property(lambda self: self.info.get("state") == "ended")

    def __repr__(self):
        return "Session(%s, %s)" % (self.id, self.state)

    def _query(self):
        q = urllib.parse.urlencode(sorted(self._who.items()))
        return "?" + q if q else ""

    def _cell_body(self, code, request_id):
        if not isinstance(code, str):
            raise TypeError("code must be str")
        body = {"code": code}
        if self._who:
            body["context"] = dict(self._who)
        if request_id is not None:
            body["requestId"] = request_id
        return body

    def _note(self, r):
        """What a cell's Result says of the session, kept in .info."""
        cell = r.session or {}
        self.info["cells"] = cell.get("cell", self.info.get("cells"))
        if cell.get("state") == "ended":
            self.info.update(state="ended", endReason=cell.get("endReason"), endMessage=cell.get("endMessage"))
        return r

    def run(self, code, request_id=None, timeout=None):
        """POST /v1/sessions/{id}/cells: the cell's Result, whatever its status."""
        body = self._cell_body(code, request_id)
        return self._note(Result(self._client._json("POST", "/v1/sessions/%s/cells" % _seg(self.id), body,
                                                    timeout), self._client))

    def stream(self, code, request_id=None, timeout=None, format="ndjson"):
        """POST /v1/sessions/{id}/cells, followed as it runs: yields each
        event as Client.stream() does ("start", "stdout", "stderr",
        "toolCall", "dropped", "violation", then "result", a Result as
        run() returns, or "error").  Leaving the loop early closes the
        connection, which cancels the cell and so ends the session."""
        body = self._cell_body(code, request_id)
        for ev in self._client._stream("/v1/sessions/%s/cells" % _seg(self.id), body, timeout, format):
            if ev.get("type") == "result":
                self._note(ev["result"])
            yield ev

    def refresh(self):
        """GET /v1/sessions/{id}: the session's state now (also kept in .info)."""
        self.info = self._client._json("GET", "/v1/sessions/%s%s" % (_seg(self.id), self._query()))
        return self.info

    def close(self):
        """DELETE /v1/sessions/{id}: ends it (a running cell is cancelled);
        the ended session, or None when the server has forgotten it."""
        try:
            self.info = self._client._json("DELETE", "/v1/sessions/%s%s" % (_seg(self.id), self._query()))
        except NotFound:
            return None
        return self.info

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def chat_tools(capabilities):
    """The agent's tools as a chat-completions request's "tools" list:
    [{"type": "function", "function": {"name", "description", "parameters"}}].
    The server already gives each tool a function-safe name (calc_check for
    calc.check) and its parameters as JSON Schema."""
    return [{"type": "function",
             "function": {"name": t["name"], "description": t["description"], "parameters": t["parameters"]}}
            for t in capabilities["tools"]]


# ---- the client ----------------------------------------------------------

class Client:
    """A client of one `cordon serve`.

    target: a Unix socket path ("/run/cordon/serve.sock", or "unix:" + path),
    or a base URL "http://host:port" (https when a TLS proxy fronts it).
    token: the bearer token for TCP; the Unix socket needs none (one given
    is sent all the same).  timeout: seconds for each request, which for
    execute() must cover the policy's timeout plus any wait in the queue.

    One connection per request: a Client may be shared between threads.
    """

    def __init__(self, target, token=None, timeout=DEFAULT_TIMEOUT):
        self.token = token
        self.timeout = timeout
        self._prefix = ""
        if target.startswith("unix:"):
            target = target[len("unix:"):]
            if target.startswith("//"):
                target = target[2:]
        if target.startswith(("http://", "https://")):
            u = urllib.parse.urlsplit(target)
            if not u.hostname:
                raise ValueError("no host in %r" % target)
            self._connect = self._tcp(u.scheme, u.hostname, u.port)
            self._prefix = u.path.rstrip("/")
            self.target = target
        elif "://" in target:
            raise ValueError("%r: a Unix socket path or an http(s):// URL" % target)
        else:
            self._connect = lambda timeout: UnixHTTPConnection(target, timeout=timeout)
            self.target = target

    @staticmethod
    def _tcp(scheme, host, port):
        cls = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
        return lambda timeout: cls(host, port, timeout=timeout)

    def __repr__(self):
        return "Client(%r)" % self.target

    # ---- one request ----------------------------------------------------
    def _request(self, method, path, body=None, timeout=None, ok=(200,)):
        """(status, headers, bytes); raises the typed error for an answer outside ok."""
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.token is not None:
            headers["Authorization"] = "Bearer " + self.token
        conn = self._connect(self.timeout if timeout is None else timeout)
        try:
            try:
                conn.request(method, self._prefix + path, body=data, headers=headers)
            except (BrokenPipeError, ConnectionResetError):
                # The server answered before the body was all sent (413
                # for a body over --max-body) and closed its end: its
                # answer is still there to read, and it says why.
                pass
            resp = conn.getresponse()
            answer = resp.read(MAX_ANSWER_BYTES + 1)
            status, rh = resp.status, dict(resp.getheaders())
        except (OSError, http.client.HTTPException) as e:
            raise ConnectionFailed("%s %s: %s" % (method, path, e)) from e
        finally:
            conn.close()
        if len(answer) > MAX_ANSWER_BYTES:
            raise ConnectionFailed("%s %s: the answer is over %d bytes" % (method, path, MAX_ANSWER_BYTES))
        if status not in ok:
            raise _error_from(status, rh, answer)
        return status, rh, answer

    def _json(self, method, path, body=None, timeout=None, ok=(200,)):
        _, _, answer = self._request(method, path, body, timeout, ok)
        try:
            return json.loads(answer.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise ConnectionFailed("%s %s: the answer is not JSON: %s" % (method, path, e)) from e

    # ---- the API ---------------------------------------------------------
    def health(self):
        """GET /v1/health: {"status": "ok"}."""
        return self._json("GET", "/v1/health")

    def ready(self):
        """GET /v1/ready: {"ready", "draining", "pools"}; a server that is
        not ready (503) answers the same body, returned, not raised."""
        return self._json("GET", "/v1/ready", ok=(200, 503))

    def metrics(self):
        """GET /metrics: the Prometheus text."""
        return self._request("GET", "/metrics")[2].decode("utf-8")

    def apps(self):
        """GET /v1/apps: the list of {"app", "sha256", "keyId", "agents", "preload", "packages"}."""
        return self._json("GET", "/v1/apps")["apps"]

    def capabilities(self, app, agent):
        """GET /v1/apps/{app}/agents/{agent}: {"app", "agent", "sha256",
        "description" (markdown for the model), "tools", "preload", "packages"}."""
        return self._json("GET", "/v1/apps/%s/agents/%s" % (_seg(app), _seg(agent)))

    def execute(self, app, code, agent=None, inputs=None, context=None, request_id=None, timeout=None):
        """POST /v1/executions: run code once in a fresh sandbox.

        inputs: {name: bytes or str}, files put beside the program (str is
        sent as UTF-8 text, bytes as base64).  context: the request context
        (tenant, user, roles, session, tools, ...).  request_id: a handle
        for cancel().  Returns the Result whatever the execution's status."""
        body = _exec_body(app, code, agent, inputs, context, request_id)
        return Result(self._json("POST", "/v1/executions", body, timeout), self)

    def stream(self, app, code, agent=None, inputs=None, context=None, request_id=None, timeout=None,
               format="ndjson"):
        """POST /v1/executions, followed as it runs: yields each event, a
        dict with "type" ("start", "stdout", "stderr", "toolCall",
        "violation", "dropped", "result", "error"; docs/serve.md,
        "Streaming"), in order, the last being "result" (its "result" is the
        same as execute()'s, as a Result) or "error".  format: "ndjson" or
        "sse", the wire format asked for (the events are the same).
        timeout: seconds of silence between two reads (the server sends a
        keep-alive every 10 s).  Leaving the loop early closes the
        connection, which cancels the execution."""
        return self._stream("/v1/executions", _exec_body(app, code, agent, inputs, context, request_id), timeout,
                            format)

    def _stream(self, path, body, timeout, format):
        """POST body to path asking for a stream: the events, as stream()
        says."""
        if format not in ("ndjson", "sse"):
            raise ValueError("format: 'ndjson' or 'sse'")
        headers = {"Accept": "application/x-ndjson" if format == "ndjson" else "text/event-stream",
                   "Content-Type": "application/json"}
        if self.token is not None:
            headers["Authorization"] = "Bearer " + self.token
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        conn = self._connect(self.timeout if timeout is None else timeout)
        try:
            try:
                conn.request("POST", self._prefix + path, body=data, headers=headers)
                resp = conn.getresponse()
            except (OSError, http.client.HTTPException) as e:
                raise ConnectionFailed("POST %s: %s" % (path, e)) from e
            if resp.status != 200:
                raise _error_from(resp.status, dict(resp.getheaders()), resp.read(MAX_ANSWER_BYTES))
            events = _sse_events(resp) if format == "sse" else _ndjson_events(resp)
            for ev in events:
                if ev.get("type") == "result":
                    ev["result"] = Result(ev["result"], self)
                yield ev
                if ev.get("type") in ("result", "error"):
                    return
            raise ConnectionFailed("POST %s: the stream ended before its result" % path)
        finally:
            conn.close()

    def session(self, app, agent, inputs=None, context=None, timeout=None):
        """POST /v1/sessions: a Session of agent, which the policy must let
        hold sessions (else Forbidden).  inputs: as execute()'s, in the
        workspace before the first cell.  context: the request context of
        the whole session; its tenant and user (with the token) own it, and
        the Session names them on every later request."""
        body = {"app": app, "agent": agent}
        if inputs:
            body["inputs"] = [_input(name, data) for name, data in inputs.items()]
        if context is not None:
            body["context"] = context
        who = {k: context[k] for k in ("tenant", "user") if context and isinstance(context.get(k), str)}
        return Session(self, self._json("POST", "/v1/sessions", body, timeout, ok=(201,)), who)

    def cancel(self, request_id):
        """POST /v1/executions/{request_id}/cancel: True once the server took
        it (202); NotFound when no running execution of this caller has it."""
        return self._json("POST", "/v1/executions/%s/cancel" % _seg(request_id), ok=(202,)).get("cancelled") is True

    def artifact(self, execution_id, name):
        """GET /v1/executions/{id}/artifacts/{name}: the bytes, while the
        server retains them (--retain-seconds)."""
        path = "/v1/executions/%s/artifacts/%s" % (_seg(execution_id), urllib.parse.quote(name, safe="/"))
        return self._request("GET", path)[2]


def _exec_body(app, code, agent, inputs, context, request_id):
    if not isinstance(code, str):
        raise TypeError("code must be str")
    body = {"app": app, "code": code}
    if agent is not None:
        body["agent"] = agent
    if inputs:
        body["inputs"] = [_input(name, data) for name, data in inputs.items()]
    if context is not None:
        body["context"] = context
    if request_id is not None:
        body["requestId"] = request_id
    return body


def _lines(resp):
    """The answer's lines, without their end; a line is bounded as an answer is."""
    try:
        while True:
            line = resp.readline(MAX_ANSWER_BYTES + 1)
            if not line:
                return
            if len(line) > MAX_ANSWER_BYTES:
                raise ConnectionFailed("a stream line is over %d bytes" % MAX_ANSWER_BYTES)
            yield line.rstrip(b"\r\n").decode("utf-8")
    except (OSError, http.client.HTTPException) as e:
        raise ConnectionFailed("the stream broke: %s" % e) from e


def _event(text):
    try:
        ev = json.loads(text)
    except ValueError as e:
        raise ConnectionFailed("a stream event is not JSON: %s" % e) from e
    if not isinstance(ev, dict) or not isinstance(ev.get("type"), str):
        raise ConnectionFailed("a stream event without a type: %r" % text[:200])
    return ev


def _ndjson_events(resp):
    for line in _lines(resp):
        if line:  # an empty line is a keep-alive
            yield _event(line)


def _sse_events(resp):
    data = []
    for line in _lines(resp):
        if line == "":
            if data:
                yield _event("\n".join(data))
            data = []
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
        # "event:" repeats the JSON's type; ":" lines are keep-alives


def _seg(s):
    """One path segment: nothing of s may add a segment or a query."""
    if not isinstance(s, str) or not s:
        raise ValueError("a non-empty string is needed, got %r" % (s,))
    return urllib.parse.quote(s, safe="")


def _input(name, data):
    if isinstance(data, str):
        return {"name": name, "content": data}
    if isinstance(data, (bytes, bytearray, memoryview)):
        return {"name": name, "contentBase64": base64.b64encode(bytes(data)).decode("ascii")}
    raise TypeError("input %r: bytes or str, not %s" % (name, type(data).__name__))
