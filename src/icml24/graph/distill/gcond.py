"""GCond: graph condensation by gradient matching (Jin, Zhao, Ding, Liu, Tang & Shah, ICLR 2022).

The standard graph-condensation baseline of GDEM's Table 2: synthetic features ``X'`` and a structure generator
``A' = g_phi(X')`` are learned so that the gradients a GNN receives on the synthetic graph match, class by class,
those it receives on the real training nodes, along the training trajectory of freshly initialized GNNs.
"""

from __future__ import annotations

import time

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.data import Data

from ..._estimator import Estimator
from ..._random import check_random_state
from ..._validation import FittedAttributes, check_finite, check_positive
from ..operators import normalized_adjacency
from .initialization import synthetic_labels
from .structure import PairwiseStructure, normalize_dense_adjacency


def gradient_distance(grad_syn: torch.Tensor, grad_real: torch.Tensor) -> torch.Tensor:
    """GCond's layer-wise distance (Eq. 7, official ``distance_wb``): ``sum_i (1 - cos(G_syn[i], G_real[i]))`` over
    the output units ``i`` of a weight gradient ``[in, out]``; a bias gradient (1-d) counts 0, as in the code."""
    if grad_real.dim() == 1:
        return grad_real.new_zeros(())
    syn, real = grad_syn.T, grad_real.T  # [out, in]: one row per output unit
    cosine = (syn * real).sum(-1) / (syn.norm(dim=-1) * real.norm(dim=-1) + 1e-6)
    return (1.0 - cosine).sum()


