# SPDX-License-Identifier: Apache-2.0
# Create a BPF map (the first step of loading any BPF program).
import ctypes

import blib

attr = (ctypes.c_uint32 * 32)()
attr[0], attr[1], attr[2], attr[3] = 2, 4, 4, 1       # BPF_MAP_TYPE_ARRAY, key 4, value 4, 1 entry
real = blib.syscall("bpf", 0, ctypes.addressof(attr), ctypes.sizeof(attr))   # BPF_MAP_CREATE
oracle = blib.syscall("bpf", 0xFFFF, 0, 0)             # the kernel: EINVAL
blib.refused_call("bpf", "bpf(BPF_MAP_CREATE)", real, oracle)
