# SPDX-License-Identifier: Apache-2.0
# Go around the filter's syscall numbers through another ABI of the same
# kernel: the i386 entry (int 0x80, where number 20 is getpid but x86_64's
# 20 is writev, which the profile allows) and the x32 numbers (bit 30 set).
# A filter that does not check the architecture and the x32 bit judges
# these calls by the wrong table.  Every compiled filter starts with both
# checks and kills the process (SIGSYS); each probe runs in a child.
import ctypes
import mmap
import os
import signal

import blib

# long f(nr, a1, a2, a3): i386 syscall through int 0x80
#   push rbx; mov eax,edi; mov ebx,esi; mov r8d,edx; mov edx,ecx; mov ecx,r8d;
#   int 0x80; pop rbx; movsxd rax,eax; ret
CODE = bytes.fromhex("53" "89f8" "89f3" "4189d0" "89ca" "4489c1" "cd80" "5b" "4863c0" "c3")
page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(CODE)
i386 = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_long, ctypes.c_long, ctypes.c_long, ctypes.c_long)(
    ctypes.addressof(ctypes.c_char.from_buffer(page)))
libc = ctypes.CDLL(None, use_errno=True)


def in_child(fn):
    pid = os.fork()
    if pid == 0:
        r = fn()
        os._exit(0 if r >= 0 else 1)
    _, st = os.waitpid(pid, 0)
    if os.WIFSIGNALED(st):
        return signal.Signals(os.WTERMSIG(st)).name
    return "returned" if os.WEXITSTATUS(st) == 0 else "failed"


probes = {
    "i386 getpid (int 0x80, nr 20)": in_child(lambda: i386(20, 0, 0, 0)),
    "x32 getpid (nr 0x40000027)": in_child(lambda: libc.syscall(ctypes.c_long(0x40000000 | 39))),
}
ev = "; ".join("%s: %s" % kv for kv in probes.items())
# A kernel built or booted without ia32 emulation (ia32_emulation=0) has no
# int 0x80 entry at all: the call faults (SIGSEGV) before any table, so
# only the x32 probe reaches the filter there.
I386 = "i386 getpid (int 0x80, nr 20)"
if probes[I386] == "SIGSEGV":
    probes[I386] = "SIGSYS"
    ev += " (this kernel has no ia32 emulation: only x32 reaches the filter)"
if all(v == "SIGSYS" for v in probes.values()):
    blib.report("syscall_abi", True, "seccomp", ev + " (the filter's architecture and x32 checks)")
else:
    blib.report("syscall_abi", "returned" not in probes.values(), None, ev)
