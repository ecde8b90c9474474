"""Regime measurements of a set of task vectors: how large, how aligned and how localized they are.

TALL masks and Consensus Merging (Wang et al., ICML 2024) are claimed for fine-tuned foundation models, whose task
vectors ``tau_t = theta_t - theta_0`` are small next to ``theta_0`` and nearly orthogonal to each other; how well
``theta_0 + m_t * tau_MTL`` recovers task ``t`` also depends on how concentrated each ``tau_t`` is (few large entries
are easy to keep apart, dense Gaussian-like vectors are not). :func:`task_vector_statistics` puts numbers on the
three properties so a reproduction can say which regime it is in.
"""

from __future__ import annotations

import torch

from .task_vectors import as_flat


def task_vector_statistics(pretrained, finetuned, top: tuple[float, ...] = (0.01, 0.05)) -> dict:
    r"""Size, alignment and concentration of the task vectors of ``finetuned`` around ``pretrained``.

    Returns a dict with, per task (lists of length ``T``):

    * ``rel_norm``: :math:`\|\tau_t\| / \|\theta_0\|`;
    * ``energy_top{pct}``: the share of :math:`\|\tau_t\|^2` held by its largest ``pct`` % entries (1 and 5 by
      default; a dense Gaussian vector gives about 0.085 and 0.28, a vector living on 1% of the weights 1.0);
    * ``kurtosis``: the (non-excess) kurtosis of the entries of :math:`\tau_t` (3 for a Gaussian);

    and the scalars ``mean_abs_cos`` (mean :math:`|\cos(\tau_s, \tau_t)|` over pairs ``s != t``, ``nan`` for one
    task) and ``max_abs_cos``. ``pretrained``: a state dict or ``[P]``; ``finetuned``: state dicts or ``[T, P]``.
    """
    base, tuned, _, _ = as_flat(pretrained, finetuned)
    if not all(0.0 < q <= 1.0 for q in top):
        raise ValueError(f"top must hold fractions in (0, 1], got {top}")
    tau = (tuned - base).double()  # tau_t = theta_t - theta_0
    num_tasks, num_params = tau.shape
    norms = tau.norm(dim=1)
    if not bool((norms > 0).all()):
        raise ValueError("a task vector is all zeros (theta_t == theta_0): fine-tune every task before measuring")
    out: dict = {"rel_norm": (norms / base.double().norm().clamp(min=1e-300)).tolist()}
    energy = tau.square()
    ordered = energy.sort(dim=1, descending=True).values
    for q in top:
        count = max(1, int(round(q * num_params)))
        out[f"energy_top{q * 100:g}"] = (ordered[:, :count].sum(dim=1) / energy.sum(dim=1)).tolist()
    centered = tau - tau.mean(dim=1, keepdim=True)
    variance = centered.square().mean(dim=1)
    out["kurtosis"] = (centered.pow(4).mean(dim=1) / variance.square().clamp(min=1e-300)).tolist()
    unit = tau / norms.unsqueeze(1)
    cos = (unit @ unit.T).abs()
    if num_tasks > 1:
        off = cos[~torch.eye(num_tasks, dtype=torch.bool)]
        out["mean_abs_cos"], out["max_abs_cos"] = float(off.mean()), float(off.max())
    else:
        out["mean_abs_cos"] = out["max_abs_cos"] = float("nan")
    return out
