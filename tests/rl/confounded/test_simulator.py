"""The confounded POMDP simulator: exact DP against Monte Carlo, completeness errors, input checks."""

import numpy as np
import pytest

from icml24.rl import (
    ConfoundedPOMDP,
    DiscreteEmission,
    GaussianEmission,
    Trajectories,
    continuous_toy,
    deterministic_policies,
    random_tabular,
    tabular_toy,
)


@pytest.mark.parametrize("make", [tabular_toy, continuous_toy])
def test_dp_matches_monte_carlo(make):
    pomdp = make()
    rng = np.random.default_rng(0)
    policies = list(deterministic_policies(pomdp.n_cells, pomdp.n_actions, pomdp.horizon)[[0, 1, -1]])
    policies.append(rng.dirichlet(np.ones(pomdp.n_actions), size=(pomdp.horizon, pomdp.n_cells)))  # time-varying
    for k, pi in enumerate(policies):
        returns = pomdp.sample(60000, np.random.default_rng(k + 1), policy=pi).rewards.sum(axis=1)
        se = returns.std() / np.sqrt(returns.size)
        assert abs(returns.mean() - pomdp.value(pi)) < 4.5 * se


def test_behaviour_value_and_occupancy_match_logged_data():
    pomdp = tabular_toy()
    data = pomdp.sample(60000, np.random.default_rng(3))
    assert abs(data.rewards.sum(axis=1).mean() - pomdp.behaviour_value()) < 0.03
    occ = pomdp.state_occupancy()
    np.testing.assert_allclose([np.mean(data.states[:, t] == 1) for t in range(3)], occ[:, 1], atol=0.01)


def test_the_behaviour_policy_is_confounded_and_the_observation_policy_is_not():
    pomdp = tabular_toy()
    data = pomdp.sample(40000, np.random.default_rng(4))
    # behaviour: action follows the latent state even given the observation
    o_mid = data.obs[:, 0] == 1
    rate = [data.actions[o_mid & (data.states[:, 0] == s), 0].mean() for s in (0, 1)]
    assert rate[1] - rate[0] > 0.4
    pi = deterministic_policies(3, 2, 3)[5]
    roll = pomdp.sample(20000, np.random.default_rng(5), policy=pi)
    np.testing.assert_array_equal(roll.actions, pi[0][roll.obs].argmax(axis=2))


def test_completeness_fails_with_fewer_negative_control_values_than_states():
    with pytest.raises(ValueError, match=r"completeness fails.*\|O_0\| = 1.*\|S\| = 2"):
        random_tabular(np.random.default_rng(0), n_states=2, n_o0=1)
    with pytest.raises(ValueError, match=r"completeness fails.*\|O_0\| = 2.*\|S\| = 3"):
        random_tabular(np.random.default_rng(0), n_states=3, n_obs=4, n_o0=2)
    assert random_tabular(np.random.default_rng(0), n_states=2, n_o0=1, check=False).n_states == 2


def test_completeness_fails_with_a_rank_deficient_negative_control_or_emission():
    toy = tabular_toy()
    kw = dict(transitions=toy.transitions, reward_probs=toy.reward_probs, initial=toy.initial,
              behaviour=toy.behaviour)
    with pytest.raises(ValueError, match="separates only 1"):
        ConfoundedPOMDP(emission=toy.emission, negative_control=DiscreteEmission([[0.5, 0.5], [0.5, 0.5]]), **kw)
    with pytest.raises(ValueError, match="bridge equations have no solution"):
        ConfoundedPOMDP(emission=DiscreteEmission([[0.2, 0.3, 0.5]] * 2), negative_control=toy.negative_control,
                        **kw)
    with pytest.raises(ValueError, match="separates only 1"):
        ConfoundedPOMDP(emission=toy.emission, negative_control=GaussianEmission([0.0, 0.0], 1.0), **kw)


def test_bad_inputs_name_the_argument():
    toy = tabular_toy()
    with pytest.raises(ValueError, match="initial"):
        ConfoundedPOMDP(toy.emission, toy.transitions, toy.reward_probs, [0.5, 0.6], toy.behaviour,
                        toy.negative_control)
    with pytest.raises(ValueError, match="behaviour has shape"):
        ConfoundedPOMDP(toy.emission, toy.transitions, toy.reward_probs, toy.initial, [[1.0, 0.0, 0.0]] * 2,
                        toy.negative_control)
    with pytest.raises(ValueError, match="policy contains NaN"):
        toy.value(np.full((3, 2), np.nan))
    with pytest.raises(ValueError, match="policy must have shape"):
        toy.value(np.ones((3, 3, 3)) / 3)


def test_deterministic_policies_enumerate_every_map():
    pols = deterministic_policies(3, 2, 3)
    assert pols.shape == (8, 3, 3, 2)
    assert len({tuple(p[0].argmax(axis=1)) for p in pols}) == 8
    assert np.all(pols[:, 0] == pols[:, 2])


