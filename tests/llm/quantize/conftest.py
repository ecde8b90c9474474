"""A tiny randomly initialised Llama (built in code, nothing downloaded) with one outlier input channel."""

import pytest
import torch


@pytest.fixture(scope="package")
def tiny():
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(vocab_size=64, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = transformers.LlamaForCausalLM(config).eval()
    model.requires_grad_(False)
    return model


@pytest.fixture(scope="package")
def ids():
    return torch.randint(0, 64, (3, 16), generator=torch.Generator().manual_seed(1))
