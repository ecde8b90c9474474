"""Attention sinks: detection and the ACT calibration of one attention map.

Yu et al., "Unveiling and Harnessing Hidden Attention Sinks: Enhancing Large Language Models without
Training through Attention Calibration", ICML 2024.

For a post-softmax, causal attention map ``A`` (queries ``i`` x keys ``j``) of one head, ACT's per-head steps 1-5
(paper Sec. 4; numbered in the order the official ``llama_modelling_aug.py`` computes them):

.. math::

    \\mathrm{col}_j = \\frac{\\sum_i A_{ij}}{\\#\\{i : i \\text{ sees } j\\}} \\quad (= \\sum_i A_{ij} / (L - j)),
    \\qquad S = \\{ j : \\mathrm{col}_j > \\alpha \\} \\setminus \\{\\min S\\}

(step 1: ``col_j``; step 2: the sinks ``S``, the first one found, normally the initial token, is kept), and each row
``i`` is recalibrated (steps 3-4) as

.. math::

    A'_{ij} = \\beta A_{ij} \\; (j \\in S), \\qquad
    A'_{ij} = A_{ij} + (1 - \\beta) \\Big(\\sum_{k \\in S} A_{ik}\\Big)
              \\frac{A_{ij}}{\\sum_{k \\notin S} A_{ik}} \\; (j \\notin S),

so each row still sums to one. Step 5 (``A[0, 0] = 1``) needs no code: the first query sees only the first key,
which is never a calibrated sink (it is no sink, or the first one, which is kept). Every function is vectorized
over any leading (batch, head) dimensions and is padding-aware through an ``allowed`` mask (which query may attend
to which key): padded queries attend to nothing and are neither counted in ``col_j`` nor changed.
"""

from __future__ import annotations

import torch

from icml24._validation import check_finite, check_positive

from . import kernels

Tensor = torch.Tensor
_CANCELLATION = 1e-2  # others_mass below this share of the row sum is recomputed exactly


def causal_allowed(num_queries: int, num_keys: int, padding_mask: Tensor | None = None) -> Tensor:
    """Which query may attend to which key, for causal attention with optional left/right padding.

    Args:
        num_queries (int): number of query rows ``Lq`` (the last ``Lq`` positions of the keys).
        num_keys (int): number of keys ``Lk >= Lq``.
        padding_mask (Tensor, optional): ``[B, Lk]``, 1/True for real tokens, 0/False for padding.

    Returns:
        Tensor: bool ``[Lq, Lk]`` without padding, else ``[B, 1, Lq, Lk]`` (broadcasts over heads); a padded
        query row allows no key.
    """
    if num_queries > num_keys:
        raise ValueError(f"num_queries ({num_queries}) must not exceed num_keys ({num_keys})")
    query_pos = torch.arange(num_keys - num_queries, num_keys)
    allowed = query_pos[:, None] >= torch.arange(num_keys)[None, :]
    if padding_mask is None:
        return allowed
    if padding_mask.ndim != 2 or padding_mask.shape[1] != num_keys:
        raise ValueError(f"padding_mask must have shape [batch, {num_keys}], got {tuple(padding_mask.shape)}")
    valid = padding_mask.bool().to(allowed.device)
    allowed = allowed[None] & valid[:, None, :] & valid[:, num_keys - num_queries :, None]
    return allowed[:, None]


def _allowed_for(attn: Tensor, allowed: Tensor | None) -> Tensor | None:
    """The ``allowed`` mask as bool on ``attn``'s device; ``None`` stays ``None`` (plain causal, the fast path)."""
    if attn.ndim < 2:
        raise ValueError(f"attention must have shape [..., queries, keys], got {tuple(attn.shape)}")
    num_queries, num_keys = attn.shape[-2:]
    if num_queries > num_keys:
        raise ValueError(f"attention has more queries ({num_queries}) than keys ({num_keys}); it must be causal")
    if allowed is None:
        return None
    if allowed.shape[-2:] != (num_queries, num_keys):
        raise ValueError(
            f"allowed mask must end in [{num_queries}, {num_keys}] like the attention, got {tuple(allowed.shape)}"
        )
    return allowed.to(device=attn.device, dtype=torch.bool)


