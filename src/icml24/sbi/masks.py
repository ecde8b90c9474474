"""Condition masks and attention masks of the Simformer (Gloeckler et al., ICML 2024).

Convention: a graph is a boolean adjacency ``A: [num_nodes, num_nodes]`` of the simulator's DAG with
``A[i, j] = True`` when node ``j`` is a parent of node ``i`` (row ``i`` *attends to* column ``j``); the diagonal is set,
so every node attends to itself. Condition masks are boolean ``[num_nodes]`` (or ``[batch, num_nodes]``) with
``True`` for observed (conditioned) nodes.

Attention masks for the three kinds of graph (paper Sec. 3.3, App. A2.1):

* ``"dense"``: every node attends to every node (no mask);
* ``"undirected"``: the moral graph ``A | A^T | A^T A`` (parents of a common child are married);
* ``"directed"``: the minimally faithful inverse of the DAG given the condition mask (Webb et al., 2018), built by
  min-fill elimination of the unobserved nodes in reverse topological order; observed rows keep their rows of ``A``
  and with nothing observed the DAG itself is used.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from icml24._random import torch_generator

GRAPH_KINDS = ("dense", "undirected", "directed")


def as_dag(graph, num_nodes: int | None = None) -> np.ndarray:
    """Validate a parent matrix and return it as a boolean numpy array with the diagonal set."""
    adjacency = np.asarray(graph.cpu() if isinstance(graph, Tensor) else graph).astype(bool)
    if adjacency.ndim != 2 or adjacency.shape[0] != adjacency.shape[1]:
        raise ValueError(f"graph must be a square [num_nodes, num_nodes] matrix, got shape {adjacency.shape}")
    if num_nodes is not None and adjacency.shape[0] != num_nodes:
        raise ValueError(f"graph has {adjacency.shape[0]} nodes but the data has {num_nodes} variables")
    adjacency = adjacency | np.eye(adjacency.shape[0], dtype=bool)
    off_diagonal = adjacency & ~np.eye(adjacency.shape[0], dtype=bool)
    # a DAG's strict part is nilpotent: some power of it vanishes
    reach = off_diagonal.astype(np.int64)
    for _ in range(adjacency.shape[0]):
        if not reach.any():
            break
        reach = np.minimum(reach @ off_diagonal.astype(np.int64), 1)
    if reach.any():
        raise ValueError("graph has a directed cycle; pass the simulator's DAG with A[i, j] = True for parent j of i")
    return adjacency


def moralize(adjacency: np.ndarray) -> np.ndarray:
    """Moral graph ``A | A^T | A^T A``: symmetric, with parents of a common child connected."""
    adjacency = np.asarray(adjacency, dtype=bool)
    married = (adjacency.T.astype(np.int64) @ adjacency.astype(np.int64)) > 0
    return adjacency | adjacency.T | married


def faithful_inverse_mask(adjacency: np.ndarray, condition_mask: np.ndarray) -> np.ndarray:
    """Minimally faithful attention mask of a DAG given observed nodes (min-fill elimination, Webb et al. 2018).

    Unobserved nodes are eliminated from the moral graph in reverse topological order (a node is eligible once all
    of its unobserved children are eliminated), choosing the eligible node that adds the fewest fill-in edges (ties:
    most already-eliminated parents, then the highest index). An eliminated node attends to its not-yet-eliminated
    neighbours (which include the observed ones); its neighbours are then married. Observed rows keep ``A``'s rows.

    Args:
        adjacency: ``[n, n]`` boolean parent matrix with diagonal.
        condition_mask: ``[n]`` boolean, ``True`` = observed.

    Returns:
        ``[n, n]`` boolean attention mask (row attends to column).
    """
    adjacency = np.asarray(adjacency, dtype=bool)
    observed = np.asarray(condition_mask, dtype=bool)
    n = adjacency.shape[0]
    if not observed.any():
        return adjacency.copy()
    strict = adjacency & ~np.eye(n, dtype=bool)
    interaction = moralize(adjacency)
    inverse = np.zeros((n, n), dtype=bool)
    eliminated = np.zeros(n, dtype=bool)
    for _ in range(int((~observed).sum())):  # one elimination per unobserved node (n is small: the variables)
        # eligible: unobserved, not eliminated, no unobserved child still waiting (strict[:, j] lists j's children)
        pending_children = (strict & ~(observed | eliminated)[:, None]).any(axis=0)
        eligible = ~observed & ~eliminated & ~pending_children
        neighbours = interaction & ~eliminated[None, :]
        fill = np.where(eligible, neighbours.sum(axis=1), n + 1)
        marked_parents = (strict & eliminated[None, :]).sum(axis=1)
        score = np.where(fill == fill.min(), -marked_parents, n + 1)
        node = n - 1 - int(np.argmin(score[::-1]))
        clique = neighbours[node]
        interaction = interaction | (clique[:, None] & clique[None, :])
        inverse[node] = clique
        eliminated[node] = True
    inverse |= np.eye(n, dtype=bool)
    inverse[observed] = adjacency[observed]
    return inverse


def attention_mask(graph: np.ndarray | None, kind: str, condition_mask: np.ndarray | None = None) -> np.ndarray | None:
    """Attention mask ``[n, n]`` (row attends to column) for one condition mask, or ``None`` for dense attention."""
    if kind not in GRAPH_KINDS:
        raise ValueError(f"unknown graph kind {kind!r}; use one of {GRAPH_KINDS}")
    if kind == "dense" or graph is None:
        return None
    if kind == "undirected":
        return moralize(graph)
    if condition_mask is None:
        condition_mask = np.zeros(graph.shape[0], dtype=bool)
    return faithful_inverse_mask(graph, condition_mask)


def batch_attention_masks(graph: np.ndarray | None, kind: str, condition_masks: Tensor) -> Tensor | None:
    """Attention masks ``[batch, n, n]`` for condition masks ``[batch, n]`` (computed once per unique mask)."""
    if kind == "dense" or graph is None:
        return None
    if kind == "undirected":
        return torch.as_tensor(moralize(graph), device=condition_masks.device)
    unique, inverse_index = torch.unique(condition_masks.bool(), dim=0, return_inverse=True)
    masks = np.stack([faithful_inverse_mask(graph, m) for m in unique.cpu().numpy()])
    return torch.as_tensor(masks, device=condition_masks.device)[inverse_index]


def structured_condition_masks(batch_size: int, num_theta: int, num_x: int, random_state=None,
                               probabilities=(0.2, 0.2, 0.2, 0.2, 0.2), bernoulli_rates=(0.3, 0.7)) -> Tensor:
    """The Simformer's "structured random" condition masks ``[batch_size, num_theta + num_x]`` (bool).

    Each row is one of five candidates, chosen with ``probabilities``: joint (nothing observed), posterior (x
    observed), likelihood (theta observed), and two Bernoulli masks with rates ``bernoulli_rates`` that are drawn once
    per batch. All-observed rows are reset to all-unobserved. ``random_state``: None, an int, a numpy or torch
    Generator (``icml24._random.torch_generator``; a torch Generator is used as is).
    """
    generator = torch_generator(random_state)
    num_nodes = num_theta + num_x
    posterior = torch.cat([torch.zeros(num_theta, dtype=torch.bool), torch.ones(num_x, dtype=torch.bool)])
    rates = torch.tensor(bernoulli_rates, dtype=torch.float32)[:, None].expand(-1, num_nodes)
    candidates = torch.cat([torch.zeros(1, num_nodes, dtype=torch.bool), posterior[None], ~posterior[None],
                            torch.bernoulli(rates, generator=generator).bool()])
    choice = torch.multinomial(torch.tensor(probabilities, dtype=torch.float32), batch_size, replacement=True,
                               generator=generator)
    masks = candidates[choice]
    return masks & ~masks.all(dim=1, keepdim=True)


def check_mask_mixture(mask_mixture=(0.2, 0.2, 0.2, 0.2, 0.2), bernoulli_rates=(0.3, 0.7)) -> tuple[tuple, tuple]:
    """Validate the structured-mask weights (joint, posterior, likelihood, Bernoulli 1, Bernoulli 2) and the two
    Bernoulli rates; returns them as tuples, the weights normalized. The default is the official mixture.

    A conditional that mixes observed theta and x (e.g. ``p(theta_2 | theta_1, x)`` of a 3-variable task) is trained
    only through the two Bernoulli masks: 0.2 (0.3 * 0.7 * 0.3) + 0.2 (0.7 * 0.3 * 0.7) = 4.2% of the rows. Measured
    on ``x = theta_1 theta_2 + 0.1 eps`` (exact mean 0.589): 0.49 after 3,000 steps of batch 256, 0.54 after 6,000,
    0.50 with the Bernoulli masks alone (10.5% of rows) and 0.58 when only that mask is trained
    (``condition_masks=[[1, 0, 1]]``): such conditionals need long training (the paper's rule) or their own masks.
    """
    mixture, rates = np.asarray(mask_mixture, dtype=float), np.asarray(bernoulli_rates, dtype=float)
    if mixture.shape != (5,) or (mixture < 0).any() or mixture.sum() <= 0:
        raise ValueError(f"mask_mixture needs 5 weights >= 0 (joint, posterior, likelihood, Bernoulli 1, Bernoulli 2) "
                         f"with a positive sum, got {mask_mixture}")
    if rates.shape != (2,) or not ((rates > 0) & (rates < 1)).all():
        raise ValueError(f"bernoulli_rates needs 2 rates in (0, 1), got {bernoulli_rates}")
    return tuple(float(w) for w in mixture / mixture.sum()), tuple(float(r) for r in rates)


CONDITION_MASK_KINDS = ("structured", "beta_bernoulli", "joint", "posterior", "likelihood")


def check_condition_masks(condition_masks):
    """A name from ``CONDITION_MASK_KINDS`` (the official ``condition_mask_fn`` options), or a boolean ``[k, n]`` array
    of fixed masks (rows drawn uniformly during training); returns it validated (an array as ``numpy`` bool)."""
    if isinstance(condition_masks, str):
        if condition_masks not in CONDITION_MASK_KINDS:
            raise ValueError(f"condition_masks must be one of {CONDITION_MASK_KINDS} or a [k, n] boolean array of "
                             f"masks, got {condition_masks!r}")
        return condition_masks
    masks = np.atleast_2d(np.asarray(condition_masks))
    if masks.ndim != 2 or not np.isin(masks, (0, 1)).all() or masks.astype(bool).all(axis=1).any():
        raise ValueError("fixed condition_masks need a [k, n] array of 0/1 (True = observed) with at least one free "
                         "entry per row")
    return masks.astype(bool)


def sample_condition_masks(kind, batch_size: int, num_theta: int, num_x: int, random_state=None,
                           mask_mixture=(0.2, 0.2, 0.2, 0.2, 0.2), bernoulli_rates=(0.3, 0.7)) -> Tensor:
    """Training condition masks ``[batch_size, num_theta + num_x]`` of a kind accepted by ``check_condition_masks``
    (``random_state`` as in ``structured_condition_masks``)."""
    generator = torch_generator(random_state)
    n = num_theta + num_x
    if isinstance(kind, str) and kind == "structured":
        return structured_condition_masks(batch_size, num_theta, num_x, generator, mask_mixture, bernoulli_rates)
    if isinstance(kind, str) and kind == "beta_bernoulli":
        return beta_bernoulli_condition_masks(batch_size, n, generator)
    theta = np.arange(n) < num_theta
    fixed = {"joint": np.zeros((1, n), bool), "posterior": ~theta[None], "likelihood": theta[None]}.get(kind, kind) \
        if isinstance(kind, str) else kind
    if fixed.shape[1] != n:
        raise ValueError(f"condition_masks have {fixed.shape[1]} columns but the data have {n} variables")
    fixed = torch.as_tensor(fixed)
    if fixed.shape[0] == 1:
        return fixed.expand(batch_size, -1).clone()
    return fixed[torch.randint(0, fixed.shape[0], (batch_size,), generator=generator)]


def beta_bernoulli_condition_masks(batch_size: int, num_nodes: int, random_state=None,
                                   alpha: float = 1.0, beta: float = 4.0) -> Tensor:
    """Alternative masks: per row, rate ``p ~ Beta(alpha, beta)`` then ``Bernoulli(p)`` per node; all-ones reset."""
    # torch's Beta sampler takes no generator: draw through numpy, seeded from the torch generator (reproducible)
    generator = torch_generator(random_state)
    seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator))
    rate = torch.as_tensor(np.random.default_rng(seed).beta(alpha, beta, size=(batch_size, 1)), dtype=torch.float32)
    masks = torch.rand(batch_size, num_nodes, generator=generator) < rate
    return masks & ~masks.all(dim=1, keepdim=True)

