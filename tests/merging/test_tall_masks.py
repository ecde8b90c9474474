import pytest
import torch

from icml24.merging import TALLMasks, compute_tall_masks, multitask_vector, random_masks_like


def test_lambda_zero_selects_all_nonzeros_of_a_single_task():
    tv = torch.tensor([[0.5, 0.0, -2.0, 0.0, 1e-6]])
    masks = compute_tall_masks(tv, tv.sum(0), 0.0)
    assert masks.tolist() == [[True, False, True, False, True]]
    # single task: tau_MTL == tau_t, so any lambda keeps exactly the nonzeros
    assert compute_tall_masks(tv, tv.sum(0), 0.6).tolist() == masks.tolist()


def test_rule_is_strict_and_per_task():
    tv = torch.tensor([[1.0, 1.0], [1.0, -1.0]])
    mtl = tv.sum(0)  # [2, 0]; |mtl - tv| = [[1, 1], [1, 1]]
    assert compute_tall_masks(tv, mtl, 1.0).sum() == 0  # 1 > 1 is false
    assert compute_tall_masks(tv, mtl, [0.5, 1.0]).tolist() == [[True, True], [False, False]]


def test_brute_force_against_elementwise_loop():
    g = torch.Generator().manual_seed(1)
    tv = torch.randn(4, 30, generator=g)
    mtl = multitask_vector(tv, "ties", density=0.3)
    lam = [0.2, 0.3, 0.5, 0.6]
    masks = compute_tall_masks(tv, mtl, lam)
    for t in range(4):
        for p in range(30):
            assert bool(masks[t, p]) == bool(abs(tv[t, p]) > lam[t] * abs(mtl[p] - tv[t, p]))


def test_per_task_lambda_selection_and_reconstruction():
    g = torch.Generator().manual_seed(2)
    base = torch.randn(40, generator=g)
    tv = torch.randn(3, 40, generator=g)
    tall = TALLMasks(lambdas=(0.2, 0.4, 0.6)).fit(base, base + tv, score=lambda t, v: 1.0)
    assert tall.lambdas_.tolist() == [0.2, 0.2, 0.2]  # ties -> first lambda
    # a score that prefers the mask closest to the task's own weights picks per task
    target = base + tv

    def score(t, v):
        return -float((v - target[t]).abs().sum())

    tall = TALLMasks(lambdas=(0.2, 0.4, 0.6)).fit(base, target, score=score)
    for t in range(3):
        best = max((0.2, 0.4, 0.6), key=lambda lam: score(t, base + compute_tall_masks(tv, tv.sum(0), lam)[t]
                                                             * tv.sum(0)))
        assert tall.lambdas_[t].item() == best
    rec = tall.reconstruct(1)
    assert torch.allclose(rec, base + tall.masks_[1] * tall.multitask_vector_)
    comp = tall.compress()
    assert torch.allclose(comp.reconstruct(1), rec)


def test_used_before_fit_raises_not_fitted():
    from icml24._validation import NotFittedError

    with pytest.raises(NotFittedError, match="fit"):
        TALLMasks().reconstruct(0)
    with pytest.raises(NotFittedError):
        TALLMasks().compress()
    tall = TALLMasks(lambdas=0.4).fit(torch.zeros(3), torch.ones(2, 3))
    with pytest.raises(ValueError, match="task"):
        tall.reconstruct(5)


def test_nan_inputs_are_rejected_with_the_argument_named():
    base, tuned = torch.zeros(4), torch.ones(2, 4)
    bad = tuned.clone()
    bad[1, 2] = float("nan")
    with pytest.raises(ValueError, match="finetuned"):
        TALLMasks(lambdas=0.4).fit(base, bad)
    with pytest.raises(ValueError, match="pretrained"):
        TALLMasks(lambdas=0.4).fit(torch.tensor([0.0, float("inf"), 0.0, 0.0]), tuned)
    with pytest.raises(ValueError, match="lambdas"):
        TALLMasks(lambdas=(0.2, float("nan"))).fit(base, tuned, score=lambda t, v: 0.0)  # checked at fit
    with pytest.raises(ValueError, match="lambdas"):
        compute_tall_masks(tuned, tuned.sum(0), [0.2, float("nan")])
    with pytest.raises(ValueError, match="task_vectors"):
        compute_tall_masks(bad, tuned.sum(0), 0.2)
    with pytest.raises(ValueError, match="task_vectors"):
        multitask_vector(bad, "ta")
    with pytest.raises(ValueError, match="finite"):
        TALLMasks(lambdas=(0.2, 0.4)).fit(base, tuned, score=lambda t, v: float("nan"))


def test_blocked_rule_equals_the_whole_tensor_formula():
    from icml24.merging.ties import BLOCK

    g = torch.Generator().manual_seed(2)
    tv = torch.randn(4, BLOCK + 333, generator=g)
    mtl = tv.sum(0)
    lam = torch.tensor([0.2, 0.3, 0.5, 0.6])
    expected = tv.abs() > lam.double().float().unsqueeze(1) * (mtl.unsqueeze(0) - tv).abs()
    assert torch.equal(compute_tall_masks(tv, mtl, lam), expected)
    assert torch.equal(compute_tall_masks(tv, mtl, 0.4), tv.abs() > 0.4 * (mtl - tv).abs())


def test_random_masks_keep_each_tasks_count_and_move_the_weights():
    masks = torch.rand(3, 1000, generator=torch.Generator().manual_seed(0)) < torch.tensor([[0.1], [0.5], [0.9]])
    out = random_masks_like(masks, torch.Generator().manual_seed(1))
    assert out.dtype == torch.bool and torch.equal(out.sum(1), masks.sum(1))
    assert (out != masks).any(1).all()
    assert torch.equal(out, random_masks_like(masks, torch.Generator().manual_seed(1)))
    assert torch.equal(out, random_masks_like(masks, random_state=1))  # an int seeds the same stream
    assert not torch.equal(out, random_masks_like(masks, random_state=2))
    with pytest.raises(ValueError, match="boolean"):
        random_masks_like(masks.float())
