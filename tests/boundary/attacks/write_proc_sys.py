# SPDX-License-Identifier: Apache-2.0
# Change a kernel setting through /proc/sys: cordon binds /proc/sys
# read-only over itself.
import blib

blib.write_attack("write_proc_sys", ["/proc/sys/kernel/hostname", "/proc/sys/vm/overcommit_memory"])
