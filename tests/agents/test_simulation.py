"""InfectionSimulation: the matching, the FIFO album, the answerer rule, Eq. 5 order, extinction for beta <= 2 gamma."""

import numpy as np
import pytest

from icml24._validation import NotFittedError
from icml24.agents import (
    InfectionSimulation,
    first_round_reaching,
    random_matching,
    recurrence,
    sequential_jailbreak,
    sequential_rounds_to,
)


def test_the_matching_is_a_permutation():
    rng = np.random.default_rng(0)
    for n in (2, 10, 4096):
        q, a = random_matching(rng, n)
        assert q.size == a.size == n // 2
        assert np.array_equal(np.sort(np.concatenate([q, a])), np.arange(n))


def test_an_album_never_exceeds_its_size_and_ages_only_as_answerer():
    sim = InfectionSimulation(512, album_size=3, alpha=1.0, beta=0.3, gamma=0.0, seed_ratio=0.5)
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
    sim = InfectionSimulation(2**14, alpha=0.9, beta=0.8, gamma=0.1, seed_ratio=0.05)
    a = sim.run(40, np.random.default_rng(3)).carriers_.copy()
    b = sim.run(40, np.random.default_rng(3)).carriers_
    assert np.array_equal(a, b)
    assert np.abs(a - recurrence(a[0], 0.8, 0.1, 40)).mean() < 0.02
    assert np.abs(sim.infected_ - 0.9 * sim.carriers_).max() < 0.03  # Eq. 4
    assert np.all(np.diff(sim.cumulative_) >= 0)


def test_beta_at_most_two_gamma_goes_extinct_on_average():
    finals = [InfectionSimulation(2048, beta=0.4, gamma=g, seed_ratio=0.05).run(300, np.random.default_rng(s))
              .carriers_[-1] for g in (0.2, 0.3) for s in range(3)]
    assert np.mean(finals) < 0.02


def test_validation_and_not_fitted():
    with pytest.raises(ValueError, match="even"):
        InfectionSimulation(5)
    with pytest.raises(ValueError, match="beta"):
        InfectionSimulation(4, beta=1.5)
    with pytest.raises(ValueError, match="alpha"):
        InfectionSimulation(4, alpha=float("nan"))
    with pytest.raises(NotFittedError):
        _ = InfectionSimulation(4).carriers_


def test_baselines_and_first_round():
    curve = sequential_jailbreak(256, 32)
    assert curve[0] == 1 / 256 and curve[-1] == pytest.approx(33 / 256)
    assert sequential_rounds_to(256, 0.9) == 230  # ceil(230.4) - 1 seeded agent
    assert first_round_reaching(np.array([0.1, 0.5, 0.95]), 0.9) == 2
    assert first_round_reaching(np.array([0.1, 0.5]), 0.9) == 2  # never: the curve length
