"""A tiny randomly initialised Llama (built in code, nothing downloaded) and padded label-word batches."""

import pytest
import torch

from icml24.llm.tasks import EncodedBatch


@pytest.fixture(scope="package")
def tiny():
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(vocab_size=50, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return transformers.LlamaForCausalLM(config).eval()


def make_batch(seed=0, size=5, length=11, pad=(0, 3, 1, 0, 5)) -> EncodedBatch:
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(3, 50, (size, length), generator=g)
    mask = torch.ones(size, length, dtype=torch.long)
    for row, p in enumerate(pad[:size]):
        mask[row, :p] = 0
        ids[row, :p] = 0
    choices = torch.tensor([[5, 6, 7]] * size)
    labels = torch.randint(0, 3, (size,), generator=g)
    return EncodedBatch(ids, mask, choices, labels)


@pytest.fixture()
def batch():
    """``batch(seed, size, length, pad)``: an EncodedBatch of random ids in 3..49, ``pad[row]`` left-padded tokens."""
    return make_batch