def test_gaussian_cells_match_their_probabilities():
    em = GaussianEmission([-1.0, 1.0], 0.5, edges=[-0.5, 0.0, 0.5])
    o = em.sample(np.zeros(50000, dtype=int), np.random.default_rng(0))
    np.testing.assert_allclose(np.bincount(em.cell(o), minlength=4) / o.size, em.cell_probs()[0], atol=0.01)


BAD_POLICIES = [
    ("negative", lambda p: p * np.array([-1.0, 2.0]), "negative"),
    ("nan", lambda p: np.where(p > 0.5, np.nan, p), "NaN"),
    ("not normalised", lambda p: p * 0.9, "sum to 1"),
    ("wrong shape", lambda p: p[:, :2], "shape"),
]


@pytest.mark.parametrize("label,corrupt,match", BAD_POLICIES, ids=[b[0] for b in BAD_POLICIES])
def test_every_public_method_refuses_an_invalid_policy(label, corrupt, match):
    from icml24.rl import (
        ConfidenceSet,
        DeltaFeatures,
        HistoryInstrument,
        NaiveObservationMDP,
        PessimisticPolicyOptimizer,
        TwoStageBridgeEstimator,
        chain_gradients,
        chain_value,
        deterministic_policies,
        doubly_robust,
        importance_sampling,
        true_bridges,
    )

    pomdp = tabular_toy()
    data = pomdp.sample(400, np.random.default_rng(0))
    bad = corrupt(deterministic_policies(3, 2, 3)[3] * 0.5 + 0.25)
    naive = NaiveObservationMDP(3, 2).fit(data)
    est = TwoStageBridgeEstimator(DeltaFeatures(3), HistoryInstrument(2, n_obs=3, n_o0=2), 2, 3,
                                  random_state=0).fit(data)
    calls = [pomdp.value, lambda p: chain_value(true_bridges(pomdp, DeltaFeatures(3)), p),
             lambda p: chain_gradients(est.bridges_, p), est.value, naive.value, naive.q_values,
             lambda p: importance_sampling(data, p, naive), lambda p: doubly_robust(data, p, naive),
             lambda p: ConfidenceSet().fit(est).lower_value(p),
             lambda p: PessimisticPolicyOptimizer().fit(est, p[None]),
             lambda p: pomdp.sample(10, np.random.default_rng(0), policy=p)]
    for call in calls:
        with pytest.raises(ValueError, match=match):
            call(bad)


def test_every_fit_refuses_invalid_episodes():
    from icml24.rl import (
        DeltaFeatures,
        HistoryInstrument,
        NaiveObservationMDP,
        TwoStageBridgeEstimator,
        importance_sampling,
    )

    pomdp = tabular_toy()
    data = pomdp.sample(200, np.random.default_rng(0))
    est = TwoStageBridgeEstimator(DeltaFeatures(3), HistoryInstrument(2, n_obs=3, n_o0=2), 2, 3)
    fractional = Trajectories(data.o0, data.obs, data.actions + 0.5, data.rewards)
    out_of_range = Trajectories(data.o0, data.obs, data.actions * 3, data.rewards)
    for fit in (est.fit, NaiveObservationMDP(3, 2).fit):
        with pytest.raises(ValueError, match="integers"):
            fit(fractional)
        with pytest.raises(ValueError, match="lie in"):
            fit(out_of_range)
        with pytest.raises(ValueError, match="Trajectories"):
            fit({"obs": data.obs})
    with pytest.raises(ValueError, match="at least 4"):
        est.fit(data.subset(np.arange(3)))
    bad_cells = Trajectories(data.o0, data.obs + 3, data.actions, data.rewards)
    with pytest.raises(ValueError, match="cells"):
        NaiveObservationMDP(3, 2).fit(bad_cells)
    naive = NaiveObservationMDP(3, 2).fit(data)
    with pytest.raises(ValueError, match="lie in"):
        importance_sampling(out_of_range, np.full((3, 3, 2), 0.5), naive)
    with pytest.raises(ValueError, match="actions contains NaN"):
        Trajectories(data.o0, data.obs, np.full(data.actions.shape, np.nan), data.rewards)


@pytest.mark.parametrize("n", [-1, 0, 2.5, True])
def test_sample_refuses_a_number_of_episodes_that_is_not_a_positive_integer(n):
    with pytest.raises(ValueError, match=r"n must be a positive integer"):
        tabular_toy().sample(n, np.random.default_rng(0))


@pytest.mark.parametrize("args,name", [((0, 2, 3), "n_cells"), ((2, 0, 3), "n_actions"), ((2, 2, -1), "horizon"),
                                       ((2, 2, 0), "horizon")])
def test_deterministic_policies_refuse_empty_dimensions(args, name):
    with pytest.raises(ValueError, match=rf"{name} must be a positive integer"):
        deterministic_policies(*args)
