import pytest
import torch

from icml24.merging import ConsensusMerging, TaskArithmetic, TIESMerging, consensus_mask, mask_statistics


def test_consensus_mask_counts():
    masks = torch.tensor([[1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 0, 0]], dtype=torch.bool)
    assert consensus_mask(masks, 2).tolist() == [True, False, False, False]
    assert consensus_mask(masks, 1).tolist() == [True, True, True, False]
    assert consensus_mask(masks, 0).all()
    assert not consensus_mask(masks, 4).any()
    stats = mask_statistics(masks)
    assert stats["catastrophic"] == 0.25 and stats["selfish"] == 0.5 and stats["general"] == 0.25
    assert stats["histogram"] == [0.25, 0.5, 0.0, 0.25]


def test_k_zero_equals_plain_ta_and_ties_k_large_equals_zero_shot():
    g = torch.Generator().manual_seed(0)
    base = torch.randn(50, generator=g)
    tuned = base + torch.randn(4, 50, generator=g)
    masks = torch.rand(4, 50, generator=g) > 0.5
    cons = ConsensusMerging(k=0, scaling=0.4).fit(base, tuned, masks)
    assert torch.allclose(cons.merge(), TaskArithmetic(scaling=0.4).fit(base, tuned).merge())
    cons = ConsensusMerging(k=0, multitask="ties", scaling=0.4).fit(base, tuned, masks)
    ties = TIESMerging(aggregation="sum", scaling=0.4).fit(base, tuned)
    assert torch.allclose(cons.merge(), ties.merge())
    assert torch.allclose(ConsensusMerging(k=5, scaling=1.0).fit(base, tuned, masks).merge(), base)


def test_k_two_zeroes_selfish_and_catastrophic_weights():
    base = torch.zeros(3)
    tuned = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 1.0]])
    masks = torch.tensor([[True, True, False], [True, False, False]])
    merged = ConsensusMerging(k=2, scaling=1.0).fit(base, tuned, masks).merge()
    assert merged.tolist() == [2.0, 0.0, 0.0]


def test_mask_counts_match_sum_for_few_and_many_tasks():
    from icml24.merging import mask_counts

    g = torch.Generator().manual_seed(3)
    for num_tasks in (3, 300):
        masks = torch.rand(num_tasks, 64, generator=g) > 0.3
        assert torch.equal(mask_counts(masks).long(), masks.long().sum(0))


def test_consensus_validates_and_raises_not_fitted():
    from icml24._validation import NotFittedError

    with pytest.raises(NotFittedError):
        ConsensusMerging().merge()
    with pytest.raises(ValueError, match="k must"):
        ConsensusMerging(k=-1).fit(torch.zeros(3), torch.ones(2, 3), torch.ones(2, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match="multitask"):
        ConsensusMerging(multitask="mean").fit(torch.zeros(3), torch.ones(2, 3), torch.ones(2, 3, dtype=torch.bool))
    base, tuned = torch.zeros(3), torch.ones(2, 3)
    with pytest.raises(ValueError, match="boolean"):
        ConsensusMerging().fit(base, tuned, torch.ones(2, 3))
    with pytest.raises(ValueError, match="shape"):
        ConsensusMerging().fit(base, tuned, torch.ones(3, 3, dtype=torch.bool))
    bad = tuned.clone()
    bad[0, 0] = float("nan")
    with pytest.raises(ValueError, match="finetuned"):
        ConsensusMerging().fit(base, bad, torch.ones(2, 3, dtype=torch.bool))
