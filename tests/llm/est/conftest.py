import pytest
import torch

from icml24.llm.est import GPT, GPTConfig


@pytest.fixture(autouse=True)
def one_thread():
    """Small models run fastest on one thread when the cores are shared; the setting is restored after."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture()
def tiny():
    """A 3-layer, 4-head, d=32 GPT (math attention so flop_counter sees it) and a random batch."""
    config = GPTConfig(vocab_size=64, block_size=16, n_layer=3, n_head=4, n_embd=32, attention="math")
    model = GPT(config, random_state=torch.Generator().manual_seed(3))
    gen = torch.Generator().manual_seed(4)
    x = torch.randint(0, 64, (2, 16), generator=gen)
    y = torch.randint(0, 64, (2, 16), generator=gen)
    return config, model, x, y
