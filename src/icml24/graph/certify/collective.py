"""Collective certificate against graph injection attacks (Lai, Pan, Chen, Yuan, Zhou, ICML 2024).

Targets ``T`` (correctly classified nodes with smoothing bounds ``p̲_A``, ``p̄_B``); the attacker injects ``rho``
nodes with at most ``tau`` edges each: ``A1 ∈ {0,1}^{rho×n}`` (injected→existing) and symmetric
``A2 ∈ {0,1}^{rho×rho}`` (injected↔injected). Node ``v`` can be flipped only if (with ``p̄ = 1 - p``)

    w_v m_v <= c1 · eᵀA1 e_v + c2 · eᵀ(A1 Adj + A2 A1) e_v,
    w_v = -ln(1 - (p̲_A - p̄_B)/2),   c1 = -ln(1 - p̄_e p̄_n),   c2 = -ln(1 - (p̄_e p̄_n)²).

The BQCLP ``M = max Σ_{v∈T} m_v`` s.t. the flip conditions and ``A1 e + A2 e <= tau`` bounds how many targets
can be flipped at once; the certified ratio is ``(#correct in T - ⌈M*⌉) / |T|`` for any upper bound ``M*``.

- ``lp1``: all variables in [0, 1]; ``Q_v[i, j] = A2[i, j] A1[j, v]`` by McCormick (``|T| rho²`` variables).
- ``lp2``: ``z = A2 e ∈ [0, U]``, ``U = min(tau, rho)``, so ``eᵀA2A1e_v = Σ_j z_j A1[j, v]``; ``Q[v, j] = z_j A1[j, v]``
  by McCormick ``Q <= U A1ᵀ, Q <= z, U A1ᵀ + z - Q <= U`` (``|T| rho`` products).
- ``lp2_reduced`` (exact, ours): LP2 is invariant under permuting injected nodes and convex, so averaging an
  optimum over permutations gives a symmetric optimum ``A1[j, u] = a_u, z_j = z, Q[v, j] = q_v``; LP2 collapses to
  ``|N[T]| + 1 + 2|T|`` variables with the same optimum.

**Soundness condition (receptive field).** The flip condition charges every way an injected node can reach ``v``
in the smoothed graph; it is sound iff the base classifier's prediction at ``v`` cannot change unless an injected
node lies within ``hops`` surviving edges of ``v``. The paper's condition is ``hops = 2``: right for a 2-layer GCN
with row normalization ``D^-1 (A + I)`` and for a 2-layer GAT (softmax over the receiver's neighbours), not for the
2-layer GCN with symmetric normalization ``D^-1/2 (A + I) D^-1/2`` (the paper's and the library's default): its
output at ``v`` reads the degrees of the nodes 2 hops away, so an injected node 3 hops away changes it. ``c3`` adds

    + c3 · eᵀ A1 Adj₃ e_v,    c3 = -ln(1 - (p̄_e p̄_n)³),    Adj₃ = Adj² with a zero diagonal,

which makes the certificate sound for 3-hop receptive fields (``hops=3`` in ``CollectiveCertificate``). Why:
any surviving path of length ``<= 3`` from an injected node to ``v`` ends in a suffix that starts at its last
injected node and has only existing nodes inside; such a suffix is an injected edge to ``v`` (``A1``), to a neighbour
(``A1 Adj``) or to a node two edges away (``A1 Adj₃``: injected node ``i``, edge ``i–u``, node ``u``, edge ``u–w``,
node ``w``, edge ``w–v`` all survive, probability ``(p̄_e p̄_n)³``). The union of these events contains every
event in which the injection can reach ``v``; the paper's product (Harris) bound over paths then applies unchanged.
The walks ``i–v–w–v`` (the diagonal of ``Adj²``) contain the 1-hop path ``i–v`` and are not charged again; the
paper's ``A2 A1`` term is kept as published (it is implied by the ``A1`` term, so keeping it is conservative).

Columns of ``A1`` farther than ``hops - 1`` edges from every target only consume degree budget, so every LP keeps
the columns ``N[T]`` (``N²[T]`` when ``c3`` is given; ``restrict=True``, exact); ``restrict=False`` builds the
paper's full ``rho × n`` matrix.
All LPs are solved with HiGHS (``scipy.optimize.linprog``; interior point with crossover for the large LP1/LP2,
dual simplex for the small reduced LP), replacing the official MOSEK/Gurobi.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from ..._estimator import Estimator
from ..._validation import FittedAttributes
from .reduction import dominated, merge_identical

RELAXATIONS = ("lp2_reduced", "lp2", "lp1")
HOPS = (2, 3)


@dataclass
class LPSolution:
    """Optimum ``value`` (M*), HiGHS ``status`` message, seconds to build and to solve, problem size."""

    value: float
    status: str
    build_seconds: float
    solve_seconds: float
    num_variables: int
    num_constraints: int


_ROUNDING = 1e-9  # bounds computed in floating point overshoot [0, 1] by a few ulps (1 + 2.2e-16 seen): clipped


def _probabilities(name: str, values) -> np.ndarray:
    """``values`` as a float array of probabilities, or a ValueError naming ``name`` (NaN/inf, or outside [0, 1]
    by more than rounding; a rounding overshoot is clipped)."""
    values = np.asarray(values, dtype=float)
    outside = ~((values >= -_ROUNDING) & (values <= 1 + _ROUNDING))  # NaN compares false: outside too
    if outside.any():
        first = float(values[outside].flat[0])
        raise ValueError(f"{name} holds probabilities and must lie in [0, 1] (finite), got {first}")
    return np.clip(values, 0.0, 1.0)


def flip_weights(p_lower, p_upper) -> np.ndarray:
    """``w_v = -ln(1 - (p̲_A - p̄_B)/2)``; ``w_v <= 0`` means the node is never certified (free to flip).

    ``p_lower`` (``p̲_A``) and ``p_upper`` (``p̄_B``) are probability bounds: finite, in ``[0, 1]``."""
    p_lower, p_upper = _probabilities("p_lower", p_lower), _probabilities("p_upper", p_upper)
    margin = p_lower - p_upper
    return -np.log1p(-margin / 2.0)


def path_costs(p_e: float, p_n: float) -> tuple[float, float]:
    """``(c1, c2)``: log-survival cost of one injected 1-hop edge and one injected 2-hop path."""
    return path_cost(1, p_e, p_n), path_cost(2, p_e, p_n)


def path_cost(length: int, p_e: float, p_n: float) -> float:
    """``c_L = -ln(1 - (p̄_e p̄_n)^L)``: an injected path of ``L`` edges survives iff its ``L`` edges and its ``L``
    nodes other than the target do."""
    if not (0.0 <= p_e <= 1.0 and 0.0 <= p_n <= 1.0):
        raise ValueError(f"p_e and p_n must lie in [0, 1], got p_e={p_e}, p_n={p_n}")
    if length < 1:
        raise ValueError(f"path length must be >= 1, got {length}")
    return -math.log1p(-(((1.0 - p_e) * (1.0 - p_n)) ** length))


def three_hop_paths(adj, rows=None) -> sp.csr_matrix:
    """``Adj₃[v, u]``: number of paths ``v–w–u`` with ``u != v`` (``Adj²`` without its diagonal); with ``rows``
    only the rows ``v ∈ rows`` (``[len(rows), n]``, one sparse product ``Adj[rows] Adj``)."""
    adj = sp.csr_matrix(adj, dtype=float)
    rows = np.arange(adj.shape[0]) if rows is None else np.asarray(rows, dtype=np.int64)
    paths = (adj[rows] @ adj).tocoo()
    off_diagonal = paths.col != rows[paths.row]
    return sp.csr_matrix((paths.data[off_diagonal], (paths.row[off_diagonal], paths.col[off_diagonal])),
                         shape=paths.shape)


def _prepare(adj, targets, weights, num_nodes_hint=None):
    adj = sp.csr_matrix(adj, dtype=float)
    if adj.shape[0] != adj.shape[1]:
        raise ValueError(f"adj must be square [n, n], got {adj.shape}")
    adj.setdiag(0)
    adj.eliminate_zeros()
    adj.data[:] = 1.0
    targets = np.asarray(targets, dtype=np.int64)
    if targets.ndim != 1 or np.unique(targets).size != targets.size:
        raise ValueError("targets must be a 1-D array of distinct node indices")
    weights = np.asarray(weights, dtype=float)
    if weights.shape != targets.shape:
        raise ValueError(f"weights must give one flip weight per target: {weights.shape} vs {targets.shape}")
    return adj, targets, weights


def _columns(adj, targets, restrict: bool, paths3=None) -> np.ndarray:
    """Existing nodes an injected edge may usefully reach: N[T], with ``paths3`` N²[T] (or all nodes)."""
    if not restrict:
        return np.arange(adj.shape[0])
    cols = np.union1d(targets, adj[targets].indices)
    return cols if paths3 is None else np.union1d(cols, paths3.indices)


def _three_hop_block(paths3, cols):
    """``Adj₃[T, cols]`` as COO, or ``None`` when the 3-hop term is off."""
    return None if paths3 is None else paths3[:, cols].tocoo()


def _paths3(adj, targets, c3):
    """``Adj₃[T]`` (``[|T|, n]``), or ``None`` when the 3-hop term is off (``c3=None``)."""
    if c3 is None:
        return None
    if not c3 >= 0:
        raise ValueError(f"c3 must be a non-negative path cost (see path_cost), got {c3}")
    return three_hop_paths(adj, targets)


def _solve(cost, a_ub, b_ub, bounds, build_start: float, time_limit: float | None, method: str,
           presolve: bool = True) -> LPSolution:
    build = time.perf_counter() - build_start
    start = time.perf_counter()
    options = {"presolve": presolve}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    result = linprog(cost, A_ub=a_ub.tocsr(), b_ub=b_ub, bounds=bounds, method=method, options=options)
    solve = time.perf_counter() - start
    if result.status != 0:
        raise RuntimeError(f"HiGHS did not solve the LP: {result.message}")
    return LPSolution(float(-result.fun), result.message, build, solve, a_ub.shape[1], a_ub.shape[0])


def _rows(entries):
    """Stack ``(rows, cols, vals)`` triplets into a COO matrix of ``num_rows`` rows."""
    rows = np.concatenate([e[0] for e in entries])
    cols = np.concatenate([e[1] for e in entries])
    vals = np.concatenate([e[2] for e in entries])
    return rows, cols, vals


def _m_bounds(num_targets: int, fixed) -> np.ndarray:
    upper = np.ones(num_targets)
    if fixed is not None:
        fixed = np.asarray(fixed, dtype=bool)
        if fixed.shape != (num_targets,):
            raise ValueError(f"certified_mask must be a boolean per target, shape ({num_targets},)")
        upper[fixed] = 0.0
    return upper


def lp2_reduced(adj, targets, weights, rho: int, tau: int, c1: float, c2: float, certified_mask=None,
                time_limit: float | None = None, method: str = "highs-ds", c3: float | None = None,
                reduce: bool = True) -> LPSolution:
    """Symmetry-reduced LP2: variables ``[m (t), a (k <= |N[T]|), z, q (t)]``; same optimum as ``lp2``.

    ``certified_mask`` (bool per target) fixes ``m_v = 0`` for nodes already certified by another sound test.
    ``c3`` (optional) adds the 3-hop term ``c3 Σ_u Adj₃[v, u] a_u`` (module docstring; ``k <= |N²[T]|`` then).
    ``reduce`` (default True) keeps the optimum and shrinks the LP: identical ``a`` columns merge and dominated
    ones drop (``reduction``), and the McCormick lower bounds ``q_v >= U a_v + z - U``
    are left out (``q_v`` only helps the attacker, so some optimum has ``q_v = min(U a_v, z)``, which meets them);
    the small LP then solves by dual simplex without presolve. ``reduce=False`` builds the full reduced LP.
    """
    start = time.perf_counter()
    adj, targets, weights = _prepare(adj, targets, weights)
    _check_budget(rho, tau)
    paths3 = _paths3(adj, targets, c3)
    cols = _columns(adj, targets, True, paths3)
    t, big_u = targets.size, float(min(tau, rho))
    col_of = np.full(adj.shape[0], -1)
    col_of[cols] = np.arange(cols.size)
    own = col_of[targets]
    # flip coefficients of one injected node's edges: F[v, u] = c1 [u = v] + c2 Adj[v, u] + c3 Adj₃[v, u]
    coef = c2 * adj[targets][:, cols] + sp.csr_matrix((np.full(t, c1), (np.arange(t), own)), shape=(t, cols.size))
    if paths3 is not None:
        coef = coef + c3 * paths3[:, cols]
    coef, capacity = sp.csc_matrix(coef), np.ones(cols.size)
    if reduce:
        protected = np.zeros(cols.size, dtype=bool)
        protected[own] = True  # a target's own column also loosens q_v <= U a_v: never merged or dropped
        kept, multiplicity = merge_identical(coef, protected)
        capacity = np.minimum(multiplicity, tau)
        keep = ~dominated(coef[:, kept], capacity, protected[kept], tau)
        kept, capacity = kept[keep], capacity[keep]
        own, coef = np.searchsorted(kept, own), coef[:, kept]
    k = coef.shape[1]
    m_at, a_at, z_at, q_at = 0, t, t + k, t + k + 1
    tt = np.arange(t)
    flip = coef.tocoo()
    entries = [
        # degree: Σ_u a_u + z <= tau
        (np.zeros(k + 1, int), np.r_[a_at + np.arange(k), z_at], np.ones(k + 1)),
        # McCormick: q_v - U a_v <= 0 ; q_v - z <= 0
        (np.r_[1 + tt, 1 + tt], np.r_[q_at + tt, a_at + own], np.r_[np.ones(t), -big_u * np.ones(t)]),
        (np.r_[1 + t + tt, 1 + t + tt], np.r_[q_at + tt, np.full(t, z_at)], np.r_[np.ones(t), -np.ones(t)]),
        # flip: w_v m_v - rho (Σ_u F[v, u] a_u + c2 q_v) <= 0
        (np.r_[1 + 2 * t + tt, 1 + 2 * t + tt, 1 + 2 * t + flip.row], np.r_[m_at + tt, q_at + tt, a_at + flip.col],
         np.r_[weights, -rho * c2 * np.ones(t), -rho * flip.data]),
    ]
    num_rows = 1 + 3 * t
    if not reduce:  # McCormick: U a_v + z - q_v <= U
        entries.append((np.r_[num_rows + tt, num_rows + tt, num_rows + tt], np.r_[a_at + own, np.full(t, z_at),
                        q_at + tt], np.r_[big_u * np.ones(t), np.ones(t), -np.ones(t)]))
        num_rows += t
    rows, cvars, vals = _rows(entries)
    num_vars = q_at + t
    a_ub = sp.coo_matrix((vals, (rows, cvars)), shape=(num_rows, num_vars))
    b_ub = np.r_[tau, np.zeros(3 * t), big_u * np.ones(num_rows - 1 - 3 * t)]
    upper = np.r_[_m_bounds(t, certified_mask), capacity, big_u, big_u * np.ones(t)]
    cost = np.r_[-np.ones(t), np.zeros(num_vars - t)]
    return _solve(cost, a_ub, b_ub, np.c_[np.zeros(num_vars), upper], start, time_limit, method, presolve=not reduce)


def lp2(adj, targets, weights, rho: int, tau: int, c1: float, c2: float, certified_mask=None, restrict: bool = True,
        time_limit: float | None = None, method: str = "highs-ipm", c3: float | None = None) -> LPSolution:
    """The paper's LP2: variables ``[m (t), A1 (rho × k, row-major), z (rho), Q (t × rho, row-major)]``.

    ``c3`` (optional) adds the 3-hop term ``c3 Σ_u Adj₃[v, u] Σ_j A1[j, u]`` (module docstring).
    """
    start = time.perf_counter()
    adj, targets, weights = _prepare(adj, targets, weights)
    _check_budget(rho, tau)
    paths3 = _paths3(adj, targets, c3)
    cols = _columns(adj, targets, restrict, paths3)
    t, k, big_u = targets.size, cols.size, float(min(tau, rho))
    col_of = np.full(adj.shape[0], -1)
    col_of[cols] = np.arange(k)
    m_at, a_at, z_at, q_at = 0, t, t + rho * k, t + rho * k + rho
    jj = np.arange(rho)
    # A1[j, c] -> a_at + j * k + c ; Q[v, j] -> q_at + v * rho + j
    vv, jg = np.repeat(np.arange(t), rho), np.tile(jj, t)  # all (target, injected) pairs
    a_vj = a_at + jg * k + col_of[targets][vv]
    q_vj = q_at + vv * rho + jg
    tr = t * rho
    pair = np.arange(tr)
    sub = adj[targets][:, cols].tocoo()
    sub_v, sub_j = np.repeat(sub.row, rho), np.tile(jj, sub.nnz)
    sub_c, sub_w = np.repeat(sub.col, rho), np.repeat(sub.data, rho)
    flip0 = rho + 3 * tr
    entries = [
        # degree: Σ_c A1[j, c] + z_j <= tau
        (np.r_[np.repeat(jj, k), jj], np.r_[a_at + np.arange(rho * k), z_at + jj], np.ones(rho * k + rho)),
        # McCormick on Q[v, j] = z_j A1[j, v]
        (np.r_[rho + pair, rho + pair], np.r_[q_vj, a_vj], np.r_[np.ones(tr), -big_u * np.ones(tr)]),
        (np.r_[rho + tr + pair, rho + tr + pair], np.r_[q_vj, z_at + jg], np.r_[np.ones(tr), -np.ones(tr)]),
        (np.r_[rho + 2 * tr + pair, rho + 2 * tr + pair, rho + 2 * tr + pair], np.r_[a_vj, z_at + jg, q_vj],
         np.r_[big_u * np.ones(tr), np.ones(tr), -np.ones(tr)]),
        # flip: w_v m_v - c1 Σ_j A1[j, v] - c2 Σ_u Adj[v, u] Σ_j A1[j, u] - c2 Σ_j Q[v, j] <= 0
        (np.r_[flip0 + np.arange(t), flip0 + vv, flip0 + vv, flip0 + sub_v],
         np.r_[m_at + np.arange(t), a_vj, q_vj, a_at + sub_j * k + sub_c],
         np.r_[weights, -c1 * np.ones(tr), -c2 * np.ones(tr), -c2 * sub_w]),
    ]
    three = _three_hop_block(paths3, cols)
    if three is not None:  # + c3 Σ_u Adj₃[v, u] Σ_j A1[j, u]
        entries.append((flip0 + np.repeat(three.row, rho), a_at + np.tile(jj, three.nnz) * k
                        + np.repeat(three.col, rho), -c3 * np.repeat(three.data, rho)))
    rows, cvars, vals = _rows(entries)
    num_vars = q_at + tr
    a_ub = sp.coo_matrix((vals, (rows, cvars)), shape=(flip0 + t, num_vars))
    b_ub = np.r_[tau * np.ones(rho), np.zeros(2 * tr), big_u * np.ones(tr), np.zeros(t)]
    upper = np.r_[_m_bounds(t, certified_mask), np.ones(rho * k), big_u * np.ones(rho), big_u * np.ones(tr)]
    cost = np.r_[-np.ones(t), np.zeros(num_vars - t)]
    return _solve(cost, a_ub, b_ub, np.c_[np.zeros(num_vars), upper], start, time_limit, method)


def lp1(adj, targets, weights, rho: int, tau: int, c1: float, c2: float, certified_mask=None, restrict: bool = True,
        time_limit: float | None = None, method: str = "highs-ipm", c3: float | None = None) -> LPSolution:
    """The paper's LP1 (McCormick on every ``A2[i, j] A1[j, v]``): ``|T| rho²`` product variables.

    Variables ``[m (t), A1 (rho × k), A2 (rho × rho, symmetric through shared variables), Q (t × rho × rho)]``;
    as in the official code the diagonal of ``A2`` is not forced to 0 (a looser, still valid relaxation).
    ``c3`` (optional) adds the 3-hop term, as in ``lp2``.
    """
    start = time.perf_counter()
    adj, targets, weights = _prepare(adj, targets, weights)
    _check_budget(rho, tau)
    paths3 = _paths3(adj, targets, c3)
    cols = _columns(adj, targets, restrict, paths3)
    t, k = targets.size, cols.size
    col_of = np.full(adj.shape[0], -1)
    col_of[cols] = np.arange(k)
    # A2 symmetric: entry (i, j) is the variable of the pair (min, max)
    iu, ju = np.triu_indices(rho)
    pair_id = np.zeros((rho, rho), dtype=np.int64)
    pair_id[iu, ju] = np.arange(iu.size)
    pair_id[ju, iu] = np.arange(iu.size)
    m_at, a_at, b_at = 0, t, t + rho * k
    q_at = b_at + iu.size
    ii, jj = np.meshgrid(np.arange(rho), np.arange(rho), indexing="ij")
    ii, jj = ii.ravel(), jj.ravel()
    rr = rho * rho
    vv = np.repeat(np.arange(t), rr)
    ig, jg = np.tile(ii, t), np.tile(jj, t)
    q_vij = q_at + np.arange(t * rr)
    a_jv = a_at + jg * k + col_of[targets][vv]
    b_ij = b_at + pair_id[ig, jg]
    tr = t * rr
    pairs = np.arange(tr)
    sub = adj[targets][:, cols].tocoo()
    r_all = np.arange(rho)
    sub_v, sub_i = np.repeat(sub.row, rho), np.tile(r_all, sub.nnz)
    sub_c, sub_w = np.repeat(sub.col, rho), np.repeat(sub.data, rho)
    own_v, own_i = np.repeat(np.arange(t), rho), np.tile(r_all, t)
    flip0 = rho + 3 * tr
    entries = [
        # degree: Σ_c A1[i, c] + Σ_j A2[i, j] <= tau
        (np.r_[np.repeat(r_all, k), ii], np.r_[a_at + np.arange(rho * k), b_at + pair_id[ii, jj]],
         np.ones(rho * k + rr)),
        # McCormick: Q <= A1[j, v] ; Q <= A2[i, j] ; A1[j, v] + A2[i, j] - Q <= 1
        (np.r_[rho + pairs, rho + pairs], np.r_[q_vij, a_jv], np.r_[np.ones(tr), -np.ones(tr)]),
        (np.r_[rho + tr + pairs, rho + tr + pairs], np.r_[q_vij, b_ij], np.r_[np.ones(tr), -np.ones(tr)]),
        (np.r_[rho + 2 * tr + pairs, rho + 2 * tr + pairs, rho + 2 * tr + pairs], np.r_[a_jv, b_ij, q_vij],
         np.r_[np.ones(tr), np.ones(tr), -np.ones(tr)]),
        # flip: w_v m_v - c1 Σ_i A1[i, v] - c2 Σ_u Adj[v, u] Σ_i A1[i, u] - c2 Σ_ij Q_v[i, j] <= 0
        (np.r_[flip0 + np.arange(t), flip0 + own_v, flip0 + sub_v, flip0 + vv],
         np.r_[m_at + np.arange(t), a_at + own_i * k + col_of[targets][own_v], a_at + sub_i * k + sub_c, q_vij],
         np.r_[weights, -c1 * np.ones(t * rho), -c2 * sub_w, -c2 * np.ones(tr)]),
    ]
    three = _three_hop_block(paths3, cols)
    if three is not None:
        entries.append((flip0 + np.repeat(three.row, rho), a_at + np.tile(r_all, three.nnz) * k
                        + np.repeat(three.col, rho), -c3 * np.repeat(three.data, rho)))
    rows, cvars, vals = _rows(entries)
    num_vars = q_at + tr
    a_ub = sp.coo_matrix((vals, (rows, cvars)), shape=(flip0 + t, num_vars))
    b_ub = np.r_[tau * np.ones(rho), np.zeros(2 * tr), np.ones(tr), np.zeros(t)]
    upper = np.r_[_m_bounds(t, certified_mask), np.ones(num_vars - t)]
    cost = np.r_[-np.ones(t), np.zeros(num_vars - t)]
    return _solve(cost, a_ub, b_ub, np.c_[np.zeros(num_vars), upper], start, time_limit, method)


def _check_budget(rho: int, tau: int) -> None:
    if rho < 1 or tau < 1:
        raise ValueError(f"rho (injected nodes) and tau (edges per node) must be >= 1, got rho={rho}, tau={tau}")


class CollectiveCertificate(FittedAttributes, Estimator):
    """Collective certificate of Lai et al. (ICML 2024): bound the number of targets flippable at once.

    Soundness condition: the smoothed base classifier's prediction at ``v`` must depend on injected nodes only
    through paths of at most ``hops`` edges (module docstring). ``hops=3`` (default) holds for every classifier the
    library ships with 2 layers: the GCN with symmetric normalization (whose output reads the degrees of 2-hop
    neighbours) as well as the row-normalized GCN and the GAT. ``hops=2`` is the paper's certificate; it is sound
    only for 2-hop receptive fields (``NodeAwareSmoothing(normalization="row")`` or ``model="gat"``).
    Where the smoothing deletes little (deletion probabilities ``p <= 0.1``, exactly where 3-hop attacks bite), the
    path costs ``c1, c2, c3`` are near zero and the 3-hop certificate certifies nothing: its soundness there is by
    abstention, not by a tight bound. On the official Cora-ML votes (p_e = 0.9, p_n = 0.8) both rules certify
    almost alike (0.800 for 2 hops vs 0.798 for 3 hops at rho = 100; ``official_votes`` reports
    ``collective_rho*`` and ``collective_sound_rho*`` side by side).

    Args:
        p_e (float, default 0.9), p_n (float, default 0.8): smoothing parameters of the base certificate.
        tau (int, default 6): edges per injected node.
        hops (int, default 3): the base classifier's receptive field for injected nodes, 2 or 3 (see above).
        relaxation (str, default "lp2_reduced"): ``"lp2_reduced"`` (exact reduction of LP2), ``"lp2"`` or ``"lp1"``.
        restrict (bool, default True): keep only ``A1`` columns in ``N[T]`` (exact); False = full ``rho × n``.
        tol (float, default 1e-6): solver tolerance subtracted before ``⌈M*⌉``.
        time_limit (float, optional): HiGHS time limit in seconds.

    ``fit(adj, p_lower, p_upper, targets, rho, correct=None, certified_mask=None)`` sets ``max_flipped_`` (M*),
    ``certified_count_`` ``= #correct - ⌈M*⌉``, ``certified_ratio_`` and ``solution_`` (times, sizes).
    """

    def __init__(self, p_e: float = 0.9, p_n: float = 0.8, tau: int = 6, hops: int = 3,
                 relaxation: str = "lp2_reduced", restrict: bool = True, tol: float = 1e-6,
                 time_limit: float | None = None):
        self.p_e, self.p_n, self.tau, self.hops = p_e, p_n, tau, hops
        self.relaxation, self.restrict, self.tol, self.time_limit = relaxation, restrict, tol, time_limit

    def fit(self, adj, p_lower, p_upper, targets, rho: int, correct=None, certified_mask=None):
        """Solve the relaxation for targets ``T`` (indices into ``adj``) under ``rho`` injected nodes.

        Args:
            adj (sparse matrix or array): ``[n, n]`` adjacency (scipy sparse or dense), symmetric.
            p_lower (array ``[n]`` or ``[|T|]``): ``p̲_A``, the lower bound on the top class, of all nodes or of the
                targets.
            p_upper (array ``[n]`` or ``[|T|]``): ``p̄_B``, the upper bound on the runner-up, likewise.
            targets (array of int): target node indices T.
            rho (int): injected nodes.
            correct (bool array ``[|T|]``, optional): whether each target is correctly classified (default all).
            certified_mask (bool array ``[|T|]``, optional): targets certified by another sound certificate
                (``m_v`` fixed to 0).
        """
        if self.relaxation not in RELAXATIONS:
            raise ValueError(f"relaxation must be one of {RELAXATIONS}, got {self.relaxation!r}")
        if self.hops not in HOPS:
            raise ValueError(f"hops must be 2 (row-normalized GCN, GAT) or 3 (symmetric GCN), got {self.hops!r}")
        targets = np.asarray(targets, dtype=np.int64)
        p_lower, p_upper = np.asarray(p_lower, dtype=float), np.asarray(p_upper, dtype=float)
        if p_lower.shape[0] != targets.size:
            p_lower, p_upper = p_lower[targets], p_upper[targets]
        c1, c2 = path_costs(self.p_e, self.p_n)
        weights = flip_weights(p_lower, p_upper)
        kwargs = {"certified_mask": certified_mask, "time_limit": self.time_limit,
                  "c3": path_cost(3, self.p_e, self.p_n) if self.hops == 3 else None}
        if self.relaxation != "lp2_reduced":
            kwargs["restrict"] = self.restrict
        solver = {"lp2_reduced": lp2_reduced, "lp2": lp2, "lp1": lp1}[self.relaxation]
        self.solution_ = solver(adj, targets, weights, rho, self.tau, c1, c2, **kwargs)
        self.max_flipped_ = self.solution_.value
        correct = np.ones(targets.size, dtype=bool) if correct is None else np.asarray(correct, dtype=bool)
        flippable = math.ceil(self.max_flipped_ - self.tol)
        self.certified_count_ = max(int(correct.sum()) - flippable, 0)
        self.certified_ratio_ = self.certified_count_ / targets.size
        return self

    def __repr__(self) -> str:
        return (f"CollectiveCertificate(p_e={self.p_e}, p_n={self.p_n}, tau={self.tau}, hops={self.hops}, "
                f"relaxation={self.relaxation!r}, restrict={self.restrict})")
