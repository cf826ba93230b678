# SPDX-License-Identifier: Apache-2.0
"""threading: a pool, locks, conditions and events with timeouts, a queue."""
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor


def work(n):
    time.sleep(0.001)
    return sum(i * i for i in range(n))


with ThreadPoolExecutor(max_workers=4) as pool:
    results = list(pool.map(work, range(100, 140)))
assert results[0] == sum(i * i for i in range(100))

lock = threading.Lock()
counter = [0]


def bump():
    for _ in range(1000):
        with lock:
            counter[0] += 1


ts = [threading.Thread(target=bump) for _ in range(4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
assert counter[0] == 4000

q = queue.Queue()
done = threading.Event()


def consumer():
    while True:
        try:
            item = q.get(timeout=0.5)
        except queue.Empty:
            continue
        if item is None:
            break
    done.set()


c = threading.Thread(target=consumer, daemon=True)
c.start()
for i in range(10):
    q.put(i)
q.put(None)
assert done.wait(timeout=10)

cond = threading.Condition()
with cond:
    assert not cond.wait(timeout=0.01)

timer_fired = threading.Event()
threading.Timer(0.01, timer_fired.set).start()
assert timer_fired.wait(timeout=10)

print("ok threads")
