"""The agent-smith reproduction: smoke runs through the runner, claims that can fail, settings and regime."""

import inspect
import math

import numpy as np
import pytest
from smoke_runs import smoke_summaries

from icml24.core.verdicts import claims_of
from icml24.papers import agent_smith as paper
from icml24.papers.agent_smith import experiments


@pytest.fixture(scope="module")
def smoke_metrics(tmp_path_factory):
    return smoke_summaries(paper, tmp_path_factory.mktemp("agent-smith"), seeds=[0, 1])


def test_smoke_runs_give_finite_metrics_the_regime_and_decidable_claims(smoke_metrics):
    for name, summary in smoke_metrics.items():
        assert summary["num_seeds"] == 2 and all(math.isfinite(v) for v in summary.values())
        assert {"alpha", "beta"} <= set(summary) or name == "sensitivity"  # the regime is in the metrics
        for claim in claims_of(paper.PAPER.experiments[name]):
            assert claim.evaluate(summary).status in {"holds", "fails"}


def _good():
    return {
        "scaling": {"current22_max_z": 0.8, "largest_rounds_to_level_cumulative": 27.0, "mad_recurrence_large": 0.01},
        "table1": {"table1_max_z": 0.9},
        "defence": {"max_contained_final": 0.008, "max_uncontained_gap": 0.002},
        "rounds_vs_size": {"infection_r2_vs_ln_n": 0.97, "infection_loglog_slope": 0.09},
        "real_society": {"crafted_cumulative_final": 0.97},
    }


def test_every_claim_can_fail(claims_can_fail):
    bad = [
        {"current22_max_z": 6.0},  # round-22 current ratio far from App. E.1 (e.g. alpha = 0.76: 0.2 below)
        {"largest_rounds_to_level_cumulative": 45.0},  # a slower spread than Fig. 1
        {"mad_recurrence_large": 0.08},  # simulation off the recurrence
        {"table1_max_z": 12.0},  # Table 1's cells missed (the sequential jailbreak: p_16 = 17/256)
        {"max_contained_final": 0.2},  # a defence at beta <= 2 gamma that does not contain
        {"infection_loglog_slope": 0.9, "infection_r2_vs_ln_n": 0.7},  # polynomial, not logarithmic, growth
        {"crafted_cumulative_final": 0.4},  # the crafted image stalls
    ]
    claims_can_fail(paper.CLAIMS, _good(), bad)


def test_the_one_million_claim_also_fails_when_too_fast():
    claim = paper.CLAIMS[1]
    assert claim.evaluate({"largest_rounds_to_level_cumulative": 24.0}).status == "fails"  # 99% level, alpha = 1


def test_the_prediction_z_reads_the_spread_of_one_run():
    runs = [{"x": 0.94}, {"x": 0.96}, {"x": 0.95}]
    assert experiments._prediction_z(runs, "x", 0.95) == pytest.approx(0.0)
    assert experiments._prediction_z(runs, "x", 0.99) == pytest.approx(0.04 / (0.01 * (1 + 1 / 3) ** 0.5))
    assert experiments._prediction_z([{"x": 0.5}], "x", 0.51) == pytest.approx(5.0)  # one seed: the 0.002 floor


def test_the_bernoulli_variant_overstates_the_current_ratio_at_the_same_rates():
    """The issue's finding, as a property: at beta = 0.8 and jailbreak 0.95 (alpha = 0.76) the theory's coin gives
    the same mean current ratio, but alpha = 0.95 (allowed only there) overstates it by ~0.19 near saturation."""
    from icml24.agents import InfectionSimulation

    official = InfectionSimulation(2**14, alpha=0.76, beta=0.8, seed_ratio=0.05).run(40, np.random.default_rng(0))
    theory = InfectionSimulation(2**14, alpha=0.95, beta=0.8, seed_ratio=0.05, definition="bernoulli")
    theory.run(40, np.random.default_rng(0))
    assert (theory.infected_ - official.infected_)[-5:].mean() == pytest.approx(0.19, abs=0.02)
    with pytest.raises(ValueError, match="cannot exceed"):  # checked when the simulation runs
        InfectionSimulation(256, alpha=0.95, beta=0.8).run(1, np.random.default_rng(0))


def test_settings_follow_the_paper():
    scaling = paper.PAPER.experiments["scaling"]
    assert max(scaling.full["log2_sizes"]) == 20 and min(scaling.full["log2_sizes"]) == 8
    assert 20 in scaling.quick["log2_sizes"]
    defaults = {k: v.default for k, v in inspect.signature(experiments.scaling.fn).parameters.items()}
    assert defaults["seed_ratio"] == 1 / 1024 and defaults["album_size"] == 10 and defaults["history_size"] == 3
    assert defaults["alpha"] <= defaults["beta"] and defaults["definition"] == "official"
    assert {14, 17, 20} <= set(scaling.quick["log2_sizes"])
    society = {k: v.default for k, v in inspect.signature(experiments.real_society.fn).parameters.items()}
    from icml24.agents import border_fraction

    assert border_fraction(112, society["border"]) == pytest.approx(border_fraction(336, 6))  # the paper's 7%
    judged = {claim.experiment.name for claim in paper.CLAIMS} | {r.experiment.name for r in paper.REGIMES}
    assert judged == set(paper.PAPER.experiments)


