"""The BiE reproduction: claims that can fail, the comparisons and settings (the smoke runs on the real SmolLM2 are
in tests/papers/test_every_experiment.py)."""

import math

import pytest

from icml24.papers import bie as paper
from icml24.papers.bie import claims, experiments

GOOD = {
    "errors": {"outlier_layers_sqnr_gain_4p25_db": 0.8, "outlier_layers_sqnr_gain_4p25_se": 0.2,
               "outlier_layers_sqnr_gain_5p25_db": 0.6, "outlier_layers_sqnr_gain_5p25_se": 0.1},
    "perplexity_at_matched_bits": {"a_bie_over_best_4p25_ci_high": 0.98, "a_bie_over_best_5p25_ci_high": 0.99,
                                   "wa_bie_m3_over_fp32_ci_high": 1.08,
                                   "a_searched_over_default_bie_m2_b64_ci_high": 0.97,
                                   "a_searched_over_default_bie_m3_b64_ci_high": 0.99},
}
BAD = [
    {"outlier_layers_sqnr_gain_4p25_db": 0.3},  # 4.25 b: a gain inside twice its standard error is noise
    {"a_bie_over_best_4p25_ci_high": 1.05},  # 4.25 b: the interval reaches a tie with BFP or MXFP4
    {"wa_bie_m3_over_fp32_ci_high": 1.2},  # the interval reaches +20% perplexity
    {"a_searched_over_default_bie_m3_b64_ci_high": 1.08},  # issue 38: searched 1.02 (CI 0.97-1.08) of default
]


def test_every_claim_can_fail(claims_can_fail):
    claims_can_fail(paper.CLAIMS, GOOD, BAD)
    assert paper.CLAIMS[0].evaluate({**GOOD["errors"], "outlier_layers_sqnr_gain_5p25_db": -0.5}).status == "fails"
    assert paper.CLAIMS[1].evaluate({**GOOD["perplexity_at_matched_bits"],
                                     "a_bie_over_best_5p25_ci_high": 1.0}).status == "fails"  # a tie is no superiority
    assert paper.CLAIMS[2].evaluate({**GOOD["perplexity_at_matched_bits"],
                                     "wa_bie_m3_over_fp32_ci_high": math.nan}).status == "error"  # NaN is no verdict
    assert paper.CLAIMS[3].evaluate({**GOOD["perplexity_at_matched_bits"],
                                     "a_searched_over_default_bie_m2_b64_ci_high": 1.0}).status == "fails"


def _windows(offset: float, n: int = 6):
    import numpy as np

    return 3.0 + offset + np.linspace(-0.5, 0.5, n)


def test_comparisons_take_the_best_competitor_at_the_same_bits_with_paired_intervals():
    import numpy as np

    w = {("a", "bie_m2_b64"): _windows(0.1), ("a", "bfp_m3_b32"): _windows(0.3), ("a", "mxfp4"): _windows(0.0),
         ("a", "bie_m3_b64"): _windows(-0.05), ("a", "bfp_m4_b32"): _windows(0.0), ("a0", "bie_m3_b64"): _windows(0.0)}
    out = experiments._comparisons(w)
    assert out["a_bie_over_best_4p25"] == pytest.approx(np.exp(0.1))  # against MXFP4, the best at 4.25 b
    assert out["a_bie_over_best_4p25_ci_low"] == pytest.approx(np.exp(0.1))  # paired: a constant shift has no spread
    assert out["a_bie_over_best_5p25_ci_high"] == pytest.approx(np.exp(-0.05))
    assert out["a_searched_over_default_bie_m3_b64"] == pytest.approx(np.exp(-0.05))
    assert "wa_bie_over_best_4p25" not in out and "a_searched_over_default_bie_m2_b64" not in out  # no runs, no ratio
    metrics = {}
    for (mode, name), v in w.items():
        metrics.update(experiments._nll_metrics(mode, name, v))
    assert {k: list(v) for k, v in experiments._windows_of(metrics).items()} == {k: list(v) for k, v in w.items()}
    summary = experiments.perplexity_at_matched_bits.summarize([metrics, metrics])  # the seeds' windows are pooled
    assert summary["a_bie_over_best_4p25"] == pytest.approx(np.exp(0.1))


def test_window_nlls_are_labelled_metrics_read_back_in_window_order():
    import numpy as np

    nll = np.arange(12.0)[::-1]  # more than 10 windows: order by the window number, not the key's text
    metrics = {**experiments._nll_metrics("a", "bie_m2_b64", nll), "ppl_a_bie_m2_b64": 1.0}
    metrics.update({f"{k}_std": 0.0 for k in list(metrics)})  # the runner's companions are not windows
    assert "wnll[format=bie_m2_b64,mode=a,window=11]" in metrics
    assert list(experiments._windows_of(metrics)[("a", "bie_m2_b64")]) == list(nll)


def test_formats_are_compared_at_matched_bits():
    bits = {name: experiments._format(name).bits_per_element for name in experiments.FORMATS}
    assert {bits[n] for n in experiments.LOW} == {4.25} and {bits[n] for n in experiments.HIGH} == {5.25}
    with pytest.raises(ValueError, match="choose from"):
        experiments._format("fp8")


def test_synthetic_bimodal_data_has_the_asked_outlier_share():
    import numpy as np

    x = experiments._bimodal(np.random.default_rng(0), 64, 1024, 0.01, 50.0)
    assert 0.005 < float((x.abs() > 6).float().mean()) < 0.015


