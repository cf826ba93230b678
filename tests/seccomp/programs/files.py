# SPDX-License-Identifier: Apache-2.0
"""Files in the working directory: read an input, write outputs, rename,
list, copy, remove, the usual pathlib and shutil calls.

A few megabytes are read in chunks into a growing buffer, as a program
reading a large input does: glibc grows such buffers with mremap.
copy2 and copytree copy metadata too (utimensat, chmod, listxattr).
A lock file guards the output, as the filelock package does (flock)."""
import fcntl
import json
import os
import pathlib
import shutil

pathlib.Path("input.txt").write_text("".join("line %d\n" % i for i in range(100)))
with open("input.txt") as f:
    lines = f.readlines()
assert len(lines) == 100

with open("big.bin", "wb") as f:
    for i in range(64):
        f.write(bytes([i]) * 65536)
buf = bytearray()
with open("big.bin", "rb") as f:
    while chunk := f.read(100000):
        buf += chunk
assert len(buf) == 64 * 65536
words = []
for i in range(500000):
    words.append(i)
os.remove("big.bin")

os.makedirs("files/sub", exist_ok=True)
with open("files/sub/out.csv", "w") as f:
    f.write("a,b\n1,2\n")
with open("files/sub/out.csv", "a") as f:
    f.write("3,4\n")
assert os.path.getsize("files/sub/out.csv") == 12
shutil.copyfile("files/sub/out.csv", "files/copy.csv")
shutil.copy("input.txt", "files/input-copy.txt")
assert sorted(os.listdir("files")) == ["copy.csv", "input-copy.txt", "sub"]
shutil.copy2("input.txt", "files/input-copy2.txt")
shutil.copytree("files/sub", "files/tree")
shutil.move("files/input-copy2.txt", "files/tree/moved.txt")
assert sorted(os.listdir("files/tree")) == ["moved.txt", "out.csv"]
assert os.path.getmtime("files/tree/moved.txt") == os.path.getmtime("input.txt")
assert sorted(p.name for p in pathlib.Path(".").glob("files/*.csv")) == ["copy.csv"]
assert len(list(pathlib.Path("files").rglob("*.csv"))) == 3
names = [e.name for e in os.scandir(".") if e.is_file()]
assert "input.txt" in names
for root, dirs, fs in os.walk("files"):
    pass

lock = open("result.lock", "w")
fcntl.flock(lock, fcntl.LOCK_EX)
tmp = "result.json.tmp"
with open(tmp, "w") as f:
    json.dump({"lines": len(lines)}, f)
    f.flush()
    os.fsync(f.fileno())
os.replace(tmp, "result.json")
assert json.loads(pathlib.Path("result.json").read_text()) == {"lines": 100}
fcntl.flock(lock, fcntl.LOCK_UN)
lock.close()
os.remove("result.lock")

st = os.stat("result.json")
assert st.st_size > 0
os.chmod("files/copy.csv", 0o600)
os.remove("files/copy.csv")
shutil.rmtree("files")
os.remove("input.txt")
assert not os.path.exists("files")

print("ok files")
