# SPDX-License-Identifier: Apache-2.0
# Calls through the shipped client (/cordon/cordon_tools.py) and the typed
# stubs (/cordon/tools.py), as a generated program would.  params "calls":
# [{tool, params, messageId, via: "client" | "stub", withMessage}]; each
# answer is {"result": ...} or {"error": {"class", "code", "check"}} (and
# "message" with withMessage).  params "returnHints": [tool id]: the return
# type each stub declares, as typing.get_type_hints() evaluates it
# (a TypedDict: its name and required and optional keys).
import typing

import tlib

P = tlib.params()
out = []
try:
    import cordon_tools
    import tools
except ImportError as e:
    tlib.report(importError=str(e))
    raise SystemExit(0)
for c in P["calls"]:
    try:
        if c.get("via") == "stub":
            ns, action = c["tool"].split(".")
            kw = dict(c.get("params", {}))
            if c.get("messageId"):
                kw["message_id"] = c["messageId"]
            r = getattr(getattr(tools, ns), action)(**kw)
        else:
            r = cordon_tools.tool_call(c["tool"], c.get("params", {}), message_id=c.get("messageId"))
        out.append({"result": r})
    except cordon_tools.ToolError as e:
        err = {"class": type(e).__name__, "code": e.code, "check": e.check}
        if c.get("withMessage"):
            err["message"] = str(e)
        out.append({"error": err})
hints = {}
for t in P.get("returnHints", []):
    ns, action = t.split(".")
    rt = typing.get_type_hints(getattr(getattr(tools, ns), action)).get("return")
    hints[t] = {"name": getattr(rt, "__name__", repr(rt)),
                "required": sorted(getattr(rt, "__required_keys__", [])),
                "optional": sorted(getattr(rt, "__optional_keys__", []))}
tlib.report(calls=out, modules=[cordon_tools.__file__, tools.__file__], returnHints=hints)
