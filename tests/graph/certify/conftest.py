"""Tiny forward passes: on a loaded machine torch's thread start-up dominates (e.g. 23 s instead of 1 s)."""

import pytest
import torch


@pytest.fixture(autouse=True)
def one_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)
