# SPDX-License-Identifier: Apache-2.0
"""multiprocessing with the fork start method, and concurrent.futures.

A Pool and a ProcessPoolExecutor both need /dev/shm (POSIX semaphores) and
pipes; the workers are forked copies of this interpreter.
"""
import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor


def square(x):
    return x * x


def child(q):
    q.put(sum(range(1000)))


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    with ctx.Pool(2) as pool:
        assert pool.map(square, range(50)) == [x * x for x in range(50)]
        assert pool.apply_async(square, (7,)).get(timeout=60) == 49
        assert sorted(pool.imap_unordered(square, range(10))) == [x * x for x in range(10)]

    with ProcessPoolExecutor(max_workers=2, mp_context=ctx) as ex:
        assert list(ex.map(square, range(20))) == [x * x for x in range(20)]

    q = ctx.Queue()
    p = ctx.Process(target=child, args=(q,))
    p.start()
    assert q.get(timeout=60) == sum(range(1000))
    p.join(timeout=60)
    assert p.exitcode == 0

    print("ok multiproc")
