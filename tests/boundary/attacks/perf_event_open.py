# SPDX-License-Identifier: Apache-2.0
# Open a performance counter on this process (user space only, which
# perf_event_paranoid 2 allows without any capability).
import ctypes

import blib

attr = (ctypes.c_uint8 * 128)()
ctypes.c_uint32.from_buffer(attr, 0).value = 1          # PERF_TYPE_SOFTWARE
ctypes.c_uint32.from_buffer(attr, 4).value = 128        # size
ctypes.c_uint64.from_buffer(attr, 8).value = 1          # PERF_COUNT_SW_TASK_CLOCK
ctypes.c_uint64.from_buffer(attr, 40).value = (1 << 0) | (1 << 5) | (1 << 6)   # disabled, exclude_kernel, exclude_hv
real = blib.syscall("perf_event_open", ctypes.addressof(attr), 0, -1, -1, 0)
oracle = blib.syscall("perf_event_open", 1, 0, -1, -1, 0)   # the kernel: EFAULT
blib.refused_call("perf_event_open", "perf_event_open(task clock, self)", real, oracle)
