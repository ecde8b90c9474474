"""Combinatorial solvers whose cost vector a generator outputs (GenCO, Ferber et al., ICML 2024, Sec. 3).

Every solver maps a cost vector ``c`` to a feasible solution ``x*(c)`` of its problem and says whether it
maximizes or minimizes ``c^T x`` (``sense``); the differentiable layer (``layer.py``) only needs that interface:

- ``MILPSolver``: ``x*(c) = argmax/argmin c^T x`` over ``{A_ub z <= b_ub, A_eq z = b_eq, lb <= z <= ub}`` with
  integrality, solved by HiGHS through ``scipy.optimize.milp``. The cost covers the first ``n_cost`` variables;
  auxiliary variables (flows, ...) follow and are not returned.
- ``ShortestPathSolver``: the cheapest top-left to bottom-right path on a grid of vertex costs (Warcraft-style
  maps), an exact Dijkstra run for a whole batch in one ``scipy.sparse.csgraph`` call.
- ``shortest_path_milp``: the same path problem written as a unit-flow MILP, the peer the fast routine is
  checked (and benchmarked) against.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse.csgraph import dijkstra

from icml24._validation import check_finite


def _batch(costs: np.ndarray, size: int, name: str) -> tuple[np.ndarray, bool]:
    costs = np.asarray(costs, dtype=float)
    check_finite(name, costs)
    single = costs.ndim == 1
    costs = costs.reshape(1, -1) if single else costs.reshape(costs.shape[0], -1)
    if costs.shape[1] != size:
        raise ValueError(f"{name} has {costs.shape[1]} entries per problem; this solver expects {size}")
    return costs, single


class MILPSolver:
    """``x*(c) = argmax_{x in X} c^T x`` (or argmin) over a mixed-integer polytope, by HiGHS.

    Parameters: ``n_cost`` variables carry the cost; ``n_vars >= n_cost`` in all. ``A_ub``/``A_eq`` are sparse or
    dense matrices over all ``n_vars`` variables; ``integrality[i] = 1`` marks an integer variable.
    ``time_limit`` (seconds per solve) guards against a hard instance; a solve that ends without a feasible point
    raises, so a returned solution is always feasible.
    """

    def __init__(self, n_cost: int, n_vars: int | None = None, A_ub=None, b_ub=None, A_eq=None, b_eq=None,
                 lb=None, ub=None, integrality=None, sense: str = "max", time_limit: float = 30.0):
        if sense not in ("max", "min"):
            raise ValueError(f"sense must be 'max' or 'min', got {sense!r}")
        self.n_cost, self.n_vars = int(n_cost), int(n_vars if n_vars is not None else n_cost)
        if self.n_vars < self.n_cost:
            raise ValueError(f"n_vars ({self.n_vars}) must be >= n_cost ({self.n_cost})")
        self.sense, self.time_limit = sense, float(time_limit)
        self.constraints = []
        for A, lo, hi in ((A_ub, None, b_ub), (A_eq, b_eq, b_eq)):
            if A is None:
                continue
            A = sparse.csr_array(A)
            if A.shape[1] != self.n_vars:
                raise ValueError(f"a constraint matrix has {A.shape[1]} columns; expected n_vars = {self.n_vars}")
            hi = np.asarray(hi, dtype=float)
            lo = np.full(A.shape[0], -np.inf) if lo is None else np.asarray(lo, dtype=float)
            self.constraints.append(LinearConstraint(A, lo, hi))
        self.lb = np.zeros(self.n_vars) if lb is None else np.asarray(lb, dtype=float)
        self.ub = np.full(self.n_vars, np.inf) if ub is None else np.asarray(ub, dtype=float)
        self.integrality = np.zeros(self.n_vars) if integrality is None else np.asarray(integrality, dtype=float)
        self._one_hot: dict[int, bool] = {}

    def is_one_hot(self, size: int) -> bool:
        """Whether every solution is one-hot in blocks of ``size`` cost variables (``c`` read as (-1, size)): all
        cost variables binary, and each block ``b`` has the equality constraint ``sum(x[b * size: (b + 1) * size])
        = 1`` (one choice per block: a tile per cell). Read from the constraints, never from a solution."""
        size = int(size)
        if size not in self._one_hot:
            self._one_hot[size] = self._has_one_hot_blocks(size)
        return self._one_hot[size]

    def _has_one_hot_blocks(self, size: int) -> bool:
        cost = slice(0, self.n_cost)
        if size < 1 or self.n_cost % size or not ((self.integrality[cost] > 0).all()
                                                 and (self.lb[cost] >= 0).all() and (self.ub[cost] <= 1).all()):
            return False
        blocks = set()
        for constraint in self.constraints:
            A = sparse.csr_array(constraint.A)
            lo = np.broadcast_to(np.asarray(constraint.lb, dtype=float), (A.shape[0],))
            hi = np.broadcast_to(np.asarray(constraint.ub, dtype=float), (A.shape[0],))
            for row in np.flatnonzero((lo == 1) & (hi == 1)):
                cols, vals = A.indices[A.indptr[row]: A.indptr[row + 1]], A.data[A.indptr[row]: A.indptr[row + 1]]
                cols, vals = cols[vals != 0], vals[vals != 0]
                start = cols.min(initial=self.n_vars)
                if (len(cols) == size and (vals == 1).all() and start % size == 0 and start + size <= self.n_cost
                        and np.array_equal(np.sort(cols), np.arange(start, start + size))):
                    blocks.add(start // size)
        return len(blocks) == self.n_cost // size

    def solve_full(self, c: np.ndarray) -> np.ndarray:
        """All variables (cost-carrying and auxiliary) of the optimum for one cost vector of length ``n_cost``."""
        sign = -1.0 if self.sense == "max" else 1.0  # scipy minimizes
        full = np.zeros(self.n_vars)
        full[: self.n_cost] = sign * np.asarray(c, dtype=float)
        res = milp(full, constraints=self.constraints, bounds=Bounds(self.lb, self.ub),
                   integrality=self.integrality, options={"time_limit": self.time_limit, "presolve": True})
        if res.x is None:
            raise RuntimeError(f"HiGHS found no feasible solution ({res.message}); check the constraints")
        x = res.x.copy()
        integer = self.integrality > 0
        x[integer] = np.round(x[integer])
        return x

    def solve(self, costs: np.ndarray) -> np.ndarray:
        """``x*(c)`` for one cost vector (n_cost,) or a batch (B, n_cost); returns the cost-carrying variables."""
        costs, single = _batch(costs, self.n_cost, "costs")
        out = np.stack([self.solve_full(c)[: self.n_cost] for c in costs])
        return out[0] if single else out

    def objective(self, costs: np.ndarray, solutions: np.ndarray) -> np.ndarray:
        """``c^T x`` per problem."""
        return np.einsum("bi,bi->b", np.atleast_2d(costs), np.atleast_2d(solutions))


def _grid_graph(height: int, width: int, diagonal: bool) -> tuple[np.ndarray, np.ndarray]:
    """Directed edges (source, target) between neighbouring cells of a height x width grid, row-major ids."""
    rows, cols = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    steps = [(0, 1), (1, 0), (0, -1), (-1, 0)]
    if diagonal:
        steps += [(1, 1), (1, -1), (-1, 1), (-1, -1)]
    src, dst = [], []
    for dr, dc in steps:
        r2, c2 = rows + dr, cols + dc
        ok = (r2 >= 0) & (r2 < height) & (c2 >= 0) & (c2 < width)
        src.append((rows * width + cols)[ok])
        dst.append((r2 * width + c2)[ok])
    return np.concatenate(src), np.concatenate(dst)


class ShortestPathSolver:
    """The cheapest path from the top-left to the bottom-right cell of a grid of vertex costs (``sense='min'``).

    The path's cost is the sum of the costs of the cells it visits (both ends included), as in the Warcraft
    shortest-path maps of Vlastelica et al. (2020); moves go to the 8 neighbours (``diagonal=True``) or 4.
    ``solve`` returns the 0/1 indicator of the visited cells, flattened row-major. A batch is one Dijkstra call
    on the disjoint union of its grids (exact; costs must be >= 0). ``clip=True`` clips negative costs to 0
    instead of raising (for the perturbed solves of a gradient estimator, which may push a cost below 0).
    """

    KIND = "component"  # icml24._contract

    sense = "min"

    def __init__(self, height: int, width: int, diagonal: bool = True, clip: bool = False):
        if height < 1 or width < 1:
            raise ValueError(f"the grid needs height, width >= 1, got {height} x {width}")
        self.height, self.width, self.diagonal, self.clip = int(height), int(width), bool(diagonal), bool(clip)
        self.n_cost = self.height * self.width
        self.src_, self.dst_ = _grid_graph(self.height, self.width, self.diagonal)
        order = np.lexsort((self.dst_, self.src_))  # one map's edges in CSR order (by source, then target)
        self._csr_dst = self.dst_[order].astype(np.int32)
        self._csr_ptr = np.r_[0, np.cumsum(np.bincount(self.src_, minlength=self.n_cost))].astype(np.int32)

    def solve(self, costs: np.ndarray) -> np.ndarray:
        costs, single = _batch(costs, self.n_cost, "costs")
        if self.clip:
            costs = np.maximum(costs, 0.0)
        elif (costs < 0).any():
            raise ValueError("costs must be >= 0 for Dijkstra; shift the generator's output (softplus) or pass "
                             "clip=True")
        batch, n = costs.shape
        m = len(self._csr_dst)
        # the disjoint union of the maps, built in CSR form directly (no COO sort): map b's nodes are b*n + cell
        indices = ((np.arange(batch, dtype=np.int32) * n)[:, None] + self._csr_dst[None]).ravel()
        indptr = np.r_[((np.arange(batch, dtype=np.int32) * m)[:, None] + self._csr_ptr[None, :-1]).ravel(),
                       np.int32(batch * m)]
        # entering a cell pays its cost; a tiny epsilon keeps zero-cost edges in the sparse graph
        weight = costs[:, self._csr_dst].ravel() + 1e-12
        graph = sparse.csr_array((weight, indices, indptr), shape=(batch * n, batch * n))
        starts = np.arange(batch) * n
        _, pred, _ = dijkstra(graph, directed=True, indices=starts, return_predecessors=True, min_only=True)
        out = np.zeros((batch, n))
        for b in range(batch):  # walk back from each goal; a path has at most n cells
            node, start = starts[b] + n - 1, starts[b]
            while node != start:
                out[b, node - start] = 1.0
                node = pred[node]
            out[b, 0] = 1.0
        return out[0] if single else out

    def objective(self, costs: np.ndarray, solutions: np.ndarray) -> np.ndarray:
        return np.einsum("bi,bi->b", np.atleast_2d(costs), np.atleast_2d(solutions))


def shortest_path_milp(height: int, width: int, diagonal: bool = True) -> MILPSolver:
    """The grid shortest path as a MILP over cell indicators ``v`` and edge flows ``f`` (the peer of Dijkstra).

    Unit flow leaves the top-left cell and enters the bottom-right one; a cell is visited (``v = 1``) when flow
    enters it (or it is the start), and the objective ``min c^T v`` pays each visited cell once.
    """
    src, dst = _grid_graph(height, width, diagonal)
    n, m = height * width, len(src)
    edges = np.arange(m)
    # conservation: out - in = 1 at the start, -1 at the goal, 0 elsewhere
    A_flow = sparse.coo_array((np.r_[np.ones(m), -np.ones(m)], (np.r_[src, dst], n + np.r_[edges, edges])),
                              shape=(n, n + m))
    b_flow = np.zeros(n)
    b_flow[0], b_flow[n - 1] = 1.0, -1.0
    # visiting: inflow(v) - v <= 0 (v >= what enters it); the start is visited
    A_visit = sparse.coo_array((np.r_[np.ones(m), -np.ones(n)], (np.r_[dst, np.arange(n)], np.r_[n + edges,
                               np.arange(n)])), shape=(n, n + m))
    lb, ub = np.zeros(n + m), np.r_[np.ones(n), np.ones(m)]
    lb[0] = 1.0
    integrality = np.r_[np.ones(n), np.zeros(m)]
    return MILPSolver(n, n + m, A_ub=A_visit, b_ub=np.zeros(n), A_eq=A_flow, b_eq=b_flow, lb=lb, ub=ub,
                      integrality=integrality, sense="min")
