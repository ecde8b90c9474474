"""ACT sink detection and calibration on small synthetic attention maps (checked against a loop reference)."""

import math

import pytest
import torch

from icml24.llm.act import AttentionCalibration, calibrate_attention, causal_allowed, detect_sinks, sink_scores


def random_causal_attention(*shape, length, seed=0, sharpness=2.0):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(*shape, length, length, generator=g, dtype=torch.float64) * sharpness
    mask = ~causal_allowed(length, length)
    return torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)


def reference_act(attn, threshold, beta):
    """Loop transcription of the paper's per-head steps 1-5 for one [L, L] map."""
    L = attn.shape[0]
    a = attn.clone()
    col = [sum(a[i, j] for i in range(L)) / (L - j) for j in range(L)]
    sinks = [j for j in range(L) if col[j] > threshold][1:]
    out = a.clone()
    for i in range(L):
        mass = sum(a[i, j] for j in sinks)
        rest = [a[i, j] if (j not in sinks or i == 0) else 0.0 for j in range(L)]
        total = sum(rest)
        for j in range(L):
            out[i, j] = beta * a[i, j] if j in sinks else a[i, j]
        for j in range(L):
            out[i, j] = out[i, j] + (1 - beta) * mass * rest[j] / total
    out[0, 0] = 1.0
    return out, sinks


def test_scores_match_column_means():
    attn = random_causal_attention(length=7)
    expected = attn.sum(0) / torch.arange(7, 0, -1)
    assert torch.allclose(sink_scores(attn), expected)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_calibration_matches_reference(seed):
    attn = random_causal_attention(length=9, seed=seed)
    ref, ref_sinks = reference_act(attn, 0.1, 0.4)
    sinks = detect_sinks(attn, 0.1)
    assert sorted(torch.nonzero(sinks).flatten().tolist()) == ref_sinks
    out = calibrate_attention(attn, sinks, 0.4)
    assert torch.allclose(out, ref, atol=1e-12)


def test_rows_sum_to_one_and_shape_batched():
    attn = random_causal_attention(2, 3, length=12, seed=3)
    out = AttentionCalibration(0.1, 0.4)(attn)
    assert out.shape == attn.shape
    assert torch.allclose(out.sum(-1), torch.ones(2, 3, 12, dtype=attn.dtype))
    assert (out >= 0).all()
    assert torch.equal(out == 0, attn == 0)  # causality kept: no mass moves to future tokens


def test_first_sink_is_kept_and_later_sink_scaled():
    L = 8
    attn = torch.zeros(L, L, dtype=torch.float64)
    for i in range(L):  # every row: half on token 0, a third on token 3 (once visible), rest spread
        attn[i, 0] = 1.0
        if i >= 3:
            attn[i, 3] = 0.8
        attn[i, 1 : i + 1] += 0.05
        attn[i] /= attn[i].sum()
    sinks = detect_sinks(attn, 0.1)
    assert not sinks[0] and sinks[3]
    out = calibrate_attention(attn, sinks, 0.4)
    # non-calibrated sink columns never lose mass; calibrated ones keep exactly beta of theirs
    assert torch.all(out[:, 0] >= attn[:, 0] - 1e-12)
    assert torch.allclose(out[3:, 3], 0.4 * attn[3:, 3])
    assert torch.allclose(out.sum(-1), torch.ones(L, dtype=attn.dtype))


def test_no_sinks_leaves_attention_unchanged():
    L = 10
    attn = causal_allowed(L, L).double()
    attn = attn / attn.sum(-1, keepdim=True)  # uniform causal: col_j = H_L-ish, the first few exceed 0.1
    calib = AttentionCalibration(threshold=1.01, beta=0.4)  # no column can exceed 1
    assert not calib.detect(attn).any()
    assert torch.equal(calib(attn), attn)
    single = torch.zeros(L, L, dtype=torch.float64)
    single[:, 0] = 1.0  # only the initial sink: it is kept, nothing changes
    assert torch.equal(AttentionCalibration(0.1, 0.4)(single), single)


def test_beta_one_is_identity():
    attn = random_causal_attention(3, length=10, seed=5)
    assert torch.allclose(AttentionCalibration(0.1, 1.0)(attn), attn)


def test_padding_aware():
    L, pad = 9, 3
    core = random_causal_attention(length=L - pad, seed=7)
    padded = torch.zeros(1, 1, L, L, dtype=torch.float64)
    padded[0, 0, pad:, pad:] = core
    padded[0, 0, :pad] = 1.0 / L  # garbage rows of padded queries
    mask = torch.ones(1, L, dtype=torch.long)
    mask[0, :pad] = 0
    allowed = causal_allowed(L, L, mask)
    scores = sink_scores(padded, allowed)[0, 0]
    assert torch.allclose(scores[pad:], sink_scores(core))
    assert torch.all(scores[:pad] == 0)
    out = AttentionCalibration(0.1, 0.4)(padded, allowed)[0, 0]
    assert torch.allclose(out[pad:, pad:], AttentionCalibration(0.1, 0.4)(core))
    assert torch.equal(out[:pad], padded[0, 0, :pad])  # padded rows untouched


