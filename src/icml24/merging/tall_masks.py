"""TALL masks: per-task localization of task information inside a multi-task vector.

Wang, Dimitriadis, Ortiz-Jimenez, Fleuret, Frossard, "Localizing Task Information for Improved Model Merging and
Compression", ICML 2024 (arXiv 2405.07813). The paper's mask rule and reconstruction::

    m_t      = 1{ |theta_0 - theta_t| > lambda_t |theta_MTL - theta_t| } = 1{ |tau_t| > lambda_t |tau_MTL - tau_t| }
    theta_t^ = theta_0 + m_t * tau_MTL                          (coefficient 1: no alpha in the reconstruction)

with ``tau_MTL`` the *unscaled* multi-task vector and ``lambda_t`` in {0.2, ..., 0.6} chosen per task on validation
(official code: ``tallmask_utils.generate_task_masks`` / ``find_optimal_mask``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from icml24._estimator import Estimator
from icml24._random import RandomState, torch_generator
from icml24._validation import FittedAttributes, check_finite, check_fitted

from . import kernels
from .packed_masks import CompressedCheckpoints, PackedMasks
from .task_arithmetic import task_arithmetic_vector
from .task_vectors import check_finite_weights, flat_task_vectors
from .ties import BLOCK, ties_vector

DEFAULT_LAMBDAS = (0.2, 0.3, 0.4, 0.5, 0.6)
_MULTITASK = ("ta", "ties")


def multitask_vector(task_vectors: torch.Tensor, method: str = "ta", density: float = 0.2) -> torch.Tensor:
    """The unscaled multi-task vector TALL masks and Consensus Merging start from, ``[T, P]`` -> ``[P]``.

    ``"ta"``: ``sum_t tau_t``. ``"ties"``: TIES with top-``density`` trimming and the disjoint *sum* (dis-sum).
    """
    if method == "ta":
        return task_arithmetic_vector(task_vectors)  # tau_MTL = sum_t tau_t
    if method == "ties":
        return ties_vector(task_vectors, density=density, aggregation="sum")  # TIES with the disjoint sum
    raise ValueError(f"multitask must be one of {_MULTITASK}, got {method!r}")


def compute_tall_masks(task_vectors: torch.Tensor, multitask_vector: torch.Tensor,
                       lambdas: float | Sequence[float] | torch.Tensor) -> torch.Tensor:
    r"""TALL masks ``m_t = 1{ |tau_t| > lambda_t * |tau_MTL - tau_t| }`` (strict), boolean ``[T, P]``.

    Equivalently ``|theta_0 - theta_t| > lambda_t |theta_MTL - theta_t|`` with ``theta_MTL = theta_0 + tau_MTL``:
    keep a weight for task t where the multi-task model is closer to ``theta_t`` than the pre-trained one is
    (relative to ``lambda_t``). ``lambdas`` is one value or one per task.
    """
    if task_vectors.ndim != 2 or multitask_vector.shape != task_vectors.shape[1:]:
        raise ValueError(f"expected task_vectors [T, P] and multitask_vector [P], got {tuple(task_vectors.shape)} "
                         f"and {tuple(multitask_vector.shape)}")
    lam = torch.as_tensor(lambdas, dtype=task_vectors.dtype).reshape(-1)
    if lam.numel() not in (1, task_vectors.shape[0]):
        raise ValueError(f"give one lambda or one per task ({task_vectors.shape[0]}), got {lam.numel()}")
    check_finite("lambdas", lam)
    if (lam < 0).any():
        raise ValueError("lambdas must be non-negative")
    if kernels.supported(task_vectors) and multitask_vector.dtype == task_vectors.dtype \
            and kernels.supported(multitask_vector):  # one fused read, finiteness checked in the same pass
        masks = kernels.tall_masks(task_vectors.contiguous().numpy(), multitask_vector.contiguous().numpy(),
                                   lam.expand(task_vectors.shape[0]).contiguous().numpy())
        if masks is not None:
            return torch.from_numpy(masks)
    check_finite_weights("task_vectors", task_vectors)
    check_finite_weights("multitask_vector", multitask_vector)
    lam = lam.unsqueeze(1)
    masks = torch.empty(task_vectors.shape, dtype=torch.bool)
    for start in range(0, task_vectors.shape[1], BLOCK):  # one read of the task vectors, temporaries in cache
        block = task_vectors[:, start:start + BLOCK]
        distance = (multitask_vector[start:start + BLOCK] - block).abs_().mul_(lam)
        # TALL mask rule m_t = 1{|tau_t| > lambda_t |tau_MTL - tau_t|}: strict '>' keeps zero entries of tau_t out
        masks[:, start:start + BLOCK] = block.abs() > distance
    return masks


def random_masks_like(masks: torch.Tensor, random_state: RandomState = None) -> torch.Tensor:
    """Random boolean masks ``[T, P]`` keeping, per task, exactly as many weights as ``masks[t]`` does: the null
    of a localization claim (same density, no localization). Places drawn from ``random_state`` (one torch stream,
    ``icml24._random.torch_generator``)."""
    if masks.ndim != 2 or masks.dtype != torch.bool:
        raise ValueError(f"masks must be a boolean [T, P] tensor, got {masks.dtype} {tuple(masks.shape)}")
    generator = torch_generator(random_state)
    out = torch.zeros_like(masks)
    for t, row in enumerate(masks):
        out[t, torch.randperm(row.numel(), generator=generator)[:int(row.sum())]] = True
    return out


class TALLMasks(FittedAttributes, Estimator):
    r"""TALL masks (TAsk LocaLization): which weights of the multi-task vector each task needs.

    .. math::
        m_t = \mathbb{1}\{|\tau_t| > \lambda_t\, |\tau_{MTL} - \tau_t|\}, \qquad
        \hat\theta_t = \theta_0 + m_t \odot \tau_{MTL}

    Algorithm: (1) ``tau_t = theta_t - theta_0``; (2) ``tau_MTL`` = unscaled TA sum or TIES dis-sum;
    (3) for each candidate ``lambda`` build the masks and score each task's reconstruction on its validation set;
    (4) keep, per task, the ``lambda_t`` with the best score; (5) store ``theta_0``, ``tau_MTL`` and the packed masks.

    Args:
        lambdas (sequence of float, optional): candidate ``lambda``, chosen per task on validation.
            (default: ``(0.2, 0.3, 0.4, 0.5, 0.6)``)
        multitask (str, optional): ``"ta"`` or ``"ties"``, how ``tau_MTL`` is built. (default: ``"ta"``)
        density (float, optional): TIES trimming fraction when ``multitask="ties"``. (default: ``0.2``)

    Attributes:
        task_vectors_: the task vectors ``tau_t``, ``[T, P]``.
        multitask_vector_: ``tau_MTL``, ``[P]``.
        masks_: the per-task masks, bool ``[T, P]``.
        lambdas_: the lambda chosen per task, ``[T]``.
        lambda_scores_: ``[T, L]`` validation scores, empty when a single lambda was given.
    """

    def __init__(self, lambdas: Sequence[float] = DEFAULT_LAMBDAS, multitask: str = "ta", density: float = 0.2):
        self.lambdas = lambdas  # stored verbatim (the estimator contract); checked at fit
        self.multitask = multitask
        self.density = density

    def _check_params(self) -> list[float]:
        """Check the parameters (at ``fit``); returns the candidate lambdas as floats."""
        if self.multitask not in _MULTITASK:
            raise ValueError(f"multitask must be one of {_MULTITASK}, got {self.multitask!r}")
        lambdas = [float(x) for x in ([self.lambdas] if isinstance(self.lambdas, (int, float)) else self.lambdas)]
        if not lambdas or not all(x >= 0 for x in lambdas):  # 'x >= 0' is False for NaN
            raise ValueError(f"lambdas must be a non-empty list of finite non-negative numbers, got {lambdas}")
        check_finite("lambdas", torch.tensor(lambdas))
        return lambdas

    def fit(self, pretrained, finetuned, score: Callable[[int, object], float] | None = None) -> TALLMasks:
        """Build the masks; with several lambdas, ``score(task, reconstructed_model)`` picks ``lambda_t``.

        ``pretrained`` is a state dict (or flat ``[P]`` tensor), ``finetuned`` a list of state dicts (or ``[T, P]``,
        or a shared ``TaskVectors``);
        NaN or infinite weights, and a score that returns NaN, raise ``ValueError``.
        """
        lambdas = self._check_params()
        # tau_t = theta_t - theta_0 (a view of a shared TaskVectors when given one)
        self.pretrained_, self.task_vectors_, self.layout_, self._template = flat_task_vectors(pretrained, finetuned)
        self.multitask_vector_ = multitask_vector(self.task_vectors_, self.multitask, self.density)
        self._merged_full = self.pretrained_ + self.multitask_vector_  # theta_0 + tau_MTL, where every mask is 1
        num_tasks = self.task_vectors_.shape[0]
        if len(lambdas) == 1:
            self.lambdas_ = torch.full((num_tasks,), lambdas[0], dtype=torch.float64)
            self.lambda_scores_ = torch.empty(num_tasks, 0)
        else:
            if score is None:
                raise ValueError("several lambdas given: pass score(task, model) -> validation accuracy to fit")
            scores = torch.empty(num_tasks, len(lambdas))
            for j, lam in enumerate(lambdas):
                masks = compute_tall_masks(self.task_vectors_, self.multitask_vector_, lam)
                for t in range(num_tasks):
                    scores[t, j] = float(score(t, self._rebuild(masks[t])))
            if not torch.isfinite(scores).all():
                raise ValueError("score(task, model) returned NaN or inf; it must return a finite validation accuracy")
            self.lambda_scores_ = scores
            # lambda_t chosen per task on validation: the first best lambda (argmax returns the first maximum)
            self.lambdas_ = torch.tensor(lambdas, dtype=torch.float64)[scores.argmax(dim=1)]
        self.masks_ = compute_tall_masks(self.task_vectors_, self.multitask_vector_, self.lambdas_)
        return self

    def _rebuild(self, mask: torch.Tensor):
        # reconstruction theta_t^ = theta_0 + m_t * tau_MTL, coefficient 1
        vector = torch.where(mask, self._merged_full, self.pretrained_)  # m_t = 0 leaves theta_0 exactly
        return vector if self.layout_ is None else self.layout_.unflatten(vector, like=self._template)

    def reconstruct(self, task: int):
        """``theta_0 + m_t * tau_MTL`` (coefficient 1.0) as a state dict (or vector if fitted on tensors).

        Raises ``NotFittedError`` before ``fit``.
        """
        check_fitted(self, "masks_")
        if not -len(self.masks_) <= task < len(self.masks_):
            raise ValueError(f"task must index one of the {len(self.masks_)} fitted tasks, got {task}")
        return self._rebuild(self.masks_[task])

    def compress(self) -> CompressedCheckpoints:
        """The compressed store of all task models: ``theta_0``, ``tau_MTL``, packed masks (``NotFittedError`` before
        ``fit``)."""
        check_fitted(self, "masks_")
        return CompressedCheckpoints(self.pretrained_, self.multitask_vector_, PackedMasks.from_bool(self.masks_),
                                     self.layout_, self._template)

    def __repr__(self) -> str:
        return f"TALLMasks(lambdas={self.lambdas}, multitask={self.multitask!r}, density={self.density})"
