"""Error and distribution statistics of quantization: SQNR, kurtosis, outlier shares, flushed share, perplexity per
window and the bootstrap interval of a perplexity ratio."""

from __future__ import annotations

import math

import numpy as np
import torch

from icml24._random import check_random_state, seed_int
from icml24._validation import check_finite


def sqnr_db(x: torch.Tensor, q: torch.Tensor) -> float:
    """Signal-to-quantization-noise ratio ``10 log10(sum x^2 / sum (x - q)^2)`` in dB (inf when exact)."""
    x, q = x.double(), q.double()
    noise = float(((x - q) ** 2).sum())
    return math.inf if noise == 0 else 10.0 * math.log10(float((x**2).sum()) / noise)


def kurtosis(x: torch.Tensor) -> float:
    """Pearson kurtosis ``E[(x - mu)^4] / var^2`` of all elements (3 for a Gaussian)."""
    x = x.double().reshape(-1)
    c = x - x.mean()
    var = float((c**2).mean())
    return float((c**4).mean()) / var**2 if var > 0 else 0.0


def outlier_share(x: torch.Tensor, sigmas: float = 6.0) -> float:
    """Share of elements farther than ``sigmas`` standard deviations from the mean (Gaussian: 2e-9 at 6)."""
    x = x.double().reshape(-1)
    return float(((x - x.mean()).abs() > sigmas * x.std()).double().mean())


def channel_ratio(x: torch.Tensor) -> float:
    """Largest over median per-channel absmax (channels = last dimension): ~1-3 without outlier channels."""
    amax = x.double().abs().reshape(-1, x.shape[-1]).amax(dim=0)
    med = float(amax.median())
    return float(amax.max()) / med if med > 0 else math.inf


def block_outlier_share(x: torch.Tensor, block_size: int = 64, factor: float = 16.0) -> float:
    """Share of blocks (``block_size`` elements along the last dimension) whose largest magnitude is at least
    ``factor`` times the block's median magnitude: the blocks where one shared exponent must serve two scales (the
    regime BiE's second exponent is for). A Gaussian block of 64 has max/median about 3.5."""
    if x.shape[-1] % block_size:
        raise ValueError(f"the last dimension ({x.shape[-1]}) must be a multiple of block_size={block_size}")
    a = x.detach().double().abs().reshape(-1, block_size)
    med = a.median(dim=1).values
    return float((a.amax(dim=1) >= factor * med).double().mean())


def flushed_share(x: torch.Tensor, q: torch.Tensor) -> float:
    """Share of nonzero elements that quantize to zero (BFP's weakness on bimodal data)."""
    nonzero = x != 0
    return float(((q == 0) & nonzero).double().sum() / max(int(nonzero.sum()), 1))


def exponent_bimodality(x: torch.Tensor, random_state=None, max_samples: int = 20000) -> float:
    """BIC gain per sample of a 2- over a 1-component Gaussian mixture on ``log2|x|`` (> 0: two exponent modes).

    The paper's "atypical data" argument says LLM tensors are bimodal, which a single shared exponent fits badly.
    """
    from sklearn.mixture import GaussianMixture

    a = x.double().abs().reshape(-1).numpy()
    a = a[a > 0]
    if a.size < 10:
        return 0.0
    rng = check_random_state(random_state)
    if a.size > max_samples:
        a = rng.choice(a, max_samples, replace=False)
    z = np.log2(a)[:, None]
    mixture_seed = seed_int(random_state)  # an int seeds both as before
    bic = [GaussianMixture(k, random_state=mixture_seed).fit(z).bic(z) for k in (1, 2)]
    return float((bic[0] - bic[1]) / z.shape[0])


@torch.no_grad()
def window_nll(model, input_ids: torch.Tensor, batch_size: int = 4) -> np.ndarray:
    """Mean next-token negative log-likelihood (nats) of a causal LM on each row (window) of ``input_ids``."""
    if input_ids.dim() != 2 or input_ids.shape[1] < 2:
        raise ValueError(f"input_ids must be [sequences, tokens >= 2], got {tuple(input_ids.shape)}")
    out = []
    for start in range(0, input_ids.shape[0], batch_size):
        ids = input_ids[start:start + batch_size]
        logits = model(ids).logits[:, :-1].float()
        check_finite("the model's logits", logits)
        nll = torch.nn.functional.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none")
        out.append(nll.double().mean(dim=1).numpy())
    return np.concatenate(out)


def perplexity(model, input_ids: torch.Tensor, batch_size: int = 4) -> float:
    """``exp`` of the mean next-token negative log-likelihood of a causal LM over every row of ``input_ids``."""
    return math.exp(float(np.mean(window_nll(model, input_ids, batch_size))))  # rows have equal lengths


def perplexity_ratio_ci(nll: np.ndarray, competitors: list[np.ndarray], n_boot: int = 2000, level: float = 0.95,
                        random_state=None) -> tuple[float, float, float]:
    """Perplexity of ``nll`` over the best (lowest) of ``competitors``, all per-window mean NLLs on the same windows,
    with a paired percentile bootstrap interval: windows are resampled with replacement, the best competitor is
    taken again in every resample. Returns ``(ratio, low, high)``; < 1 means lower perplexity than the best."""
    nll = np.asarray(nll, dtype=float)
    comp = np.stack([np.asarray(c, dtype=float) for c in competitors])
    if comp.shape[1:] != nll.shape or nll.ndim != 1 or nll.size < 2:
        raise ValueError(f"nll and every competitor must be 1-d over the same >= 2 windows, got {nll.shape} and "
                         f"{comp.shape[1:]}")
    check_finite("nll", nll)
    check_finite("competitors", comp)
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    rng = check_random_state(random_state)
    idx = rng.integers(0, nll.size, (n_boot, nll.size))
    boot = np.exp(nll[idx].mean(axis=1) - comp[:, idx].mean(axis=2).min(axis=0))
    low, high = np.quantile(boot, [(1 - level) / 2, (1 + level) / 2])
    return float(np.exp(nll.mean() - comp.mean(axis=1).min())), float(low), float(high)
