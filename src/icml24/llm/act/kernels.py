"""Fused CPU kernel (numba) for ACT's calibration of plain causal attention maps: detection and calibration in
two reads of each map instead of the torch path's four full-size passes.

Per map (``[Lq, Lk]``, the queries being the last ``Lq`` positions, causal, no padding): one read accumulates the
column sums ``col_j`` (step 1) and the row sums, the sinks follow from them (step 2); a second read, row by row
while the map is still in the core's cache, sums the sink mass and the other tokens' mass and writes the scaled row
with the sink entries at ``beta`` (steps 3-4): the row is multiplied in the map's dtype (as the torch path does),
and in place it is one array read and written, which keeps the loop vectorized (two arrays that may alias would
need a runtime overlap check, and the same row as source and target fails it: scalar code). Sums are accumulated
in float64, so the result equals the torch path
(``calibrate_attention``) up to the last bits of float32 rounding, and a sink that sits
exactly on the threshold may be judged differently: the float64 sums are the more accurate of the two. Callers
fall back to the torch path for anything else (GPU tensors, half precision, tensors that need gradients, padding
masks). Compiled on first use and cached on disk (``cache=True``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Reordering the additions lets the row sums use the vector units; nothing assumes finite values (the check stays).
_REASSOCIATE = {"reassoc", "contract", "nsz"}


def supported(tensor) -> bool:
    """Whether a torch tensor can go through the kernel (CPU, float32/float64, contiguous, no autograd, 2+ dims)."""
    import torch

    return (tensor.device.type == "cpu" and tensor.dtype in (torch.float32, torch.float64) and tensor.ndim >= 2
            and tensor.is_contiguous() and not tensor.requires_grad and tensor.numel() > 0
            and tensor.shape[-2] <= tensor.shape[-1])


@njit(cache=True, nogil=True, error_model="numpy", fastmath=_REASSOCIATE)
def _calibrate_maps(attn, out, threshold, beta, keep_first, inplace, normalized, cancellation):  # pragma: no cover
    """Calibrate every map of ``attn`` ``[M, Lq, Lk]`` into ``out`` (``attn`` itself when ``inplace``); returns
    the number of non-finite column sums of the first map that has any (0 when every entry is finite), having
    written only the maps before it."""
    num_maps, num_queries, num_keys = attn.shape
    col = np.empty(num_keys, np.float64)
    sinks = np.empty(num_keys, np.int64)
    kept = np.empty(num_keys, np.float64)
    row_sums = np.empty(num_queries, np.float64)
    cast = np.empty(1, attn.dtype)  # the scale rounded to the map's dtype: float32 maps multiply in float32
    bad = 0
    for m in range(num_maps):
        a, o = attn[m], out[m]
        col[:] = 0.0
        for i in range(num_queries):  # step 1: col_j = sum_i A_ij, and the row sums, in one read of the map
            row = a[i]
            total = 0.0
            for j in range(num_keys):
                col[j] += row[j]
                total += row[j]
            row_sums[i] = total
        count = 0
        skipped = not keep_first
        for j in range(num_keys):
            bad += not abs(col[j]) < np.inf
        if bad:  # NaN/inf in this map: stop before writing it (the caller raises)
            return bad
        for j in range(num_keys):  # step 2: S = {j : col_j / #viewers > alpha}, minus the first one found
            total = col[j]
            if total / min(num_queries, num_keys - j) > threshold:
                if skipped:
                    sinks[count] = j
                    count += 1
                else:
                    skipped = True
        for i in range(num_queries):  # steps 3-4, one row at a time (the map is still in the cache)
            row, target = a[i], o[i]
            sink_mass = 0.0
            for s in range(count):
                kept[s] = row[sinks[s]]
                sink_mass += kept[s]
            row_mass = 1.0 if normalized else row_sums[i]
            others = row_mass - sink_mass
            if others < cancellation * row_mass:  # the difference lost digits: sum the other tokens directly
                others = 0.0
                following = 0
                for j in range(num_keys):
                    if following < count and sinks[following] == j:
                        following += 1
                    else:
                        others += row[j]
            if count > 0 and others > 0:
                cast[0] = 1.0 + (1.0 - beta) * sink_mass / others  # step 4: the others grow by this factor
                scale = cast[0]
                if inplace:  # one array, no overlap check: the loop stays vectorized
                    for j in range(num_keys):
                        row[j] *= scale
                else:
                    for j in range(num_keys):
                        target[j] = row[j] * scale
                for s in range(count):
                    target[sinks[s]] = kept[s] * beta  # step 3: a sink keeps beta of its attention
            elif not inplace:
                target[:] = row
    return bad


def calibrate_maps(attn, threshold: float, beta: float, keep_first: bool, inplace: bool, normalized: bool,
                   cancellation: float):
    """Run the kernel on a ``supported`` torch tensor ``[..., Lq, Lk]``; returns ``(calibrated, bad)`` with
    ``bad`` the number of non-finite column sums (the caller raises)."""
    import torch

    num_queries, num_keys = attn.shape[-2:]
    maps = attn.detach().view(-1, num_queries, num_keys)
    out = maps if inplace else torch.empty_like(maps)
    bad = _calibrate_maps(maps.numpy(), out.numpy(), float(threshold), float(beta), bool(keep_first), bool(inplace),
                          bool(normalized), float(cancellation))
    return (attn if inplace else out.view(attn.shape)), int(bad)
