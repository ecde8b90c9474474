"""One BLAS thread for these small linear-algebra tests (threads only contend on a shared machine)."""

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with threadpool_limits(1):
        yield
