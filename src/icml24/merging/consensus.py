"""Consensus Merging: keep only the weights that at least k tasks use (Wang et al., ICML 2024).

From the TALL masks ``m_t`` of all tasks (``icml24.merging.tall_masks``), the paper's consensus mask and merge::

    m_cons = 1{ sum_t m_t >= k }                         (k = 2 drops selfish and catastrophic weights)
    theta  = theta_0 + alpha * (m_cons * tau_MTL)        (tau_MTL: TA sum or TIES dis-sum)

(official code: ``tallmask_utils.construct_consensus_mask`` and ``eval/aggregation.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from . import kernels
from .tall_masks import multitask_vector
from .task_vectors import ScaledMerge


def mask_counts(masks: torch.Tensor) -> torch.Tensor:
    """Number of task masks selecting each weight, boolean ``[T, P]`` -> integer ``[P]``.

    Accumulates one task at a time in the narrowest integer type that holds ``T`` (uint8 up to 255 tasks): a
    loop over tasks only, and several times faster than summing a boolean tensor through int64.
    """
    if masks.ndim != 2 or masks.dtype != torch.bool:
        raise ValueError(f"masks must be a boolean tensor [num_tasks, num_params], got {masks.dtype} "
                         f"{tuple(masks.shape)}")
    dtype = torch.uint8 if masks.shape[0] < 256 else torch.int32
    counts = torch.zeros(masks.shape[1], dtype=dtype)
    for row in masks:
        counts += row
    return counts


def consensus_mask(masks: torch.Tensor, k: int = 2) -> torch.Tensor:
    """``m_cons = 1{ sum_t m_t >= k }`` over boolean TALL masks ``[T, P]`` -> ``[P]``.

    ``k = 2`` drops catastrophic (used by no task) and selfish (used by one task) weights; ``k = 0`` keeps all
    (plain TA / TIES); ``k > T`` keeps none (the pre-trained model).
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    if k > masks.shape[0]:
        return torch.zeros(masks.shape[1], dtype=torch.bool)
    if masks.device.type == "cpu" and masks.dtype == torch.bool and masks.ndim == 2 and masks.shape[0] < 256:
        return torch.from_numpy(kernels.at_least(masks.contiguous().numpy(), k))  # one fused read
    return mask_counts(masks) >= k  # consensus mask: m_cons = 1{sum_t m_t >= k}


def mask_statistics(masks: torch.Tensor) -> dict[str, float | list[float]]:
    """How many tasks use each weight: fractions of catastrophic (0), selfish (1) and general (>= 2) weights.

    Returns ``{"catastrophic": f0, "selfish": f1, "general": f_{>=2}, "histogram": [f0, f1, ..., fT]}``.
    """
    counts = mask_counts(masks).to(torch.int64)  # 0 tasks: catastrophic, 1: selfish, >= 2: general
    histogram = torch.bincount(counts, minlength=masks.shape[0] + 1).double() / masks.shape[1]
    return {"catastrophic": float(histogram[0]), "selfish": float(histogram[1]),
            "general": float(histogram[2:].sum()), "histogram": histogram.tolist()}


class ConsensusMerging(ScaledMerge):
    r"""Consensus Merging: prune the multi-task vector to the weights at least ``k`` TALL masks select.

    .. math::
        m_{cons} = \mathbb{1}\Big\{\sum_{t} m_t \geq k\Big\}, \qquad
        \theta = \theta_0 + \alpha\, (m_{cons} \odot \tau_{MTL})

    Args:
        k (int, optional): minimum number of tasks that must use a weight. (default: ``2``)
        multitask (str, optional): ``"ta"`` (Consensus-TA, unscaled sum) or ``"ties"`` (Consensus-TIES, TIES
            dis-sum). Use masks built on the same multi-task vector. (default: ``"ta"``)
        density (float, optional): TIES trimming fraction. (default: ``0.2``)
        scaling (float or sequence of float, optional): ``alpha`` or a grid chosen on validation.
            (default: ``1.0``)

    ``fit(pretrained, finetuned, masks, score=None)`` takes the boolean TALL masks ``[T, P]`` (e.g.
    ``TALLMasks(...).fit(...).masks_``). Attributes: ``consensus_mask_``, ``multitask_vector_`` (masked),
    ``scaling_``.
    """

    def __init__(self, k: int = 2, multitask: str = "ta", density: float = 0.2,
                 scaling: float | Sequence[float] = 1.0):
        super().__init__(scaling)
        self.k = k
        self.multitask = multitask
        self.density = density

    def _check_params(self) -> list[float]:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 0:
            raise ValueError(f"k must be an int >= 0 (how many tasks must use a weight), got {self.k!r}")
        if self.multitask not in ("ta", "ties"):
            raise ValueError(f"multitask must be 'ta' or 'ties', got {self.multitask!r}")
        return super()._check_params()

    def fit(self, pretrained, finetuned, masks: torch.Tensor, score=None) -> ConsensusMerging:
        """Merge with the consensus of ``masks`` (boolean ``[T, P]``); ``scaling_`` chosen on ``score`` if a grid."""
        if not torch.is_tensor(masks) or masks.dtype != torch.bool or masks.ndim != 2:
            raise ValueError("masks must be a boolean tensor [num_tasks, num_params], "
                             "e.g. TALLMasks(...).fit(...).masks_")
        self._masks = masks
        return super().fit(pretrained, finetuned, score)

    def _multitask_vector(self, task_vectors: torch.Tensor) -> torch.Tensor:
        if self._masks.shape != task_vectors.shape:
            raise ValueError(f"masks have shape {tuple(self._masks.shape)}, task vectors {tuple(task_vectors.shape)}")
        self.consensus_mask_ = consensus_mask(self._masks, self.k)
        # Consensus Merging: tau = m_cons * tau_MTL, then theta_0 + alpha * tau in ScaledMerge
        return multitask_vector(task_vectors, self.multitask, self.density) * self.consensus_mask_

    def __repr__(self) -> str:
        return (f"ConsensusMerging(k={self.k}, multitask={self.multitask!r}, density={self.density}, "
                f"scaling={self.scaling!r})")
