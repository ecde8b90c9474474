import pytest
import torch


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Small kernel matrices: one thread avoids oversubscription on shared cores (the runner does the same)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
