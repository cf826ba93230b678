# SPDX-License-Identifier: Apache-2.0
# Crash and leave a core file (this host's core_pattern is a plain file
# name): RLIMIT_CORE is 0 and cannot be raised, so no core appears in the
# working directory.
import ctypes
import os
import resource

import blib

soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
pid = os.fork()
if pid == 0:
    ctypes.string_at(0)                                # SIGSEGV
    os._exit(0)
_, st = os.waitpid(pid, 0)
dumped = os.WCOREDUMP(st)
cores = [n for n in os.listdir("/workspace/work") if n.startswith("core")]
ok = os.WIFSIGNALED(st) and not dumped and not cores
blib.report("core_dump", ok, "rlimit" if ok and hard == 0 else None,
            "child died of signal %s, core dumped: %s, core files: %s; RLIMIT_CORE %d/%d"
            % (os.WTERMSIG(st) if os.WIFSIGNALED(st) else None, dumped, cores or "none", soft, hard))
