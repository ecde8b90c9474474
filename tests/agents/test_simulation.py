"""InfectionSimulation: the matching, the FIFO album, the answerer rule, Eq. 5 order, extinction for beta <= 2 gamma."""

import numpy as np
import pytest

from icml24._validation import NotFittedError
from icml24.agents import (
    InfectionSimulation,
    first_round_reaching,
    random_matching,
    rate_grid,
    recurrence,
    sequential_jailbreak,
    sequential_rounds_to,
)


def test_the_matching_is_a_permutation():
    rng = np.random.default_rng(0)
    for n in (2, 10, 4096):
        q, a = random_matching(n, rng)
        assert q.size == a.size == n // 2
        assert np.array_equal(np.sort(np.concatenate([q, a])), np.arange(n))


@pytest.mark.parametrize("n", [7, 1, 0, -4, 6.5, True])
def test_the_matching_refuses_an_odd_or_bad_number_of_agents(n):
    with pytest.raises(ValueError, match="even integer"):
        random_matching(n, np.random.default_rng(0))


def _draws(q, a, n, retrieve, jq=None, ja=None):
    half = len(q)
    return {"questioners": np.array(q), "answerers": np.array(a), "retrieve": np.array(retrieve, bool),
            "jailbreak_q": np.ones(half, bool) if jq is None else np.array(jq, bool),
            "jailbreak_a": np.ones(half, bool) if ja is None else np.array(ja, bool),
            "purge": np.zeros(n, bool), "symptom": np.ones(n, bool)}


def test_official_infection_needs_the_image_retrieved_in_that_chat():
    sim = InfectionSimulation(8, seed_ratio=0.0)
    ages = np.full(8, -1, dtype=np.int16)
    ages[[0, 3]] = 0  # carriers 0 (questioner) and 3 (answerer of a non-carrier)
    draws = _draws([0, 2, 4, 6], [1, 3, 5, 7], 8, [True, True, True, True], ja=[True, False, True, True])
    sick = sim.infected_in_round(ages, draws)
    assert sick[0] and sick[1]  # Q retrieved V_adv; its answerer is infected in the round it receives it
    assert not sick[3]  # a carrier whose chat uses another image is not infected
    assert sick.sum() == 2
    draws["retrieve"][0] = False
    assert not sim.infected_in_round(ages, draws).any()  # no retrieval, no infection
    draws["retrieve"][0] = True
    draws["jailbreak_q"][0] = False
    assert np.flatnonzero(sim.infected_in_round(ages, draws)).tolist() == [1]
    bernoulli = InfectionSimulation(8, seed_ratio=0.0, definition="bernoulli")
    assert np.flatnonzero(bernoulli.infected_in_round(ages, draws)).tolist() == [0, 3]  # every carrier's coin


def test_chat_rates_follow_app_e4():
    sim = InfectionSimulation(8, seed_ratio=0.0)
    ages = np.array([0, -1, 0, -1, -1, -1, -1, -1], dtype=np.int16)
    draws = _draws([0, 2, 4, 6], [1, 3, 5, 7], 8, [True, False, True, True], ja=[False, True, True, True])
    rates = sim.chat_rates(ages, draws, sim.infected_in_round(ages, draws))
    assert rates == {"beta_t": 0.5, "alpha_q_t": 0.5, "alpha_a_t": 0.0}
    none = sim.chat_rates(np.full(8, -1, np.int16), draws, np.zeros(8, bool))
    assert all(np.isnan(v) for v in none.values())


def test_an_album_never_exceeds_its_size_and_ages_only_as_answerer():
    sim = InfectionSimulation(512, album_size=3, beta=0.3, gamma=0.0, seed_ratio=0.5)
    rng = np.random.default_rng(1)
    ages = sim.initial_ages(rng)
    for _ in range(50):
        draws = sim.draw_round(rng)
        new = sim.step(ages, draws)
        assert new.min() >= -1 and new.max() < sim.album_size  # the copy of V_adv sits in one of 3 slots or is gone
        q = draws["questioners"]
        kept = ages[q] >= 0  # questioners receive nothing: their V_adv neither ages nor leaves (gamma = 0)
        assert np.array_equal(new[q][kept], ages[q][kept])
        ages = new


def test_the_virus_enters_the_answerers_album_only():
    sim = InfectionSimulation(8, album_size=10, beta=1.0, gamma=0.0, seed_ratio=0.0)
    ages = np.full(8, -1, dtype=np.int16)
    ages[[0, 1]] = 0  # carriers 0 and 1
    draws = {"questioners": np.array([0, 2, 4, 6]), "answerers": np.array([3, 1, 5, 7]),
             "retrieve": np.ones(4, bool), "purge": np.zeros(8, bool), "symptom": np.ones(8, bool)}
    new = sim.step(ages, draws)
    assert new[3] == 0  # Q=0 carries, A=3 now carries
    assert new[1] == 1  # A=1 carried, its Q does not: its copy ages
    assert new[0] == 0 and new[2] == -1  # a questioner is never infected by the chat