def test_validation_messages():
    with pytest.raises(ValueError, match="beta"):
        AttentionCalibration(beta=1.5)
    with pytest.raises(ValueError, match="threshold"):
        AttentionCalibration(threshold=0.0)
    with pytest.raises(ValueError, match="allowed"):
        sink_scores(torch.rand(4, 4), allowed=torch.ones(3, 3, dtype=torch.bool))
    assert "beta=0.4" in repr(AttentionCalibration())


@pytest.mark.parametrize("bad", [math.nan, math.inf, -0.1])
def test_bad_threshold_is_rejected(bad):
    with pytest.raises(ValueError, match="threshold"):
        AttentionCalibration(threshold=bad)
    with pytest.raises(ValueError, match="beta"):
        AttentionCalibration(beta=math.nan)


def test_nan_attention_is_rejected_naming_the_argument():
    attn = random_causal_attention(2, length=6)
    attn[1, 3, 2] = math.nan
    for call in (lambda: sink_scores(attn), lambda: detect_sinks(attn), lambda: AttentionCalibration()(attn),
                 lambda: calibrate_attention(attn, torch.zeros(2, 6, dtype=torch.bool))):
        with pytest.raises(ValueError, match="attn contains NaN"):
            call()


def test_inplace_and_normalized_match_the_default():
    attn = random_causal_attention(2, 3, length=16, seed=11, sharpness=4.0)
    calib = AttentionCalibration(0.1, 0.4)
    expected = calib(attn)
    assert calib.detect(attn).any()
    copy = attn.clone()
    out = calib(copy, inplace=True, normalized=True)
    assert out.data_ptr() == copy.data_ptr() and torch.allclose(out, expected, atol=1e-12)
    assert torch.allclose(calib(attn, normalized=True), expected, atol=1e-12)
    with pytest.raises(ValueError, match="inplace"):  # a broadcast map cannot hold every head's result
        calibrate_attention(attn[:1, :1], calib.detect(attn), 0.4, inplace=True)


def test_rows_dominated_by_sinks_keep_their_precision():
    L = 12
    attn = torch.full((L, L), 1e-6, dtype=torch.float32).tril()
    attn[:, 0] = 1.0
    attn[4:, 4] = 2000.0  # a hidden sink that takes ~99.9% of its rows
    attn = attn / attn.sum(-1, keepdim=True)
    out = AttentionCalibration(0.1, 0.4)(attn)
    ref, _ = reference_act(attn.double(), 0.1, 0.4)
    assert torch.allclose(out.double(), ref, rtol=1e-4, atol=1e-7)


def test_fused_call_matches_the_two_step_path():
    attn = random_causal_attention(3, 5, length=64, seed=12, sharpness=4.0)
    calib = AttentionCalibration(0.1, 0.4)
    expected = calibrate_attention(attn, detect_sinks(attn, 0.1), 0.4)
    assert calib.detect(attn).any()
    assert torch.allclose(calib(attn), expected, atol=1e-12)
    ref, _ = reference_act(attn[2, 4], 0.1, 0.4)
    assert torch.allclose(calib(attn)[2, 4], ref, atol=1e-12)


def test_non_contiguous_and_broadcast_inputs():
    attn = random_causal_attention(4, 3, length=10, seed=13, sharpness=4.0)
    calib = AttentionCalibration(0.1, 0.4)
    expected = calib(attn)
    transposed = attn.transpose(0, 1)  # [3, 4, L, L], not contiguous
    assert not transposed.is_contiguous()
    assert torch.allclose(calib(transposed), expected.transpose(0, 1), atol=1e-12)
    copy = attn.clone().transpose(0, 1)
    out = calib(copy, inplace=True)  # in place on a non-contiguous view writes back into it
    assert out.data_ptr() == copy.data_ptr() and torch.allclose(copy, expected.transpose(0, 1), atol=1e-12)
    # one map's sinks applied to every head: the map broadcasts to the sinks' batch shape
    sinks = detect_sinks(attn, 0.1)
    one = calibrate_attention(attn[0, 0], sinks[0], 0.4)
    assert torch.allclose(calibrate_attention(attn[0, 0], sinks[0:1], 0.4)[0], one, atol=1e-12)


@pytest.mark.parametrize("threshold", [-1.0, 0.0, math.nan])
def test_detect_sinks_refuses_a_threshold_that_is_not_positive(threshold):
    attn = causal_allowed(4, 4).double()
    attn = attn / attn.sum(-1, keepdim=True)
    with pytest.raises(ValueError, match="threshold"):
        detect_sinks(attn, threshold)
