"""Greedy Equivalence Search (Chickering, 2002) over CPDAGs with any decomposable, cached local score.

causal-learn's ``ges`` only takes its own score names, so the search is ours: a forward phase of Insert(X, Y, T)
operators, then a backward phase of Delete(X, Y, H) operators, each step taking the operator with the largest score
decrease (scores are lower-is-better), the graph re-completed to a CPDAG after each step. Local scores are cached by
the score object, keyed by (child, frozenset(parents)), so each pair is optimised once per search.
"""

from __future__ import annotations

import math
import time
from itertools import chain, combinations

import numpy as np

from icml24._estimator import Estimator
from icml24._validation import FittedAttributes, check_fitted

from .graphs import dag_to_cpdag, pdag_to_dag


def _subsets(items):
    items = sorted(items)
    return chain.from_iterable(combinations(items, r) for r in range(len(items) + 1))


def _is_clique(g: np.ndarray, nodes) -> bool:
    nodes = list(nodes)
    return all(g[a, b] or g[b, a] for i, a in enumerate(nodes) for b in nodes[i + 1:])


def _reaches_avoiding(g: np.ndarray, start: int, target: int, blocked: set[int]) -> bool:
    """True if a semi-directed path (edges a -> b or a - b) leads from start to target avoiding ``blocked``."""
    seen, frontier = {start}, [start]
    while frontier:
        a = frontier.pop()
        for b in np.flatnonzero(g[a]):
            b = int(b)
            if b == target:
                return True
            if b not in seen and b not in blocked:
                seen.add(b)
                frontier.append(b)
    return False


class GES(FittedAttributes, Estimator):
    """Greedy equivalence search with a ``KernelScore``-like score (``local_score(child, parents)``).

    Parameters: ``score`` (fitted, lower is better); ``max_parents``: an insertion into Y is considered only while Y
    has at most this many directed parents (the official code's and causal-learn's ``maxP`` rule, so Y can end with
    ``max_parents + 1``); ``"half"`` (default) is the official maxP = int(d / 2), ``None`` no cap; ``tol`` (>= 0:
    a step is taken only if it lowers the total score by more than this).
    Learned state: ``cpdag_`` (0/1 adjacency, see ``graphs``), ``score_`` (total score of ``dag_``),
    ``num_steps_`` (forward, backward), ``seconds_``, ``num_local_scores_`` (evaluated, not cached, this search),
    ``max_parents_`` (the cap used, None for none).
    """

    def __init__(self, score, max_parents: int | str | None = "half", tol: float = 0.0):
        self.score = score
        self.max_parents = max_parents
        self.tol = tol

    def _check_params(self) -> None:
        max_parents, tol = self.max_parents, self.tol
        if not (max_parents is None or max_parents == "half" or (
                isinstance(max_parents, (int, np.integer)) and not isinstance(max_parents, bool) and max_parents >= 0)):
            raise ValueError(f"max_parents must be a non-negative int, 'half' (the official int(d / 2)) or None (no "
                             f"cap), got {max_parents!r}")
        if isinstance(tol, bool) or not isinstance(tol, (int, float, np.number)) or not math.isfinite(tol) or tol < 0:
            raise ValueError(f"tol must be a finite number >= 0 (the score decrease a step needs), got {tol!r}")

    def _local(self, child: int, parents) -> float:
        return self.score.local_score(child, parents)

    def _best_insert(self, g: np.ndarray):
        d = len(g)
        best = (float(self.tol), None)
        und = (g != 0) & (g.T != 0)
        for y in range(d):
            nbrs_y = set(np.flatnonzero(und[y]).tolist())
            pa_y = set(np.flatnonzero((g[:, y] != 0) & (g[y] == 0)).tolist())
            if self.max_parents_ is not None and len(pa_y) > self.max_parents_:  # official maxP rule
                continue
            for x in range(d):
                if x == y or g[x, y] or g[y, x]:
                    continue
                adj_x = set(np.flatnonzero((g[x] != 0) | (g[:, x] != 0)).tolist())
                na = nbrs_y & adj_x
                for t in _subsets(nbrs_y - adj_x):
                    cond = na | set(t)
                    if not _is_clique(g, cond) or _reaches_avoiding(g, y, x, cond):
                        continue
                    gain = self._local(y, cond | pa_y) - self._local(y, cond | pa_y | {x})  # Chickering Thm. 15
                    if gain > best[0]:
                        best = (gain, (x, y, t))
        return best

    def _best_delete(self, g: np.ndarray):
        d = len(g)
        best = (float(self.tol), None)
        und = (g != 0) & (g.T != 0)
        for y in range(d):
            nbrs_y = set(np.flatnonzero(und[y]).tolist())
            pa_y = set(np.flatnonzero((g[:, y] != 0) & (g[y] == 0)).tolist())
            for x in range(d):
                if x == y or not g[x, y]:  # x - y or x -> y
                    continue
                adj_x = set(np.flatnonzero((g[x] != 0) | (g[:, x] != 0)).tolist())
                na = nbrs_y & adj_x
                for h in _subsets(na):
                    cond = na - set(h)
                    if not _is_clique(g, cond):
                        continue
                    base = (cond | pa_y) - {x}
                    gain = self._local(y, base | {x}) - self._local(y, base)  # Chickering Thm. 17
                    if gain > best[0]:
                        best = (gain, (x, y, h))
        return best

    @staticmethod
    def _insert(g: np.ndarray, x: int, y: int, t) -> np.ndarray:
        g = g.copy()
        g[x, y], g[y, x] = 1, 0
        for z in t:
            g[y, z] = 0  # z - y becomes z -> y
        return g

    @staticmethod
    def _delete(g: np.ndarray, x: int, y: int, h) -> np.ndarray:
        g = g.copy()
        g[x, y] = g[y, x] = 0
        for z in h:
            g[z, y] = 0  # y - z becomes y -> z
            if g[x, z] and g[z, x]:
                g[z, x] = 0  # x - z becomes x -> z
        return g

    def fit(self) -> GES:
        """Run the forward and backward phases from the empty graph."""
        self._check_params()
        check_fitted(self.score, "data_")
        start = time.perf_counter()
        before = self.score.n_evaluations_
        d = self.score.num_variables_
        self.max_parents_ = d // 2 if self.max_parents == "half" else self.max_parents
        g = np.zeros((d, d), dtype=int)
        steps = [0, 0]
        for phase, (search, apply) in enumerate(((self._best_insert, self._insert), (self._best_delete, self._delete))):
            while True:
                gain, op = search(g)
                if op is None:
                    break
                g = dag_to_cpdag(pdag_to_dag(apply(g, *op)))
                steps[phase] += 1
        self.cpdag_ = g
        self.dag_ = pdag_to_dag(g)
        self.score_ = self.score.score_graph(self.dag_)
        self.num_steps_ = tuple(steps)
        self.num_local_scores_ = self.score.n_evaluations_ - before
        self.seconds_ = time.perf_counter() - start
        return self
