#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Round trip: compile the cafe example, load it back through the runtime's
loader (cordonc inspect --json), and compare with what examples/cafe says.
Then hand-patch the blob (rehashed, as a hostile writer would) and check the
loader names the field at fault: a nonzero reserved word in a tool record,
a daily budget over the bound, a blob of the previous major format.

The expected values are written here by reading the YAML by eye, in the
units the YAML uses, and converted in this file: 30s is 30000 ms, 64k is
65536 bytes.  Nothing is copied from the compiler's output.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

BUILD, SRC = os.environ["BUILD"], os.environ["SRC"]
sys.path.insert(0, os.path.join(SRC, "tests", "cli"))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import blobtool  # noqa: E402  (written from docs/blob-format.md, not the C code)

TOOL_BYTES = 112  # docs/blob-format.md, TOOLS
K, M, G = 1024, 1024 ** 2, 1024 ** 3


def fail(msg):
    print("FAIL test_roundtrip.py:", msg)
    sys.exit(1)


def eq(what, got, want):
    if got != want:
        fail(f"{what}: got {got!r}, want {want!r}")


with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "a.cpol")
    subprocess.run([f"{BUILD}/cordonc", "compile", f"{SRC}/examples/cafe/app.yaml",
                    f"{SRC}/examples/cafe/tools.yaml", "-o", out], check=True)
    j = json.loads(subprocess.run([f"{BUILD}/cordonc", "inspect", "--json", out],
                                  check=True, capture_output=True, text=True).stdout)
    raw = open(out, "rb").read()

# 3.5: cordonc compile always records provenance (SOURCES, LINT).
eq("format", (j["format"]["major"], j["format"]["minor"], j["format"]["arch"]), (3, 5, "x86_64"))
eq("size", j["format"]["size"], len(raw))
eq("sections", [s["name"] for s in j["sections"]],
   ["strtab", "strlist", "idxlist", "meta", "limits", "executor", "env", "mounts", "seccomp",
    "tools", "params", "constraints", "agents", "outputs", "sources", "lint", "signature"])
eq("app", j["meta"]["app"], "cafe")

lim = j["limits"]
eq("limits", lim, {
    "mode": "isolated", "timeoutMs": 30_000, "maxFileBytes": 100 * M,
    "maxExecWorkspaceDeltaBytes": 250 * M, "maxExecWorkspaceBytes": 1 * G,
    "maxExecWorkspaceEntries": 20_000,  # default: not in app.yaml
    "workspaceMonitorIntervalMs": 500, "maxOutputBytes": 64 * K, "maxResultBytes": 64 * K,
    "maxCodeBytes": 64 * K, "maxToolRequestBytes": 1 * M,  # default: not in app.yaml
    "memoryBytes": 1 * G, "pids": 64, "openFiles": 256,
    "cpu": None})  # no quota: not in app.yaml

ex = j["executor"]
eq("interpreter", ex["interpreter"], "/usr/bin/python3")
eq("uid/gid", (ex["uid"], ex["gid"]), (1001, 1000))
eq("network", ex["network"], "none")
eq("landlock", ex["landlock"], True)
eq("require", ex["require"], ["landlock"])
eq("seccomp", ex["seccomp"], {"profile": "python-compute", "extra": ""})
eq("env", j["env"], {"LANG": "C.UTF-8", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})

mounts = {m["target"]: m for m in j["mounts"]}
eq("mount targets sorted", [m["target"] for m in j["mounts"]],
   sorted(["/usr", "/lib", "/lib64", "/etc/alternatives", "/tmp"]))
for t in ["/usr", "/lib", "/lib64", "/etc/alternatives"]:
    eq(f"mount {t}", mounts[t], {"type": "bind", "source": t, "target": t, "rw": False})
eq("tmpfs", mounts["/tmp"], {"type": "tmpfs", "target": "/tmp", "rw": True, "sizeBytes": 64 * M})

tools = {t["id"]: t for t in j["tools"]}
eq("tool ids", [t["id"] for t in j["tools"]], ["calc.check", "calc.solve", "mail.send"])
mail = tools["mail.send"]
eq("mail flags", (mail["sideEffect"], mail["replay"], mail["timeoutMs"], mail["maxCalls"],
                 mail["maxCallsPerDay"]),
   (True, True, 10_000, 5, 50))
eq("mail exec", mail["exec"], ["/usr/local/libexec/cordon/examples/mail/mail-send", "--from", "cafe@example.org",
                               "--maildir", "/var/tmp/cordon-examples/cafe/outbox"])
