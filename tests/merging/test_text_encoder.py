import pytest
import torch

from icml24.merging import StateDictLayout
from icml24.merging.text_encoder import (
    EncoderEvaluator,
    embed,
    finetune,
    load_encoder,
    minilm_path,
    tokenize,
    zero_shot_head,
)


@pytest.fixture(scope="module")
def tiny():
    return load_encoder("tiny", random_state=0)


def test_minilm_files_ship_in_the_wheel_and_configure_a_6_layer_bert():
    import json
    config = json.loads((minilm_path() / "config.json").read_text())
    assert (minilm_path() / "model.safetensors").exists()
    assert (config["num_hidden_layers"], config["hidden_size"], config["vocab_size"]) == (6, 384, 30522)


def test_tiny_encoder_is_seeded_and_leaves_the_global_generator_alone(tiny):
    state = torch.random.get_rng_state()
    again, _ = load_encoder("tiny", random_state=0)
    assert torch.equal(torch.random.get_rng_state(), state)
    assert all(torch.equal(a, b) for a, b in zip(tiny[0].state_dict().values(), again.state_dict().values()))
    other, _ = load_encoder("tiny", random_state=1)
    assert not torch.equal(other.embeddings.word_embeddings.weight, tiny[0].embeddings.word_embeddings.weight)
    with pytest.raises(ValueError, match="size"):
        load_encoder("huge")


def test_embeddings_are_unit_norm_and_ignore_padding(tiny):
    model, tokenizer = tiny
    short, long = tokenize(tokenizer, ["a red apple"], 8), tokenize(tokenizer, ["a red apple"], 24)
    a, b = embed(model, short), embed(model, long)
    assert torch.allclose(a.norm(dim=1), torch.ones(1)) and torch.allclose(a, b, atol=1e-5)
    with pytest.raises(ValueError, match="max_length"):
        tokenize(tokenizer, ["x"], 2)


def test_finetuning_fits_a_task_with_the_frozen_zero_shot_head(tiny):
    model, tokenizer = tiny
    head = zero_shot_head(model, tokenizer, ["fruit", "vehicle"])
    texts = ["apple", "pear", "plum", "car", "truck", "bus"] * 4
    labels = torch.tensor([0, 0, 0, 1, 1, 1] * 4)
    batch = tokenize(tokenizer, texts, 8)
    base = {k: v.clone() for k, v in model.state_dict().items()}
    layout = StateDictLayout.from_state_dict(base)
    ev = EncoderEvaluator(model, layout, [head], {"val": [(batch, labels)]}, batch_size=5)
    tuned = finetune(model, base, batch, labels, head, 60, 3e-3, torch.Generator().manual_seed(0), batch_size=8)
    assert all(torch.equal(v, base[k]) for k, v in model.state_dict().items())  # the model is given back
    assert torch.equal(head, zero_shot_head(model, tokenizer, ["fruit", "vehicle"]))
    assert ev.accuracy(layout.flatten(tuned), 0) == 1.0 > ev.accuracy(layout.flatten(base), 0) - 0.5
    again = finetune(model, base, batch, labels, head, 60, 3e-3, torch.Generator().manual_seed(0), batch_size=8)
    assert all(torch.equal(tuned[k], again[k]) for k in tuned)
    with pytest.raises(ValueError, match="vector must have"):
        ev.accuracy(torch.zeros(3), 0)