def _causal_viewers(num_queries: int, num_keys: int, dtype, device) -> Tensor:
    """How many causal queries see each key: ``Lq`` for the keys before the first query, then ``Lk - j``."""
    return (num_keys - torch.arange(num_keys, device=device)).clamp_max(num_queries).to(dtype)


def _check_finite_sums(attn: Tensor, sums: Tensor) -> None:
    """Reject NaN/inf in ``attn`` from sums over it that are computed anyway: a non-finite entry makes its sum
    non-finite (attention weights cannot overflow a sum), and this costs nothing next to a full ``isfinite`` pass."""
    if not bool(torch.isfinite(sums).all()):
        check_finite("attn", attn)


def sink_scores(attn: Tensor, allowed: Tensor | None = None) -> Tensor:
    """Mean attention each key receives from the queries that may see it: ``col_j`` of the paper.

    Args:
        attn (Tensor): post-softmax attention ``[..., Lq, Lk]``, zero where ``allowed`` is False in the rows of
            real queries (as a masked softmax gives).
        allowed (Tensor, optional): bool ``[..., Lq, Lk]`` (broadcastable); default causal, no padding. For a
            square causal map the denominator is ``L - j``, the diagonal included, as in the official code.

    Returns:
        Tensor: ``[..., Lk]``; 0 for keys no query sees (padding).
    """
    allowed = _allowed_for(attn, allowed)
    num_queries, num_keys = attn.shape[-2:]
    if allowed is None:  # every query is real: one column-sum pass, no mask built
        received = attn.sum(dim=-2)  # step 1
        _check_finite_sums(attn, received)
        return received / _causal_viewers(num_queries, num_keys, attn.dtype, attn.device)
    real_rows = allowed.any(dim=-1).to(attn.dtype).unsqueeze(-2)  # [..., 1, Lq]: padded queries do not vote
    received = torch.matmul(real_rows, attn).squeeze(-2)  # step 1: one read of attn, sum over real rows
    _check_finite_sums(attn, received)
    viewers = allowed.sum(dim=-2).to(attn.dtype)
    return torch.where(viewers > 0, received / viewers.clamp_min(1), torch.zeros_like(received))


def detect_sinks(attn: Tensor, threshold: float = 0.1, allowed: Tensor | None = None,
                 keep_first: bool = True) -> Tensor:
    """Sink tokens per map: ``col_j > threshold`` (``threshold > 0``), without the first one found when ``keep_first``.

    Returns:
        Tensor: bool ``[..., Lk]``, True at the sinks that ACT calibrates.
    """
    check_positive("threshold", threshold)  # col_j >= 0: a threshold <= 0 would make every key a sink
    allowed = _allowed_for(attn, allowed)
    sinks = sink_scores(attn, allowed) > threshold  # step 2: col_j > alpha
    if allowed is not None:
        sinks = sinks & allowed.any(dim=-2)
    return _drop_first(sinks) if keep_first else sinks


def _drop_first(sinks: Tensor) -> Tensor:
    """Step 2's exception: the first sink found in each map is kept (the official ``[1:]``)."""
    return sinks & (sinks.cumsum(dim=-1, dtype=torch.int32) > 1)