eq("mail env_from", mail["envFrom"], ["SMTP_PASSWORD"])
# Defaults: not in tools.yaml (docs/tools.md).
eq("mail identity and cgroup", (mail["runAs"], mail["memoryBytes"], mail["pids"]),
   ({"kind": "dedicated"}, 256 * M, 32))
eq("mail roles", mail["roles"], ["analyst"])
eq("mail params", mail["params"], {
    "to": {"type": "string", "required": True, "minLength": 3, "maxLength": 254},
    "subject": {"type": "string", "required": True, "minLength": 1, "maxLength": 200},
    "body": {"type": "string", "required": True, "maxLength": 65536},
    "priority": {"type": "string", "required": False, "enum": ["high", "low", "normal"]}})
calc = tools["calc.solve"]
eq("calc flags", (calc["sideEffect"], calc["replay"], calc["timeoutMs"], calc["maxCalls"],
                 calc["maxCallsPerDay"]),
   (False, False, 5_000, 20, None))
eq("calc roles", calc["roles"], ["analyst", "cashier"])
eq("calc params", calc["params"], {
    "unknowns": {"type": "array", "required": True, "maxItems": 8,
                 "items": {"type": "string", "required": False, "minLength": 1, "maxLength": 32}},
    "equations": {"type": "array", "required": True, "maxItems": 8,
                  "items": {"type": "object", "required": False, "properties": {
                      "coefficients": {"type": "array", "required": True, "maxItems": 8,
                                       "items": {"type": "number", "required": False,
                                                 "min": -1000000, "max": 1000000}},
                      "equals": {"type": "number", "required": True,
                                 "min": -1000000000, "max": 1000000000}}}}})
eq("agents", j["agents"], {"analyst": ["calc.check", "calc.solve", "mail.send"],
                           "cashier": ["calc.check", "calc.solve"]})
eq("outputs", j["outputs"], [
    {"path": "files/*.csv", "maxBytes": 10 * M, "required": False},
    {"path": "summary.txt", "maxBytes": 64 * K, "required": True}])
eq("signature", j["signature"], {"algorithm": "none", "keyId": None})
# The python-compute profile compiled in: a real program (its behaviour is
# tested in test_seccomp_gen and under the kernel), listed in the table.
n = j["seccomp"]["instructions"]
if not 6 < n <= 4096:
    fail(f"seccomp instructions: {n}")
eq("seccomp section count", [s["count"] for s in j["sections"] if s["name"] == "seccomp"], [n])
eq("seccomp arch check first", j["seccomp"]["program"][0][:3], [0x20, 0, 0])


def constraint_programs(buf):
    """Each tool's constraint programs, read from the raw blob as
    docs/blob-format.md describes them (not through the C loader): the
    tool's (first, count) run of 16-byte instructions, cut after each ret
    (op 1).  Returns {tool id: [[(op, type, a, b), ...], ...]}."""
    def section(sid):
        _, cnt, off, _ = struct.unpack_from("<IIQQ", buf, 64 + 24 * (sid - 1))
        return off, cnt

    def string(off, length):
        return buf[strtab + off:strtab + off + length].decode()

    strtab, _ = section(1)
    tools_off, ntools = section(10)
    insns_off, _ = section(12)
    out = {}
    for t in range(ntools):
        rec = tools_off + TOOL_BYTES * t
        tid = string(*struct.unpack_from("<II", buf, rec))
        first, count = struct.unpack_from("<II", buf, rec + 64)
        progs, cur = [], []
        for i in range(first, first + count):
            op, typ, _, a, b = struct.unpack_from("<BBHIQ", buf, insns_off + 16 * i)
            cur.append((op, typ, a, b))
            if op == 1:
                progs.append(cur)
                cur = []
        eq(f"{tid}: run ends with ret", cur, [])
        out[tid] = progs
    return out


# One constraint each, as the YAML lists them.
progs = constraint_programs(raw)
eq("constraints per tool", {k: len(v) for k, v in progs.items()}, {"calc.check": 1, "calc.solve": 1, "mail.send": 1})
# ends_with(to, "@example.org"): param to (index 3 of body, priority,
# subject, to; type string 1), ends_with (op 18) "@example.org", ret.
(mail_prog,) = progs["mail.send"]
eq("mail constraint ops", [(op, typ, a) for op, typ, a, _ in mail_prog], [(2, 1, 3), (18, 0, 0), (1, 0, 0)])
off, length = mail_prog[1][3] & 0xFFFFFFFF, mail_prog[1][3] >> 32
strtab_off = struct.unpack_from("<Q", raw, 64 + 8)[0]
eq("mail constraint literal", raw[strtab_off + off:strtab_off + off + length].decode(), "@example.org")
# len(unknowns) >= 1: param unknowns (index 1, array 5), len(array), int 1,
# ge(integer), ret.
(calc_prog,) = progs["calc.solve"]
eq("calc constraint ops", [(op, typ, a, b) for op, typ, a, b in calc_prog],
   [(2, 5, 1, 0), (8, 5, 0, 0), (4, 0, 0, 1), (15, 2, 0, 0), (1, 0, 0, 0)])


