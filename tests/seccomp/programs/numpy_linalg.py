# SPDX-License-Identifier: Apache-2.0
"""numpy linear algebra, FFT and array I/O: what a data task does with numpy.

Matrices are large enough (1000x1000 product) that a threaded BLAS
(OpenBLAS) starts its worker threads, so a trace without
OPENBLAS_NUM_THREADS=1 sees their syscalls too.
"""
import os
import tempfile

import numpy as np

rng = np.random.default_rng(1)
a = rng.standard_normal((300, 300)) + 300 * np.eye(300)
b = rng.standard_normal(300)

x = np.linalg.solve(a, b)
assert np.allclose(a @ x, b)
inv = np.linalg.inv(a)
assert np.allclose(a @ inv, np.eye(300), atol=1e-8)
u, s, vt = np.linalg.svd(a[:100, :100])
assert np.allclose((u * s) @ vt, a[:100, :100])
q, r = np.linalg.qr(a)
assert np.allclose(q @ r, a)
w = np.linalg.eigvals(a[:80, :80])
assert w.shape == (80,)
coef, *_ = np.linalg.lstsq(a[:, :10], b, rcond=None)
assert coef.shape == (10,)
assert np.isfinite(np.linalg.det(a[:50, :50]))

big = rng.standard_normal((1000, 1000)) @ rng.standard_normal((1000, 1000))
assert big.shape == (1000, 1000)

spec = np.fft.rfft(rng.standard_normal(4096))
assert spec.shape == (2049,)

with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "a.npy")
    np.save(path, a)
    assert np.array_equal(np.load(path), a)
    txt = os.path.join(d, "a.csv")
    np.savetxt(txt, a[:5, :5], delimiter=",")
    assert np.allclose(np.loadtxt(txt, delimiter=","), a[:5, :5])

print("ok numpy_linalg")
