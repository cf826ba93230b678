# SPDX-License-Identifier: Apache-2.0
"""subprocess of python itself: run, pipes, communicate, a timeout, an
inherited descriptor (pass_fds), reading a child's output with select()."""
import os
import select
import subprocess
import sys

r = subprocess.run([sys.executable, "-I", "-c", "print(1)"], capture_output=True, text=True, check=True)
assert r.stdout == "1\n", r.stdout

out = subprocess.check_output([sys.executable, "-I", "-c", "import sys; print(sys.stdin.read().upper())"],
                              input=b"abc", timeout=60)
assert out == b"ABC\n", out

p = subprocess.Popen([sys.executable, "-I", "-c", "import sys; sys.exit(3)"], stdout=subprocess.DEVNULL)
assert p.wait(timeout=60) == 3

try:
    subprocess.run([sys.executable, "-I", "-c", "import time; time.sleep(30)"], timeout=0.5)
except subprocess.TimeoutExpired:
    pass
else:
    raise AssertionError("no timeout")

p = subprocess.Popen([sys.executable, "-I", "-c", "print('line')"], stdout=subprocess.PIPE)
ready, _, _ = select.select([p.stdout], [], [], 60)
assert ready == [p.stdout]
assert p.stdout.readline() == b"line\n"
p.stdout.close()
assert p.wait(timeout=60) == 0

r_fd, w_fd = os.pipe()
subprocess.run([sys.executable, "-I", "-c", "import os, sys; os.write(int(sys.argv[1]), b'hi')", str(w_fd)],
               pass_fds=(w_fd,), check=True, timeout=60)
os.close(w_fd)
assert os.read(r_fd, 10) == b"hi"
os.close(r_fd)

print("ok subprocess_py")
