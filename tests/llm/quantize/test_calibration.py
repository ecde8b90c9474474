"""Linear layers and their calibration inputs."""

import pytest
import torch
from torch import nn

from icml24.llm.quantize import collect_linear_inputs, linear_layers


def test_every_linear_but_the_head_is_found(tiny):
    names = linear_layers(tiny)
    assert len(names) == 2 * 7 and not any("lm_head" in n for n in names)
    assert "lm_head" in linear_layers(tiny, exclude=())


def test_inputs_are_what_the_layer_sees(tiny, ids):
    name = "model.layers.0.mlp.down_proj"
    x = collect_linear_inputs(tiny, ids, [name])[name]
    assert x.shape == (ids.numel(), 128)
    seen = []
    hook = tiny.get_submodule(name).register_forward_hook(lambda m, a, o: seen.append(a[0].reshape(-1, 128)))
    tiny(ids)
    hook.remove()
    assert torch.equal(torch.cat(seen), x)


def test_bad_ids_are_refused():
    with pytest.raises(ValueError, match="2-D integer"):
        collect_linear_inputs(nn.Linear(4, 4), torch.zeros(4))
