"""GDEM: Graph Distillation with Eigenbasis Matching (Liu, Bo & Shi, ICML 2024)."""

from __future__ import annotations

import math
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.data import Data

from ..._estimator import Estimator
from ..._random import check_random_state
from ..._validation import FittedAttributes
from .initialization import initial_features, sbm_eigenvectors, synthetic_labels, train_feature_mlp
from .losses import (
    class_embedding_means,
    discrimination_loss,
    eigenbasis_matching_loss,
    orthogonality_loss,
    subspace_directions,
)
from .spectral import laplacian_eigenpairs, select_eigenpairs


class GDEM(FittedAttributes, Estimator):
    r"""Graph Distillation with Eigenbasis Matching (Liu, Bo & Shi, ICML 2024).

    Distils a labelled graph into ``n' = floor(r * n_train)`` synthetic nodes whose graph copies the real
    spectrum. With ``U, Lambda`` the ``K1`` smallest and ``K2`` largest eigenpairs of the real normalized
    Laplacian (largest connected component), it learns eigenvectors ``U' [n', K]`` and features ``X' [n', d]``:

    .. code-block:: text

        U' <- eigenvectors of an SBM graph;  X' <- features a real-trained MLP assigns to y'
        for t in 0 .. epochs-1:
            L = alpha * L_e(U, X; U', X')      # eigenbasis matching, Eq. (7)
              + beta  * L_d(U, X; U', X')      # discrimination, Eq. (9)
              + gamma * L_o(U')                # orthogonality, Eq. (10)
            Adam step on U' if t mod (e1 + e2) < e1 else on X'      # alternating updates
        A' = I - U' Lambda U'^T                # the spectrum is copied, not learned

    Args:
        reduction_rate (float): ``r``; synthetic nodes per training node (default 0.5).
        eigen_k (int): number of eigenpairs ``K`` (capped at ``n'``; default 60).
        ratio (float): share of the ``K`` pairs taken from the smallest eigenvalues (default 0.8).
        alpha (float): weight of the eigenbasis-matching loss ``L_e`` (default 0.05).
        beta (float): weight of the discrimination loss ``L_d`` (default 1e-5).
        gamma (float): weight of the orthogonality loss ``L_o`` (default 0.5).
        epochs (int): total alternating steps, ``>= 0`` (default 1500).
        epochs_u (int): ``e1``, steps on ``U'`` per cycle (default 10).
        epochs_x (int): ``e2``, steps on ``X'`` per cycle after those on ``U'`` (default 15).
        lr_eigenvectors (float): Adam learning rate for ``U'`` (default 5e-4).
        lr_features (float): Adam learning rate for ``X'`` (default 5e-4).
        init_epochs (int): steps of the feature initialization (default 200).
        init_lr (float): learning rate of the feature initialization (default 0.005).
        init_weight_decay (float): weight decay of the feature initialization (default 0.05).
        mlp_epochs (int): training epochs of the initialization MLP (default 100).
        mlp_lr (float): learning rate of the initialization MLP (default 0.05).
        mlp_weight_decay (float): weight decay of the initialization MLP (default 5e-4).
        mlp_dropout (float): dropout of the initialization MLP, in ``[0, 1)`` (default 0).
        hidden (int): hidden width of the initialization MLP (default 256).
        use_non_train_labels (bool): as in the official code, replace training nodes outside the LCC by LCC
            nodes of the same class drawn from *non-training* nodes (uses their labels); default ``False``
            averages the training nodes inside the LCC only.
        random_state (None, int or numpy Generator): the SBM, the feature initialization and the top-up
            sampling draw from ``check_random_state(random_state)`` (``icml24._random``; default None).
        cache_dir (str or path, optional): a folder to cache the eigenpairs in across processes (default ``None``:
            only this process's memory; nothing is written). See ``laplacian_eigenpairs``.
        device (str): torch device of the alternating optimization (default ``"cpu"``); the initialization
            runs on the CPU and the outputs are returned on the CPU.

    Attributes (after ``fit``):
        graph_ (Data): ``x [n', d]``, ``y [n']``, ``adj [n', n']`` dense ``A'``, and ``edge_index``/``edge_weight``
            listing its non-zero entries.
        eigenvectors_ (Tensor): ``U' [n', K]``; eigenvalues_ (Tensor): ``Lambda [K]``.
        history_ (dict): per-epoch ``eigen``, ``discrimination``, ``orthogonality`` losses (numpy arrays).
        eigen_seconds_, init_seconds_, distill_seconds_ (float): the eigendecomposition (whenever it ran; see
            ``eigen_wall_seconds_`` for this call, about 0 when cached), the feature initialization, and the
            alternating optimization.
    """

    def __init__(self, reduction_rate: float = 0.5, eigen_k: int = 60, ratio: float = 0.8, alpha: float = 0.05,
                 beta: float = 1e-5, gamma: float = 0.5, epochs: int = 1500, epochs_u: int = 10, epochs_x: int = 15,
                 lr_eigenvectors: float = 5e-4, lr_features: float = 5e-4, init_epochs: int = 200,
                 init_lr: float = 0.005, init_weight_decay: float = 0.05, mlp_epochs: int = 100, mlp_lr: float = 0.05,
                 mlp_weight_decay: float = 5e-4, mlp_dropout: float = 0.0, hidden: int = 256,
                 use_non_train_labels: bool = False, random_state=None, cache_dir: str | None = None,
                 device: str = "cpu"):
        self.reduction_rate, self.eigen_k, self.ratio = reduction_rate, eigen_k, ratio
        self.alpha, self.beta, self.gamma = alpha, beta, gamma
        self.epochs, self.epochs_u, self.epochs_x = epochs, epochs_u, epochs_x
        self.lr_eigenvectors, self.lr_features = lr_eigenvectors, lr_features
        self.init_epochs, self.init_lr, self.init_weight_decay = init_epochs, init_lr, init_weight_decay
        self.mlp_epochs, self.mlp_lr, self.mlp_weight_decay = mlp_epochs, mlp_lr, mlp_weight_decay
        self.mlp_dropout, self.hidden = mlp_dropout, hidden
        self.use_non_train_labels, self.random_state, self.cache_dir = use_non_train_labels, random_state, cache_dir
        self.device = device

    def __repr__(self) -> str:
        return (f"GDEM(reduction_rate={self.reduction_rate}, eigen_k={self.eigen_k}, ratio={self.ratio}, "
                f"alpha={self.alpha}, beta={self.beta}, gamma={self.gamma}, epochs={self.epochs}, "
                f"epochs_u={self.epochs_u}, epochs_x={self.epochs_x}, random_state={self.random_state!r}, "
                f"device={self.device!r})")

    # ------------------------------------------------------------------ inputs
    def _validate(self, data: Data) -> None:
        for name in ("x", "y", "edge_index", "train_mask"):
            if getattr(data, name, None) is None:
                raise ValueError(f"GDEM.fit needs data.{name}: pass a PyG Data with features, labels, edges and masks")
        if not 0.0 < self.reduction_rate:
            raise ValueError(f"reduction_rate must be positive, got {self.reduction_rate}")
        if not (isinstance(self.eigen_k, int) and self.eigen_k >= 1):
            raise ValueError(f"eigen_k must be a positive int (the number of eigenpairs matched), got {self.eigen_k!r}")
        if not torch.isfinite(data.x.to_dense() if data.x.layout != torch.strided else data.x).all():
            raise ValueError("data.x holds NaN or inf; GDEM's eigenbasis and features would be NaN: clean the "
                             "features first")
        for name in ("epochs", "epochs_u", "epochs_x", "init_epochs", "mlp_epochs"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"{name} must be an integer >= 0 (a number of optimization steps), got {value!r}")
        if self.epochs_u + self.epochs_x == 0:
            raise ValueError("epochs_u and epochs_x must be non-negative and not both zero")
        if not (isinstance(self.hidden, (int, np.integer)) and not isinstance(self.hidden, bool) and self.hidden >= 1):
            raise ValueError(f"hidden must be an integer >= 1 (the MLP's hidden width), got {self.hidden!r}")
        if not 0.0 <= self.ratio <= 1.0:  # NaN fails too
            raise ValueError(f"ratio must lie in [0, 1] (the share of the K eigenpairs taken from the smallest "
                             f"eigenvalues), got {self.ratio}")
        if not 0.0 <= self.mlp_dropout < 1.0:
            raise ValueError(f"mlp_dropout must lie in [0, 1), got {self.mlp_dropout}")
        for name in ("lr_eigenvectors", "lr_features", "init_lr", "mlp_lr"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite learning rate > 0, got {value}")

    def _train_rows_in_lcc(self, data: Data, lcc: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Positions in the LCC of the training nodes (optionally topped up per class, as in the code)."""
        position = np.full(data.num_nodes, -1)
        position[lcc] = np.arange(len(lcc))
        train = data.train_mask.cpu().numpy()
        rows = position[train & (position >= 0)]
        if self.use_non_train_labels:
            y = data.y.cpu().numpy()
            missing = np.bincount(y[train], minlength=int(y.max()) + 1) - np.bincount(
                y[lcc[rows]], minlength=int(y.max()) + 1)
            pool = np.flatnonzero((position >= 0) & ~train)
            extra = [rng.permutation(pool[y[pool] == c])[:m] for c, m in enumerate(missing) if m > 0]
            rows = np.concatenate([rows] + [position[e] for e in extra])
        return rows

    # ------------------------------------------------------------------ fit
    def fit(self, data: Data) -> GDEM:
        """Distil ``data`` (``x [n, d]``, ``y [n]``, ``edge_index``, ``train_mask``; ``val_mask`` selects the
        initialization MLP, the training nodes are used when it is absent)."""
        self._validate(data)
        rng = check_random_state(self.random_state)
        x, y = data.x.float(), data.y
        x = x.to_dense() if x.layout != torch.strided else x
        num_classes = int(y.max()) + 1
        train_index = data.train_mask.nonzero().view(-1)
        labels = synthetic_labels(y[train_index], self.reduction_rate, num_classes)
        n_syn = labels.shape[0]
        k = min(self.eigen_k, n_syn)

        # Step 1: eigenpairs of the real LCC (cached), K1 smallest and K2 largest
        k1 = math.ceil(k * self.ratio)
        start = time.perf_counter()
        spectrum = laplacian_eigenpairs(data.edge_index, data.num_nodes, num_smallest=k1, num_largest=k - k1,
                                        cache_dir=self.cache_dir)
        self.eigen_seconds_ = spectrum.seconds  # of the decomposition, whenever it ran (cached or not)
        self.eigen_wall_seconds_ = time.perf_counter() - start  # spent in this call (about 0 when cached)
        values, vectors = select_eigenpairs(spectrum, k, self.ratio)
        eigenvalues = torch.as_tensor(values, dtype=torch.float32)
        real_u = torch.as_tensor(vectors, dtype=torch.float32)
        x_lcc = x[torch.as_tensor(spectrum.lcc_index)]

        # Real-side targets of L_e and L_d are constants
        real_directions = subspace_directions(real_u, x_lcc)
        rows = torch.as_tensor(self._train_rows_in_lcc(data, spectrum.lcc_index, rng))
        real_means = class_embedding_means(eigenvalues, real_u, x_lcc, y[spectrum.lcc_index][rows],
                                           num_classes, rows=rows)

        # Step 2: initialization of U' (SBM eigenvectors) and X' (MLP-guided features)
        start = time.perf_counter()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(rng.integers(2**31)))
            u_init = torch.as_tensor(sbm_eigenvectors(n_syn, num_classes, rng)[:, :k], dtype=torch.float32)
            val = data.val_mask if getattr(data, "val_mask", None) is not None else data.train_mask
            val_index = val.nonzero().view(-1)
            mlp = train_feature_mlp(x[train_index], y[train_index], x[val_index], y[val_index], num_classes,
                                    hidden=self.hidden, dropout=self.mlp_dropout, epochs=self.mlp_epochs,
                                    lr=self.mlp_lr, weight_decay=self.mlp_weight_decay)
            x_init = initial_features(mlp, labels, x.shape[1], epochs=self.init_epochs, lr=self.init_lr,
                                      weight_decay=self.init_weight_decay)
        self.init_seconds_ = time.perf_counter() - start

        # Step 3: alternating Adam on U' and X'
        start = time.perf_counter()
        dev = torch.device(self.device)
        real_directions, real_means = real_directions.to(dev), real_means.to(dev)
        eigenvalues, labels_dev = eigenvalues.to(dev), labels.to(dev)
        syn_u, syn_x, history = alternate(real_directions, real_means, eigenvalues, u_init.to(dev), x_init.to(dev),
                                          labels_dev, num_classes, epochs=self.epochs, epochs_u=self.epochs_u,
                                          epochs_x=self.epochs_x, alpha=self.alpha, beta=self.beta,
                                          gamma=self.gamma, lr_eigenvectors=self.lr_eigenvectors,
                                          lr_features=self.lr_features)
        self.distill_seconds_ = time.perf_counter() - start

        self.eigenvalues_ = eigenvalues.cpu()
        self.eigenvectors_ = syn_u.cpu()
        self.history_ = {name: history[:, i].cpu().numpy() for i, name in
                         enumerate(("eigen", "discrimination", "orthogonality"))}
        self.graph_ = self.synthetic_graph(syn_x.cpu(), labels)
        self.lcc_size_ = spectrum.num_nodes
        return self

    def synthetic_graph(self, features: torch.Tensor, labels: torch.Tensor) -> Data:
        """``Data(x=X', y=y', adj=A')`` with ``A' = I - U' Lambda U'^T`` (dense, not renormalized)."""
        u = self.eigenvectors_
        adj = torch.eye(u.shape[0]) - (u * self.eigenvalues_) @ u.T
        edge_index = adj.nonzero().T
        return Data(x=features, y=labels, adj=adj, edge_index=edge_index, edge_weight=adj[edge_index[0], edge_index[1]],
                    num_nodes=u.shape[0])


def alternate(real_directions: torch.Tensor, real_means: torch.Tensor, eigenvalues: torch.Tensor,
              u_init: torch.Tensor, x_init: torch.Tensor, labels: torch.Tensor, num_classes: int, *, epochs: int,
              epochs_u: int, epochs_x: int, alpha: float, beta: float, gamma: float, lr_eigenvectors: float,
              lr_features: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """GDEM's alternating optimization (official ``agent.train``): each epoch forms
    ``L = alpha L_e + beta L_d + gamma L_o`` (Eq. 11) and steps Adam on ``U'`` for ``epochs_u`` epochs, then on
    ``X'`` for ``epochs_x``, in cycles. Returns ``(U', X', history [epochs, 3])`` (detached; history holds
    ``L_e, L_d, L_o`` per epoch)."""
    syn_u = u_init.clone().requires_grad_(True)
    syn_x = x_init.clone().requires_grad_(True)
    opt_u = torch.optim.Adam([syn_u], lr=lr_eigenvectors)
    opt_x = torch.optim.Adam([syn_x], lr=lr_features)
    history = torch.zeros(epochs, 3, device=syn_u.device)
    cycle = epochs_u + epochs_x
    for epoch in range(epochs):
        projection = syn_u.T @ syn_x  # U'^T X' [K, d], shared by L_e and L_d
        loss_e = eigenbasis_matching_loss(real_directions, F.normalize(projection, p=2, dim=1))
        syn_means = class_embedding_means(eigenvalues, syn_u, syn_x, labels, num_classes, projection=projection)
        loss_d = discrimination_loss(real_means, syn_means)
        loss_o = orthogonality_loss(syn_u)
        loss = alpha * loss_e + beta * loss_d + gamma * loss_o
        opt_u.zero_grad()
        opt_x.zero_grad()
        loss.backward()
        (opt_u if epoch % cycle < epochs_u else opt_x).step()
        history[epoch] = torch.stack([loss_e.detach(), loss_d.detach(), loss_o.detach()])
    return syn_u.detach(), syn_x.detach(), history
