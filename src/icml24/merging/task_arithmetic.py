"""Task Arithmetic (Ilharco et al., "Editing Models with Task Arithmetic", ICLR 2023)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .task_vectors import ScaledMerge, check_finite_weights


def task_arithmetic_vector(task_vectors: torch.Tensor) -> torch.Tensor:
    """The unscaled multi-task vector ``tau_MTL = sum_t tau_t``; ``task_vectors: [T, P]`` -> ``[P]``."""
    if task_vectors.ndim != 2:
        raise ValueError(f"task_vectors must be [num_tasks, num_params], got shape {tuple(task_vectors.shape)}")
    check_finite_weights("task_vectors", task_vectors)
    return task_vectors.sum(dim=0)  # tau_MTL = sum_t tau_t (unscaled; alpha is applied by the merge)


class TaskArithmetic(ScaledMerge):
    r"""Task Arithmetic: add the scaled sum of task vectors to the pre-trained weights.

    .. math::
        \theta = \theta_0 + \alpha \sum_{t=1}^{T} (\theta_t - \theta_0)

    Args:
        scaling (float or sequence of float, optional): ``alpha``, or a grid to choose it from on a validation
            score passed to ``fit`` (TALL-masks paper: ``0.1, 0.2, ..., 1.0``). (default: ``0.3``)

    Attributes:
        task_vectors_ (Tensor ``[T, P]``), multitask_vector_ (Tensor ``[P]``, the unscaled sum),
        scaling_ (float), scaling_scores_ (list of validation scores over the grid).

    Example::

        ta = TaskArithmetic(scaling=0.3).fit(base.state_dict(), [m.state_dict() for m in finetuned])
        model.load_state_dict(ta.merge())
    """

    def __init__(self, scaling: float | Sequence[float] = 0.3):
        super().__init__(scaling)

    def _multitask_vector(self, task_vectors: torch.Tensor) -> torch.Tensor:
        return task_arithmetic_vector(task_vectors)

    def __repr__(self) -> str:
        return f"TaskArithmetic(scaling={self.scaling!r})"
