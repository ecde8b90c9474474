"""act against the official code (GATECH-EIC/ACT): ``atten_process_cal`` on fixed causal attention maps.

Ours is :class:`icml24.llm.act.sinks.AttentionCalibration`, run both on its fused CPU kernel (plain causal maps)
and on the torch path (:func:`detect_sinks` + :func:`calibrate_attention` with an explicit causal ``allowed``
mask). Tolerances: 1e-12 in float64 (the same arithmetic up to summation order), 2e-6 on float32 maps of up to
24 keys and 2e-4 on sums over 256 float32 entries.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from act_parity_inputs import DECODE, DEGENERATE, MAPS, TIMING, attention, decode_row, degenerate
from parity_fixture import assert_close, case, load_fixture

from icml24.llm.act.sinks import AttentionCalibration, calibrate_attention, causal_allowed, detect_sinks

FIXTURE = load_fixture("act")


def _both_paths(attn: np.ndarray, threshold: float, beta: float):
    """(kernel output, torch-path output, sinks per head) of our calibration."""
    x = torch.from_numpy(attn.copy())
    calib = AttentionCalibration(threshold=threshold, beta=beta)
    kernel = calib(x.clone()).numpy()
    allowed = causal_allowed(*x.shape[-2:])
    sinks = detect_sinks(x, threshold, allowed)
    torch_path = calibrate_attention(x.clone(), sinks, beta, allowed).numpy()
    assert torch.equal(sinks, calib.detect(x)), "sink detection differs with and without the causal mask"
    return kernel, torch_path, [torch.nonzero(s).flatten().tolist() for s in sinks[0]]


@pytest.mark.parametrize("name, length, heads, sink, seed, threshold, beta, dtype", MAPS)
def test_calibrated_maps_match_the_official(name, length, heads, sink, seed, threshold, beta, dtype):
    recorded = case(FIXTURE, name)
    kernel, torch_path, sinks = _both_paths(attention(length, heads, sink, seed, dtype), threshold, beta)
    assert sinks == recorded["values"]["sinks"], f"{name}: sinks {sinks} vs official {recorded['values']['sinks']}"
    assert sinks == [[sink]] * heads  # the hidden sink is calibrated, the first token kept
    assert_close(kernel[0], recorded["values"]["calibrated"], recorded["tolerance"], f"{name} kernel")
    assert_close(torch_path[0], recorded["values"]["calibrated"], recorded["tolerance"], f"{name} torch path")


def test_a_smollm2_sized_map_matches_the_official_sums():
    name, length, heads, sink, seed, threshold, beta, dtype = TIMING
    recorded = case(FIXTURE, name)
    kernel, torch_path, sinks = _both_paths(attention(length, heads, sink, seed, dtype), threshold, beta)
    assert sinks == recorded["values"]["sinks"]
    assert sinks[0] == [] and sinks[1:] == [[sink]] * (heads - 1)  # one head without a hidden sink above alpha
    for what, out in (("kernel", kernel), ("torch path", torch_path)):
        assert_close(out[0].sum(axis=-2), recorded["values"]["column_sums"], recorded["tolerance"], f"{what} cols")
        gap = np.abs(out[0].sum(axis=-1) - 1.0).max(axis=-1)  # per head: the most any row sum moves from one
        assert_close(gap, recorded["values"]["row_sum_gap"], 1e-5, f"{what} row sums")


def test_decoding_step_deviation():
    """One query row: ours gives the removed mass to the non-sinks and keeps the row a distribution; the official
    code also gives it back to the sinks (its zeroing skips row 0) and then sets A[0, 0] = 1."""
    name, length, heads, sink, seed, threshold, beta, dtype = DECODE
    recorded = case(FIXTURE, name)
    attn = decode_row(length, heads, sink, seed, dtype)
    kernel, torch_path, sinks = _both_paths(attn, threshold, beta)
    assert sinks == recorded["values"]["sinks"] == [[sink]]  # detection agrees: col_j = A_0j for one query
    for what, out in (("kernel", kernel), ("torch path", torch_path)):
        assert_close(out[0], recorded["ours"]["calibrated"], recorded["tolerance"], f"{what} vs recorded ours")
        np.testing.assert_allclose(out.sum(axis=-1), 1.0, atol=1e-12)
    # the official value, from the reading in the deviation: every key gains (1 - beta) * S * A_j, sinks first
    # scaled by beta, then A[0, 0] = 1
    row = attn[0, 0, 0]
    mass = row[sink]
    expected = row * (1.0 + (1.0 - beta) * mass)
    expected[sink] = beta * row[sink] + (1.0 - beta) * mass * row[sink]
    expected[0] = 1.0
    official = np.asarray(recorded["values"]["calibrated"])[0, 0]
    assert_close(official, expected, 1e-12, "official decode formula")
    assert official.sum() > 1.2 and abs(official.sum() - 1.0) > 100 * abs(kernel.sum() - 1.0)


def test_a_row_without_non_sink_mass_deviation():
    """The official 0/0 makes such a row NaN; ours leaves it unchanged; every other row agrees."""
    name, threshold, beta = DEGENERATE
    recorded = case(FIXTURE, name)
    attn = degenerate()
    kernel, torch_path, sinks = _both_paths(attn, threshold, beta)
    assert sinks == recorded["values"]["sinks"] == [[1]]
    official = np.asarray(recorded["values"]["calibrated"])[0]
    assert np.isnan(official[1]).all() and np.isfinite(official[[0, 2, 3]]).all()
    for what, out in (("kernel", kernel), ("torch path", torch_path)):
        assert np.isfinite(out).all()
        assert_close(out[0], recorded["ours"]["calibrated"], recorded["tolerance"], f"{what} vs recorded ours")
        assert_close(out[0, 0, 1], attn[0, 0, 1], 0.0, f"{what}: the degenerate row stays as it was")
        assert_close(out[0, 0, [0, 2, 3]], official[[0, 2, 3]], recorded["tolerance"], f"{what} other rows")


def test_fixture_was_recorded_from_the_official_repository():
    assert FIXTURE["source"]["repository"] == "GATECH-EIC/ACT"
    assert case(FIXTURE, TIMING[0])["official_seconds"] > 0
