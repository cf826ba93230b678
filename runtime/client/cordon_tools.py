# SPDX-License-Identifier: Apache-2.0
"""cordon_tools: call the governed tools of this sandbox.

This program runs inside a cordon sandbox: it has no network, and files
outside /workspace are read-only.  Every action on the outside world (a
calculation service, a mail, a database) goes through a *tool*.  The tools
run outside the sandbox, on the trusted side, and each call is checked
against the policy first: its parameters, its constraints, who may call it,
and its budget.

Calling a tool
--------------

    import cordon_tools

    answer = cordon_tools.tool_call("calc.solve", {
        "unknowns": ["x", "y"],
        "equations": [{"coefficients": [1, 1], "equals": 10},
                      {"coefficients": [1, -1], "equals": 2}],
    })

tool_call(tool, params, message_id=None, timeout=None) sends one request and
returns the tool's answer (any JSON value, as Python dicts, lists, str, int,
float, bool or None).  params is a dict of JSON values.

A tool with a side effect (it sends, writes or pays) needs a message_id:
a string you choose that names this one action, e.g. "order-42-mail".
Calling again with the same message_id does not repeat the action; you get
the answer recorded the first time.  Use a new id for a new action.

The typed stubs module `tools`, when present beside this one, wraps every
tool this sandbox may call as a function with keyword arguments and a
docstring (help(tools.mail.send) shows what each parameter accepts):

    import tools
    tools.mail.send(to="boss@example.org", subject="Order",
                    body="3 coffees", message_id="order-42-mail")

Errors
------

A refused or failed call raises a subclass of ToolError.  Each has .code (a
string), .check (which check decided, or None) and .message (in words):

    Unauthenticated   unauthenticated  the sandbox's token was refused
    BadRequest        bad_request      the request was malformed or too large
    UnknownTool       unknown_tool     no such tool, or not one this program may use
    InvalidParams     invalid_params   a parameter is unknown, missing, mistyped or out of bounds
    ToolDenied        tool_denied      a constraint or a role rule refused the call
    BudgetExceeded    budget_exceeded  the tool's call budget is used up
    InDoubt           in_doubt         this call or an earlier one with its message_id may
                                       have acted, and its answer was not recorded; it is
                                       not run again
    ToolFailed        tool_failed      the tool ran and failed
    ToolTimeout       tool_timeout     the tool did not answer in time
    InternalError     internal_error   the supervisor failed
    ProtocolError     protocol_error   no valid answer came back (connection lost,
                                       a broken frame); the call may or may not have run

InvalidParams and ToolDenied mean "change the call"; BudgetExceeded means
"stop calling this tool"; do not retry a call unchanged after either.

    try:
        cordon_tools.tool_call("mail.send", {...}, message_id="m1")
    except cordon_tools.ToolDenied as e:
        print("refused:", e.message)

Arguments this module can judge without asking (params not a dict, a value
JSON cannot hold such as float('nan'), a tool name that is not a str) raise
TypeError or ValueError and send nothing.

The module uses only the standard library.  It keeps one connection per
process (a child made with fork opens its own) and is safe to call from
several threads; calls from one process are answered one at a time.

Wire protocol (for other clients): a Unix stream socket at $CORDON_SOCKET
(default /supervisor-socket/tools.sock); each frame is a 4-byte big-endian
length and one UTF-8 JSON object.  Request:
{"v":1,"token":...,"id":...,"tool":...,"params":{...},"messageId":...}
(messageId only when given); answer: {"v":1,"id":...,"ok":true,"result":...}
or {"v":1,"id":...,"ok":false,"error":{"code":...,"check":...,"message":...}}.
"""

import json
import os
import socket
import struct
import threading

__all__ = [
    "tool_call",
    "ToolError",
    "Unauthenticated",
    "BadRequest",
    "UnknownTool",
    "InvalidParams",
    "ToolDenied",
    "BudgetExceeded",
    "InDoubt",
    "ToolFailed",
    "ToolTimeout",
    "InternalError",
    "ProtocolError",
    "ERRORS",
]

PROTOCOL_VERSION = 1
DEFAULT_SOCKET = "/supervisor-socket/tools.sock"
# The supervisor never answers with more; a longer frame is a broken stream.
MAX_RESPONSE_BYTES = 2 * 1024 * 1024
_HEADER = struct.Struct(">I")


class ToolError(Exception):
    """A tool call that did not give a result.

    .code is the supervisor's error code, .check names the check that
    decided (or None), .message says why in words."""

    code = "tool_error"

    def __init__(self, message, check=None, code=None):
        super().__init__(message, check, code)
        self.message = message
        self.check = check
        if code is not None:
            self.code = code

    def __str__(self):
        where = " (check: %s)" % self.check if self.check else ""
        return "%s: %s%s" % (self.code, self.message, where)


