"""Exhaustive checks of the injection certificates on tiny graphs (soundness tests for ``icml24.graph.certify``).

- ``enumerate_injections``: every binary injection ``(A1, A2)`` of ``rho`` nodes with at most ``tau`` edges each.
- ``bqclp_conditions`` / ``bqclp_optimum``: the exact binary program the LPs relax (``LP* >= BQCLP*``).
- ``exact_smoothed_probabilities``: the exact class probabilities of a node-aware bi-smoothed classifier, by
  summing over every edge/node deletion pattern (``2^(E + N)`` graphs; tiny graphs only).
- ``attack_all_injections``: exact smoothed predictions under every injection; which targets flip.

A base classifier here is a function ``f(adj) -> labels``: ``adj`` is a boolean ``[P, N, N]`` batch of perturbed
graphs over the ``n`` existing nodes followed by the ``rho`` injected ones, and it returns ``[P, N]`` labels.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

Classifier = Callable[[np.ndarray], np.ndarray]


def enumerate_injections(num_nodes: int, rho: int, tau: int,
                         max_count: int = 200_000) -> tuple[np.ndarray, np.ndarray]:
    """All ``(A1 [S, rho, n], A2 [S, rho, rho])``: ``A2`` symmetric with zero diagonal, row sums of ``[A1 A2]``
    at most ``tau``."""
    rows = [np.zeros(num_nodes, dtype=np.int8)]
    for size in range(1, min(tau, num_nodes) + 1):
        for cols in itertools.combinations(range(num_nodes), size):
            row = np.zeros(num_nodes, dtype=np.int8)
            row[list(cols)] = 1
            rows.append(row)
    rows = np.stack(rows)
    pairs = list(itertools.combinations(range(rho), 2))
    count = rows.shape[0] ** rho * 2 ** len(pairs)
    if count > max_count:
        raise ValueError(f"{count} candidate injections exceed max_count={max_count}; use a smaller graph or budget")
    row_choice = np.array(list(itertools.product(range(rows.shape[0]), repeat=rho))).reshape(-1, rho)
    a1 = rows[row_choice]  # [R, rho, n]
    inner = np.array(list(itertools.product((0, 1), repeat=len(pairs))), dtype=np.int8).reshape(2 ** len(pairs), -1)
    a2 = np.zeros((inner.shape[0], rho, rho), dtype=np.int8)
    for k, (i, j) in enumerate(pairs):
        a2[:, i, j] = a2[:, j, i] = inner[:, k]
    a1 = np.repeat(a1, a2.shape[0], axis=0)
    a2 = np.tile(a2, (row_choice.shape[0], 1, 1))
    ok = (a1.sum(2) + a2.sum(2) <= tau).all(1)
    return a1[ok], a2[ok]


def bqclp_conditions(adj: np.ndarray, targets, weights, a1: np.ndarray, a2: np.ndarray, c1: float,
                     c2: float, c3: float | None = None) -> np.ndarray:
    """``[S, |T|]`` booleans: target ``v`` satisfies the flip condition ``w_v <= c1 k1 + c2 k2 (+ c3 k3)`` under
    injection s (``k3 = eᵀ A1 Adj₃ e_v``, the 3-hop term of ``collective``, only when ``c3`` is given)."""
    adj = np.asarray(adj, dtype=float)
    a1f, a2f = a1.astype(float), a2.astype(float)
    one_hop = a1f.sum(1)  # eᵀ A1 e_v
    two_hop = (a1f @ adj).sum(1) + np.einsum("sij,sjv->sv", a2f, a1f)  # eᵀ (A1 Adj + A2 A1) e_v
    charge = c1 * one_hop + c2 * two_hop
    if c3 is not None:
        paths3 = adj @ adj
        np.fill_diagonal(paths3, 0.0)
        charge = charge + c3 * (a1f @ paths3).sum(1)  # eᵀ A1 Adj₃ e_v
    targets = np.asarray(targets)
    return np.asarray(weights)[None, :] <= charge[:, targets] + 1e-12


def bqclp_optimum(adj, targets, weights, rho: int, tau: int, c1: float, c2: float, c3: float | None = None) -> int:
    """Exact optimum of the BQCLP by enumeration: the most targets whose flip condition one injection meets."""
    a1, a2 = enumerate_injections(np.asarray(adj).shape[0], rho, tau)
    return int(bqclp_conditions(adj, targets, weights, a1, a2, c1, c2, c3).sum(1).max())


def _graph_with_injection(adj: np.ndarray, a1: np.ndarray, a2: np.ndarray) -> np.ndarray:
    n, rho = adj.shape[0], a1.shape[0]
    full = np.zeros((n + rho, n + rho), dtype=bool)
    full[:n, :n] = adj
    full[n:, :n] = a1
    full[:n, n:] = a1.T
    full[n:, n:] = a2
    return full


def exact_smoothed_probabilities(classifier: Classifier, adj: np.ndarray, p_e: float, p_n: float, num_classes: int,
                                 max_patterns: int = 1 << 20) -> np.ndarray:
    """Exact ``P(f(φ(G))_v = c)`` ``[N, C]``: every edge deleted w.p. ``p_e``, every node w.p. ``p_n`` (independent).

    Only nodes with at least one edge are enumerated: a deleted node is classified like an isolated one.
    """
    adj = np.asarray(adj, dtype=bool)
    num = adj.shape[0]
    src, dst = np.nonzero(np.triu(adj, 1))
    nodes = np.flatnonzero(adj.any(1))
    bits = src.size + nodes.size
    if (1 << bits) > max_patterns:
        raise ValueError(f"2^{bits} deletion patterns exceed max_patterns={max_patterns}; use a smaller graph")
    codes = np.arange(1 << bits, dtype=np.int64)
    keep = ((codes[:, None] >> np.arange(bits)) & 1).astype(bool)  # [P, bits]
    keep_edge, keep_node = keep[:, : src.size], np.ones((codes.size, num), dtype=bool)
    keep_node[:, nodes] = keep[:, src.size :]
    alive = keep_edge & keep_node[:, src] & keep_node[:, dst]
    weight = np.prod(np.where(keep_edge, 1 - p_e, p_e), axis=1) * np.prod(
        np.where(keep[:, src.size :], 1 - p_n, p_n), axis=1)
    perturbed = np.zeros((codes.size, num, num), dtype=bool)
    perturbed[:, src, dst] = alive
    perturbed[:, dst, src] = alive
    labels = np.asarray(classifier(perturbed))  # [P, N]
    probs = np.zeros((num, num_classes))
    for c in range(num_classes):
        probs[:, c] = weight @ (labels == c)
    return probs


def attack_all_injections(classifier: Classifier, adj: np.ndarray, targets, rho: int, tau: int, p_e: float, p_n: float,
                          num_classes: int) -> dict[str, np.ndarray]:
    """Exact smoothed predictions of ``targets`` on the clean graph and under every injection.

    Returns a dict with ``clean_probs`` ``[|T|, C]`` (injected nodes present but isolated), ``a1``, ``a2``
    (the injections) and ``flipped`` ``[S, |T|]``: the clean top class is no longer strictly the most likely.
    """
    adj = np.asarray(adj, dtype=bool)
    n = adj.shape[0]
    targets = np.asarray(targets)
    a1, a2 = enumerate_injections(n, rho, tau)
    zero1, zero2 = np.zeros((rho, n), dtype=bool), np.zeros((rho, rho), dtype=bool)
    clean = exact_smoothed_probabilities(classifier, _graph_with_injection(adj, zero1, zero2), p_e, p_n,
                                         num_classes)[targets]
    top = clean.argmax(1)
    flipped = np.zeros((a1.shape[0], targets.size), dtype=bool)
    for s in range(a1.shape[0]):
        probs = exact_smoothed_probabilities(classifier, _graph_with_injection(adj, a1[s], a2[s]), p_e, p_n,
                                             num_classes)[targets]
        top_prob = probs[np.arange(targets.size), top]
        others = probs.copy()
        others[np.arange(targets.size), top] = -np.inf
        flipped[s] = others.max(1) >= top_prob
    return {"clean_probs": clean, "a1": a1, "a2": a2, "flipped": flipped}


def top_two_probabilities(probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(p_A, p_B)``: the largest and the second largest class probability per row."""
    ordered = np.sort(probs, axis=1)
    return ordered[:, -1], ordered[:, -2]
