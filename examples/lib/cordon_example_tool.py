# SPDX-License-Identifier: Apache-2.0
"""The tool protocol shared by the example tool implementations.

A tool runs on the trusted side, started by the supervisor with the argv of
its inventory entry: the params come as one JSON object on stdin, the answer
goes as one JSON value on stdout, exit 0 (docs/tools.md).  The supervisor
has already checked the params against the signature, but a tool is the
last line: run by hand, from another inventory or after a supervisor bug,
it must refuse odd input in words, never with a traceback.

Exit status: 0 answered; 2 the params or the arguments are wrong (running
again will not help); 1 the tool could not do its work (a mail server that
refused, a maildir that is not safe).  Either failure prints
{"error": {"code", "message"}} on stdout; the supervisor makes the call
tool_failed.

Numbers in the params come back as fractions.Fraction, taken from the JSON
text itself (2.15 is exactly 215/100, not the double nearest to it), within
a range that keeps exact arithmetic cheap.
"""
import argparse
import json
import sys
import unicodedata
from decimal import Decimal
from fractions import Fraction

MAX_PARAMS_BYTES = 1 << 20
MAX_NUMBER_CHARS = 64
MAX_NUMBER_EXPONENT = 30  # |x| < 10^31 and no finer than 10^-30
EXIT_FAILED = 1
EXIT_INVALID = 2


class ToolError(Exception):
    def __init__(self, code, message, status):
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


def invalid(message):
    return ToolError("invalid_params", message, EXIT_INVALID)


def failed(message):
    return ToolError("failed", message, EXIT_FAILED)


def bad_arguments(message):
    """The inventory's argv is wrong: the operator's mistake, not the caller's."""
    return ToolError("bad_arguments", message, EXIT_INVALID)


def show(value, limit=40):
    """A short, printable rendering of something the caller sent."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _object(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise invalid(f"duplicate key {show(key)}")
        obj[key] = value
    return obj


def _number(text):
    if len(text) > MAX_NUMBER_CHARS:
        raise invalid(f"a number is longer than {MAX_NUMBER_CHARS} characters")
    d = Decimal(text)  # the JSON grammar has already checked the shape
    if d and abs(d.adjusted()) > MAX_NUMBER_EXPONENT:
        raise invalid(f"{show(text)} is out of range")
    return Fraction(d)


def _constant(name):
    raise invalid(f"{name} is not a JSON number")


def read_params(stream=None):
    """The params object from stdin (or stream, a binary file)."""
    raw = (stream or sys.stdin.buffer).read(MAX_PARAMS_BYTES + 1)
    if len(raw) > MAX_PARAMS_BYTES:
        raise invalid(f"params are over {MAX_PARAMS_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise invalid(f"params are not UTF-8 (byte {e.start})") from None
    try:
        value = json.loads(text, object_pairs_hook=_object, parse_float=_number, parse_int=_number,
                           parse_constant=_constant)
    except json.JSONDecodeError as e:
        raise invalid(f"params are not JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise invalid("params nest too deeply") from None
    if not isinstance(value, dict):
        raise invalid("params must be a JSON object")
    return value


def check_keys(obj, where, required, optional=()):
    """obj is a dict with every required key and nothing else but optional ones."""
    if not isinstance(obj, dict):
        raise invalid(f"{where}: must be an object")
    for key in obj:
        if key not in required and key not in optional:
            raise invalid(f"{where}: unknown key {show(key)}")
    for key in required:
        if key not in obj:
            raise invalid(f"{where}: missing {show(key)}")


def get_list(value, where, min_items, max_items):
    if not isinstance(value, list):
        raise invalid(f"{where}: must be an array")
    if not min_items <= len(value) <= max_items:
        raise invalid(f"{where}: needs {min_items} to {max_items} items, has {len(value)}")
    return value


def get_number(value, where, low, high):
    """A Fraction within [low, high] (booleans are not numbers here)."""
    if not isinstance(value, Fraction):
        raise invalid(f"{where}: must be a number")
    if not low <= value <= high:
        raise invalid(f"{where}: must be within {low} and {high}")
    return value


def get_string(value, where, min_bytes, max_bytes, multiline=False):
    """A string of min..max UTF-8 bytes without control characters (tab,
    CR and LF allowed when multiline).  Line and paragraph separators count
    as control characters: a mail header would end there."""
    if not isinstance(value, str):
        raise invalid(f"{where}: must be a string")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise invalid(f"{where}: holds a lone surrogate") from None
    if not min_bytes <= size <= max_bytes:
        raise invalid(f"{where}: must be {min_bytes} to {max_bytes} bytes, is {size}")
    allowed = "\t\r\n" if multiline else ""
    for i, c in enumerate(value):
        if c not in allowed and unicodedata.category(c) in ("Cc", "Zl", "Zp"):
            raise invalid(f"{where}: control character U+{ord(c):04X} at {i}")
    return value


class _Arguments(argparse.ArgumentParser):
    """argparse that reports a bad command line as a ToolError, so a
    misconfigured inventory entry still answers in JSON."""

    def error(self, message):
        raise bad_arguments(message)


def argument_parser(prog, description):
    return _Arguments(prog=prog, description=description, allow_abbrev=False)


def _emit(value):
    sys.stdout.write(json.dumps(value, allow_nan=False, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def run(main):
    """Calls main(argv) -> answer, prints the answer and exits.  Never
    lets a traceback out: it could carry parameter values into logs."""
    try:
        try:
            answer = main(sys.argv[1:])
        except ToolError as e:
            _emit({"error": {"code": e.code, "message": e.message}})
            sys.exit(e.status)
        except Exception as e:  # a bug in the tool: say which kind, not what it held
            _emit({"error": {"code": "internal", "message": f"internal error ({type(e).__name__})"}})
            sys.exit(EXIT_FAILED)
        _emit(answer)
    except OSError:  # stdout gone: nobody to answer
        sys.exit(EXIT_FAILED)
    sys.exit(0)
