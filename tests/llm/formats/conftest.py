"""Strategies shared by the format tests: float32 matrices whose last dimension is a multiple of the block size."""

import numpy as np
import pytest
import torch
from hypothesis import strategies as st


@st.composite
def blocked_tensors(draw, block_size=32, max_rows=3, max_blocks=2, heavy=True):
    """float32 [rows, k * block_size]: Gaussian times log-normal magnitudes (outliers), zeros and exact powers of 2."""
    rows = draw(st.integers(1, max_rows))
    cols = block_size * draw(st.integers(1, max_blocks))
    seed = draw(st.integers(0, 2**31 - 1))
    spread = draw(st.sampled_from([0.0, 1.0, 4.0])) if heavy else 0.0
    scale = draw(st.sampled_from([1e-30, 1e-3, 1.0, 1e3, 1e20]))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols)) * np.exp2(rng.standard_normal((rows, cols)) * spread) * scale
    x[rng.random((rows, cols)) < draw(st.sampled_from([0.0, 0.2, 1.0]))] = 0.0
    if draw(st.booleans()):
        x.flat[0] = scale * 2.0 ** draw(st.integers(-3, 3))
    return torch.from_numpy(x.astype(np.float32))


@pytest.fixture(scope="session")
def blocked():
    """The :func:`blocked_tensors` strategy (test modules cannot import conftest under --import-mode=importlib)."""
    return blocked_tensors
