"""Task vectors: the weight difference a fine-tuning run adds to a pre-trained model.

A task vector (Ilharco et al., ICLR 2023) is ``tau_t = theta_t - theta_0`` for fine-tuned weights ``theta_t`` and
pre-trained weights ``theta_0``. Merging methods (Task Arithmetic, TIES, TALL masks, Consensus) all act on the
stacked task vectors ``[num_tasks, num_params]``; ``StateDictLayout`` flattens the floating-point tensors of a
PyTorch state dict into one vector and restores it, so every method here works on any ``nn.Module``.

Every merge here has the form of task arithmetic, the TALL-masks paper's starting point (Ilharco et al.)::

    tau_t = theta_t - theta_0,    theta = theta_0 + alpha * tau_MTL(tau_1, ..., tau_T)

and they differ only in the multi-task vector ``tau_MTL`` (sum, TIES, consensus-masked). Fitting several of
them on one ``TaskVectors`` shares a single ``[T, P]`` tensor (each keeps a view) instead of one copy each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import torch

from icml24._estimator import Estimator
from icml24._validation import FittedAttributes, check_finite, check_fitted

StateDict = Mapping[str, torch.Tensor]


def check_finite_weights(name: str, tensor: torch.Tensor) -> torch.Tensor:
    """``check_finite`` for large weight tensors: a finite sum proves every entry finite (NaN and inf propagate
    through a sum), so the elementwise test, about 15x slower on CPU, only runs when the sum is not finite."""
    if tensor.is_floating_point() and bool(torch.isfinite(tensor.sum())):
        return tensor
    return check_finite(name, tensor)


class StateDictLayout:
    """The order, shapes and dtypes of the floating-point tensors of a state dict.

    Integer buffers (e.g. BatchNorm's ``num_batches_tracked``) are not weights and are left out of the flat
    vector; ``unflatten`` copies them from ``like`` when given.

    Args:
        keys (list[str]): names of the tensors, in flattening order.
        shapes (list[torch.Size]): their shapes.
        dtypes (list[torch.dtype]): their dtypes (restored by ``unflatten``).
    """

    def __init__(self, keys: list[str], shapes: list[torch.Size], dtypes: list[torch.dtype]):
        self.keys = list(keys)
        self.shapes = [torch.Size(s) for s in shapes]
        self.dtypes = list(dtypes)
        self.numels = [int(torch.Size(s).numel()) for s in self.shapes]

    @classmethod
    def from_state_dict(cls, state_dict: StateDict) -> StateDictLayout:
        """The layout of the floating-point tensors of ``state_dict`` (in its key order)."""
        if not isinstance(state_dict, Mapping) or not state_dict:
            raise ValueError("expected a non-empty state dict (name -> tensor), e.g. model.state_dict()")
        keys = [k for k, v in state_dict.items() if torch.is_tensor(v) and v.is_floating_point()]
        if not keys:
            raise ValueError("the state dict holds no floating-point tensor to merge")
        return cls(keys, [state_dict[k].shape for k in keys], [state_dict[k].dtype for k in keys])

    @property
    def num_params(self) -> int:
        return sum(self.numels)

    def flatten(self, state_dict: StateDict) -> torch.Tensor:
        """``state_dict`` -> float32 vector ``[num_params]``."""
        missing = [k for k in self.keys if k not in state_dict]
        if missing:
            raise ValueError(f"state dict lacks {len(missing)} tensor(s) of the layout, e.g. {missing[0]!r}")
        parts = []
        for key, shape in zip(self.keys, self.shapes, strict=True):
            value = state_dict[key]
            if value.shape != shape:
                raise ValueError(f"tensor {key!r} has shape {tuple(value.shape)}, the layout expects {tuple(shape)}")
            parts.append(value.detach().reshape(-1).to(torch.float32))
        return torch.cat(parts)

    def flatten_many(self, state_dicts: Sequence[StateDict]) -> torch.Tensor:
        """A list of state dicts -> ``[len(state_dicts), num_params]``."""
        return torch.stack([self.flatten(sd) for sd in state_dicts])

    def unflatten(self, vector: torch.Tensor, like: StateDict | None = None) -> dict[str, torch.Tensor]:
        """Vector ``[num_params]`` -> state dict (non-float entries copied from ``like``)."""
        if vector.ndim != 1 or vector.numel() != self.num_params:
            raise ValueError(f"expected a vector of {self.num_params} entries, got shape {tuple(vector.shape)}")
        out = {k: v.clone() for k, v in like.items()} if like is not None else {}
        chunks = vector.split(self.numels)
        for key, chunk, shape, dtype in zip(self.keys, chunks, self.shapes, self.dtypes, strict=True):
            out[key] = chunk.reshape(shape).to(dtype).clone()
        return out

    def __repr__(self) -> str:
        return f"StateDictLayout(tensors={len(self.keys)}, num_params={self.num_params})"


def as_flat(pretrained: StateDict | torch.Tensor, finetuned: Sequence[StateDict] | torch.Tensor):
    """Normalize inputs to ``(theta_0 [P], theta [T, P], layout or None, template state dict or None)``."""
    if torch.is_tensor(pretrained):
        base = pretrained.detach().to(torch.float32).reshape(-1)
        layout, template = None, None
    else:
        layout = StateDictLayout.from_state_dict(pretrained)
        base, template = layout.flatten(pretrained), pretrained
    if torch.is_tensor(finetuned):
        tuned = finetuned.detach().to(torch.float32)
        if tuned.ndim != 2:
            raise ValueError(f"finetuned must be [num_tasks, num_params], got shape {tuple(tuned.shape)}")
    else:
        if isinstance(finetuned, Mapping) or len(finetuned) == 0:
            raise ValueError("finetuned must be a non-empty list of state dicts (one per task)")
        if layout is None:
            raise ValueError("pass the pre-trained weights as a state dict when the fine-tuned ones are state dicts")
        tuned = layout.flatten_many(finetuned)
    if tuned.shape[1] != base.numel():
        raise ValueError(f"fine-tuned models have {tuned.shape[1]} parameters, the pre-trained one {base.numel()}")
    check_finite_weights("pretrained", base)
    check_finite_weights("finetuned", tuned)
    return base, tuned, layout, template


class TaskVectors:
    """Stacked task vectors ``tau [T, P]`` with the pre-trained ``theta_0 [P]`` they are taken from, computed once.

    Pass it as ``finetuned`` to the ``fit`` of several mergers (with the same ``pretrained``): each keeps a view of
    the one tensor (nothing is copied, the mergers only read it), so memory does not grow with the number of
    mergers. ``tv[:k]`` is the first ``k`` tasks, again a view.

    Args:
        pretrained: a state dict or flat ``[P]`` tensor.
        finetuned: a list of state dicts or ``[T, P]``; NaN or infinite weights raise ``ValueError``.
    """

    def __init__(self, pretrained: StateDict | torch.Tensor, finetuned: Sequence[StateDict] | torch.Tensor):
        self.pretrained, tuned, self.layout, self.template = as_flat(pretrained, finetuned)
        self.vectors = tuned - self.pretrained  # tau_t = theta_t - theta_0, the one copy

    @classmethod
    def _view(cls, parent: TaskVectors, vectors: torch.Tensor) -> TaskVectors:
        view = cls.__new__(cls)
        view.pretrained, view.vectors, view.layout, view.template = (parent.pretrained, vectors, parent.layout,
                                                                     parent.template)
        return view

    def __getitem__(self, index: slice) -> TaskVectors:
        if not isinstance(index, slice):
            raise TypeError(f"index TaskVectors with a slice of tasks (tv[:k]), got {type(index).__name__}")
        return TaskVectors._view(self, self.vectors[index])

    def __len__(self) -> int:
        return self.vectors.shape[0]

    def __repr__(self) -> str:
        return f"TaskVectors(num_tasks={self.vectors.shape[0]}, num_params={self.vectors.shape[1]})"


def flat_task_vectors(pretrained: StateDict | torch.Tensor,
                      finetuned: Sequence[StateDict] | torch.Tensor | TaskVectors):
    """``(theta_0 [P], tau [T, P], layout or None, template or None)`` for a merger's ``fit``: from a
    ``TaskVectors`` its shared tensor (``pretrained`` must equal its ``theta_0``), else ``theta_t - theta_0``."""
    if not isinstance(finetuned, TaskVectors):
        base, tuned, layout, template = as_flat(pretrained, finetuned)
        return base, tuned - base, layout, template  # tau_t = theta_t - theta_0
    base = finetuned.pretrained
    if pretrained is not base and pretrained is not finetuned.template:
        flat = as_flat(pretrained, base.unsqueeze(0))[0]
        if not torch.equal(flat, base):
            raise ValueError("pretrained differs from the theta_0 the TaskVectors were taken from")
    return base, finetuned.vectors, finetuned.layout, finetuned.template


def compute_task_vectors(pretrained: StateDict | torch.Tensor,
                         finetuned: Sequence[StateDict] | torch.Tensor) -> torch.Tensor:
    """Stacked task vectors ``tau_t = theta_t - theta_0``, shape ``[num_tasks, num_params]``."""
    base, tuned, _, _ = as_flat(pretrained, finetuned)
    return tuned - base  # tau_t = theta_t - theta_0 (task vector, Ilharco et al.)


def select_coefficient(candidates: Sequence[float], score: Callable[[float], float]) -> tuple[float, list[float]]:
    """The candidate with the highest validation ``score`` (first one on ties), and all scores.

    A score that is NaN or infinite raises ``ValueError`` (a NaN would silently win or lose every comparison).
    """
    if len(candidates) == 0:
        raise ValueError("give at least one candidate coefficient")
    scores = []
    for c in candidates:
        value = float(score(float(c)))
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"score returned {value} for coefficient {float(c)}; it must return a finite "
                             "validation score (e.g. the average normalized accuracy)")
        scores.append(value)
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))
    return float(candidates[best]), scores


class ScaledMerge(FittedAttributes, Estimator):
    """Shared machinery of the merges ``theta = theta_0 + alpha * tau_merged``.

    Subclasses implement ``_multitask_vector`` (``[T, P]`` task vectors -> ``[P]``). ``scaling`` is a float or a
    grid; with a grid, ``fit`` needs ``score`` (a merged state dict or vector -> validation score, e.g. the
    average normalized accuracy) and keeps the best coefficient in ``scaling_``.
    """

    def __init__(self, scaling: float | Sequence[float] = 1.0):
        self.scaling = scaling  # stored verbatim (the estimator contract); checked at fit

    def _check_params(self) -> list[float]:
        """Check the parameters (at ``fit``, the estimator contract); returns the scaling grid."""
        grid = [self.scaling] if isinstance(self.scaling, (int, float)) else list(self.scaling)
        if not grid:
            raise ValueError("scaling must be a number or a non-empty grid of numbers")
        check_finite("scaling", torch.tensor([float(a) for a in grid]))
        return grid

    def _multitask_vector(self, task_vectors: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def fit(self, pretrained, finetuned, score: Callable | None = None):
        """Compute the task vectors and the merged vector; choose ``scaling_`` on ``score`` if a grid was given.

        ``pretrained``: state dict or flat ``[P]`` tensor; ``finetuned``: list of state dicts, ``[T, P]`` or a
        ``TaskVectors`` (shared, not copied); NaN or infinite weights raise ``ValueError``.
        """
        grid = self._check_params()
        # tau_t = theta_t - theta_0 (a view of a shared TaskVectors when given one)
        self.pretrained_, self.task_vectors_, self.layout_, self._template = flat_task_vectors(pretrained, finetuned)
        self.multitask_vector_ = self._multitask_vector(self.task_vectors_)
        if len(grid) > 1 and score is None:
            raise ValueError(f"{type(self).__name__} got a scaling grid; pass score= to fit to choose on validation")
        if len(grid) == 1:
            self.scaling_, self.scaling_scores_ = float(grid[0]), []
        else:
            self.scaling_, self.scaling_scores_ = select_coefficient(grid, lambda a: score(self.merge(a)))
        return self

    def merged_vector(self, scaling: float | None = None) -> torch.Tensor:
        """``theta_0 + alpha * tau_merged`` as a flat vector ``[num_params]``; ``NotFittedError`` before ``fit``."""
        check_fitted(self, "multitask_vector_")
        alpha = self.scaling_ if scaling is None else float(check_finite("scaling", scaling))
        return self.pretrained_ + alpha * self.multitask_vector_  # task arithmetic: theta_0 + alpha * tau_MTL

    def merge(self, scaling: float | None = None):
        """The merged model: a state dict when fitted on state dicts, else a flat vector."""
        vector = self.merged_vector(scaling)
        return vector if self.layout_ is None else self.layout_.unflatten(vector, like=self._template)