class Unauthenticated(ToolError):
    """The supervisor refused the sandbox's token or peer identity."""

    code = "unauthenticated"


class BadRequest(ToolError):
    """The request frame was malformed or larger than the policy allows."""

    code = "bad_request"


class UnknownTool(ToolError):
    """No such tool, or not one this program may call."""

    code = "unknown_tool"


class InvalidParams(ToolError):
    """A parameter is unknown, missing, mistyped or outside its bounds."""

    code = "invalid_params"


class ToolDenied(ToolError):
    """A constraint or a role rule refused the call."""

    code = "tool_denied"


class BudgetExceeded(ToolError):
    """The tool's call budget is used up."""

    code = "budget_exceeded"


class InDoubt(ToolError):
    """This call, or an earlier one with its message_id, may have acted
    and its answer was not recorded: the supervisor will not run it again
    (a retry with the same message_id answers in_doubt too)."""

    code = "in_doubt"


class ToolFailed(ToolError):
    """The tool ran and failed."""

    code = "tool_failed"


class ToolTimeout(ToolError):
    """The tool did not answer in time (check "client": the timeout given
    to tool_call ran out first)."""

    code = "tool_timeout"


class InternalError(ToolError):
    """The supervisor itself failed."""

    code = "internal_error"


class ProtocolError(ToolError):
    """No valid answer: the connection failed or the answer was broken
    (short, oversized, not JSON, not the answer to this request).  The call
    may or may not have run."""

    code = "protocol_error"


ERRORS = {
    cls.code: cls
    for cls in (
        Unauthenticated,
        BadRequest,
        UnknownTool,
        InvalidParams,
        ToolDenied,
        BudgetExceeded,
        InDoubt,
        ToolFailed,
        ToolTimeout,
        InternalError,
    )
}


class _Lost(Exception):
    """The connection ended before any byte of the answer arrived."""


def _reject_constant(name):
    raise ValueError("%s is not JSON" % name)