def test_only_start_of_round_carriers_recover():
    sim = InfectionSimulation(4, beta=1.0, gamma=1.0, seed_ratio=0.0)
    ages = np.array([0, -1, -1, -1], dtype=np.int16)
    draws = {"questioners": np.array([0, 2]), "answerers": np.array([1, 3]), "retrieve": np.ones(2, bool),
             "purge": np.ones(4, bool), "symptom": np.ones(4, bool)}
    new = sim.step(ages, draws)
    assert new[0] == -1 and new[1] == 0  # the old carrier recovers, the new one does not (Eq. 5)


def test_large_simulation_follows_the_recurrence_and_is_deterministic():
    sim = InfectionSimulation(2**14, alpha=0.72, beta=0.8, gamma=0.1, seed_ratio=0.05)
    a = sim.run(40, np.random.default_rng(3)).carriers_.copy()
    b = sim.run(40, np.random.default_rng(3)).carriers_
    assert np.array_equal(a, b) and a.shape == (41,) and sim.infected_.shape == sim.cumulative_.shape == (40,)
    assert np.abs(a - recurrence(a[0], 0.8, 0.1, 40)).mean() < 0.02
    assert np.abs(sim.infected_ - 0.72 * sim.carriers_[:-1]).max() < 0.03  # Eq. 4, c_t at the start of round t
    assert np.nanmean(sim.rates_["beta_t"]) == pytest.approx(0.8, abs=0.01)
    assert np.nanmean(sim.rates_["alpha_q_t"]) == pytest.approx(0.72, abs=0.01)
    assert np.all(np.diff(sim.cumulative_) >= 0)


def test_beta_at_most_two_gamma_goes_extinct_on_average():
    finals = [InfectionSimulation(2048, beta=0.4, gamma=g, seed_ratio=0.05).run(300, np.random.default_rng(s))
              .carriers_[-1] for g in (0.2, 0.3) for s in range(3)]
    assert np.mean(finals) < 0.02


def test_validation_and_not_fitted():
    def run(**params):  # the parameters are stored as given (scikit-learn's contract) and checked by run
        return InfectionSimulation(**params).run(1, np.random.default_rng(0))

    with pytest.raises(ValueError, match="even"):
        run(num_agents=5)
    with pytest.raises(ValueError, match="cannot exceed"):
        run(num_agents=4, alpha=0.95, beta=0.8)  # alpha = retrieval x jailbreak <= beta
    run(num_agents=4, alpha=0.95, beta=0.8, definition="bernoulli")  # the theory allows any alpha
    with pytest.raises(ValueError, match="definition"):
        run(num_agents=4, definition="theory")
    with pytest.raises(ValueError, match="rounds"):
        InfectionSimulation(4).run(2.5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="ages"):
        InfectionSimulation(4).simulate(np.array([0, 12, -1, -1]), [])
    with pytest.raises(ValueError, match="album_size"):
        run(num_agents=4, album_size=0)
    with pytest.raises(ValueError, match="seed_ratio"):
        run(num_agents=4, seed_ratio=1.5)
    with pytest.raises(ValueError, match="level"):
        first_round_reaching(np.array([0.1, 0.2]), float("nan"))
    with pytest.raises(ValueError, match="level"):
        sequential_rounds_to(256, 1.5)
    with pytest.raises(ValueError, match="beta"):
        run(num_agents=4, beta=1.5)
    with pytest.raises(ValueError, match="alpha"):
        run(num_agents=4, alpha=float("nan"))
    with pytest.raises(NotFittedError):
        _ = InfectionSimulation(4).carriers_


def test_baselines_and_first_round():
    curve = sequential_jailbreak(256, 32)
    assert curve[0] == 1 / 256 and curve[-1] == pytest.approx(33 / 256)
    assert sequential_rounds_to(256, 0.9) == 230  # ceil(230.4) - 1 seeded agent
    assert first_round_reaching(np.array([0.1, 0.5, 0.95]), 0.9) == 2
    assert first_round_reaching(np.array([0.1, 0.5]), 0.9) == 2  # never: the curve length


def test_rate_grid_keeps_alpha_below_beta_and_orders_the_spread():
    grid = rate_grid(2**12, [0.8, 1.0], [0.5, 1.0], 30, lambda b, j: np.random.default_rng(0))
    assert grid["current"].shape == grid["rounds_to_level"].shape == (2, 2)
    assert grid["current"][1, 1] > grid["current"][1, 0] and grid["current"][1, 1] > grid["current"][0, 1]
    with pytest.raises(ValueError, match="jailbreak"):
        rate_grid(16, [1.0], [1.5], 4, lambda b, j: np.random.default_rng(0))
