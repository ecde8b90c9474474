"""The rpg reproduction: smoke runs through the runner (trained model cached once), claims that can fail, settings."""

import math

import pytest
import torch

from icml24.core.runner import execute, plan
from icml24.core.verdicts import aggregate, claims_of
from icml24.papers import rpg as paper
from icml24.papers.rpg import claims, experiments


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rpg")
    exp = paper.PAPER.experiments["binding"]
    records = [execute(task) for task in plan([exp], seeds=[0, 1], setting="smoke", store_folder=folder)]
    return folder, exp, records


def test_smoke_runs_give_the_regime_and_decidable_claims(smoke):
    folder, exp, records = smoke
    assert [r.status for r in records] == ["ok", "ok"], [r.error for r in records]
    summary = aggregate(records, exp)
    assert summary["num_seeds"] == 2 and all(math.isfinite(v) for v in summary.values())
    assert {"full_binding_2obj", "full_binding_4obj", "classifier_holdout_accuracy"} <= set(summary)  # the regime
    regime = ["fidelity_1obj", "full_binding_2obj", "full_binding_3obj", "full_binding_4obj", "full_binding_5obj"]
    assert all(list(r.metrics)[:5] == regime for r in records)  # reported first
    for k in (3, 5):  # every count the planner lays out is generated and judged
        assert {f"gain_{k}obj", f"gain_{k}obj_se", f"gain_inplace_{k}obj", f"rpg_binding_{k}obj"} <= set(summary)
    # the summary pools the seeds' standard errors: the SE of the mean of two seeds' means
    pooled = math.sqrt(sum(r.metrics["gain_4obj_se"] ** 2 for r in records)) / 2
    assert summary["gain_4obj_se"] == pytest.approx(pooled)
    assert 0.0 <= summary["edit_round1_broken_fraction"] <= 1.0
    assert {"val_fidelity_1obj", "val_full_binding_2obj", "val_rpg_binding_4obj"} <= set(summary)
    for claim in claims_of(exp):
        assert claim.evaluate(summary).status in {"holds", "fails"}
    # the trained DDPM and evaluator were built once and reused by the second seed
    cached = sorted(p.name.split("-")[0] for p in (folder / "cache" / "rpg").glob("*.pt"))
    assert cached == ["cell", "tiny"]


def _good():
    return {"binding": {"gain_2obj": 0.2, "gain_2obj_se": 0.02, "gain_4obj": 0.3, "gain_4obj_se": 0.03,
                        "middle_beta_advantage": 0.03, "edit_round1_fixed_fraction": 0.6}}


def test_every_claim_can_fail(claims_can_fail):
    bad = [
        {"gain_4obj": 0.12},  # regional prompting helps too little with many objects
        {"middle_beta_advantage": -0.02},  # an extreme base ratio is best
        {"edit_round1_fixed_fraction": 0.3},  # the loop fixes a minority of the errors
    ]
    claims_can_fail(paper.CLAIMS, _good(), bad)


def test_the_gain_claim_needs_both_object_counts():
    claim = paper.CLAIMS[0]
    ok = {"gain_2obj_se": 0.01, "gain_4obj_se": 0.01}
    assert claim.evaluate({**ok, "gain_2obj": 0.05, "gain_4obj": 0.4}).status == "fails"
    assert claim.evaluate({**ok, "gain_2obj": 0.18, "gain_4obj": 0.23}).status == "holds"
    noisy = {**ok, "gain_2obj": 0.18, "gain_4obj": 0.21, "gain_4obj_se": 0.03}  # above the bar, inside the noise
    assert claim.evaluate(noisy).status == "fails"


def test_the_gain_claim_reads_every_object_count_of_the_instance_at_its_bar():
    claim = paper.CLAIMS[0]
    assert [claims.bar(k) for k in (2, 3, 4, 5, 6)] == [0.15, 0.15, 0.20, 0.20, 0.20]
    six = {"gain_6obj": 0.25, "gain_6obj_se": 0.01}  # the family's 6-object member: only k = 6 was measured
    assert claim.evaluate(six).status == "holds"
    assert claim.evaluate({**six, "gain_6obj": 0.21}).status == "fails"  # 0.21 - 0.02 is under the 4-object bar
    three = {"gain_2obj": 0.3, "gain_2obj_se": 0.01, "gain_3obj": 0.16, "gain_3obj_se": 0.01}
    assert claim.evaluate(three).status == "fails" and claim.evaluate({**three, "gain_3obj": 0.2}).status == "holds"
    assert claim.evaluate({"middle_beta_advantage": 0.1}).status == "fails"  # no gain measured: nothing holds


def test_a_rounding_size_advantage_does_not_count():
    assert paper.CLAIMS[1].evaluate({"middle_beta_advantage": 1e-12}).status == "fails"
    assert paper.CLAIMS[1].evaluate({"middle_beta_advantage": 1 / (4 * 200 * 60)}).status == "holds"  # one step


def test_every_claim_reads_the_object_count_family():
    for claim in paper.CLAIMS:
        family = claim.resolved_family
        assert family.at("quick") == {"2-5 objects": {}, "6 objects": {"num_objects": [6]}}
        assert family.required(2) == 2
    assert [type(c.resolved_oracle).__name__ for c in paper.CLAIMS] == ["Oracle", "NoOracle", "Oracle"]


