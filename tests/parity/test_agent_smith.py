"""agent-smith against the official round loop (sail-sg/Agent-Smith, simulation_test_batch.py + Analyze.ipynb) with
the models replaced by draws at fixed rates (tools/parity/record_agent_smith.py).

Exact cases replay the official pairs and draws through ``InfectionSimulation.simulate`` under the official
definition: carrier counts, current and cumulative infection ratios and the per-round rates must be equal
(tolerance 0). The many-seed case compares ours, driven by its own random matching, with the official mean curves
within 4 combined standard errors per round.
"""

from __future__ import annotations

import numpy as np
import pytest
from parity_fixture import assert_close, case, load_fixture

from icml24.agents import InfectionSimulation

FIXTURE = load_fixture("agent-smith")
EXACT = [c["name"] for c in FIXTURE["cases"] if c["tolerance"] == 0.0]


def _bits(packed: list[int], count: int) -> np.ndarray:
    """One round's draws, stored as numpy.packbits bytes."""
    return np.unpackbits(np.asarray(packed, dtype=np.uint8))[:count].astype(bool)


def _replay(inputs: dict, definition: str = "official") -> InfectionSimulation:
    n, beta, jail = inputs["num_agents"], inputs["beta"], inputs["jailbreak"]
    sim = InfectionSimulation(n, album_size=inputs["album_length"], alpha=beta * jail, beta=beta,
                              definition=definition)
    ages = np.full(n, -1, dtype=np.int16)
    ages[inputs["seeded"]] = 0  # the official code appends V_adv as the newest album image of the first agents
    rounds = []
    coins = np.random.default_rng(0)  # the theory's symptom coins at rate alpha (only the bernoulli variant reads them)
    for r, pairs in enumerate(inputs["pairs"]):
        pairs = np.asarray(pairs)
        rounds.append({"questioners": pairs[:, 0], "answerers": pairs[:, 1],
                       **{key: _bits(inputs[f"{key}_bits"][r], n // 2) for key in ("retrieve", "jailbreak_q",
                                                                                  "jailbreak_a")},
                       "symptom": coins.random(n) < beta * jail, "purge": np.zeros(n, bool)})
    return sim.simulate(ages, rounds)


def _nan(values) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


@pytest.mark.parametrize("name", EXACT)
def test_replayed_official_draws_give_the_official_counts_and_ratios(name):
    recorded = case(FIXTURE, name)
    inputs, values = recorded["inputs"], recorded["values"]
    sim = _replay(inputs)
    n = inputs["num_agents"]
    assert_close(sim.carriers_ * n, values["carriers"], 0.0, f"{name} carriers")
    assert_close(sim.infected_, values["current"], 1e-12, f"{name} current infection ratio")
    assert_close(sim.cumulative_, values["cumulative"], 1e-12, f"{name} cumulative infection ratio")
    for key in ("beta_t", "alpha_q_t", "alpha_a_t"):  # NaN (None) in rounds without a carrier questioner
        theirs = _nan(values["rates"][key])
        np.testing.assert_array_equal(np.isnan(sim.rates_[key]), np.isnan(theirs))
        seen = ~np.isnan(theirs)
        assert_close(sim.rates_[key][seen], theirs[seen], 1e-12, f"{name} {key}")


def test_the_official_loop_at_rates_one_gives_the_papers_table_1_low_diversity_cells():
    """Table 1 (N = 256, one seeded agent, seed 42): cumulative p_16 = 93.75%, first round >= 90% = 15 and
    p_24 = 99.6% in every low-diversity row, which only rates 1 make identical across attacks."""
    values = case(FIXTURE, "table1_low_diversity_rates_1_seed42")["values"]
    cumulative = np.asarray(values["cumulative"])
    assert cumulative[16] == pytest.approx(0.9375) and int(np.argmax(cumulative >= 0.9)) == 15
    assert cumulative[24] == pytest.approx(255 / 256)


def test_the_bernoulli_variant_does_not_replay_the_official_infection():
    """The theory's independent symptom coin for every carrier is not the official count (the parity can fail)."""
    inputs = case(FIXTURE, "rates_0.9_0.8_seed42")["inputs"]
    official, bernoulli = _replay(inputs), _replay(inputs, "bernoulli")
    np.testing.assert_array_equal(official.carriers_, bernoulli.carriers_)  # the same spread of V_adv
    assert np.abs(official.infected_ - bernoulli.infected_).max() > 0.05


def _our_mean_curves(inputs: dict, seeds: int, definition: str = "official") -> dict[str, tuple[np.ndarray, ...]]:
    n, beta, jail = inputs["num_agents"], inputs["beta"], inputs["jailbreak"]
    sim = InfectionSimulation(n, alpha=beta * jail, beta=beta, seed_ratio=inputs["num_attacks"] / n,
                              definition=definition)
    curves = {"current": [], "cumulative": [], "carriers": []}
    for seed in range(seeds):
        sim.run(inputs["rounds"], np.random.default_rng(seed))
        curves["current"].append(sim.infected_)
        curves["cumulative"].append(sim.cumulative_)
        curves["carriers"].append(sim.carriers_)
    return {k: (np.mean(v, 0), np.std(v, 0, ddof=1) / np.sqrt(seeds)) for k, v in curves.items()}


def _z_scores(recorded: dict, ours: dict) -> dict[str, float]:
    values = recorded["values"]
    out = {}
    for key, (mean, se) in ours.items():
        gap = np.abs(mean - np.asarray(values[f"{key}_mean"]))
        scale = np.sqrt(np.asarray(values[f"{key}_se"]) ** 2 + se**2)
        out[key] = float(np.max(np.where(scale > 0, gap / np.maximum(scale, 1e-12), np.where(gap > 1e-12, np.inf, 0))))
    return out


def test_our_own_random_chats_match_the_official_mean_curves():
    recorded = case(FIXTURE, "mean_curves_48_seeds")
    z = _z_scores(recorded, _our_mean_curves(recorded["inputs"], 400))
    assert max(z.values()) <= recorded["tolerance"], z


def test_the_mean_curve_comparison_separates_the_bernoulli_variant():
    recorded = case(FIXTURE, "mean_curves_48_seeds")
    z = _z_scores(recorded, _our_mean_curves(recorded["inputs"], 400, "bernoulli"))
    assert z["cumulative"] > recorded["tolerance"], z
