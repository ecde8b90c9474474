"""Record the official sparsest code on fixed inputs (tests/parity/sparsest.json).

    python tools/parity/record_sparsest.py      # needs ../peers/sparsest (or $ICML24_PEERS); torch from the venv

The official modules used (``cubist_spiral.CubistSpiral``, ``Model.FourLayerMLP``, ``pruning_methods.{Magnitude,
SNIP, GraSP, ProsPr}``) need only torch and numpy. Every network is the official ``FourLayerModel`` with weights
and biases drawn from ``torch.Generator().manual_seed(SEED)`` (uniform in +-1/sqrt(fan_in), layer by layer: W then
b), the scoring data a seeded subset of the official points, fed through an unshuffled ``DataLoader`` so the
official "first batch" is a fixed set. SNIP and GraSP return masks only: their normalised scores are read from the
argument of their first ``torch.topk`` call (patched for the call, then restored).

Cases:

- ``data``: the official ``get_data()`` (count, class sizes, every 997th point, coordinate sums);
- ``bias_rule``: the official bias masks (a unit's bias kept iff it has an outgoing weight) and its weight and model
  nonzero counts for a fixed random weight mask;
- ``magnitude_budget`` / ``gmp_budget`` / ``prospr_budget``: nonzeros the official magnitude pruning, gradual
  magnitude schedule (the ``main_loop`` formula at the paper's 19,500 steps) and ProsPr keep for a budget of 24;
  ours keeps exactly 24 (``ours``, ``deviation``);
- ``snip_scores``, ``grasp_scores`` (T = 200, 25 points per class), ``prospr_scores`` (3 inner steps, lr 0.1,
  momentum 0.9) on a width-8 network, each normalised as the official code does.
"""

from __future__ import annotations

import sys
import time

import torch

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from _record import commit_of, official_copy, write_fixture  # noqa: E402

SEED, WIDTH, BUDGET, POINTS = 0, 8, 24, 256
STRIDE = 997


def official_net(width: int = WIDTH, seed: int = SEED):
    """The official FourLayerModel with weights from our seeded recipe (the test draws the same)."""
    from Model.FourLayerMLP import FourLayerModel

    net = FourLayerModel(2, width, width, width, 1)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for w, b in zip(net.weight_params, net.bias_params):
            bound = 1.0 / w.shape[1] ** 0.5
            w.copy_((torch.rand(w.shape, generator=gen) * 2 - 1) * bound)
            b.copy_((torch.rand(b.shape, generator=gen) * 2 - 1) * bound)
    return net


def scoring_data():
    """POINTS official points chosen by a seeded permutation, as one unshuffled loader."""
    from cubist_spiral.CubistSpiral import get_data

    x, y = get_data()
    idx = torch.randperm(len(x), generator=torch.Generator().manual_seed(SEED + 1))[:POINTS]
    return x[idx], y[idx]


def _loader(x, y, batch_size=128):
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=batch_size, shuffle=False)


def _first_topk_argument(fn, *args, **kwargs):
    """Run ``fn``; return (its result, the first tensor passed to torch.topk: the official normalised scores)."""
    seen, original = [], torch.topk

    def spy(t, *a, **k):
        seen.append(t.detach().clone())
        return original(t, *a, **k)

    torch.topk = spy
    try:
        out = fn(*args, **kwargs)
    finally:
        torch.topk = original
    return out, seen[0]


def _lists(tensors):
    return [t.detach().double().tolist() for t in tensors]


