import math

import pytest

from icml24.core import Context
from icml24.papers import simformer as paper

GOOD = {
    "posterior_benchmark": {"gaussian_linear_simformer_c2st": 0.60, "gaussian_linear_npe_c2st": 0.58,
                            "two_moons_simformer_c2st": 0.70, "two_moons_npe_c2st": 0.69,
                            "gaussian_linear_likelihood_c2st": 0.55, "gaussian_linear_random_c2st": 0.56},
    "all_conditionals": {"gaussian_tree_likelihood_c2st": 0.55, "gaussian_tree_random_c2st": 0.62},
    "graph_vs_dense": {"undirected_c2st": 0.70, "dense_c2st": 0.90, "dense_minus_undirected": 0.20,
                       "dense_minus_undirected_min": 0.15},
    "exact_conditional": {"asked_mean_error_sd": 0.1, "asked_sd_ratio": 0.95},
}
# for each claim, a plausible measurement that must make it fail
BAD = [
    {"two_moons_simformer_c2st": 0.80},  # 0.11 above NPE trained with sbi's defaults
    {"gaussian_linear_random_c2st": 0.85},
    {"gaussian_tree_likelihood_c2st": 0.75},
    {"dense_minus_undirected": 0.03},  # inside the seed noise: the mean gap must exceed the margin
    {"asked_mean_error_sd": 0.53},  # the held-out bias of issue #48 (0.489 against 0.589)
]


def test_every_claim_holds_on_good_and_fails_on_bad_metrics(claims_can_fail):
    claims_can_fail(paper.CLAIMS, GOOD, BAD)
    for sd_ratio in (0.7, 1.4):  # a right mean with the wrong spread is no match
        assert paper.CLAIMS[-1].evaluate({**GOOD["exact_conditional"], "asked_sd_ratio": sd_ratio}).status == "fails"


def test_settings_are_typed_lists_and_declare_seeds():
    exp = paper.PAPER.experiments["posterior_benchmark"]
    assert exp.parameters()["budgets"] == list[int] and exp.parameters()["tasks"] == list[str]
    assert paper.PAPER.experiments["graph_vs_dense"].parameters()["kinds"] == list[str]
    for exp in paper.PAPER.experiments.values():
        assert exp.threads == 1 and exp.smoke is not None
        for setting in ("quick", "full", "smoke"):
            exp.config(setting=setting)
        assert exp.default_seeds(setting="smoke") == [0]
    assert all(d.endswith(".") and ". " not in d for d in paper.PAPER.deviations)  # one sentence each


def test_graph_vs_dense_smoke_is_deterministic_and_decidable(tmp_path):
    exp = paper.PAPER.experiments["graph_vs_dense"]
    config = exp.config(setting="smoke")
    first = exp(Context(seed=0, out_dir=tmp_path), **config)
    assert first and all(isinstance(v, float) and math.isfinite(v) for v in first.values())
    again = exp(Context(seed=0, out_dir=tmp_path), **config)
    assert {k: v for k, v in first.items() if "seconds" not in k} == \
        {k: v for k, v in again.items() if "seconds" not in k}
    assert 0.0 <= first["dense_c2st"] <= 1.0
    summary = first | paper.PAPER.experiments["graph_vs_dense"].summarize([first, again])
    assert summary["dense_minus_undirected_min"] == pytest.approx(first["dense_minus_undirected"])
    assert paper.CLAIMS[3].evaluate(summary).status in {"holds", "fails"}


def test_graph_claim_fails_when_one_seed_reverses_the_gap():
    per_seed = [{"dense_minus_undirected": 0.3}, {"dense_minus_undirected": -0.01}]
    summary = {"dense_minus_undirected": 0.145} | paper.PAPER.experiments["graph_vs_dense"].summarize(per_seed)
    assert paper.CLAIMS[3].evaluate(summary).status == "fails"


def test_all_conditionals_rejects_tasks_without_closed_form_conditionals():
    with pytest.raises(ValueError, match="closed-form"):
        paper.all_conditionals(Context(seed=0), tasks=["two_moons"])


def test_nulls_put_an_untrained_network_or_dense_attention_in_the_simformers_slot():
    nulls = [claim.resolved_null.overrides for claim in paper.CLAIMS]
    assert nulls == [{"score_network": "untrained"}] * 3 + [{"attention_in_graph_slots": "dense"}] + \
        [{"score_network": "untrained"}]
    assert paper._steps_for(paper.get_task("two_moons"), paper._training_steps("untrained", 400)) == 0
    assert paper._training_steps("trained", 400) == 400
    with pytest.raises(ValueError, match="score_network"):
        paper._training_steps("npe", 400)
    with pytest.raises(ValueError, match="attention_in_graph_slots"):
        paper.graph_vs_dense(Context(seed=0), attention_in_graph_slots="directed")


def test_exact_conditional_smoke_reports_both_trainings_against_the_exact_moments(tmp_path):
    exp = paper.PAPER.experiments["exact_conditional"]
    m = exp(Context(seed=0, out_dir=tmp_path), **exp.config(setting="smoke"))
    assert all(isinstance(v, float) and math.isfinite(v) for v in m.values())
    assert m["exact_mean"] == pytest.approx(0.589, abs=1e-3) and m["exact_sd"] == pytest.approx(0.188, abs=1e-3)
    for kind in ("asked", "default"):
        assert m[f"{kind}_mean_error_sd"] == pytest.approx(abs(m[f"{kind}_mean"] - m["exact_mean"]) / m["exact_sd"],
                                                          rel=1e-5)
        assert m[f"{kind}_steps"] == 3.0
    assert paper.CLAIMS[-1].evaluate(m).status in {"holds", "fails"}