def test_settings_and_record():
    assert paper.PAPER.slug == "bie" and set(paper.PAPER.experiments) == {"errors", "perplexity_at_matched_bits"}
    ppl = paper.PAPER.experiments["perplexity_at_matched_bits"]
    for setting in ("quick", "full", "smoke"):
        cfg = ppl.config(setting=setting)
        assert {"bie_m2_b64", "bfp_m3_b32", "mxfp4", "bie_m3_b64", "bfp_m4_b32"} <= set(cfg["formats"])
        assert "bie_m3_b64" in cfg["wa_formats"]
    assert ppl.config(setting="full")["seq_len"] == 256 and ppl.config(setting="full")["sequences"] == 16
    assert ppl.config(setting="quick")["sequences"] * ppl.config(setting="quick")["seq_len"] >= 1024  # CI windows


def test_the_null_puts_bfp_at_the_same_bits_in_bie_slot():
    assert all(c.resolved_null.overrides == {"bie_slot": "bfp"} for c in paper.CLAIMS)
    for name, bfp in experiments.SAME_BITS_BFP.items():
        swapped = experiments._slot_format(name, "bfp")
        assert swapped.label == bfp and swapped.bits_per_element == experiments._format(name).bits_per_element
        assert experiments._slot_format(name, "bie").label == name
    assert experiments._slot_format("mxfp4", "bfp").label == experiments._format("mxfp4").label  # the competitors stay
    with pytest.raises(ValueError, match="bie_slot must be one of"):
        experiments._slot_format("bie_m2_b64", "int")
    # the same-mantissa comparison is an identity (tests/llm/formats), shown as a regime, not a claim
    assert any("same_m" in k for r in paper.PAPER.regimes for k in r.metrics)
    assert not any("same_m" in c.text or "same mantissa" in c.text for c in paper.CLAIMS)


def test_the_oracle_puts_the_unquantized_values_in_bie_slot_with_a_finite_sqnr():
    import torch

    x = torch.randn(4, 64, generator=torch.Generator().manual_seed(0))
    for name in experiments.SAME_BITS_BFP:
        exact = experiments._slot_format(name, "exact")
        assert isinstance(exact, experiments.Exact)
        assert exact.bits_per_element == experiments._format(name).bits_per_element  # charged BiE's bits
        q = exact.with_threshold(0.3).quantize(x)
        assert torch.equal(q, x) and q is not x
    assert experiments._sqnr(x, x.clone()) == pytest.approx(20 * math.log10(2**24))  # float32's resolution, not inf
    bfp = experiments._format("bfp_m3_b32")
    assert experiments._slot_format("bfp_m3_b32", "exact").label == bfp.label  # the competitors stay
    from icml24.llm import sqnr_db

    assert experiments._sqnr(x, bfp.quantize(x)) == sqnr_db(x, bfp.quantize(x))  # real formats: unchanged
    assert all(c.resolved_oracle.overrides == {"bie_slot": "exact"} for c in paper.CLAIMS)
    assert not any(c.resolved_oracle.cheap for c in paper.CLAIMS)


def test_the_instances_are_layer_groups_and_the_weight_matrices():
    names = [f"model.layers.0.self_attn.{p}_proj" for p in "qkvo"] + [
        f"model.layers.0.mlp.{p}_proj" for p in ("gate", "up", "down")]
    assert experiments._group_names(names, "all") == names
    assert experiments._group_names(names, "attention") == names[:4]
    assert experiments._group_names(names, "mlp") == names[4:]
    with pytest.raises(ValueError, match="layer_group must be one of"):
        experiments._group_names(names, "embeddings")
    with pytest.raises(ValueError, match="tensor must be one of"):
        experiments.errors(None, tensor="bias")  # refused before the model loads
    with pytest.raises(ValueError, match="layer_group must be one of"):
        experiments.perplexity_at_matched_bits(None, layer_group="lm_head")
    errors, ppl = paper.CLAIMS[0].resolved_family, paper.CLAIMS[1].resolved_family
    assert list(errors.at("quick").values()) == [{}, {"layer_group": "attention"}, {"layer_group": "mlp"},
                                                 {"tensor": "weight"}]
    assert list(ppl.at("quick").values()) == [{}, {"layer_group": "attention"}, {"layer_group": "mlp"}]
    assert errors.required(4) == 3 and "at least 3 of 4" in paper.CLAIMS[0].text
    assert all(c.resolved_family is ppl and "at least 2 of" in c.text for c in paper.CLAIMS[1:])
    assert ppl.required(3) == 2 and not errors.cheap and not ppl.cheap
    for exp in paper.PAPER.experiments.values():  # the defaults are the experiments' own instance
        assert exp.defaults()["layer_group"] == "all"
    assert paper.PAPER.experiments["errors"].defaults()["tensor"] == "input"


def test_a_rounding_size_gain_does_not_count():
    """1e-12 dB of SQNR or 1e-12 of a perplexity ratio is rounding (tolerances in the claims), not a gain."""
    assert 1e-12 < experiments.SQNR_TOL_DB < 0.01 and 1e-12 < claims.PPL_TOL < 1e-4
    assert 1e-12 < experiments.BIMODAL_TOL
    sqnr = {**GOOD["errors"], "outlier_layers_sqnr_gain_4p25_db": 1e-12, "outlier_layers_sqnr_gain_4p25_se": 0.0}
    assert paper.CLAIMS[0].evaluate(sqnr).status == "fails"
    assert paper.CLAIMS[0].evaluate({**sqnr, "outlier_layers_sqnr_gain_4p25_db": 0.01}).status == "holds"
    ppl = GOOD["perplexity_at_matched_bits"]
    assert paper.CLAIMS[1].evaluate({**ppl, "a_bie_over_best_5p25_ci_high": 1 - 1e-12}).status == "fails"
    assert paper.CLAIMS[3].evaluate({**ppl, "a_searched_over_default_bie_m2_b64_ci_high": 1 - 1e-12}).status == "fails"
