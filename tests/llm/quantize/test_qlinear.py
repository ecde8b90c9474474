"""QuantLinear and module replacement."""

import pytest
import torch
from torch import nn

from icml24.llm.formats import BFPFormat, BiEFormat
from icml24.llm.quantize import QuantLinear, replace_linears, restore


def test_quant_linear_quantizes_weight_once_and_input_every_call():
    g = torch.Generator().manual_seed(0)
    lin = nn.Linear(64, 8)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(8, 64, generator=g))
    wf, af = BFPFormat(3, 32), BiEFormat(3, 64)
    q = QuantLinear(lin, wf, af)
    x = torch.randn(5, 64, generator=g)
    expected = af.quantize(x) @ wf.quantize(lin.weight).T + lin.bias
    assert torch.allclose(q(x), expected, atol=0, rtol=0)
    assert torch.equal(QuantLinear(lin)(x), lin(x))  # no formats: the original layer


def test_replace_then_restore_gives_back_the_same_objects():
    model = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Sequential(nn.Linear(32, 32)))
    before = [model[0], model[2][0]]
    originals = replace_linears(model, {"0": QuantLinear(model[0], BFPFormat()), "2.0": QuantLinear(model[2][0])})
    assert isinstance(model[0], QuantLinear) and isinstance(model[2][0], QuantLinear)
    restore(model, originals)
    assert [model[0], model[2][0]] == before


def test_block_size_must_divide_the_input_width():
    with pytest.raises(ValueError, match="does not divide"):
        QuantLinear(nn.Linear(48, 4), BFPFormat(3, 32))
    with pytest.raises(TypeError, match="nn.Linear"):
        QuantLinear(nn.ReLU())
