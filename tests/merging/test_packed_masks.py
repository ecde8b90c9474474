import numpy as np
import pytest
import torch

from icml24.merging import CompressedCheckpoints, PackedMasks, storage_bits


@pytest.mark.parametrize("num_params", [1, 8, 13, 1000])
def test_packed_masks_roundtrip(num_params):
    g = torch.Generator().manual_seed(num_params)
    masks = torch.rand(3, num_params, generator=g) > 0.5
    packed = PackedMasks.from_bool(masks)
    assert packed.nbytes == 3 * int(np.ceil(num_params / 8))
    assert torch.equal(packed.unpack(), masks)
    assert torch.equal(packed[2], masks[2])


def test_storage_arithmetic():
    s = storage_bits(num_params=88_000_000, num_tasks=20)
    assert s["separate_bits"] == 20 * 32 * 88e6  # ~56 Gb: the paper's 57 Gb for ViT-B/32
    assert s["ratio"] == pytest.approx((2 * 32 + 20) / (32 * 20))
    base = torch.zeros(800)
    comp = CompressedCheckpoints(base, torch.ones(800), PackedMasks.from_bool(torch.zeros(20, 800, dtype=torch.bool)))
    assert comp.nbits == storage_bits(800, 20)["compressed_bits"]
    assert comp.separate_nbits == storage_bits(800, 20)["separate_bits"]


def test_rejects_non_boolean():
    with pytest.raises(ValueError, match="boolean"):
        PackedMasks.from_bool(torch.zeros(2, 3))
