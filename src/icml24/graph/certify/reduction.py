"""Exact column reductions of the symmetry-reduced LP2 (ours; same optimum, fewer columns).

In the reduced LP (``lp2_reduced``) the column of an existing node ``u`` that
is not a target, ``a_u ∈ [0, 1]``, appears only in the degree budget ``Σ_u a_u + z <= tau`` (coefficient 1) and,
with a non-negative coefficient ``F[v, u]``, on the attacker's side of each target's flip condition
``w_v m_v <= rho (... + Σ_u F[v, u] a_u)``. A target's own column also enters ``q_v <= U a_v``, where a larger
``a_v`` only loosens. Two exact reductions follow (the 3-hop certificate reaches ``|N²[T]|`` columns, most of them
leaves of this kind):

- **Identical columns merge.** Columns ``u_1 .. u_r`` with the same ``F[:, u]`` enter only through their sum, so
  one column with bounds ``[0, min(r, tau)]`` replaces them (split a value evenly to go back).
- **Dominated columns drop.** Order the columns strictly by ``u' ≻ u`` iff ``F[:, u'] >= F[:, u]`` entrywise and
  (``F[:, u'] != F[:, u]`` or ``u'`` comes later). If the columns above a non-target ``u`` have total capacity
  ``>= tau``, some optimum has ``a_u = 0``: among the optima take one maximizing ``Σ_u rank(u) a_u`` (``rank`` a
  linear extension of ``≻``); were ``a_u > 0``, one of the columns above it is below its capacity (else the budget
  ``tau`` would be exceeded), and moving a little of ``a_u`` there keeps every constraint (the flip conditions only
  gain) and the objective, and raises the rank sum: a contradiction. All such ``u`` drop at once.

Only a sufficient test for dominance runs (one pivot row per column), so a dominated column may stay: never the
reverse. The LP's optimum is unchanged either way.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def merge_identical(coef: sp.csc_matrix, protected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(kept, multiplicity)``: one representative per group of identical unprotected columns of ``coef``.

    Protected columns (the targets' own) are kept alone. Groups are found by a fingerprint (a fixed weighted sum,
    the support size and the column sum) and every member is checked against its representative exactly; a
    member that differs (a fingerprint collision) stays on its own.
    """
    coef = sp.csc_matrix(coef)
    num_rows, num_cols = coef.shape
    weights = np.sqrt(np.arange(num_rows, dtype=float) + 2.0)  # fixed, irrational: collisions are (checked) flukes
    free = np.flatnonzero(~protected)
    if free.size == 0:
        return np.arange(num_cols), np.ones(num_cols)
    sub = coef[:, free]
    keys = (sub.T @ weights, np.diff(sub.indptr), np.asarray(sub.sum(0)).ravel())
    order = np.lexsort(keys[::-1])
    sorted_keys = np.stack([key[order] for key in keys])
    starts = np.r_[True, np.any(sorted_keys[:, 1:] != sorted_keys[:, :-1], axis=0)]
    first_sorted = order[np.flatnonzero(starts)][np.cumsum(starts) - 1]  # each member's group head
    rep_local = np.empty(free.size, dtype=np.int64)
    rep_local[order] = first_sorted
    rep = free[rep_local]
    dense = sub.toarray()
    same = np.all(dense == dense[:, rep_local], axis=0)
    alone = free[~same]  # fingerprint collisions: keep them as they are
    reps, counts = np.unique(rep[same], return_counts=True)
    kept = np.r_[np.flatnonzero(protected), reps, alone]
    multiplicity = np.r_[np.ones(int(protected.sum())), counts, np.ones(alone.size)]
    order = np.argsort(kept, kind="stable")
    return kept[order], multiplicity[order]


def dominated(coef: sp.csc_matrix, capacity: np.ndarray, protected: np.ndarray, budget: float,
              candidates: int = 8) -> np.ndarray:
    """Bool per column: unprotected columns whose strict dominators (module docstring) hold ``>= budget``.

    The test of a column ``u`` compares it with the ``candidates`` largest columns of its pivot row (its support
    row with the fewest columns at least as large as ``u`` there) that are at least as large as ``u`` there; zero
    columns are dominated by every non-zero column.
    """
    coef = sp.csc_matrix(coef, copy=True)
    coef.eliminate_zeros()  # the support is the non-zero entries (equal columns must have equal supports)
    coef.sort_indices()
    num_cols = coef.shape[1]
    capacity = np.asarray(capacity, dtype=float)
    nnz = np.diff(coef.indptr)
    held = np.zeros(num_cols)
    if coef.nnz:
        entries = coef.tocoo()
        row, col, val = entries.row, entries.col, entries.data
        order = np.lexsort((val, row))
        row_s, val_s, col_s = row[order], val[order], col[order]
        position = np.arange(row_s.size)
        new_tie = np.r_[True, (row_s[1:] != row_s[:-1]) | (val_s[1:] != val_s[:-1])]
        tie_start = np.maximum.accumulate(np.where(new_tie, position, 0))  # first entry of the row >= this value
        row_end = np.searchsorted(row_s, row_s, side="right")
        at_least = row_end - tie_start
        # pivot of each non-empty column: its sorted entry with the fewest candidates
        best = np.lexsort((at_least, col_s))
        first_of_col = np.r_[True, col_s[best][1:] != col_s[best][:-1]]
        pivot = best[first_of_col]
        u = col_s[pivot]
        # candidate pairs (u, u'): u' among the `candidates` largest in the pivot row with a value >= u's there
        lengths = np.minimum(at_least[pivot], candidates)
        pair_u = np.repeat(u, lengths)
        offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        pair_v = col_s[np.repeat(row_end[pivot] - lengths, lengths) + offsets]
        other = pair_u != pair_v
        pair_u, pair_v = pair_u[other], pair_v[other]
        # check u' >= u on the whole support of u (u' >= 0 = u elsewhere)
        dense = coef.toarray()
        reps = nnz[pair_u]
        pair_id = np.repeat(np.arange(pair_u.size), reps)
        start = np.repeat(coef.indptr[pair_u], reps)
        within = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
        support = coef.indices[start + within]
        u_val = coef.data[start + within]
        v_val = dense[support, pair_v[pair_id]]
        below = np.bincount(pair_id, (v_val < u_val).astype(float), minlength=pair_u.size) > 0
        differs = np.bincount(pair_id, (v_val != u_val).astype(float), minlength=pair_u.size) > 0
        differs |= nnz[pair_v] != nnz[pair_u]
        strict = ~below & (differs | (pair_v > pair_u))
        held = np.bincount(pair_u[strict], capacity[pair_v[strict]], minlength=num_cols)
    # zero columns: every non-zero column is strictly above them
    zero = nnz == 0
    later_zero = np.cumsum(capacity[zero][::-1])[::-1] - capacity[zero]  # ties: the later zero columns
    held[zero] = capacity[~zero].sum() + later_zero
    return ~protected & (held >= budget)
