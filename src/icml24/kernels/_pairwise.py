"""Squared Euclidean distances |x_i - y_j|^2 in one fused pass (numba), from exact coordinate differences.

The float64 kernel matrix of ``radial.kernel_matrix`` needs every |x - y|^2 from differences (the GEMM form
|x|^2 + |y|^2 - 2 x.y cancels near the diagonal, and the Laplace kernel's square root turns that absolute error
into ~sqrt(eps) relative error). The numpy formula (one n x m pass per coordinate) reads and writes the n x m array
d times; this kernel keeps the running sum in a register and writes it once. Equal, bit for bit, to the numpy
formula: the same float64 operations in the same order over coordinates (tested in tests/kernels/test_radial.py).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def squared_distances(X, Y):
    """``out[i, j] = sum_k (X[i, k] - Y[j, k])^2``, the sum taken over k in order; X [n, d], Y [m, d] float64."""
    n, d = X.shape
    m = Y.shape[0]
    out = np.empty((n, m))
    for i in range(n):
        for j in range(m):
            total = 0.0
            for k in range(d):
                diff = X[i, k] - Y[j, k]
                total += diff * diff
            out[i, j] = total
    return out
