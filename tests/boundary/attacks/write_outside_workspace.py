# SPDX-License-Identifier: Apache-2.0
# Write beside the three writable workspace folders: the rest of /workspace
# is the read-only root, /supervisor-socket a read-only bind, and `..`
# out of the workspace ends on the read-only root as well.
import blib

blib.write_attack("write_outside_workspace", [
    "/workspace/boundary-x",
    "/workspace/logs/boundary-x",
    "/supervisor-socket/boundary-x",
    "/workspace/work/../../boundary-x",
])
