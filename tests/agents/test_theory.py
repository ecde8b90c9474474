"""The theory of Sec. 3.1 / App. B: closed form vs the integrated ODE, limits, rounds needed, fit_rates."""

import math

import numpy as np
import pytest

from icml24.agents import (
    InfectionSimulation,
    closed_form,
    contained,
    fit_rates,
    infected_ratio,
    limit_ratio,
    ode_solution,
    recurrence,
    rounds_needed,
)


@pytest.mark.parametrize("beta,gamma", [(0.8, 0.1), (1.0, 0.0), (0.4, 0.2), (0.3, 0.3)])
def test_closed_form_equals_the_iterated_continuous_recurrence(beta, gamma):
    exact = closed_form(0.05, beta, gamma, np.arange(41))
    assert np.allclose(exact, ode_solution(0.05, beta, gamma, 40, steps_per_unit=200), atol=1e-9)


def test_discrete_recurrence_tends_to_the_limit_and_contains_below_threshold():
    assert recurrence(0.01, 0.8, 0.1, 500)[-1] == pytest.approx(limit_ratio(0.8, 0.1)) == pytest.approx(0.75)
    assert recurrence(0.5, 0.8, 0.4, 2000)[-1] < 0.01  # beta = 2 gamma: algebraic decay (Eq. 14)
    assert recurrence(0.5, 0.8, 0.5, 200)[-1] < 1e-6  # beta < 2 gamma: exponential decay (Eq. 15)
    assert contained(0.8, 0.4) and contained(0.8, 0.5) and not contained(0.8, 0.39)
    assert limit_ratio(0.8, 0.4) == 0.0


def test_rounds_needed_inverts_the_closed_form():
    t = rounds_needed(0.7, 0.8, 0.1, c0=1e-3)
    assert closed_form(1e-3, 0.8, 0.1, t) == pytest.approx(0.7)
    assert rounds_needed(0.9, 1.0, 0.0, num_agents=2**20) == pytest.approx(2 * (20 * math.log(2) + math.log(9)), 1e-4)
    assert math.isinf(rounds_needed(0.8, 0.8, 0.1, c0=0.01))  # above the limit 0.75
    # Remark I: from 1M to 1B agents costs about 14 more rounds at beta = 1, gamma = 0
    assert rounds_needed(0.9, 1.0, 0.0, num_agents=2**30) - rounds_needed(0.9, 1.0, 0.0, num_agents=2**20) \
        == pytest.approx(20 * math.log(2), 1e-3)


def test_fit_rates_recovers_the_rates():
    c = recurrence(0.01, 0.7, 0.15, 60)
    fitted = fit_rates(c, 0.9 * c)
    assert fitted == pytest.approx({"alpha": 0.9, "beta": 0.7, "gamma": 0.15}, abs=1e-9)
    sim = InfectionSimulation(2**16, alpha=0.63, beta=0.7, gamma=0.15, seed_ratio=0.02)  # jailbreak 0.9
    sim.run(60, np.random.default_rng(0))
    fitted = fit_rates(sim.carriers_[:-1], sim.infected_)  # p_t against c_t at the start of round t
    assert fitted["alpha"] == pytest.approx(0.63, abs=0.01)
    assert fitted["beta"] == pytest.approx(0.7, abs=0.05) and fitted["gamma"] == pytest.approx(0.15, abs=0.03)
    with pytest.raises(ValueError, match="carriers"):
        fit_rates([0.1, float("nan"), 0.2])


@pytest.mark.parametrize("call", [
    lambda: recurrence(0.1, 0.5, 0.1, -1), lambda: recurrence(0.1, 0.5, 0.1, 2.5),
    lambda: rounds_needed(0.0, 1, 0, c0=0.1), lambda: rounds_needed(float("nan"), 1, 0, c0=0.1),
    lambda: rounds_needed(0.99, 1, 0, num_agents=0), lambda: closed_form(0.1, 1, 0, [float("nan")]),
])
def test_bad_inputs_are_refused_with_a_value_error(call):
    with pytest.raises(ValueError):
        call()
    assert rounds_needed(0.5, 1, 0, c0=0.0) == float("inf")  # nobody carries: never


@pytest.mark.parametrize("alpha", [-0.5, 1.5, float("nan")])
def test_infected_ratio_refuses_an_alpha_outside_the_unit_interval(alpha):
    with pytest.raises(ValueError, match=r"alpha .* must lie in \[0, 1\]"):
        infected_ratio([0.1, 0.2], alpha)
    assert infected_ratio([0.1, 0.2], 0.5) == pytest.approx([0.05, 0.1])


@pytest.mark.parametrize("steps_per_unit", [0, -1, 2.5, float("nan")])
def test_ode_solution_refuses_a_step_count_below_one(steps_per_unit):
    with pytest.raises(ValueError, match=r"steps_per_unit must be an integer >= 1"):
        ode_solution(0.1, 0.5, 0.1, 3, steps_per_unit=steps_per_unit)
