"""Choosing GDEM's hyper-parameters on the real validation nodes, for graphs without an official configuration.

GDEM's paper tunes per dataset and rate; the official configurations exist only for its datasets. For another
graph, ``select_gdem`` distils one graph per candidate configuration (a small grid), trains the evaluation
GNN on it, and keeps the candidate with the best accuracy on the real *validation* nodes. The test nodes are
never read for the choice.
"""

from __future__ import annotations

from torch_geometric.data import Data

from ..._random import seed_int
from .gdem import GDEM
from .training import prepare_real_graph, train_on_synthetic


def select_gdem(data: Data, candidates: list[dict], reduction_rate: float, random_state=None, eval_epochs: int = 300,
                real: Data | None = None, **shared) -> tuple[GDEM, list[dict]]:
    """Fit ``GDEM(reduction_rate, random_state, **shared, **candidate)`` per candidate; keep the best on validation.

    Args:
        data (Data): the real graph with ``train_mask`` and ``val_mask``.
        candidates (list of dict): GDEM keyword arguments, one configuration each (e.g. the official
            configurations of another dataset); at least one.
        reduction_rate (float): ``r``, the same for every candidate.
        random_state (None, int or numpy Generator): seeds every candidate's distillation and its evaluation GCN,
            all candidates alike: an int ``s`` is used as is (``GDEM(random_state=s)``, a GCN from
            ``torch.Generator().manual_seed(s)``), else one int is drawn from it (``icml24._random.seed_int``).
        eval_epochs (int): epochs of the evaluation GCN (selected on the real validation nodes).
        real (Data, optional): ``prepare_real_graph(data)`` when already built.
        **shared: GDEM keyword arguments common to every candidate (e.g. the feature initialization).

    Returns:
        ``(model, scores)``: the fitted GDEM of the best candidate (ties: the first) and, per candidate in order,
        ``{"candidate": i, "val_acc": ...}``.
    """
    if not candidates:
        raise ValueError("select_gdem needs at least one candidate configuration")
    if getattr(data, "val_mask", None) is None or not bool(data.val_mask.any()):
        raise ValueError("select_gdem chooses on validation nodes: data.val_mask must select at least one node")
    real = prepare_real_graph(data) if real is None else real
    seed = seed_int(random_state)  # one int: every candidate gets the same streams
    best, best_acc, scores = None, -1.0, []
    for i, candidate in enumerate(candidates):
        model = GDEM(reduction_rate=reduction_rate, random_state=seed, **{**shared, **candidate}).fit(data)
        result = train_on_synthetic(model.graph_, real, epochs=eval_epochs, random_state=seed)
        scores.append({"candidate": i, "val_acc": float(result["val_acc"])})
        if result["val_acc"] > best_acc:
            best, best_acc = model, float(result["val_acc"])
    best.selection_ = scores
    return best, scores
