"""Regime measurements of a set of task vectors: how large, how aligned and how localized they are.

TALL masks and Consensus Merging (Wang et al., ICML 2024) are claimed for fine-tuned foundation models, whose task
vectors ``tau_t = theta_t - theta_0`` are small next to ``theta_0`` and nearly orthogonal to each other; how well
``theta_0 + m_t * tau_MTL`` recovers task ``t`` also depends on how concentrated each ``tau_t`` is (few large entries
are easy to keep apart, dense Gaussian-like vectors are not). ``task_vector_statistics`` puts numbers on the
three properties so a reproduction can say which regime it is in.
"""

from __future__ import annotations

import torch

from .task_vectors import flat_task_vectors

_BLOCK = 1 << 16  # parameters per block of the Gram matrix


def task_vector_statistics(pretrained, finetuned, top: tuple[float, ...] = (0.01, 0.05)) -> dict:
    r"""Size, alignment and concentration of the task vectors of ``finetuned`` around ``pretrained``.

    Returns a dict with, per task (lists of length ``T``):

    * ``rel_norm``: ``||tau_t|| / ||theta_0||``;
    * ``energy_top{pct}``: the share of ``||tau_t||^2`` held by its largest ``pct`` % entries (1 and 5 by
      default; a dense Gaussian vector gives about 0.085 and 0.28, a vector living on 1% of the weights 1.0);
    * ``kurtosis``: the (non-excess) kurtosis of the entries of ``tau_t`` (3 for a Gaussian);

    and the scalars ``mean_abs_cos`` (mean ``|cos(tau_s, tau_t)|`` over pairs ``s != t``, ``nan`` for one
    task) and ``max_abs_cos``. ``pretrained``: a state dict or ``[P]``; ``finetuned``: state dicts, ``[T, P]`` or a
    ``TaskVectors``.
    """
    base, tau, _, _ = flat_task_vectors(pretrained, finetuned)  # tau_t = theta_t - theta_0
    if not all(0.0 < q <= 1.0 for q in top):
        raise ValueError(f"top must hold fractions in (0, 1], got {top}")
    num_tasks, num_params = tau.shape
    base_norm = float(base.double().norm())
    out: dict = {"rel_norm": [], **{f"energy_top{q * 100:g}": [] for q in top}, "kurtosis": []}
    gram = torch.zeros(num_tasks, num_tasks, dtype=torch.float64)
    for start in range(0, num_params, _BLOCK):  # Gram matrix of the task vectors in float64, a block at a time
        block = tau[:, start:start + _BLOCK].double()
        gram += block @ block.T
    for row in tau:  # one task at a time in float64: memory stays a few [P] vectors, not [T, P] ones
        row = row.double()
        energy = row.square()
        total = float(energy.sum())
        if total == 0.0:
            raise ValueError("a task vector is all zeros (theta_t == theta_0): fine-tune every task before measuring")
        out["rel_norm"].append(total ** 0.5 / max(base_norm, 1e-300))
        for q in top:  # share of ||tau_t||^2 in its largest q-fraction of entries
            count = max(1, int(round(q * num_params)))
            out[f"energy_top{q * 100:g}"].append(float(energy.topk(count, sorted=False).values.sum()) / total)
        centered = row.sub_(row.mean())
        variance = float(centered.square().mean())
        out["kurtosis"].append(float(centered.pow_(4).mean()) / max(variance ** 2, 1e-300))
    norms = gram.diagonal().sqrt()
    cos = (gram / torch.outer(norms, norms)).abs()
    if num_tasks > 1:
        off = cos[~torch.eye(num_tasks, dtype=torch.bool)]
        out["mean_abs_cos"], out["max_abs_cos"] = float(off.mean()), float(off.max())
    else:
        out["mean_abs_cos"] = out["max_abs_cos"] = float("nan")
    return out
