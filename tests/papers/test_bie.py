"""The BiE reproduction: claims that can fail, the comparisons and settings (the smoke runs on the real SmolLM2 are
in tests/papers/test_every_experiment.py)."""

import math

import pytest

from icml24.papers import bie as paper

GOOD = {
    "errors": {"sqnr_db_outlier_layers_bie_m2_b64": 18.0, "sqnr_db_outlier_layers_bfp_m3_b32": 17.3,
               "sqnr_db_outlier_layers_mxfp4": 17.4, "sqnr_db_outlier_layers_bie_m3_b64": 23.0,
               "sqnr_db_outlier_layers_bfp_m4_b32": 22.5},
    "perplexity_at_matched_bits": {"a_bie_over_best_4p25": 0.97, "a_bie_over_best_5p25": 0.99,
                                   "ppl_ratio_wa_bie_m3_b64": 1.05},
}
BAD = [
    {"sqnr_db_outlier_layers_bie_m2_b64": 17.4},  # at 4.25 bits BiE only ties MXFP4 on the outlier layers
    {"a_bie_over_best_4p25": 1.2},  # at 4.25 bits BiE loses to BFP or MXFP4
    {"ppl_ratio_wa_bie_m3_b64": 1.4},  # W4A4-class BiE costs 40% perplexity
]


def test_every_claim_can_fail(claims_can_fail):
    claims_can_fail(paper.CLAIMS, GOOD, BAD)
    assert paper.CLAIMS[0].evaluate({**GOOD["errors"], "sqnr_db_outlier_layers_bie_m3_b64": 22.0}).status == "fails"
    assert paper.CLAIMS[1].evaluate({**GOOD["perplexity_at_matched_bits"],
                                     "a_bie_over_best_5p25": 1.0}).status == "fails"  # a tie is no superiority
    assert paper.CLAIMS[2].evaluate({**GOOD["perplexity_at_matched_bits"],
                                     "ppl_ratio_wa_bie_m3_b64": math.nan}).status == "error"  # NaN is no verdict


def test_comparisons_take_the_best_competitor_at_the_same_bits():
    m = {"ppl_a_bie_m2_b64": 30.0, "ppl_a_bfp_m3_b32": 40.0, "ppl_a_mxfp4": 25.0, "ppl_a_bie_m3_b64": 20.0,
         "ppl_a_bfp_m4_b32": 22.0}
    out = paper._comparisons(m)
    assert out["a_bie_over_best_4p25"] == pytest.approx(30 / 25) and out["a_bie_over_best_5p25"] == pytest.approx(
        20 / 22)
    assert "wa_bie_over_best_4p25" not in out  # no W+A numbers, no W+A comparison
    summary = paper.perplexity_at_matched_bits.summarize([m, {**m, "ppl_a_mxfp4": 35.0}])
    assert summary["a_bie_over_best_4p25"] == pytest.approx(30 / 30)  # ratio of seed means, not mean of ratios


def test_formats_are_compared_at_matched_bits():
    bits = {name: paper._format(name).bits_per_element for name in paper.FORMATS}
    assert {bits[n] for n in paper.LOW} == {4.25} and {bits[n] for n in paper.HIGH} == {5.25}
    with pytest.raises(ValueError, match="choose from"):
        paper._format("fp8")


def test_synthetic_bimodal_data_has_the_asked_outlier_share():
    import numpy as np

    x = paper._bimodal(np.random.default_rng(0), 64, 1024, 0.01, 50.0)
    assert 0.005 < float((x.abs() > 6).float().mean()) < 0.015


def test_settings_and_record():
    assert paper.PAPER.slug == "bie" and set(paper.PAPER.experiments) == {"errors", "perplexity_at_matched_bits"}
    ppl = paper.PAPER.experiments["perplexity_at_matched_bits"]
    for setting in ("quick", "full", "smoke"):
        cfg = ppl.config(setting=setting)
        assert {"bie_m2_b64", "bfp_m3_b32", "mxfp4", "bie_m3_b64", "bfp_m4_b32"} <= set(cfg["formats"])
        assert "bie_m3_b64" in cfg["wa_formats"]
    assert ppl.config(setting="full")["seq_len"] == 256 and ppl.config(setting="full")["sequences"] == 8


def test_the_null_puts_bfp_at_the_same_bits_in_bie_slot():
    assert all(c.resolved_null.overrides == {"bie_slot": "bfp"} for c in paper.CLAIMS)
    for name, bfp in paper.SAME_BITS_BFP.items():
        swapped = paper._slot_format(name, "bfp")
        assert swapped.label == bfp and swapped.bits_per_element == paper._format(name).bits_per_element
        assert paper._slot_format(name, "bie").label == name
    assert paper._slot_format("mxfp4", "bfp").label == paper._format("mxfp4").label  # the competitors stay
    with pytest.raises(ValueError, match="bie_slot must be one of"):
        paper._slot_format("bie_m2_b64", "int")
    # the same-mantissa comparison is an identity (tests/llm/formats), shown as a regime, not a claim
    assert any("same_m" in k for r in paper.PAPER.regimes for k in r.metrics)
    assert not any("same_m" in c.text or "same mantissa" in c.text for c in paper.CLAIMS)
