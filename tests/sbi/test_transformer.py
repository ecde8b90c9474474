import pytest
import torch

from icml24.sbi.transformer import FixedConditionScore, ScoreTransformer

TINY = dict(num_layers=1, num_heads=2, head_dim=4, id_dim=4, value_dim=4, condition_dim=2, time_dim=8)


def test_score_transformer_shapes_and_output_scaling():
    torch.manual_seed(0)
    net = ScoreTransformer(5, **TINY)
    x, t = torch.randn(3, 5), torch.rand(3)
    condition = torch.zeros(3, 5, dtype=torch.bool)
    out = net(x, t, condition, torch.ones(3))
    assert out.shape == (3, 5)
    assert torch.allclose(net(x, t, condition, torch.full((3,), 2.0)), out / 2, atol=1e-6)
    # sigma(t) is clipped at 1e-3
    assert torch.allclose(net(x, t, condition, torch.full((3,), 1e-6)), out / 1e-3, rtol=1e-4)


def test_attention_mask_blocks_information_flow():
    torch.manual_seed(0)
    net = ScoreTransformer(3, **{**TINY, "num_layers": 2})
    mask = torch.eye(3, dtype=torch.bool)
    mask[1, 0] = True  # node 1 attends to node 0; node 0 attends only to itself
    x = torch.randn(1, 3)
    changed = x.clone()
    changed[0, 2] += 5.0  # node 2 is seen by nobody else
    args = (torch.rand(1), torch.zeros(1, 3, dtype=torch.bool), torch.ones(1))
    a, b = net(x, *args, mask), net(changed, *args, mask)
    assert torch.allclose(a[0, :2], b[0, :2]) and not torch.allclose(a[0, 2], b[0, 2])
    changed_zero = x.clone()
    changed_zero[0, 0] += 5.0
    c = net(changed_zero, *args, mask)
    assert not torch.allclose(a[0, 1], c[0, 1])  # node 0 reaches node 1


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("free_only", [False, True])
def test_fixed_condition_score_matches_forward(masked, free_only):
    """The sampler's specialised network gives forward's scores on the free tokens (float rounding) and, with
    ``free_only``, exact zeros on the observed ones; a changed condition mask is not the same function."""
    torch.manual_seed(0)
    net = ScoreTransformer(5, **{**TINY, "num_layers": 3}).eval()
    condition = torch.tensor([False, True, False, True, False])
    edges = torch.eye(5, dtype=torch.bool) | (torch.rand(5, 5) < 0.5) if masked else None
    x, t = 3 * torch.randn(64, 5), torch.full((64,), 0.4)
    std = 0.1 + t
    reference = net(x, t, condition[None].expand(64, -1), std, None if edges is None else edges[None])
    fast = FixedConditionScore(net, condition, edges, free_only=free_only)(x, t, std)
    assert torch.allclose(fast[:, ~condition], reference[:, ~condition], rtol=1e-5, atol=1e-5)
    if free_only:
        assert torch.all(fast[:, condition] == 0)
    else:
        assert torch.allclose(fast, reference, rtol=1e-5, atol=1e-5)
    other = FixedConditionScore(net, ~condition, edges, free_only=False)(x, t, std)
    assert not torch.allclose(other, reference, rtol=1e-3, atol=1e-3)
    with pytest.raises(ValueError, match="condition_mask"):
        FixedConditionScore(net, condition[:3])
