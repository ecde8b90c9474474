"""Residual Propagation (RP) and Generalized RP.

Yang, Wu, Wipf, Sun, Yan. "How Graph Neural Networks Learn: Lessons from Training Dynamics", ICML 2024.

RP is what gradient descent on a GNN does in function space once the neural tangent kernel is replaced by a
graph operator. It has no parameters: residuals on the training nodes are propagated over the graph, and the
negated residuals on the other nodes are the predictions.

Algorithm 1 (basic RP, ``P = S^k``) and Algorithm 2 (generalized RP, ``P = S^k K S^k``)::

    R_0 = [Y_L ; 0]                                  # one-hot labels on the training nodes L, zeros elsewhere
    for t = 1..T:
        R_t = R_{t-1} - lr * P [R_{t-1, L} ; 0]      # propagate the training residuals only
        F_t = [Y_L - R_{t, L} ; -R_{t, U}]            # prediction of step t
    return F_t at the step t with the best validation accuracy

``S = D^{-1/2} (A + I) D^{-1/2}`` is the symmetrically normalized adjacency with self-loops and ``K`` the
degree-normalized Gaussian kernel of the (row-normalized) node features.

Because ``P [R_L ; 0] = P[:, L] R_L``, the training residuals follow ``R_{t,L} = (I - lr P_LL)^t Y_L``.
With ``P_LL = Q diag(lambda) Q^T`` every step has the closed form

    F_t[U] = lr * P_UL Q diag(g_t) Q^T Y_L,   g_t = sum_{s<t} (1 - lr lambda)^s,

which the ``"spectral"`` solver evaluates for all steps at once (a few matrix products). The ``"iterative"``
solver runs the loop above and needs only ``O(n C)`` memory. Both give the same numbers up to rounding.
The iteration converges only when ``0 <= lr * lambda < 2`` for the eigenvalues of ``P_LL``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import torch

from .._estimator import Estimator
from .._validation import FittedAttributes, check_finite, check_fitted
from .operators import normalize_features, normalized_adjacency, normalized_gaussian_kernel_matmul

__all__ = ["ResidualPropagation", "GeneralizedRP"]

_SOLVERS = ("auto", "spectral", "iterative")
_SELECTIONS = ("first", "last")


def _propagate(operator: torch.Tensor, z: torch.Tensor, k: int, alpha: float, lazy: bool) -> torch.Tensor:
    """``k`` propagation steps of ``z`` over ``operator``.

    ``alpha == 1``: ``S^k z``. Otherwise ``lazy=False`` repeats ``y <- alpha S y + (1 - alpha) z`` (RP/main.py)
    and ``lazy=True`` repeats ``y <- alpha S y + (1 - alpha) y`` (Generalized_RP/main.py).
    """
    y = z
    for _ in range(k):
        if alpha == 1.0:
            y = operator @ y
        else:
            y = alpha * (operator @ y) + (1.0 - alpha) * (y if lazy else z)
    return y


class ResidualPropagation(FittedAttributes, Estimator):
    r"""Residual Propagation (Algorithm 1 of Yang et al., ICML 2024): ``R <- R - lr * S^k [R_L ; 0]``.

    Args:
        steps (int): number of RP steps ``T`` (default ``1000``); every step is evaluated on validation.
        lr (float): step size ``eta`` (default ``1.0``); the iteration converges when ``lr * lambda_max(P_LL) < 2``.
        k (int): propagation steps per RP step, ``>= 1`` (default ``3``).
        alpha (float): ``1`` uses ``S^k``; ``alpha < 1`` runs ``k`` steps of ``y <- alpha S y + (1 - alpha) r``.
        selection (str): keep the ``"first"`` (``>``, the default of basic RP) or the ``"last"`` (``>=``) step
            among equally good validation accuracies.
        solver (str): ``"spectral"`` (closed form via the eigendecomposition of ``P_LL``; needs the ``n x |L|``
            column block ``P[:, L]``), ``"iterative"`` (the loop; ``O(n C)`` memory) or ``"auto"`` (spectral when
            the column block fits in ``max_dense_bytes``).
        max_dense_bytes (float): memory allowed for dense ``n x |L|`` blocks (default 2 GiB).

    Attributes (after ``fit``):
        scores_ (Tensor ``[n, C]``): ``F`` at the selected step.  best_step_ (int).  best_val_accuracy_ (float).
        val_accuracy_ (ndarray ``[steps]``): validation accuracy of every step.
        lambda_max_ (float): largest eigenvalue (spectral) or spectral radius (iterative) of ``P_LL``.
        operator_ (sparse Tensor): ``S``.  num_classes_ (int).  solver_ (str): the solver used.
    """

    _lazy_alpha = False  # Generalized_RP smooths with (alpha S + (1 - alpha) I); RP/main.py restarts from r

    def __init__(self, steps: int = 1000, lr: float = 1.0, k: int = 3, alpha: float = 1.0,
                 selection: str = "first", solver: str = "auto", max_dense_bytes: float = 2 * 2**30):
        self.steps = steps
        self.lr = lr
        self.k = k
        self.alpha = alpha
        self.selection = selection
        self.solver = solver
        self.max_dense_bytes = max_dense_bytes

    def _hyperparameters(self) -> dict:
        return {"steps": self.steps, "lr": self.lr, "k": self.k, "alpha": self.alpha}

    def __repr__(self) -> str:
        params = ", ".join(f"{key}={value!r}" for key, value in self._hyperparameters().items())
        return f"{type(self).__name__}({params})"

    # ----------------------------------------------------------------- validation
    def _check_hyperparameters(self) -> None:
        if not (isinstance(self.steps, int) and self.steps >= 1):
            raise ValueError(f"steps must be a positive int, got {self.steps!r}")
        if not (isinstance(self.k, int) and self.k >= 1):
            raise ValueError(f"k must be an int >= 1 (the propagation steps per RP step), got {self.k!r}")
        if not (math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"lr must be a positive number, got {self.lr!r}")
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"alpha must lie in [0, 1], got {self.alpha!r}")
        if self.selection not in _SELECTIONS:
            raise ValueError(f"selection must be one of {_SELECTIONS}, got {self.selection!r}")
        if self.solver not in _SOLVERS:
            raise ValueError(f"solver must be one of {_SOLVERS}, got {self.solver!r}")

    @staticmethod
    def _mask(data, given, name: str, num_nodes: int, required: bool) -> torch.Tensor | None:
        mask = given if given is not None else getattr(data, name, None)
        if mask is None:
            if required:
                raise ValueError(f"data has no {name}; pass {name}=<bool tensor of length {num_nodes}>")
            return None
        mask = torch.as_tensor(mask)
        if mask.dim() != 1 or mask.shape[0] != num_nodes or mask.dtype != torch.bool:
            raise ValueError(f"{name} must be a bool tensor of shape [{num_nodes}] (one split; select a column "
                             f"of a 2-D mask), got dtype {mask.dtype} and shape {tuple(mask.shape)}")
        return mask

    def fit(self, data, train_mask: torch.Tensor | None = None, val_mask: torch.Tensor | None = None):
        """Run RP on a ``torch_geometric.data.Data`` with ``edge_index``, ``y: [n]`` and ``train_mask``.

        ``val_mask`` (from ``data`` or the argument) selects the step; without it the last step is kept.
        """
        self._check_hyperparameters()
        if getattr(data, "edge_index", None) is None or getattr(data, "y", None) is None:
            raise ValueError("data must have edge_index and y (a torch_geometric.data.Data)")
        self._check_inputs(data)
        y = torch.as_tensor(data.y)
        if y.is_floating_point() or y.is_complex():
            raise ValueError(f"y must hold integer class indices, got dtype {y.dtype}; if the values are whole "
                             "numbers pass data.y.long(), otherwise map each class to 0..C-1")
        y = y.long().view(-1)
        n = int(data.num_nodes) if data.num_nodes is not None else y.shape[0]
        if y.shape[0] != n:
            raise ValueError(f"y has {y.shape[0]} entries for {n} nodes; RP needs one integer label per node")
        train = self._mask(data, train_mask, "train_mask", n, required=True)
        val = self._mask(data, val_mask, "val_mask", n, required=False)
        if not train.any():
            raise ValueError("train_mask selects no node; RP needs labelled training nodes")
        if val is not None and not val.any():
            val = None
        if val is not None and (val & train).any():
            raise ValueError("train_mask and val_mask overlap; validation nodes must be unlabelled")
        if y[train].min() < 0:
            raise ValueError("training labels must be non-negative class indices")
        if val is not None and y[val].min() < 0:
            raise ValueError(f"{int((y[val] < 0).sum())} validation node(s) have label -1 (unlabelled): they would "
                             "count as errors; drop them from val_mask")
        self.num_classes_ = int(y.max()) + 1 if y.numel() else 0
        self.operator_ = normalized_adjacency(data.edge_index, n)
        train_idx = train.nonzero().view(-1)
        onehot_train = torch.nn.functional.one_hot(y[train_idx], self.num_classes_).to(torch.float64)

        column_bytes = 8.0 * n * train_idx.numel()
        self.solver_ = self._resolve_solver(column_bytes, n, train_idx.numel())
        if self.solver_ == "spectral":
            columns = self._operator_columns(data, train_idx)  # P[:, L], [n, |L|]
            self._fit_spectral(columns, train_idx, onehot_train, y, val)
        else:
            self._fit_iterative(data, train_idx, onehot_train, y, val)
        self._warn_if_below_majority(y, val)
        return self

    def _check_inputs(self, data) -> None:
        """Checks of ``data`` beyond the labels and masks (basic RP reads no features)."""

    def _resolve_solver(self, column_bytes: float, n: int, num_train: int) -> str:
        if self.solver != "auto":
            return self.solver
        return "spectral" if column_bytes <= self.max_dense_bytes and num_train <= 8192 else "iterative"

    # ----------------------------------------------------------------- the operator P
    def _apply(self, data, z: torch.Tensor) -> torch.Tensor:
        """``P z`` for ``z: [n, m]``; here ``P = S^k`` (or its ``alpha`` variant)."""
        return _propagate(self.operator_, z, self.k, self.alpha, self._lazy_alpha)

    def _operator_columns(self, data, train_idx: torch.Tensor) -> torch.Tensor:
        n = self.operator_.shape[0]
        indicator = torch.zeros(n, train_idx.numel(), dtype=torch.float64)
        indicator[train_idx, torch.arange(train_idx.numel())] = 1.0
        return _propagate(self.operator_, indicator, self.k, self.alpha, self._lazy_alpha)

    # ----------------------------------------------------------------- solvers
    def _check_stability(self, lambda_max: float) -> None:
        self.lambda_max_ = float(lambda_max)
        if self.lr * lambda_max >= 2.0:
            warnings.warn(f"lr * lambda_max(P_LL) = {self.lr * lambda_max:.3g} >= 2: the residuals diverge; "
                          f"use lr < {2.0 / lambda_max:.3g}", RuntimeWarning, stacklevel=3)

    def _check_definite(self, smallest: float, largest: float) -> None:
        """A negative eigenvalue of ``P_LL`` (``S^k`` with odd ``k`` is indefinite) makes ``1 - lr lambda > 1``: the
        residual along it grows at every step instead of shrinking."""
        self.lambda_min_ = smallest
        if smallest < -1e-9 * max(largest, 1e-300):
            warnings.warn(f"P_LL has a negative eigenvalue ({smallest:.3g}) with k={self.k}: residuals along it grow "
                          "with every step; use an even k (or alpha < 1)", RuntimeWarning, stacklevel=4)

    def _warn_if_below_majority(self, y: torch.Tensor, val: torch.Tensor | None) -> None:
        if val is None or not math.isfinite(self.best_val_accuracy_):
            return
        majority = float(torch.bincount(y[val]).max()) / float(val.sum())
        if self.best_val_accuracy_ < majority:
            warnings.warn(f"validation accuracy {self.best_val_accuracy_:.3f} is below the majority class's share "
                          f"{majority:.3f}: these hyperparameters do not suit this graph; choose them on validation "
                          "with GeneralizedRP.select(data)", RuntimeWarning, stacklevel=3)

    def _better(self, accuracy: float, best: float) -> bool:
        return accuracy > best if self.selection == "first" else accuracy >= best

    def _fit_iterative(self, data, train_idx, onehot_train, y, val) -> None:
        n = self.operator_.shape[0]
        largest = self._spectral_radius(data, train_idx)
        self._check_stability(largest)
        if self.k % 2 == 1 and self.alpha == 1.0:  # S^k with odd k can be indefinite: see _check_definite
            self._check_definite(self._smallest_eigenvalue(data, train_idx, largest), largest)
        residuals = torch.zeros(n, self.num_classes_, dtype=torch.float64)
        residuals[train_idx] = onehot_train  # R_0 = [Y_L ; 0]
        masked = torch.zeros_like(residuals)
        best_residuals, best, best_step = residuals.clone(), -math.inf, self.steps
        accuracies = np.full(self.steps, np.nan)
        for step in range(1, self.steps + 1):
            masked[train_idx] = residuals[train_idx]
            residuals -= self.lr * self._apply(data, masked)  # Algorithm 1: R <- R - eta P [R_L ; 0]
            if val is not None:
                accuracies[step - 1] = float((residuals[val].argmin(dim=1) == y[val]).double().mean())
                if self._better(accuracies[step - 1], best):
                    best, best_step, best_residuals = accuracies[step - 1], step, residuals.clone()
        if val is None:
            best_residuals = residuals
        scores = -best_residuals
        scores[train_idx] += onehot_train  # F_L = Y_L - R_L
        self._finish(scores, accuracies, best_step, best)

    def _spectral_radius(self, data, train_idx: torch.Tensor, iterations: int = 100, shift: float = 0.0) -> float:
        """Power iteration on ``P_LL - shift I`` (``P_LL``: the restriction of ``P`` to the training nodes)."""
        n = self.operator_.shape[0]
        generator = torch.Generator().manual_seed(0)
        vector = torch.rand(train_idx.numel(), 1, generator=generator, dtype=torch.float64)
        value = 0.0
        for _ in range(iterations):
            vector = vector / vector.norm().clamp(min=1e-300)
            full = torch.zeros(n, 1, dtype=torch.float64)
            full[train_idx] = vector
            image = self._apply(data, full)[train_idx] - shift * vector
            value = float(image.norm())
            vector = image
        return value

    def _smallest_eigenvalue(self, data, train_idx: torch.Tensor, largest: float) -> float:
        """``lambda_min(P_LL)`` from a power iteration on ``P_LL - lambda_max I`` (its dominant eigenvalue is
        ``lambda_min - lambda_max``): the iterative solver's check for an indefinite ``P`` (odd ``k``)."""
        return largest - self._spectral_radius(data, train_idx, shift=largest)

    def _fit_spectral(self, columns, train_idx, onehot_train, y, val) -> None:
        block = columns[train_idx]
        eigenvalues, eigenvectors = torch.linalg.eigh(0.5 * (block + block.T))  # P_LL = Q diag(lambda) Q^T
        self._check_stability(float(eigenvalues.abs().max()))
        self._check_definite(float(eigenvalues.min()), float(eigenvalues.abs().max()))
        ratio = 1.0 - self.lr * eigenvalues  # rho = 1 - eta lambda
        label_coords = eigenvectors.T @ onehot_train  # Q^T Y_L, [|L|, C]
        column_coords = columns @ eigenvectors  # P[:, L] Q, [n, |L|]

        def geometric_sums(t: torch.Tensor) -> torch.Tensor:
            """g_t = sum_{s<t} rho^s for steps ``t: [m]`` -> ``[m, |L|]`` (``t`` where rho = 1)."""
            t = t.to(torch.float64)[:, None]
            safe = torch.where(ratio == 1.0, torch.full_like(ratio, 0.5), ratio)
            return torch.where(ratio == 1.0, t, (1.0 - safe ** t) / (1.0 - safe))

        accuracies = np.full(self.steps, np.nan)
        best_step, best = self.steps, -math.inf
        if val is not None:
            val_idx = val.nonzero().view(-1)
            # F_t[v, c] = eta * sum_j (P_vL Q)_j g_t[j] (Q^T Y_L)_{jc}: one product for a chunk of steps
            weights = (column_coords[val_idx][:, :, None] * label_coords[None]).permute(1, 0, 2)
            weights = weights.reshape(label_coords.shape[0], -1)
            chunk = max(1, int(2e7 // max(1, weights.shape[1])))
            for start in range(1, self.steps + 1, chunk):
                steps = torch.arange(start, min(start + chunk, self.steps + 1))
                scores = (geometric_sums(steps) @ weights).view(len(steps), val_idx.numel(), -1)
                accuracies[steps.numpy() - 1] = (scores.argmax(dim=2) == y[val_idx]).double().mean(dim=1).numpy()
            for step in range(1, self.steps + 1):  # the tie rule of the official logger, over a float array
                if self._better(accuracies[step - 1], best):
                    best, best_step = accuracies[step - 1], step
        g = geometric_sums(torch.tensor([best_step]))[0]
        scores = self.lr * column_coords @ (g[:, None] * label_coords)  # -R_t on every node
        scores[train_idx] = eigenvectors @ ((1.0 - ratio ** best_step)[:, None] * label_coords)  # Y_L - R_L
        self._finish(scores, accuracies, best_step, best)

    def _finish(self, scores, accuracies, best_step, best) -> None:
        self.scores_ = scores
        self.val_accuracy_ = accuracies
        self.best_step_ = int(best_step)
        self.best_val_accuracy_ = float(best) if math.isfinite(best) else float("nan")

    # ----------------------------------------------------------------- predictions
    def _check_fitted(self) -> None:
        check_fitted(self, "scores_")

    def decision_function(self) -> torch.Tensor:
        """Scores ``F: [n, C]`` at the selected step (``Y_L - R_L`` on training nodes, ``-R_U`` elsewhere)."""
        self._check_fitted()
        return self.scores_

    def predict(self) -> torch.Tensor:
        """Predicted class of every node, ``[n]``."""
        return self.decision_function().argmax(dim=1)

    def predict_proba(self) -> torch.Tensor:
        """Class probabilities ``[n, C]``: the scores clipped at zero and normalized per node (uniform if all <= 0)."""
        scores = self.decision_function().clamp(min=0.0)
        total = scores.sum(dim=1, keepdim=True)
        uniform = torch.full_like(scores, 1.0 / scores.shape[1])
        return torch.where(total > 0, scores / total.clamp(min=1e-300), uniform)


class GeneralizedRP(ResidualPropagation):
    r"""Generalized Residual Propagation (Algorithm 2): ``R <- R - lr * S^k K S^k [R_L ; 0]``.

    ``K = D^{-1/2} G D^{-1/2}`` with the Gaussian kernel ``G_ij = exp(-gamma ||x_i - x_j||^2)`` of the node
    features (row-normalized first, as PyG's ``NormalizeFeatures``, when ``normalize=True``) and ``D`` its row sums.
    Only the column block ``P[:, L] = S^k K S^k [:, L]`` is formed (``n x |L|``); ``K`` is never stored.

    The defaults are the official Cora settings (Generalized_RP/run.sh: 20000 steps, lr 10, k 3, gamma 1). For a
    graph without an official configuration choose them on validation: ``GeneralizedRP.select(data)``. A fit whose
    best validation accuracy is below the majority class's share warns.

    Args:
        steps (int): number of RP steps (default ``20000``), as in ``ResidualPropagation``.
        lr (float): step size (default ``10.0``), as in ``ResidualPropagation``.
        k (int): propagation steps on each side of ``K``, ``>= 1`` (default ``3``).
        selection (str): as in ``ResidualPropagation``, but defaults to ``"last"`` (``>=``, the official
            generalized RP).
        solver (str): as in ``ResidualPropagation``; both solvers use the column block.
        max_dense_bytes (float): as in ``ResidualPropagation``.
        alpha (float): ``alpha < 1`` replaces ``S`` by ``alpha S + (1 - alpha) I`` (Generalized_RP/main.py).
        gamma (float): kernel width (default ``1.0``).
        normalize (bool): row-normalize the features before the kernel (default ``True``).
        block_size (int): rows of ``G`` built at a time (default ``2048``).
        max_kernel_nodes (int): refuse graphs with more nodes (the ``O(n^2 d)`` kernel; default ``200_000``).
    """

    _lazy_alpha = True

    def __init__(self, steps: int = 20000, lr: float = 10.0, k: int = 3, alpha: float = 1.0, gamma: float = 1.0,
                 normalize: bool = True, selection: str = "last", solver: str = "auto",
                 block_size: int = 2048, max_kernel_nodes: int = 200_000, max_dense_bytes: float = 2 * 2**30):
        super().__init__(steps=steps, lr=lr, k=k, alpha=alpha, selection=selection, solver=solver,
                         max_dense_bytes=max_dense_bytes)
        self.gamma = gamma
        self.normalize = normalize
        self.block_size = block_size
        self.max_kernel_nodes = max_kernel_nodes

    def _hyperparameters(self) -> dict:
        return {**super()._hyperparameters(), "gamma": self.gamma}

    def _check_inputs(self, data) -> None:
        """The node features ``data.x`` must be finite: they enter the kernel."""
        if getattr(data, "x", None) is not None:
            check_finite("data.x", data.x)

    def _check_hyperparameters(self) -> None:
        super()._check_hyperparameters()
        if not (isinstance(self.gamma, (int, float)) and math.isfinite(self.gamma) and self.gamma > 0):
            raise ValueError(f"gamma must be a positive number (the Gaussian kernel's width), got {self.gamma!r}")

    @classmethod
    def select(cls, data, grid: dict[str, list] | None = None, **fixed) -> GeneralizedRP:
        """The model of ``grid`` (default ``SELECTION_GRID``) with the best validation accuracy, fitted; the table
        of every candidate is in ``selection_``. Only ``data.val_mask`` is read, never the test split."""
        from .rp_selection import select_on_validation

        return select_on_validation(cls, data, grid, **fixed)

    def _resolve_solver(self, column_bytes: float, n: int, num_train: int) -> str:
        if n > self.max_kernel_nodes:
            raise ValueError(
                f"GeneralizedRP forms a Gaussian kernel over all {n} nodes: a dense n x n kernel would need "
                f"{8.0 * n * n / 2**30:.1f} GiB, and even built in blocks it costs O(n^2 d) time. "
                f"Use ResidualPropagation, or raise max_kernel_nodes (now {self.max_kernel_nodes}).")
        if column_bytes > self.max_dense_bytes:
            raise ValueError(f"the column block P[:, L] needs {column_bytes / 2**30:.2f} GiB (n={n}, |L|={num_train})"
                             f" > max_dense_bytes={self.max_dense_bytes / 2**30:.2f} GiB; raise max_dense_bytes")
        return "spectral" if self.solver == "auto" else self.solver

    def _operator_columns(self, data, train_idx: torch.Tensor) -> torch.Tensor:
        if getattr(data, "x", None) is None:
            raise ValueError("GeneralizedRP needs node features data.x: [num_nodes, num_features]")
        x = torch.as_tensor(data.x, dtype=torch.float64)
        if x.dim() != 2 or x.shape[0] != self.operator_.shape[0]:
            raise ValueError(f"data.x must have shape [num_nodes, num_features], got {tuple(x.shape)}")
        if self.normalize:
            x = normalize_features(x)
        smoothed = super()._operator_columns(data, train_idx)  # S^k [:, L]
        kernel_smoothed = normalized_gaussian_kernel_matmul(x, self.gamma, smoothed, self.block_size)
        return _propagate(self.operator_, kernel_smoothed, self.k, self.alpha, lazy=True)  # S^k K S^k [:, L]

    def _fit_iterative(self, data, train_idx, onehot_train, y, val) -> None:
        self._columns = self._operator_columns(data, train_idx)
        self._train_idx = train_idx
        try:
            super()._fit_iterative(data, train_idx, onehot_train, y, val)
        finally:
            del self._columns, self._train_idx

    def _apply(self, data, z: torch.Tensor) -> torch.Tensor:
        # the loop only ever applies P to [R_L ; 0], so P z = P[:, L] z_L
        return self._columns @ z[self._train_idx]