def tool_record(buf, tid):
    """Byte offset of the TOOLS record whose id is tid, read as the format
    document describes it."""
    tools_off, _, ntools = blobtool.table(buf)["tools"]
    strtab = blobtool.table(buf)["strtab"][0]
    for t in range(ntools):
        rec = tools_off + TOOL_BYTES * t
        off, length = struct.unpack_from("<II", buf, rec)
        if buf[strtab + off:strtab + off + length].decode() == tid:
            return t, rec
    fail(f"no tool {tid} in the blob")


# The daily budget sits at offset 72 of the record, run_as at 76 (0:
# dedicated), its uid, gid and user name at 80, 84, 88 (zero: unused), the
# cgroup limits at 96 and 104, the result schema at 108 (0: none; format
# 3.2 gave it the word that was reserved).
mail_index, mail_rec = tool_record(raw, "mail.send")
eq("mail.send max_calls_per_day in the record", struct.unpack_from("<II", raw, mail_rec + 72), (50, 0))
eq("mail.send identity in the record", struct.unpack_from("<IIII", raw, mail_rec + 80), (0, 0, 0, 0))
eq("mail.send cgroup limits in the record", struct.unpack_from("<QII", raw, mail_rec + 96), (256 * M, 32, 0))
calc_index, calc_rec = tool_record(raw, "calc.solve")
eq("calc.solve max_calls_per_day in the record", struct.unpack_from("<II", raw, calc_rec + 72), (0, 0))


def refused(what, patches, field, words):
    """Patch raw (offset -> bytes), rehash, and insist that both
    `cordonc inspect` and `cordonc verify` refuse it naming field."""
    buf = bytearray(raw)
    for off, data in patches:
        buf[off:off + len(data)] = data
    buf[32:64] = blobtool.blob_hash(buf)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "patched.cpol")
        with open(path, "wb") as f:
            f.write(buf)
        for cmd in (["inspect"], ["verify"]):
            r = subprocess.run([f"{BUILD}/cordonc", *cmd, path], capture_output=True, text=True)
            if r.returncode == 0:
                fail(f"{what}: cordonc {cmd[0]} accepted the blob")
            if r.returncode not in (1, 2) or field not in r.stderr or \
                    not all(w in r.stderr for w in words):
                fail(f"{what}: cordonc {cmd[0]} exit {r.returncode}, stderr {r.stderr!r}; "
                     f"want {field} and {words}")


eq("mail.send result schema in the record", struct.unpack_from("<I", raw, mail_rec + 108), (0,))
# Every compiled blob is 3.5 now (provenance), so a result schema's word is
# in use whatever it holds; test_blob.c holds a 3.1 blob to the reserved
# word.  What a 3.5 blob adds is tied to its minor the same way: its 17
# sections are refused under minor 4.
refused("provenance sections in a blob older than 3.5", [(10, struct.pack("<H", 4))],
        "header.section_count", ["17", "3.4", "has 15"])
refused("daily budget over the bound", [(mail_rec + 72, struct.pack("<I", 100_000_001))],
        f"tools[{mail_index}].max_calls_per_day", ["100000001", "100000000"])
refused("run_as ids with uid 0", [(mail_rec + 76, struct.pack("<III", 3, 0, 1000))],
        f"tools[{mail_index}].run_uid", ["root"])
refused("pids over the bound", [(mail_rec + 104, struct.pack("<I", 65537))],
        f"tools[{mail_index}].pids", ["65537", "65536"])
lim_off = blobtool.table(raw)["limits"][0]
refused("no workspace entries", [(lim_off + 92, struct.pack("<I", 0))], "limits.ws_entries", ["positive"])
# A 2.x blob (80-byte tool records): refused by its version, both named.
refused("previous major format", [(8, struct.pack("<HH", 2, 0))],
        "header.major", ["format 2.0", "3.6"])
print("ok   test_roundtrip.py: cafe compiles and loads back to what its YAML says; "
      "patched tool records, limits and a 2.0 header are refused by field")
