"""Eligible weight masks and dead paths (Zhang & Papyan, ICML 2024, Sec. 3.2 and Sec. 5).

A layer mask [out, in] is *eligible* when every row (unit) has an input and every column has an output. Hidden
units are interchangeable, so masks that differ by a permutation of their rows train the same family of networks;
the search keeps one canonical representative: rows sorted by (row nnz, row read as a binary number), descending,
equal rows allowed. The dead-path counter finds what a pruned network wastes: hidden units cut off from the input
or the output, and nonzero weights on no input-to-output path.
"""

from __future__ import annotations

from functools import cache
from itertools import combinations, combinations_with_replacement

import torch


def check_eligible(mask: torch.Tensor) -> torch.Tensor:
    """Return the 0/1 layer mask [out, in] unchanged, or raise ValueError naming its empty rows or columns."""
    mask = torch.as_tensor(mask)
    if mask.dim() != 2:
        raise ValueError(f"a layer mask is [out, in], got shape {tuple(mask.shape)}")
    empty_rows = torch.nonzero(mask.sum(1) == 0).flatten().tolist()
    empty_cols = torch.nonzero(mask.sum(0) == 0).flatten().tolist()
    if empty_rows or empty_cols:
        raise ValueError(f"mask is not eligible: empty rows {empty_rows} (units with no input), empty columns "
                         f"{empty_cols} (units with no output); every row and column needs a nonzero")
    return mask


def is_eligible(mask: torch.Tensor) -> bool:
    mask = torch.as_tensor(mask)
    return bool((mask.sum(1) > 0).all() and (mask.sum(0) > 0).all())


@cache
def _canonical_rows(num_in: int) -> tuple[tuple[int, ...], ...]:
    """All nonempty 0/1 rows of length num_in, descending by (nnz, binary value)."""
    rows = [tuple(1 if i in chosen else 0 for i in range(num_in))
            for k in range(1, num_in + 1) for chosen in combinations(range(num_in), k)]
    return tuple(sorted(rows, key=lambda r: (sum(r), int("".join(map(str, r)), 2)), reverse=True))


@cache
def _eligible_tuples(num_in: int, num_out: int, nnz: int) -> tuple:
    found = []
    for rows in combinations_with_replacement(_canonical_rows(num_in), num_out):  # sorted multisets: no permutations
        if sum(map(sum, rows)) == nnz and all(any(r[c] for r in rows) for c in range(num_in)):
            found.append(rows)
    return tuple(found)


def eligible_masks(num_in: int, num_out: int, nnz: int) -> torch.Tensor:
    """Every eligible [num_out, num_in] mask with exactly ``nnz`` ones, one per row-permutation class:
    a float tensor [M, num_out, num_in] (M = 0 when nnz is outside [max(in, out), in * out])."""
    if min(num_in, num_out) < 1:
        raise ValueError(f"layer sizes must be >= 1, got in={num_in}, out={num_out}")
    if num_out > 8 or num_in > 8:
        raise ValueError(f"enumeration is exponential; layers up to 8 x 8, got {num_out} x {num_in}")
    found = _eligible_tuples(num_in, num_out, nnz)
    if not found:
        return torch.zeros(0, num_out, num_in)
    return torch.tensor(found, dtype=torch.float32)


def count_eligible(num_in: int, num_out: int, nnz: int) -> int:
    return len(_eligible_tuples(num_in, num_out, nnz))


def _reach(masks: list[torch.Tensor]) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Per layer boundary l = 0..L: forward[l] [K, n_l] (reached from the inputs), backward[l] (reaches the output)."""
    k = masks[0].shape[0]
    fwd = [torch.ones(k, masks[0].shape[2], dtype=torch.bool)]
    for m in masks:
        fwd.append(torch.einsum("koi,ki->ko", (m != 0).float(), fwd[-1].float()) > 0)
    bwd = [torch.ones(k, masks[-1].shape[1], dtype=torch.bool)]
    for m in reversed(masks):
        bwd.insert(0, torch.einsum("koi,ko->ki", (m != 0).float(), bwd[0].float()) > 0)
    bwd[-1] = torch.ones(k, masks[-1].shape[1], dtype=torch.bool)
    return fwd, bwd


def dead_path_counts(masks: list[torch.Tensor]) -> dict[str, torch.Tensor]:
    """Dead-path statistics of K pruned networks from their weight masks (list of [K, out, in] or [out, in]).

    Returns per-network tensors [K]: ``nnz`` (nonzero weights), ``dead_units`` (hidden units that keep a weight but
    have no path from the input or none to the output; units with no weight at all are absent, not dead),
    ``no_input_units``, ``no_output_units``, ``dead_weights`` (nonzero weights on no
    input-to-output path) and ``effective_nnz`` = nnz - dead_weights.
    """
    masks = [torch.as_tensor(m) for m in masks]
    masks = [m.unsqueeze(0) if m.dim() == 2 else m for m in masks]
    for a, b in zip(masks, masks[1:]):
        if a.shape[1] != b.shape[2] or a.shape[0] != b.shape[0]:
            raise ValueError(f"masks do not chain: {tuple(a.shape)} then {tuple(b.shape)}")
    fwd, bwd = _reach(masks)
    hidden_fwd, hidden_bwd = torch.cat(fwd[1:-1], 1), torch.cat(bwd[1:-1], 1)
    nnz = sum((m != 0).sum((1, 2)) for m in masks)
    has_in = torch.cat([(m != 0).any(2) for m in masks[:-1]], 1)
    has_out = torch.cat([(m != 0).any(1) for m in masks[1:]], 1)
    touched = has_in | has_out  # a unit pruned away completely is not a dead path, just absent
    # a weight i -> o lives iff input i is reached from the inputs and o reaches the output: Sec. 5 "dead paths"
    alive = sum(((m != 0) & bwd[l + 1].unsqueeze(2) & fwd[l].unsqueeze(1)).sum((1, 2)) for l, m in enumerate(masks))
    return {
        "nnz": nnz,
        "dead_units": (touched & ~(hidden_fwd & hidden_bwd)).sum(1),
        "no_input_units": (touched & ~hidden_fwd).sum(1),
        "no_output_units": (touched & ~hidden_bwd).sum(1),
        "dead_weights": nnz - alive,
        "effective_nnz": alive,
    }
