import numpy as np
import pytest
import torch

from icml24.sbi.masks import (
    as_dag,
    attention_mask,
    batch_attention_masks,
    check_mask_mixture,
    faithful_inverse_mask,
    moralize,
    structured_condition_masks,
)
from icml24.sbi.tasks import TwoMoons, gaussian_linear, gaussian_tree


def _is_acyclic(adjacency: np.ndarray) -> bool:
    try:
        as_dag(adjacency)
    except ValueError:
        return False
    return True


def test_moralize_marries_parents_of_common_child():
    # v-structure a -> c <- b
    dag = as_dag(np.array([[0, 0, 0], [0, 0, 0], [1, 1, 0]]))
    moral = moralize(dag)
    assert moral[0, 1] and moral[1, 0]  # married
    assert moral[0, 2] and moral[2, 0] and moral[1, 2] and moral[2, 1]
    assert (moral == moral.T).all()


def test_undirected_dense_and_directed_without_condition():
    task = gaussian_linear(3)
    assert attention_mask(task.graph, "dense") is None
    undirected = attention_mask(task.graph, "undirected")
    expected = np.eye(6, dtype=bool)
    expected[np.arange(3, 6), np.arange(3)] = expected[np.arange(3), np.arange(3, 6)] = True
    assert (undirected == expected).all()
    # nothing observed: the directed mask is the DAG itself
    assert (attention_mask(task.graph, "directed", np.zeros(6, dtype=bool)) == task.graph).all()


def test_directed_mask_posterior_inverts_edges_and_explains_away():
    moons = TwoMoons()
    observed = np.array([False, False, True, True])
    mask = faithful_inverse_mask(moons.graph, observed)
    # theta0 and theta1 become dependent given x (explaining away) and both attend to the observed x
    assert mask[0, 1] or mask[1, 0]
    assert mask[0, 2:].all() and mask[1, 2:].all()
    # observed rows keep the DAG's rows
    assert (mask[2:] == moons.graph[2:]).all()
    # gaussian_linear posterior: theta_i attends to itself and x_i only
    task = gaussian_linear(3)
    posterior = faithful_inverse_mask(task.graph, np.arange(6) >= 3)
    expected_rows = np.eye(3, 6, dtype=bool) | np.eye(3, 6, k=3, dtype=bool)
    assert (posterior[:3] == expected_rows).all()


def test_directed_mask_is_a_dag_and_covers_moral_edges_for_random_conditions():
    tree = gaussian_tree()
    rng = np.random.default_rng(0)
    moral = moralize(tree.graph)
    for _ in range(20):
        observed = rng.random(7) < 0.4
        mask = faithful_inverse_mask(tree.graph, observed)
        free = ~observed
        sub = mask[np.ix_(free, free)]
        assert _is_acyclic(sub & ~np.eye(free.sum(), dtype=bool))
        # every moral edge between two free nodes is kept in one direction (faithfulness)
        both = moral[np.ix_(free, free)]
        assert ((sub | sub.T) >= both).all()


def test_batch_masks_match_single_masks():
    moons = TwoMoons()
    conditions = torch.tensor([[0, 0, 1, 1], [1, 1, 0, 0], [0, 0, 1, 1], [0, 1, 0, 1]], dtype=torch.bool)
    batch = batch_attention_masks(moons.graph, "directed", conditions)
    assert batch.shape == (4, 4, 4)
    for row, condition in enumerate(conditions):
        assert (batch[row].numpy() == attention_mask(moons.graph, "directed", condition.numpy())).all()
    assert batch_attention_masks(moons.graph, "dense", conditions) is None


def test_structured_condition_masks():
    masks = structured_condition_masks(4000, 3, 2, torch.Generator().manual_seed(0))
    assert masks.shape == (4000, 5) and masks.dtype == torch.bool
    assert not masks.all(dim=1).any()  # all-observed rows were reset
    unique = torch.unique(masks, dim=0)
    assert len(unique) <= 5  # joint, posterior, likelihood and two per-batch Bernoulli draws
    posterior = torch.tensor([0, 0, 0, 1, 1], dtype=torch.bool)
    share = (masks == posterior).all(1).float().mean()
    assert 0.15 < float(share) < 0.45


def test_condition_masks_without_a_generator_leave_the_global_one_alone():
    from icml24.sbi.masks import beta_bernoulli_condition_masks

    state = torch.get_rng_state()
    assert structured_condition_masks(8, 2, 3).shape == (8, 5)
    assert beta_bernoulli_condition_masks(8, 5).shape == (8, 5)
    assert torch.equal(state, torch.get_rng_state())


def test_mixed_conditional_share_under_the_official_mixture_and_a_reweighted_one():
    """p(theta_2 | theta_1, x) of a 3-variable task ([1, 0, 1]) is trained only through the per-batch Bernoulli masks:
    0.2 * 0.3 * 0.7 * 0.3 + 0.2 * 0.7 * 0.3 * 0.7 = 4.2% of rows under the default; weighting the Bernoulli masks
    only (the official p_rnd1 = p_rnd2 = 0.5) raises it to 10.5%."""
    target = torch.tensor([True, False, True])
    generator = torch.Generator().manual_seed(0)
    for mixture, expected in (((0.2, 0.2, 0.2, 0.2, 0.2), 0.042), ((0, 0, 0, 1, 1), 0.105)):
        weights, rates = check_mask_mixture(mixture)
        share = np.mean([float((structured_condition_masks(64, 2, 1, generator, weights, rates) == target)
                               .all(1).float().mean()) for _ in range(3000)])
        assert abs(share - expected) < 0.01  # 3,000 per-batch draws: standard error ~0.003


def test_mask_mixture_is_validated_and_normalized():
    assert check_mask_mixture((1, 1, 1, 1, 1)) == ((0.2,) * 5, (0.3, 0.7))
    for bad in ((0.5, 0.5), (-0.1, 0.3, 0.3, 0.3, 0.2), (0, 0, 0, 0, 0)):
        with pytest.raises(ValueError, match="mask_mixture"):
            check_mask_mixture(bad)
    with pytest.raises(ValueError, match="bernoulli_rates"):
        check_mask_mixture(bernoulli_rates=(0.3, 1.0))
