"""Fused one-pass CPU kernels (numba) for the memory-bound merging steps: TIES trim + elect + disjoint merge, TALL
masks and the consensus count.

Each kernel reads the ``[T, P]`` task vectors once, keeps its temporaries in registers or a cache-sized block, and
checks finiteness in the same pass; results are equal, bit for bit, to the torch formulas in ``ties.py``,
``tall_masks.py`` and ``consensus.py`` (same float32 operations in the same order over tasks). They run on
contiguous float32/float64 CPU arrays; the callers fall back to the torch formulas for anything else (GPU tensors,
half precision, tensors that need gradients). Compiled on first use and cached on disk (``cache=True``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Parameters per block of the merge kernel: a few ``[BLOCK]`` accumulators stay in L1/L2.
BLOCK = 4096
#: Size of the strided sample that brackets each task's k-th largest magnitude before the exact pass.
SAMPLE = 1 << 16


def supported(tensor) -> bool:
    """Whether a torch tensor can go through these kernels (CPU, float32/float64, no autograd)."""
    import torch

    return (tensor.device.type == "cpu" and tensor.dtype in (torch.float32, torch.float64)
            and not tensor.requires_grad)


@njit(cache=True, nogil=True, error_model="numpy")
def _bracket_pass(task_vectors, lo, hi, cap):
    """One read: per task, the count of magnitudes above ``hi``, of nonzero ones, of non-finite ones, and the
    nonzero magnitudes inside ``[lo, hi]`` (compacted without a branch: every value is written, the cursor moves
    only for those inside; the slot ``cap`` absorbs overflow)."""
    num_tasks, num_params = task_vectors.shape
    above = np.zeros(num_tasks, np.int64)
    nonzero = np.zeros(num_tasks, np.int64)
    inside = np.zeros(num_tasks, np.int64)
    bad = 0
    candidates = np.empty((num_tasks, cap + 1), task_vectors.dtype)
    for t in range(num_tasks):
        low, high, row, out = lo[t], hi[t], task_vectors[t], candidates[t]
        count_above, count_nonzero, cursor = 0, 0, 0
        for j in range(num_params):
            magnitude = abs(row[j])
            bad += not magnitude < np.inf
            count_above += magnitude > high
            count_nonzero += magnitude != 0
            out[min(cursor, cap)] = magnitude
            cursor += (magnitude >= low) & (magnitude <= high) & (magnitude > 0)
        above[t], nonzero[t], inside[t] = count_above, count_nonzero, cursor
    return above, nonzero, inside, candidates, bad


def kth_largest_magnitudes(task_vectors: np.ndarray, keep: int) -> tuple[np.ndarray, bool]:
    """Each task's ``keep``-th largest ``|tau|`` (0 when fewer than ``keep`` entries are nonzero: then every nonzero
    entry is kept), exactly, and whether every entry is finite.

    A strided sample brackets the k-th value with ``[lo, hi]`` (±6 binomial standard deviations of the sample
    rank); one pass counts the entries above ``hi`` and collects the few inside; the k-th value is then selected
    among those. A task whose bracket misses is selected exactly from all its nonzero entries (``np.partition``).
    """
    num_tasks, num_params = task_vectors.shape
    stride = max(1, num_params // SAMPLE)
    sample = np.sort(np.abs(task_vectors[:, ::stride]), axis=1)[:, ::-1]  # descending
    size, share = sample.shape[1], keep / num_params
    spread = 6.0 * np.sqrt(size * share * (1.0 - share)) + 2.0
    rank_hi, rank_lo = int(np.floor(share * size - spread)), int(np.ceil(share * size + spread))
    hi = sample[:, rank_hi] if rank_hi >= 0 else np.full(num_tasks, np.inf)
    lo = sample[:, rank_lo] if rank_lo < size else np.zeros(num_tasks)
    cap = int(min(num_params, (min(rank_lo, size) - max(rank_hi, 0) + 1) * stride * 2 + 1024))
    above, nonzero, inside, candidates, bad = _bracket_pass(
        task_vectors, np.ascontiguousarray(lo, task_vectors.dtype), np.ascontiguousarray(hi, task_vectors.dtype), cap)
    thresholds = np.zeros(num_tasks, task_vectors.dtype)
    if bad:
        return thresholds, False
    for t in range(num_tasks):  # a loop over tasks (a handful), not over parameters
        if nonzero[t] < keep:
            continue  # threshold 0: every nonzero entry is kept, as the torch path does
        need = keep - above[t]
        if 1 <= need <= inside[t] <= cap:
            found = candidates[t, :inside[t]]
            thresholds[t] = np.partition(found, inside[t] - need)[inside[t] - need]
        else:  # the sample's bracket missed: exact selection over the whole row
            row = np.abs(task_vectors[t])
            row = row[row != 0]
            thresholds[t] = np.partition(row, len(row) - keep)[len(row) - keep]
    return thresholds, True


@njit(cache=True, nogil=True, error_model="numpy")
def _ties_pass(task_vectors, thresholds, mean, zero_up):
    """One read: trim (|tau| >= threshold), elect the sign of the trimmed sum and merge the agreeing entries, block by
    block. A zero sum takes the positive side if ``zero_up``. Returns the merged vector, the sum of the elected
    signs and the number of zero sums whose two sides differ (only those depend on ``zero_up``)."""
    num_tasks, num_params = task_vectors.shape
    merged = np.empty(num_params, task_vectors.dtype)
    zero = np.zeros(1, task_vectors.dtype)[0]
    total = np.empty(BLOCK, task_vectors.dtype)
    positive = np.empty(BLOCK, task_vectors.dtype)
    negative = np.empty(BLOCK, task_vectors.dtype)
    count_pos = np.empty(BLOCK, np.int32)
    count_neg = np.empty(BLOCK, np.int32)
    sign_sum, ambiguous = 0, 0
    for start in range(0, num_params, BLOCK):
        n = min(num_params, start + BLOCK) - start
        total[:], positive[:], negative[:], count_pos[:], count_neg[:] = 0, 0, 0, 0, 0
        for t in range(num_tasks):
            threshold, row = thresholds[t], task_vectors[t, start:start + n]
            for i in range(n):
                value = row[i]
                kept = value if abs(value) >= threshold else zero  # step 1 (trim)
                total[i] += kept  # step 2 (elect) reads sum_t tau_hat_t
                positive[i] += kept if kept > zero else zero  # step 3 for gamma = +1
                negative[i] += kept if kept < zero else zero  # step 3 for gamma = -1
                if mean:
                    count_pos[i] += kept > zero
                    count_neg[i] += kept < zero
        out = merged[start:start + n]
        for i in range(n):
            sign_sum += (total[i] > zero) - (total[i] < zero)
            ambiguous += (total[i] == zero) & ((positive[i] != zero) | (negative[i] != zero))
            up = (total[i] > zero) | ((total[i] == zero) & zero_up)
            value = positive[i] if up else negative[i]
            if mean:
                # a float64 quotient rounded once to float32 equals the float32 quotient (no double-rounding error)
                value = value / float(max(count_pos[i] if up else count_neg[i], 1))
            out[i] = value
    return merged, sign_sum, ambiguous


def ties_merge(task_vectors: np.ndarray, thresholds: np.ndarray, mean: bool) -> np.ndarray:
    """TIES trim, elect and disjoint merge in one read (a second only when a zero sum meets a negative majority)."""
    merged, sign_sum, ambiguous = _ties_pass(task_vectors, thresholds, mean, True)
    if ambiguous and sign_sum < 0:  # a zero sum takes the majority sign, known only after the pass
        merged, _, _ = _ties_pass(task_vectors, thresholds, mean, False)
    return merged


@njit(cache=True, nogil=True, error_model="numpy")
def _tall_pass(task_vectors, multitask_vector, lambdas, masks):
    """One read: ``m_t = 1{|tau_t| > lambda_t |tau_MTL - tau_t|}`` into ``masks``; returns the non-finite count."""
    num_tasks, num_params = task_vectors.shape
    bad = 0
    for t in range(num_tasks):
        lam, row, out = lambdas[t], task_vectors[t], masks[t]
        for j in range(num_params):
            value = row[j]
            out[j] = abs(value) > lam * abs(multitask_vector[j] - value)
            bad += not abs(value) < np.inf
    for j in range(num_params):
        bad += not abs(multitask_vector[j]) < np.inf
    return bad


def tall_masks(task_vectors: np.ndarray, multitask_vector: np.ndarray, lambdas: np.ndarray) -> np.ndarray | None:
    """Boolean TALL masks ``[T, P]`` in one read, or ``None`` if an input holds NaN or inf."""
    masks = np.empty(task_vectors.shape, np.bool_)
    bad = _tall_pass(task_vectors, multitask_vector, lambdas.astype(task_vectors.dtype), masks)
    return None if bad else masks


@njit(cache=True, nogil=True)
def _at_least_pass(masks, k, out):
    num_tasks, num_params = masks.shape
    counts = np.empty(BLOCK, np.uint8)
    for start in range(0, num_params, BLOCK):
        n = min(num_params, start + BLOCK) - start
        counts[:] = 0
        for t in range(num_tasks):
            row = masks[t, start:start + n]
            for i in range(n):
                counts[i] += row[i]
        for i in range(n):
            out[start + i] = counts[i] >= k


def at_least(masks: np.ndarray, k: int) -> np.ndarray:
    """``1{sum_t m_t >= k}`` over boolean masks ``[T, P]`` (``T < 256``) in one read."""
    out = np.empty(masks.shape[1], np.bool_)
    _at_least_pass(masks, k, out)
    return out