def test_regimes_read_metrics_the_smoke_runs_report(smoke_metrics):
    assert paper.REGIMES and all(regime.paper for regime in paper.REGIMES)
    for regime in paper.REGIMES:
        assert set(regime.metrics) <= set(smoke_metrics[regime.experiment.name])


def test_the_sequential_null_fills_the_infectious_slot_with_the_one_agent_per_round_curve():
    from icml24.core import Context

    metrics = experiments.rounds_vs_size.fn(Context(seed=0), log2_sizes=[8, 10], max_rounds=8, attack="sequential")
    assert metrics["baseline_infectious_cumulative_final"] == pytest.approx(32 / 256)  # rounds 0..31
    assert metrics["n2e8_rounds_to_90_carriers"] == 230  # exact, not capped at max_rounds
    assert metrics["infection_loglog_slope"] == pytest.approx(1.0, abs=0.01)
    with pytest.raises(ValueError, match="attack"):
        experiments.scaling.fn(Context(seed=0), log2_sizes=[8], rounds=4, attack="none")


def test_the_recurrence_oracle_fills_the_simulation_slot_with_eq5():
    from icml24.agents import recurrence
    from icml24.core import Context

    m = experiments.scaling.fn(Context(seed=0), log2_sizes=[10, 14], rounds=32, simulator="recurrence")
    assert m["mad_recurrence_large"] == 0.0 and m["n2e14_mad_closed_form"] > 0.0
    assert m["n2e14_current_round22"] == pytest.approx(recurrence(1 / 1024, 1.0, 0.0, 32)[22])
    assert m["largest_rounds_to_level_cumulative"] == 28.0  # Fig. 1's 27-31 rounds: the ideal curve sits inside
    assert paper.CLAIMS[1].evaluate(m).status == paper.CLAIMS[2].evaluate(m).status == "holds"
    rounds = experiments.rounds_vs_size.fn(Context(seed=0), log2_sizes=[8, 12, 16], simulator="recurrence")
    assert rounds["infection_r2_vs_ln_n"] > 0.99 and rounds["infection_loglog_slope"] < 0.3
    contained = experiments.defence.fn(Context(seed=0), gammas=[0.1, 0.4], num_agents=2**10, simulator="recurrence")
    assert contained["gamma0p4_carriers_final"] < 0.02  # beta = 2 gamma: algebraic decay (Eq. 14)
    assert contained["gamma0p1_carriers_final"] == pytest.approx(contained["gamma0p1_limit_theory"], abs=1e-3)
    with pytest.raises(ValueError, match="simulator"):
        experiments.scaling.fn(Context(seed=0), log2_sizes=[8], rounds=4, simulator="ode")


def test_the_ideal_image_oracle_infects_through_the_pairwise_chats_without_a_society():
    from icml24.core import Context

    m = experiments.real_society.fn(Context(seed=0), num_agents=64, image="ideal")
    assert m["crafted_cumulative_final"] >= 0.9 and m["alpha"] == m["beta"] == 1.0
    assert paper.CLAIMS[6].evaluate(m).status == "holds"
    with pytest.raises(ValueError, match="image must be"):
        experiments.real_society.fn(Context(seed=0), image="random")


def test_every_claim_declares_an_oracle_and_a_family_and_family_members_change_the_instance():
    from icml24.core import Family, NoOracle, Oracle, SingleInstance

    for claim in paper.CLAIMS:
        assert isinstance(claim.resolved_oracle, (Oracle, NoOracle))
        family = claim.resolved_family
        assert isinstance(family, (Family, SingleInstance))
        if isinstance(family, Family):
            for setting in ("quick", "full"):
                members = family.at(setting)
                assert {} in members.values() and 2 <= len(members) <= 4
                for overrides in members.values():  # instances (rates, N), never the budget or the seeds
                    assert set(overrides) <= {"alpha", "beta", "gamma", "num_agents"}
                    assert overrides.get("alpha", 0.0) <= overrides.get("beta", 1.0)  # alpha <= beta (official)
    # the rate families hold the paper's rates and others; the society family holds N beside the setting's own
    assert {"alpha": 0.6, "beta": 0.6} in paper.CLAIMS[5].resolved_family.at("quick").values()
    assert {"num_agents": 256} in paper.CLAIMS[6].resolved_family.at("quick").values()


def test_a_flat_fit_is_exact_and_a_rounding_size_spread_does_not_count():
    slope, r2 = experiments._fit_line(np.log([256.0, 1024.0, 4096.0]), np.array([12.0, 12.0, 12.0]))
    assert slope == pytest.approx(0.0, abs=1e-12) and r2 == 1.0
    # a rounding-size wobble (1e-12) on a constant is still flat, not a fit of noise
    _, r2 = experiments._fit_line(np.log([256.0, 1024.0, 4096.0]), np.array([12.0, 12.0 + 1e-12, 12.0]))
    assert r2 == 1.0
    _, r2 = experiments._fit_line(np.log([256.0, 1024.0, 4096.0]), np.array([10.0, 14.0, 11.0]))
    assert r2 < 0.9
