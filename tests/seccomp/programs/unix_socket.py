# SPDX-License-Identifier: Apache-2.0
"""The tool-bridge client's socket calls: an AF_UNIX stream socket with a
timeout, a connect that fails (no supervisor listens at this path)."""
import errno
import socket

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(2.0)
try:
    s.connect("/nonexistent/cordon-tool.sock")
except OSError as e:
    assert e.errno in (errno.ENOENT, errno.ECONNREFUSED), e
else:
    raise AssertionError("connected to nothing")
finally:
    s.close()

print("ok unix_socket")