def main() -> None:
    path = official_copy("sparsest", "pruning_methods/SNIP.py")
    from cubist_spiral.CubistSpiral import get_data
    from pruning_methods.GraSP import GraSP
    from pruning_methods.Magnitude import magnitude_prune
    from pruning_methods.ProsPr.prospr import ProsPrPrune
    from pruning_methods.ProsPr.utils import pruning_filter_factory
    from pruning_methods.SNIP import SNIP

    cases = []
    start = time.perf_counter()
    x, y = get_data()
    seconds = time.perf_counter() - start
    cases.append({"name": "data", "call": "cubist_spiral.CubistSpiral.get_data()", "inputs": {},
                  "values": {"count": len(x), "class_1": int(y.sum()), "points": x[::STRIDE].double().tolist(),
                             "labels": y[::STRIDE, 0].double().tolist(), "sum": x.double().sum(0).tolist(),
                             "sum_squares": (x.double() ** 2).sum(0).tolist()},
                  "tolerance": 1e-6, "rtol": 1e-6, "official_seconds": seconds})

    net = official_net()
    gen = torch.Generator().manual_seed(SEED + 2)
    weight_masks = [(torch.rand(w.shape, generator=gen) < 0.3).float() for w in net.weight_params]
    mask = {f"weight_param_{i}": m for i, m in enumerate(weight_masks)}
    for i in range(4):  # the official rule, as main_loop writes it after SNIP
        mask[f"bias_param_{i}"] = (torch.sign(torch.count_nonzero(weight_masks[i + 1], dim=0)).float() if i < 3
                                   else torch.ones_like(net.bias_params[i]))
    net.update_mask(mask)
    cases.append({"name": "bias_rule", "call": "FourLayerModel.update_mask / compute_weight_nnz / compute_nnz",
                  "inputs": {"weights": f"official_net(width={WIDTH}, seed={SEED})",
                             "weight_masks": f"torch.rand(shape, generator=manual_seed({SEED + 2})) < 0.3 per layer"},
                  "values": {"bias_masks": _lists(mask[f"bias_param_{i}"] for i in range(4)),
                             "weight_nnz": net.compute_weight_nnz(), "model_nnz": net.compute_nnz()},
                  "tolerance": 0.0})

    net = official_net()
    kept = magnitude_prune(net, BUDGET)
    cases.append({"name": "magnitude_budget", "call": f"pruning_methods.Magnitude.magnitude_prune(net, {BUDGET})",
                  "inputs": {"weights": f"official_net(width={WIDTH}, seed={SEED})"},
                  "values": {"kept": int(sum(kept[f"weight_param_{i}"].sum() for i in range(4)))},
                  "ours": {"kept": BUDGET}, "tolerance": 0.0,
                  "deviation": "the official threshold keeps |w| > the (N - budget)-th smallest, one weight short of "
                               "the budget; ours keeps exactly the budget"})

    net = official_net()  # GMP: the main_loop schedule (199 events, IDXMOD = total // 200) at 50 epochs x 390 steps
    total, events = 50 * (50000 // 128), 199.0
    interval, prunable = int(total / (events + 1)), net.compute_weight_nnz()
    for step in range(interval, total, interval):
        frac = step / (events * interval)
        net.update_mask(magnitude_prune(net, int(BUDGET + (prunable - BUDGET) * (1 - frac) ** 3)))
    cases.append({"name": "gmp_budget", "call": "main_loop's imp schedule with Magnitude.magnitude_prune (no training)",
                  "inputs": {"weights": f"official_net(width={WIDTH}, seed={SEED})", "steps": total},
                  "values": {"kept": net.compute_weight_nnz()}, "ours": {"kept": BUDGET}, "tolerance": 0.0,
                  "deviation": "the official cubic schedule runs past its 199th event, where (1 - frac)^3 < 0 asks "
                               "for budget - 1 and magnitude_prune keeps one fewer; ours ends exactly at the budget"})

    xs, ys = scoring_data()
    net = official_net()
    keep_ratio = BUDGET / float(net.compute_weight_nnz())
    start = time.perf_counter()
    masks, scores = _first_topk_argument(SNIP, net, keep_ratio, _loader(xs, ys), torch.nn.BCEWithLogitsLoss(),
                                         "cpu", reinit=False)
    cases.append({"name": "snip_scores", "call": "pruning_methods.SNIP.SNIP(net, 24 / N, loader, BCE, reinit=False)",
                  "inputs": {"weights": f"official_net(width={WIDTH}, seed={SEED})",
                             "data": f"scoring_data(): {POINTS} official points, first batch of 128"},
                  "values": {"scores": scores.double().tolist(), "kept": int(sum(m.sum() for m in masks))},
                  "tolerance": 1e-7, "official_seconds": time.perf_counter() - start})

    net = official_net()
    start = time.perf_counter()
    masks, scores = _first_topk_argument(GraSP, net, 1.0 - keep_ratio, _loader(xs, ys),
                                         torch.nn.BCEWithLogitsLoss(), "cpu", 2, reinit=False)
    cases.append({"name": "grasp_scores", "call": "pruning_methods.GraSP.GraSP(net, 1 - 24 / N, loader, BCE, 2, "
                                                  "reinit=False) (T = 200, 25 points per class)",
                  "inputs": {"weights": f"official_net(width={WIDTH}, seed={SEED})", "data": "scoring_data()"},
                  "values": {"scores": scores.double().tolist(), "kept": int(sum(m.sum() for m in masks.values()))},
                  "tolerance": 1e-6, "rtol": 1e-4, "official_seconds": time.perf_counter() - start})

    net = official_net()
    prune_ratio = 1.0 - BUDGET / float(net.compute_weight_nnz())
    start = time.perf_counter()
    scores = ProsPrPrune(net, prune_ratio, _loader(xs, ys), torch.nn.BCEWithLogitsLoss(),
                         pruning_filter_factory(1, False), 3, 0.1, 0.9, return_scores=True)
    seconds = time.perf_counter() - start
    _, masks = ProsPrPrune(official_net(), prune_ratio, _loader(xs, ys), torch.nn.BCEWithLogitsLoss(),
                           pruning_filter_factory(1, False), 3, 0.1, 0.9)
    cases.append({"name": "prospr_scores", "call": "pruning_methods.ProsPr.prospr.ProsPrPrune(net, 1 - 24 / N, "
                                                   "loader, BCE, filter, 3, 0.1, 0.9, return_scores=True)",
                  "inputs": {"weights": f"official_net(width={WIDTH}, seed={SEED})", "data": "scoring_data()"},
                  "values": {"scores": _lists(scores)}, "tolerance": 1e-6, "rtol": 1e-5, "official_seconds": seconds})
    cases.append({"name": "prospr_budget", "call": "ProsPrPrune(...) keep masks, as prospr_scores",
                  "inputs": {"weights": f"official_net(width={WIDTH}, seed={SEED})", "data": "scoring_data()"},
                  "values": {"kept": int(sum(m.sum() for m in masks))}, "ours": {"kept": BUDGET}, "tolerance": 0.0,
                  "deviation": "the official keep fraction 1 - prune_ratio, rounded up through floating point, keeps "
                               "one weight over the budget; ours keeps exactly the budget"})
    write_fixture("sparsest", "stephenqz/sparsest", commit_of(path), cases,
                  notes="CPU, torch from the venv (the official pin is 2.0.1); the official code runs unchanged, "
                        "SNIP/GraSP scores read from their first torch.topk argument.")


if __name__ == "__main__":
    main()
