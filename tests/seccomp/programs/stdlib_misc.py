# SPDX-License-Identifier: Apache-2.0
"""The rest of the standard library a data task reaches for: time, random,
os.urandom, hashlib, tempfile, compression, dates, signals for timeouts."""
import base64
import bz2
import datetime
import decimal
import gzip
import hashlib
import hmac
import lzma
import math
import os
import random
import re
import resource
import secrets
import signal
import statistics
import struct
import sys
import tempfile
import time
import zlib

t0 = time.time()
m0 = time.monotonic()
time.sleep(0.01)
assert time.monotonic() - m0 >= 0.01
assert time.process_time() >= 0 and time.perf_counter() > 0
assert datetime.datetime.now().year >= 2024 and datetime.datetime.now(datetime.timezone.utc).tzinfo
assert time.strftime("%Y", time.localtime(t0))

random.seed(1)
assert 0 <= random.random() < 1
assert len(os.urandom(32)) == 32 and len(secrets.token_hex(8)) == 16
assert random.SystemRandom().randint(1, 6) in range(1, 7)

data = b"cordon " * 1000
assert hashlib.sha256(data).hexdigest() == hashlib.new("sha256", data).hexdigest()
hashlib.md5(data).digest(), hashlib.blake2b(data).digest(), hashlib.sha3_256(data).digest()
assert hmac.compare_digest(hmac.new(b"k", data, "sha256").digest(), hmac.new(b"k", data, "sha256").digest())

assert zlib.decompress(zlib.compress(data)) == data
assert bz2.decompress(bz2.compress(data)) == data
assert lzma.decompress(lzma.compress(data)) == data
with tempfile.TemporaryDirectory() as d:
    gz = os.path.join(d, "x.gz")
    with gzip.open(gz, "wb") as f:
        f.write(data)
    with gzip.open(gz, "rb") as f:
        assert f.read() == data
with tempfile.NamedTemporaryFile("w+", suffix=".txt") as f:
    f.write("hello")
    f.seek(0)
    assert f.read() == "hello"

assert base64.b64decode(base64.b64encode(data)) == data
assert struct.unpack("<I", struct.pack("<I", 7)) == (7,)
assert re.findall(r"\d+", "a1b22c333") == ["1", "22", "333"]
assert decimal.Decimal("1.1") + decimal.Decimal("2.2") == decimal.Decimal("3.3")
assert statistics.median([1, 3, 2]) == 2 and math.isclose(math.sqrt(2) ** 2, 2)
assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 0
assert os.cpu_count() >= 1 and os.getpid() > 0 and os.getcwd()


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout()


signal.signal(signal.SIGALRM, on_alarm)
signal.setitimer(signal.ITIMER_REAL, 0.05)
try:
    while True:
        time.sleep(0.01)
except Timeout:
    pass
signal.alarm(0)

sys.stdout.write("ok stdlib_misc\n")
sys.stdout.flush()