def calibrate_attention(attn: Tensor, sinks: Tensor, beta: float = 0.4, allowed: Tensor | None = None,
                        inplace: bool = False, normalized: bool = False) -> Tensor:
    """Scale the sink columns by ``beta`` and give the removed mass to the other keys of each row.

    Args:
        attn (Tensor): post-softmax attention ``[..., Lq, Lk]``; rows sum to one.
        sinks (Tensor): bool ``[..., Lk]`` from ``detect_sinks``.
        beta (float): share of the attention a sink keeps. Default: 0.4.
        allowed (Tensor, optional): as in ``sink_scores``; rows that allow no key (padding) stay as they are.
        inplace (bool): write the result into ``attn`` (which must then have the full batch shape) instead of a
            new tensor. Default: False.
        normalized (bool): trust that the rows of real queries sum to one (true of a softmax output, as inside
            ACT's attention) and skip the row-sum pass; NaN/inf in ``attn`` then goes unchecked here (the
            column sums of ``detect_sinks`` check it). Default: False.

    Returns:
        Tensor: the calibrated map, same shape and dtype; row sums are preserved. When no map has a sink,
        ``attn`` itself is returned.

    Cost: one read of ``attn`` for the row sums (none when ``normalized``) and one read-and-write pass that
    scales every row; the ``k`` sink columns of each map (``k`` the most sinks in a map) are read before and
    written after it through flat indices, so nothing else touches the whole map.
    """
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta must lie in [0, 1], got {beta}")
    allowed = _allowed_for(attn, allowed)
    if sinks.shape[-1] != attn.shape[-1]:
        raise ValueError(f"sinks must end in {attn.shape[-1]} keys, got {tuple(sinks.shape)}")
    num_sinks = int(sinks.sum(dim=-1).max()) if sinks.numel() else 0
    if num_sinks == 0:
        _check_finite_sums(attn, attn.sum())
        return attn
    num_queries, num_keys = attn.shape[-2:]
    # the (few) sink columns of every map, sinks first: [..., k]; maps with fewer sinks pad with other columns
    flags, columns = sinks.to(attn.dtype).topk(num_sinks, dim=-1)
    batch_shape = torch.broadcast_shapes(attn.shape[:-2], columns.shape[:-1])
    if inplace and tuple(batch_shape) != tuple(attn.shape[:-2]):
        raise ValueError(f"inplace calibration needs attn with the full batch shape {tuple(batch_shape)}")
    if not attn.is_contiguous() or tuple(batch_shape) != tuple(attn.shape[:-2]):  # flat indices need one layout
        work = attn.expand(*batch_shape, num_queries, num_keys).contiguous()
        out = calibrate_attention(work, sinks, beta, allowed, inplace=True, normalized=normalized)
        return attn.copy_(out) if inplace else out
    num_maps = attn[..., 0, 0].numel()
    flags = flags.expand(*batch_shape, num_sinks).reshape(num_maps, 1, num_sinks)
    columns = columns.expand(*batch_shape, num_sinks).reshape(num_maps, 1, num_sinks)
    # flat position of (map m, row i, sink column c): (m * Lq + i) * Lk + c
    rows = torch.arange(num_maps * num_queries, device=attn.device).view(num_maps, num_queries, 1) * num_keys
    flat = (rows + columns).view(-1)
    at_sinks = attn.view(-1).index_select(0, flat).view(num_maps, num_queries, num_sinks)
    is_sink = flags > 0
    sink_mass = (at_sinks * flags).sum(dim=-1)  # step 3: sum_{j in S} A_ij, [maps, Lq]
    # the attention left on the other tokens: row sum minus sink mass (one read of attn, in its dtype); where the
    # difference is small next to the row sum it loses digits, so those (rare) rows are summed again directly
    if normalized:
        row_mass = torch.ones_like(sink_mass)
    else:
        row_mass = attn.sum(dim=-1).view(num_maps, num_queries)
        _check_finite_sums(attn, row_mass)
    others_mass = row_mass - sink_mass
    inexact = others_mass < _CANCELLATION * row_mass
    if bool(inexact.any()):
        map_idx, row_idx = inexact.nonzero(as_tuple=True)
        not_sink = ~sinks.expand(*batch_shape, num_keys).reshape(num_maps, num_keys)[map_idx]
        exact = attn.view(num_maps, num_queries, num_keys)[map_idx, row_idx]
        others_mass[map_idx, row_idx] = (exact * not_sink).sum(dim=-1, dtype=torch.float64).to(attn.dtype)
    # a row with no non-sink mass cannot take the mass back (softmax rows never hit this); padded rows stay put
    keep = others_mass > 0
    if allowed is not None:
        keep = keep & allowed.any(dim=-1).expand(*batch_shape, num_queries).reshape(num_maps, num_queries)
    # step 4: every other key of row i grows by the factor 1 + (1 - beta) * sink_mass_i / others_mass_i
    scale = torch.where(keep, sink_mass / others_mass.clamp_min(torch.finfo(attn.dtype).tiny), 0.0)
    scale = scale.mul_(1.0 - beta).add_(1.0).unsqueeze(-1)  # [maps, Lq, 1]
    out = attn.view(num_maps, num_queries, num_keys)
    out = out.mul_(scale) if inplace else out * scale  # the one full-size pass
    # sinks keep beta of their attention (rows that keep theirs: unchanged); padding columns got the row's scale
    sink_factor = keep.to(attn.dtype).mul_(beta - 1.0).add_(1.0).unsqueeze(-1)  # beta, or 1 where not kept
    factor = torch.where(is_sink, sink_factor, scale)
    out.view(-1).index_copy_(0, flat, (at_sinks * factor).view(-1))
    return out.view(*batch_shape, num_queries, num_keys)


