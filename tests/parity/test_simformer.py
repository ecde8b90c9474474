"""Simformer against the official JAX code (tests/parity/simformer.json, recorded by tools/parity/record_simformer.py):
the denoising score-matching loss, one reverse-SDE Euler–Maruyama step with the condition mask, and the sampler's
time grid, all with a fixed analytic score ``s(x, t) = -(x - 0.3) / (1 + sigma(t)^2)`` in place of the network."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from parity_fixture import assert_close, case, load_fixture

from icml24.sbi.sampling import _time_grid, euler_maruyama_step
from icml24.sbi.sde import VESDE, VPSDE, denoising_loss

FIXTURE = load_fixture("simformer")
SEED, BATCH, N = 35, 8, 4


def _inputs():
    """The recorder's recipe: numpy.random.default_rng(35): x0, times, masks (row 0 all observed-free)."""
    rng = np.random.default_rng(SEED)
    x0 = rng.normal(size=(BATCH, N))
    times = rng.uniform(1e-5, 1.0, size=BATCH)
    mask = rng.random((BATCH, N)) < 0.3
    mask[0] = False
    return torch.tensor(x0), torch.tensor(times), torch.tensor(mask)


def _sde(name: str, inputs: dict):
    if name == "vesde":
        return VESDE(sigma_min=inputs["sigma_min"], sigma_max=inputs["sigma_max"], t_min=1e-5)
    return VPSDE(beta_min=inputs["beta_min"], beta_max=inputs["beta_max"], t_min=1e-5)


def _score(sde):
    return lambda x, t: -(x - 0.3) / (1.0 + sde.std(t)[:, None] ** 2)


@pytest.mark.parametrize("name", ["vesde", "vpsde"])
def test_denoising_loss_matches_the_official_loss(name):
    entry = case(FIXTURE, f"loss_{name}")
    sde = _sde(name, entry["inputs"])
    x0, t, mask = _inputs()
    eps = torch.tensor(entry["inputs"]["eps"], dtype=torch.float64)
    ours = denoising_loss(_score(sde), sde, x0, t, eps, mask)
    assert_close(float(ours), entry["values"], entry["tolerance"], name, entry["rtol"])


@pytest.mark.parametrize("name", ["vesde", "vpsde"])
def test_the_loss_check_can_fail(name):
    """Weighting the batch mean of the residual sums by the batch mean of lambda(t) (the value the official
    ``denoising_score_matching_loss`` gives when handed an unreshaped ``[B, 1]`` weight) misses the official loss."""
    entry = case(FIXTURE, f"loss_{name}")
    sde = _sde(name, entry["inputs"])
    x0, t, mask = _inputs()
    eps = torch.tensor(entry["inputs"]["eps"], dtype=torch.float64)
    std = sde.std(t)
    x_t = torch.where(mask, x0, sde.mean_factor(t)[:, None] * x0 + std[:, None] * eps)
    sums = torch.where(mask, 0.0, (_score(sde)(x_t, t) + eps / std[:, None]) ** 2).sum(1)
    with pytest.raises(AssertionError):
        assert_close(float(sde.loss_weight(t).mean() * sums.mean()), entry["values"], entry["tolerance"], name,
                     entry["rtol"])


@pytest.mark.parametrize("entry", [c for c in FIXTURE["cases"] if c["name"].startswith("em_step_")],
                         ids=lambda c: c["name"])
def test_one_euler_maruyama_step_matches_the_official_step(entry):
    inputs = entry["inputs"]
    sde = _sde(entry["name"].split("_")[2], inputs)
    x0, _, mask = _inputs()
    y0 = torch.where(mask, x0, 3.0 * x0)
    t = torch.full((BATCH,), float(inputs["t"]), dtype=torch.float64)
    step = torch.tensor(inputs["dt"], dtype=torch.float64)
    noise = torch.tensor(inputs["dW"], dtype=torch.float64) / torch.sqrt(step)
    ours = euler_maruyama_step(sde, y0, t, step, _score(sde)(y0, t), (~mask).double(), noise)
    assert_close(ours, entry["values"], entry["tolerance"], entry["name"], entry["rtol"])
    assert torch.equal(ours[mask], y0[mask])  # observed entries never move


def test_the_time_grid_takes_one_more_step_than_the_official_one():
    entry = case(FIXTURE, "time_grid_5")
    ours = _time_grid(VESDE(t_min=1e-5), 5, torch.float64, "cpu")
    assert_close(ours, entry["ours"], entry["tolerance"], "ours")
    assert len(entry["values"]) == len(entry["ours"]) - 1  # the stated deviation: num_steps vs num_steps + 1 times
    assert entry["values"][0] == entry["ours"][0] and abs(entry["values"][-1] - entry["ours"][-1]) < 1e-12


def test_the_step_check_can_fail():
    """A sign error in the reverse drift (the forward drift) would miss the official step by far."""
    entry = case(FIXTURE, "em_step_vesde_s0.0")
    sde = _sde("vesde", entry["inputs"])
    x0, _, mask = _inputs()
    y0 = torch.where(mask, x0, 3.0 * x0)
    t = torch.full((BATCH,), 1.0, dtype=torch.float64)
    step = torch.tensor(entry["inputs"]["dt"], dtype=torch.float64)
    noise = torch.tensor(entry["inputs"]["dW"], dtype=torch.float64) / torch.sqrt(step)
    wrong = euler_maruyama_step(sde, y0, t, step, -_score(sde)(y0, t), (~mask).double(), noise)
    with pytest.raises(AssertionError):
        assert_close(wrong, entry["values"], entry["tolerance"], "sign-flipped score", entry["rtol"])
