# SPDX-License-Identifier: Apache-2.0
# Reach the kernel keyring (shared beyond the sandbox).
import blib

real = blib.syscall("keyctl", 0, -3, 1)                # KEYCTL_GET_KEYRING_ID, session keyring, create
oracle = blib.syscall("keyctl", 0x7FFF, 0, 0)          # the kernel: EOPNOTSUPP
blib.refused_call("keyctl", "keyctl(GET_KEYRING_ID, session)", real, oracle)
