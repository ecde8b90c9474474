"""TIES-Merging (Yadav et al., "Resolving Interference When Merging Models", NeurIPS 2023).

The three steps of the TIES paper's Algorithm 1, each a function here::

    trim:            tau_hat_t = keep the top-k% |tau_t| entries, zero the rest          (trim_top_k)
    elect sign:      gamma = sgn(sum_t tau_hat_t)                                           (elect_sign)
    disjoint merge:  tau^p = mean of {tau_hat_t^p : sgn(tau_hat_t^p) = gamma^p}             (disjoint_merge)

The TALL-masks paper builds its TIES multi-task vector with the disjoint *sum* instead of the mean ("dis-sum").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from . import kernels
from .task_vectors import ScaledMerge, check_finite_weights

_AGGREGATIONS = ("mean", "sum")


def trim_top_k(task_vectors: torch.Tensor, density: float = 0.2) -> torch.Tensor:
    """Keep the ``density`` fraction of largest-magnitude entries of each task vector, zero the rest.

    Trimming is global over all of a task's parameters (one threshold per task, as in the official TALL-masks
    code, which flattens the whole model), not per tensor. Entries tied with the threshold are kept.
    ``task_vectors: [T, P]`` -> ``[T, P]``.
    """
    if task_vectors.ndim != 2:
        raise ValueError(f"task_vectors must be [num_tasks, num_params], got shape {tuple(task_vectors.shape)}")
    if not 0.0 < density <= 1.0:
        raise ValueError(f"density must be in (0, 1] (fraction of entries kept), got {density}")
    check_finite_weights("task_vectors", task_vectors)
    num_params = task_vectors.shape[1]
    keep = min(num_params, max(1, int(round(density * num_params))))
    if keep == num_params:
        return task_vectors.clone()
    magnitude = task_vectors.abs()
    threshold = _kth_largest(magnitude, keep)
    return task_vectors * (magnitude >= threshold)  # TIES Algorithm 1, step 1 (trim)


def _kth_largest(magnitude: torch.Tensor, keep: int) -> torch.Tensor:
    """Each row's ``keep``-th largest value ``[T, 1]``: its ``(P - keep + 1)``-th smallest, by ``np.partition`` row by
    row on CPU (introselect, ~10x faster than ``torch.kthvalue`` on millions of entries; the same value exactly)."""
    kth = magnitude.shape[1] - keep
    if magnitude.device.type != "cpu" or magnitude.requires_grad:
        return magnitude.kthvalue(kth + 1, dim=1, keepdim=True).values
    values = []
    for row in magnitude.numpy():
        nonzero = row[row != 0]  # introselect slows down on many equal entries; zeros are never above the rest
        rank = len(nonzero) - keep
        values.append([np.partition(nonzero, rank)[rank] if rank >= 0 else 0.0])
    return torch.tensor(values, dtype=magnitude.dtype)


def elect_sign(trimmed: torch.Tensor) -> torch.Tensor:
    """Elected sign per parameter: the sign of the summed (trimmed) task vectors, ``[T, P]`` -> ``[P]``.

    Parameters whose sum is exactly zero take the majority sign over all parameters.
    """
    sign = torch.sign(trimmed.sum(dim=0))  # TIES Algorithm 1, step 2 (elect): gamma = sgn(sum_t tau_hat_t)
    majority = torch.sign(sign.sum())
    return torch.where(sign == 0, majority if majority != 0 else torch.ones_like(majority), sign)


def disjoint_merge(trimmed: torch.Tensor, sign: torch.Tensor, aggregation: str = "mean") -> torch.Tensor:
    """Aggregate, per parameter, only the entries whose sign agrees with the elected ``sign``.

    ``aggregation="mean"`` divides by the number of agreeing nonzero entries (TIES' disjoint mean);
    ``"sum"`` adds them (the "dis-sum" the TALL-masks paper uses for its TIES multi-task vector).
    """
    if aggregation not in _AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {_AGGREGATIONS}, got {aggregation!r}")
    # TIES Algorithm 1, step 3 (disjoint merge): only entries that agree with the elected sign gamma
    agrees = torch.where(sign.unsqueeze(0) > 0, trimmed > 0, trimmed < 0)
    selected = trimmed * agrees
    total = selected.sum(dim=0)
    if aggregation == "sum":
        return total
    return total / agrees.sum(dim=0).clamp(min=1).to(total.dtype)


#: Parameters per block in the one-pass kernels: ``T x 16384`` float32 temporaries stay in cache.
BLOCK = 1 << 14


def _thresholds(task_vectors: torch.Tensor, density: float) -> torch.Tensor | None:
    """Each row's keep-th largest magnitude ``[T, 1]`` (``None`` when everything is kept), as ``trim_top_k``."""
    num_params = task_vectors.shape[1]
    keep = min(num_params, max(1, int(round(density * num_params))))
    if keep == num_params:
        return None
    return _kth_largest(task_vectors.abs(), keep)


def ties_vector(task_vectors: torch.Tensor, density: float = 0.2, aggregation: str = "mean") -> torch.Tensor:
    """TIES multi-task vector: trim (top-``density``), elect sign, disjoint merge. ``[T, P]`` -> ``[P]``.

    Equal, bit for bit, to ``disjoint_merge(t, elect_sign(t), aggregation)`` with ``t = trim_top_k(...)``, but
    after the per-task thresholds it reads the task vectors once: block by block it forms the trimmed entries and
    their sum, the sum of the positive and of the negative ones (and their counts), all in cache; the elected sign
    then picks the positive or the negative sum per parameter. On CPU float32/float64 tensors the two reads are the
    fused kernels of ``icml24.merging.kernels``.
    """
    if task_vectors.ndim != 2:
        raise ValueError(f"task_vectors must be [num_tasks, num_params], got shape {tuple(task_vectors.shape)}")
    if not 0.0 < density <= 1.0:
        raise ValueError(f"density must be in (0, 1] (fraction of entries kept), got {density}")
    if aggregation not in _AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {_AGGREGATIONS}, got {aggregation!r}")
    if kernels.supported(task_vectors):  # fused kernels: one read for the thresholds, one for the merge
        array = task_vectors.contiguous().numpy()
        keep = min(array.shape[1], max(1, int(round(density * array.shape[1]))))
        thresholds, finite = kernels.kth_largest_magnitudes(array, keep) if keep < array.shape[1] else (
            np.zeros(array.shape[0], array.dtype), bool(torch.isfinite(task_vectors.sum())))
        if not finite:
            check_finite_weights("task_vectors", task_vectors)  # raises, naming the bad entries
        return torch.from_numpy(kernels.ties_merge(array, thresholds, aggregation == "mean"))
    check_finite_weights("task_vectors", task_vectors)
    threshold = _thresholds(task_vectors, density)  # TIES Algorithm 1, step 1 (trim): one threshold per task
    num_params = task_vectors.shape[1]
    total, positive, negative = (torch.empty(num_params, dtype=task_vectors.dtype) for _ in range(3))
    count_pos, count_neg = (torch.empty(num_params, dtype=torch.int64) for _ in range(2))
    for start in range(0, num_params, BLOCK):
        block = task_vectors[:, start:start + BLOCK]
        trimmed = block if threshold is None else block * (block.abs() >= threshold)
        part = slice(start, start + block.shape[1])
        torch.sum(trimmed, dim=0, out=total[part])  # step 2 (elect) needs sum_t tau_hat_t
        torch.sum(trimmed.clamp(min=0), dim=0, out=positive[part])  # step 3 for gamma = +1
        torch.sum(trimmed.clamp(max=0), dim=0, out=negative[part])  # step 3 for gamma = -1
        if aggregation == "mean":
            torch.sum(trimmed > 0, dim=0, out=count_pos[part])
            torch.sum(trimmed < 0, dim=0, out=count_neg[part])
    sign = torch.sign(total)  # gamma = sgn(sum_t tau_hat_t); a zero sum takes the majority sign
    majority = torch.sign(sign.sum())
    up = (sign > 0) | ((sign == 0) & (majority >= 0))
    merged = torch.where(up, positive, negative)
    if aggregation == "sum":
        return merged
    return merged / torch.where(up, count_pos, count_neg).clamp(min=1).to(merged.dtype)


class TIESMerging(ScaledMerge):
    r"""TIES-Merging: TrIm, Elect Sign and merge.

    .. math::
        \hat\tau_t = \mathrm{top}_k(\tau_t), \quad
        \gamma = \mathrm{sgn}\Big(\sum_t \hat\tau_t\Big), \quad
        \tau^{p} = \frac{\sum_{t:\, \mathrm{sgn}(\hat\tau_t^p) = \gamma^p} \hat\tau_t^p}
                        {|\{t:\, \mathrm{sgn}(\hat\tau_t^p) = \gamma^p\}|}, \quad
        \theta = \theta_0 + \alpha\, \tau

    Args:
        density (float, optional): fraction of each task vector kept by magnitude, over all parameters of the
            model. (default: ``0.2``)
        aggregation (str, optional): ``"mean"`` (TIES) or ``"sum"`` (the dis-sum used to build TALL masks and
            Consensus-TIES). (default: ``"mean"``)
        scaling (float or sequence of float, optional): ``alpha`` or a grid to choose it on validation.
            (default: ``1.0``)
    """

    def __init__(self, density: float = 0.2, aggregation: str = "mean", scaling: float | Sequence[float] = 1.0):
        super().__init__(scaling)
        self.density = density
        self.aggregation = aggregation

    def _check_params(self) -> list[float]:
        if self.aggregation not in _AGGREGATIONS:
            raise ValueError(f"aggregation must be one of {_AGGREGATIONS}, got {self.aggregation!r}")
        if not 0.0 < self.density <= 1.0:
            raise ValueError(f"density must be in (0, 1], got {self.density}")  # also rejects NaN
        return super()._check_params()

    def _multitask_vector(self, task_vectors: torch.Tensor) -> torch.Tensor:
        return ties_vector(task_vectors, self.density, self.aggregation)

    def __repr__(self) -> str:
        return f"TIESMerging(density={self.density}, aggregation={self.aggregation!r}, scaling={self.scaling!r})"