class GCond(FittedAttributes, Estimator):
    r"""Graph condensation by one-class-at-a-time gradient matching (GCond, Jin et al. 2022, Algorithm 1).

    The condensation network is SGC (``S^K X W + b``, the official ``--sgc=1`` used on CiteSeer and Cora):

    .. code-block:: text

        X' <- features of random real training nodes of each synthetic label;  phi <- random
        for t in 0 .. epochs-1:
            W, b <- fresh initialization;  Adam on (W, b) at lr_model
            for o in 0 .. outer_loop-1:
                S' = normalize(g_phi(X') + I)                           # Eq. 6
                D = sum_c  n'_c / max_c n'_c * dist(dL_real,c/dW, dL_syn,c/dW)   # Eq. 7 / 8, per class
                Adam step on phi if t mod 50 < 10 else on X'            # alternating updates
                (unless o is the last) inner_loop Adam steps on (W, b) with L_syn, (X', S') fixed

    The real gradients use the exact ``S^K X`` of the training nodes (computed once; the official code samples
    10 and 5 neighbours per hop). The synthetic labels are GDEM's (the same allocation as GCond's code).

    Args:
        reduction_rate (float): ``r``; synthetic nodes per training node (default 0.5).
        epochs (int): outer epochs, each with a fresh SGC (official CiteSeer/Cora script: 600).
        outer_loop, inner_loop (int): matching steps per epoch and SGC steps between them (20, 15 on CiteSeer).
        lr_features, lr_structure, lr_model (float): Adam rates for ``X'``, ``phi`` and the SGC (1e-4, 1e-4, 0.01).
        hops (int): ``K`` of SGC (2, the official ``--nlayers=2``).
        structure_hidden, structure_layers (int): the structure MLP (128, 3).
        structure_steps, cycle (int): ``phi`` is updated in the first ``structure_steps`` epochs of every ``cycle``
            epochs, ``X'`` in the others (10, 50).
        random_state (None, int or numpy Generator): the initial features, ``phi`` and every fresh SGC draw from
            ``check_random_state(random_state)`` (``icml24._random``; default None).

    Attributes (after ``fit``):
        graph_ (Data): ``x [n', d]``, ``y [n']``, ``adj [n', n']`` the GCN-normalized ``D^-1/2 (A' + I) D^-1/2``
            (what the official evaluation trains on), ``raw_adj`` ``A'`` in ``(0, 1)``.
        history_ (np.ndarray): ``[epochs]`` mean matching loss per epoch.
        condense_seconds_ (float): the epochs loop; seconds_ (float): the whole fit.
    """

    def __init__(self, reduction_rate: float = 0.5, epochs: int = 600, outer_loop: int = 20, inner_loop: int = 15,
                 lr_features: float = 1e-4, lr_structure: float = 1e-4, lr_model: float = 0.01, hops: int = 2,
                 structure_hidden: int = 128, structure_layers: int = 3, structure_steps: int = 10, cycle: int = 50,
                 random_state=None):
        self.reduction_rate, self.epochs = reduction_rate, epochs
        self.outer_loop, self.inner_loop = outer_loop, inner_loop
        self.lr_features, self.lr_structure, self.lr_model = lr_features, lr_structure, lr_model
        self.hops, self.structure_hidden, self.structure_layers = hops, structure_hidden, structure_layers
        self.structure_steps, self.cycle, self.random_state = structure_steps, cycle, random_state

    def __repr__(self) -> str:
        return (f"GCond(reduction_rate={self.reduction_rate}, epochs={self.epochs}, outer_loop={self.outer_loop}, "
                f"inner_loop={self.inner_loop}, lr_features={self.lr_features}, lr_structure={self.lr_structure}, "
                f"random_state={self.random_state!r})")

    def _validate(self, data: Data) -> None:
        for name in ("x", "y", "edge_index", "train_mask"):
            if getattr(data, name, None) is None:
                raise ValueError(f"GCond.fit needs data.{name}: pass a PyG Data with features, labels, edges and masks")
        check_positive("reduction_rate", self.reduction_rate)
        for name in ("epochs", "outer_loop", "hops", "cycle"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be a positive integer, got {getattr(self, name)}")
        if self.inner_loop < 0 or not 0 <= self.structure_steps <= self.cycle:
            raise ValueError("inner_loop must be >= 0 and structure_steps within [0, cycle]")
        x = data.x.to_dense() if data.x.layout != torch.strided else data.x
        check_finite("data.x", x)

    def _initial_features(self, x: torch.Tensor, train_y: np.ndarray, train_index: np.ndarray,
                          labels: np.ndarray, rng: np.random.Generator) -> torch.Tensor:
        """Features of ``n'_c`` random training nodes of each class ``c`` (official ``get_sub_adj_feat``)."""
        rows = np.empty(len(labels), dtype=np.int64)
        for c in np.unique(labels):
            slots = np.flatnonzero(labels == c)
            rows[slots] = rng.choice(train_index[train_y == c], size=len(slots), replace=False)
        return x[torch.as_tensor(rows)].clone()

    def _propagate(self, adj: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        for _ in range(self.hops):
            h = adj @ h
        return h

    def fit(self, data: Data) -> GCond:
        """Condense ``data`` (``x [n, d]``, ``y [n]``, ``edge_index``, ``train_mask``) into ``n'`` nodes."""
        self._validate(data)
        fit_start = time.perf_counter()
        rng = check_random_state(self.random_state)
        generator = torch.Generator().manual_seed(int(rng.integers(2**62)))
        x = (data.x.to_dense() if data.x.layout != torch.strided else data.x).float()
        y = data.y
        num_classes = int(y.max()) + 1
        train_index = data.train_mask.nonzero().view(-1)
        labels = synthetic_labels(y[train_index], self.reduction_rate, num_classes)
        classes = [int(c) for c in torch.unique(labels)]
        syn_rows = {c: (labels == c).nonzero().view(-1) for c in classes}
        counts = {c: len(syn_rows[c]) for c in classes}
        weight = {c: counts[c] / max(counts.values()) for c in classes}

        # Real side: S^K X of the training nodes, once (SGC's propagation has no parameters)
        adj = normalized_adjacency(data.edge_index, data.num_nodes, dtype=torch.float32)
        propagated = x
        for _ in range(self.hops):
            propagated = adj @ propagated
        real_rows = {c: train_index[y[train_index] == c] for c in classes}
        real_features = {c: propagated[real_rows[c]] for c in classes}

        syn_x = self._initial_features(x, y[train_index].numpy(), train_index.numpy(), labels.numpy(), rng)
        syn_x.requires_grad_(True)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(torch.randint(0, 2**62, (1,), generator=generator)))
            structure = PairwiseStructure(x.shape[1], self.structure_hidden, self.structure_layers)
        opt_x = torch.optim.Adam([syn_x], lr=self.lr_features)
        opt_phi = torch.optim.Adam(structure.parameters(), lr=self.lr_structure)
        bound = num_classes ** -0.5  # the official SGC layer's uniform(-1/sqrt(out), 1/sqrt(out)) initialization
        history = np.zeros(self.epochs)

        start = time.perf_counter()
        for epoch in range(self.epochs):
            w = ((torch.rand(x.shape[1], num_classes, generator=generator) * 2 - 1) * bound).requires_grad_(True)
            b = ((torch.rand(num_classes, generator=generator) * 2 - 1) * bound).requires_grad_(True)
            opt_model = torch.optim.Adam([w, b], lr=self.lr_model)
            update_structure = epoch % self.cycle < self.structure_steps
            for outer in range(self.outer_loop):
                syn_adj = normalize_dense_adjacency(structure(syn_x))  # Eq. 6
                syn_logits = self._propagate(syn_adj, syn_x @ w) + b  # S'^K (X' W): the same value, cheaper
                loss = syn_x.new_zeros(())
                for c in classes:  # Eq. 8: class by class
                    real_loss = F.cross_entropy(real_features[c] @ w + b, y[real_rows[c]])
                    grad_real = [g.detach() for g in torch.autograd.grad(real_loss, [w, b])]
                    syn_loss = F.cross_entropy(syn_logits[syn_rows[c]], labels[syn_rows[c]])
                    grad_syn = torch.autograd.grad(syn_loss, [w, b], create_graph=True)
                    loss = loss + weight[c] * sum(gradient_distance(s, r) for s, r in zip(grad_syn, grad_real))
                opt_x.zero_grad()
                opt_phi.zero_grad()
                loss.backward()
                (opt_phi if update_structure else opt_x).step()
                history[epoch] += float(loss.detach()) / (len(classes) * self.outer_loop)
                if outer == self.outer_loop - 1:
                    break
                with torch.no_grad():  # the SGC follows its training trajectory on the current synthetic graph
                    inner_h = self._propagate(normalize_dense_adjacency(structure(syn_x)), syn_x)  # after the step
                for _ in range(self.inner_loop):
                    opt_model.zero_grad()
                    F.cross_entropy(inner_h @ w + b, labels).backward()
                    opt_model.step()
        self.condense_seconds_ = time.perf_counter() - start
        self.seconds_ = time.perf_counter() - fit_start

        with torch.no_grad():
            features = syn_x.detach().clone()
            raw_adj = structure(features)
        check_finite("the condensed features (lower lr_features)", features)
        self.history_ = history
        self.graph_ = Data(x=features, y=labels, adj=normalize_dense_adjacency(raw_adj), raw_adj=raw_adj,
                           edge_index=raw_adj.nonzero().T, num_nodes=len(labels))
        return self