class AttentionCalibration:
    """ACT's input-adaptive recalibration of attention maps (Yu et al., ICML 2024, Sec. 4).

    For each map: detect the sinks ``S = {j : col_j > threshold}`` minus the first one, keep ``beta`` of
    their attention and give the rest back to the other tokens in proportion (see the module docstring).

    Args:
        threshold (float): the sink threshold ``alpha`` on ``col_j``. Default: 0.1 (official ``THRES``).
        beta (float): share of attention a sink keeps. Default: 0.4 (official ``BETA``).
        keep_first (bool): leave the first sink found uncalibrated, as the paper does. Default: True.

    Calling it on plain causal maps (no ``allowed`` mask) held in a contiguous float32/float64 CPU tensor runs the
    fused numba kernel (``icml24.llm.act.kernels``: two reads of each map, sums in float64); anything else
    (padding masks, GPU tensors, half precision, autograd) runs the torch path of ``calibrate_attention``.

    Example:
        >>> calib = AttentionCalibration(threshold=0.1, beta=0.4)
        >>> new_attn = calib(attn)              # attn: [batch, heads, L, L]
        >>> sinks = calib.detect(attn)          # bool [batch, heads, L]
    """

    def __init__(self, threshold: float = 0.1, beta: float = 0.4, keep_first: bool = True):
        check_positive("threshold", threshold)
        if not 0.0 <= beta <= 1.0:
            raise ValueError(f"beta must lie in [0, 1], got {beta}")
        self.threshold = float(threshold)
        self.beta = float(beta)
        self.keep_first = bool(keep_first)

    def detect(self, attn: Tensor, allowed: Tensor | None = None) -> Tensor:
        """Bool ``[..., Lk]``: the sinks this calibration would scale."""
        return detect_sinks(attn, self.threshold, allowed, self.keep_first)

    def __call__(self, attn: Tensor, allowed: Tensor | None = None, inplace: bool = False,
                 normalized: bool = False) -> Tensor:
        """The calibrated attention ``[..., Lq, Lk]`` (``inplace`` and ``normalized`` as in
        ``calibrate_attention``)."""
        if allowed is None and kernels.supported(attn):  # plain causal maps on the CPU: the fused kernel
            out, bad = kernels.calibrate_maps(attn, self.threshold, self.beta, self.keep_first, inplace, normalized,
                                              _CANCELLATION)
            if bad:
                check_finite("attn", attn)
            return out
        return calibrate_attention(attn, self.detect(attn, allowed), self.beta, allowed, inplace=inplace,
                                   normalized=normalized)

    def __repr__(self) -> str:
        return f"AttentionCalibration(threshold={self.threshold}, beta={self.beta}, keep_first={self.keep_first})"