class _Evaluator:
    def __init__(self, correct):
        self.correct = torch.tensor(correct)

    def slot_correct(self, images, entities):
        return self.correct


def test_the_editing_oracle_fixes_every_flagged_slot_and_breaks_none():
    rounds = experiments._truth_edits(_Evaluator([[True, False], [False, False]]), None, None, rounds=2)
    assert [(r.wrong_before, r.fixed, r.broken, r.accuracy_after) for r in rounds] == [(3, 3, 0, 1.0), (0, 0, 0, 1.0)]


def test_the_oracles_fill_rpg_slot_on_the_same_prompts(smoke):
    folder, exp, records = smoke
    runs = {}
    for oracle in (paper.CLAIMS[0].resolved_oracle, paper.CLAIMS[2].resolved_oracle):
        task = plan([exp], seeds=[0], setting="smoke", grid=[oracle.overrides], store_folder=folder)[0]
        runs[next(iter(oracle.overrides))] = execute(task).metrics
    truth, edits = runs["generation"], runs["editing"]
    for k in (2, 3, 4, 5):  # binding 1 at every count, against the same full-prompt images
        assert truth[f"rpg_binding_{k}obj"] == 1.0 and truth[f"full_binding_{k}obj"] == records[0].metrics[
            f"full_binding_{k}obj"]
        assert truth[f"gain_{k}obj"] == pytest.approx(1.0 - truth[f"full_binding_{k}obj"])
    assert paper.CLAIMS[0].evaluate(truth).status == "holds"
    assert edits["edit_round1_fixed_fraction"] == 1.0 and edits["edit_round1_broken_fraction"] == 0.0
    assert edits["rpg_binding_2obj"] == records[0].metrics["rpg_binding_2obj"]  # RPG's own images before the edit
    with pytest.raises(ValueError, match="editing must be one of"):
        exp.fn(None, **{**exp.config(setting="smoke"), "editing": "sdedit"})


def test_settings_follow_the_issue():
    exp = paper.PAPER.experiments["binding"]
    defaults = exp.defaults()
    assert list(defaults["betas"]) == [0.0, 0.25, 0.5, 0.75] and defaults["rpg_beta"] == 0.5
    assert list(defaults["num_objects"]) == [2, 3, 4, 5]
    assert len(exp.default_seeds(setting="quick")) >= 2 and exp.full["num_prompts"] >= 100
    assert {claim.experiment.name for claim in paper.CLAIMS} == set(paper.PAPER.experiments)
    # the quick model is the validation-chosen default (no override), and every claim is judged at quick
    assert "channels" not in exp.quick and "train_steps" not in exp.quick
    assert defaults["channels"] == experiments.CHANNELS and defaults["train_steps"] == experiments.TRAIN_STEPS
    assert all(claim.setting != "full" for claim in paper.CLAIMS)


def test_the_null_puts_the_full_prompt_model_in_rpg_slot(smoke, tmp_path):
    folder, exp, records = smoke
    null = paper.CLAIMS[0].resolved_null
    assert null.overrides == {"generation": "full"} and all(c.resolved_null is null for c in paper.CLAIMS)
    task = plan([exp], seeds=[0], setting="smoke", grid=[null.overrides], store_folder=folder)[0]
    m = execute(task).metrics
    for k in (2, 3, 4, 5):  # no regional mask: every beta gives the full-prompt images (same noise, deterministic DDIM)
        assert m[f"rpg_binding_{k}obj"] == m[f"full_binding_{k}obj"] and m[f"gain_{k}obj"] == 0.0
        assert m[f"val_rpg_binding_{k}obj"] == m[f"val_full_binding_{k}obj"]
    assert m["middle_beta_advantage"] == 0.0
    assert m["full_binding_2obj"] == records[0].metrics["full_binding_2obj"]  # the same model, prompts and noise
    with pytest.raises(ValueError, match="generation must be one of"):
        exp.fn(None, **{**exp.config(setting="smoke"), "generation": "global"})


def test_bad_settings_are_refused_before_any_work():
    exp = paper.PAPER.experiments["binding"]
    with pytest.raises(ValueError, match="num_prompts must be >= 2"):
        exp.fn(None, **{**exp.config(setting="smoke"), "num_prompts": 1})


@pytest.mark.parametrize(("steps", "guidance", "message"), [(0, 3.0, "steps must be"), (2, float("nan"), "guidance")])
def test_bad_sampling_settings_are_clear_errors(steps, guidance, message):
    """steps=0 returned the input noise unchanged and guidance=nan NaN images; both now raise."""
    import numpy as np

    from icml24.generative import TextDiffusion, sample_scenes, tokenize

    images, captions = sample_scenes(16, np.random.default_rng(0))
    tiny = TextDiffusion(channels=8, train_steps=1, batch_size=4,
                         random_state=torch.Generator().manual_seed(0)).fit(images, tokenize(captions))
    with pytest.raises(ValueError, match=message):
        experiments.generate_full(tiny, ["red circle"], torch.zeros(1, 3, 16, 16), torch.Generator(), steps, guidance)