def _no_duplicates(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError("duplicate key %r" % key)
        obj[key] = value
    return obj


def _encode(tool, params, message_id, req_id):
    req = {
        "v": PROTOCOL_VERSION,
        "token": os.environ.get("CORDON_TOKEN", ""),
        "id": req_id,
        "tool": tool,
        "params": params,
    }
    if message_id is not None:
        req["messageId"] = message_id
    try:
        text = json.dumps(req, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except ValueError as e:
        raise ValueError("params cannot be sent as JSON: %s" % e) from None
    try:
        body = text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError("params hold a string that is not valid Unicode: %s" % e) from None
    return _HEADER.pack(len(body)) + body


class _Client:
    """One connection per process, one call at a time."""

    def __init__(self):
        self.lock = threading.Lock()
        self.sock = None
        self.pid = None
        self.seq = 0

    def forget(self):
        """Drop the connection without telling the peer: after a fork the
        parent still uses it (close() only drops this process's
        reference; shutdown() would end the parent's connection too)."""
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
        self.sock = None
        self.pid = None
        self.seq = 0

    def connect(self):
        path = os.environ.get("CORDON_SOCKET") or DEFAULT_SOCKET
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
        except OSError as e:
            s.close()
            raise ProtocolError(
                "cannot connect to the tool supervisor at %s: %s" % (path, e.strerror or e), check="connect"
            ) from None
        self.sock = s
        self.pid = os.getpid()
        self.seq = 0

    def stale(self):
        """Whether an idle connection can no longer carry a call: the
        supervisor closed it (EOF or an error reads at once), or it holds
        bytes nobody asked for (then the stream is out of step)."""
        try:
            self.sock.settimeout(0)
            self.sock.recv(1, socket.MSG_PEEK)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True
        return True

    def recv_exact(self, n, started):
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            try:
                k = self.sock.recv_into(view[got:])
            except (ConnectionResetError, BrokenPipeError):
                k = 0
            if k == 0:
                if not started and got == 0:
                    raise _Lost()
                raise ProtocolError(
                    "the connection ended in the middle of an answer (%d of %d bytes)" % (got, n), check="frame"
                )
            got += k
        return bytes(buf)

    def exchange(self, frame, req_id, timeout):
        self.sock.settimeout(timeout)
        send_error = None
        try:
            self.sock.sendall(frame)
        except (BrokenPipeError, ConnectionResetError) as e:
            # The supervisor may have refused the frame and closed; its
            # answer can still be waiting in our receive queue.
            send_error = e
        try:
            head = self.recv_exact(_HEADER.size, False)
        except _Lost:
            if send_error is not None:
                raise _Lost() from send_error
            raise
        (length,) = _HEADER.unpack(head)
        if length > MAX_RESPONSE_BYTES:
            raise ProtocolError(
                "the answer announces %d bytes; at most %d are allowed" % (length, MAX_RESPONSE_BYTES),
                check="frame",
            )
        body = self.recv_exact(length, True)
        return _decode(body, req_id)

    def call(self, tool, params, message_id, timeout):
        with self.lock:
            if self.sock is not None and self.pid != os.getpid():
                self.forget()
            fresh = False
            if self.sock is not None and self.stale():
                self.forget()
            for attempt in (0, 1):
                if self.sock is None:
                    self.connect()
                    fresh = True
                self.seq += 1
                req_id = "r%d" % self.seq
                frame = _encode(tool, params, message_id, req_id)
                try:
                    return self.exchange(frame, req_id, timeout)
                except _Lost:
                    self.forget()
                    # A reused connection that ended before any answer byte
                    # was closed by the supervisor while idle: send once
                    # more on a fresh one.  A side-effect call carries its
                    # message id, so the supervisor's replay record keeps it
                    # from running twice.
                    if fresh or attempt == 1:
                        raise ProtocolError(
                            "the supervisor closed the connection without answering", check="receive"
                        ) from None
                except socket.timeout:
                    # A late answer must never be read as the next call's.
                    self.forget()
                    raise ToolTimeout("no answer within %g s" % timeout, check="client") from None
                except ProtocolError:
                    self.forget()
                    raise
                except OSError as e:
                    self.forget()
                    raise ProtocolError("the connection failed: %s" % (e.strerror or e), check="receive") from None
            raise AssertionError("unreachable")


def _decode(body, req_id):
    try:
        msg = json.loads(
            body.decode("utf-8"), parse_constant=_reject_constant, object_pairs_hook=_no_duplicates
        )
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ProtocolError("the answer is not valid JSON: %s" % e, check="json") from None
    if not isinstance(msg, dict):
        raise ProtocolError("the answer is not a JSON object", check="json")
    if msg.get("v") != PROTOCOL_VERSION:
        raise ProtocolError("the answer has protocol version %r, not %d" % (msg.get("v"), PROTOCOL_VERSION),
                            check="json")
    ok = msg.get("ok")
    if not isinstance(ok, bool):
        raise ProtocolError("the answer has no boolean 'ok'", check="json")
    rid = msg.get("id")
    # An error about a frame the supervisor could not parse has no id.
    if rid != req_id and not (rid is None and ok is False):
        raise ProtocolError("the answer is for request %r, not %r" % (rid, req_id), check="id")
    if ok:
        if "result" not in msg:
            raise ProtocolError("the answer has no 'result'", check="json")
        return msg["result"]
    err = msg.get("error")
    if not isinstance(err, dict) or not isinstance(err.get("code"), str):
        raise ProtocolError("the answer has no error code", check="json")
    check = err.get("check")
    message = err.get("message")
    if check is not None and not isinstance(check, str):
        check = str(check)
    if not isinstance(message, str):
        message = err["code"]
    raise ERRORS.get(err["code"], ToolError)(message, check=check, code=err["code"])


_client = _Client()


def _after_fork_in_child():
    # Another thread of the parent may have held the lock at fork time;
    # the child has only this thread, so a new lock is the honest state.
    _client.lock = threading.Lock()
    _client.forget()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def tool_call(tool, params, message_id=None, timeout=None):
    """Call the governed tool `tool` (e.g. "mail.send") with params (a dict
    of JSON values) and return its result.

    message_id: required by tools with a side effect; a string naming this
    one action (a repeated id returns the first answer, the action is not
    repeated).  timeout: seconds to wait for the answer (None: as long as
    the supervisor allows the tool); when it runs out, ToolTimeout with
    check "client" is raised and the call may still run.

    Raises a ToolError subclass when the call is refused or fails (see the
    module docstring), TypeError or ValueError for arguments that cannot be
    sent."""
    if not isinstance(tool, str):
        raise TypeError("tool must be a str such as 'mail.send', not %s" % type(tool).__name__)
    if not isinstance(params, dict):
        raise TypeError("params must be a dict, not %s" % type(params).__name__)
    if message_id is not None and not isinstance(message_id, str):
        raise TypeError("message_id must be a str or None, not %s" % type(message_id).__name__)
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ValueError("timeout must be a positive number of seconds or None")
    return _client.call(tool, params, message_id, timeout)
