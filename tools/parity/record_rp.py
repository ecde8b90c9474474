"""Re-record tests/parity/rp.json from a local copy of chr26195/ResidualPropagation.

    python tools/parity/record_rp.py        # needs $ICML24_PEERS/ResidualPropagation

Runs the official step of RP (RP/main.py: LabelPropagation.forward, construct_sparse_adj) and of Generalized RP
(Generalized_RP/main.py: the same with the degree-normalized GaussianKernel of NormalizeFeatures' features) on the
fixture's graph, with the official loop: R <- R - lr * P [R_L; 0]. Records the predictions F = [Y_L - R_L; -R_U]
after the last step and the validation accuracy of every step (argmax of -R, as the official METRICS['acc']).
The official dataset loader imports ogb, which is not needed here: it is stubbed.
"""

from __future__ import annotations

import importlib.util
import sys
import time
import types
from pathlib import Path

import torch
import torch_geometric.transforms as T

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "fixtures"))
from _record import commit_of, official_copy, write_fixture  # noqa: E402
from rp_parity_inputs import CASES, small_graph  # noqa: E402


def _load(folder: Path, name: str):
    """The official ``main.py`` of ``folder`` (RP or Generalized_RP) with its sibling modules."""
    for sibling in ("utils", "eval", "dataset"):
        sys.modules.pop(sibling, None)
    sys.path.insert(0, str(folder))
    ogb = types.ModuleType("ogb")
    ogb.nodeproppred = types.ModuleType("ogb.nodeproppred")
    ogb.nodeproppred.PygNodePropPredDataset = None
    sys.modules.setdefault("ogb", ogb)
    sys.modules.setdefault("ogb.nodeproppred", ogb.nodeproppred)
    spec = importlib.util.spec_from_file_location(name, folder / "main.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.path.remove(str(folder))
    return module


def main() -> None:
    path = official_copy("ResidualPropagation", "RP/main.py")
    official = {"rp": _load(path / "RP", "rp_official"), "grp": _load(path / "Generalized_RP", "grp_official")}
    data = small_graph()
    normalized = T.NormalizeFeatures()(data.clone())  # the official loaders' transform
    onehot = torch.nn.functional.one_hot(data.y, int(data.y.max()) + 1).float()
    cases = []
    for name, algorithm, k, alpha, gamma, lr, steps in CASES:
        module = official[algorithm]
        model = module.LabelPropagation(k=k, alpha=alpha)
        model.preprocess(None, data.edge_index, num_nodes=data.num_nodes, num_classes=onehot.shape[1])
        if algorithm == "grp":
            kernel = module.GaussianKernel(normalized.x, gamma)
            scale = kernel.sum(dim=0) ** (-0.5)
            kernel = kernel * scale.unsqueeze(dim=0) * scale.unsqueeze(dim=1)
        residuals = torch.zeros_like(onehot)
        residuals[data.train_mask] = onehot[data.train_mask].clone()
        accuracies = []
        start = time.perf_counter()
        for _ in range(steps):  # the official training loop
            masked = residuals.clone()
            masked[~data.train_mask] = 0
            residuals -= lr * (model(masked, kernel) if algorithm == "grp" else model(masked))
            accuracies.append(float(((-residuals[data.val_mask]).argmax(dim=1) == data.y[data.val_mask]).float()
                                    .mean()))
        seconds = time.perf_counter() - start
        scores = -residuals
        scores[data.train_mask] += onehot[data.train_mask]
        cases.append({"name": name, "call": f"{'Generalized_RP' if algorithm == 'grp' else 'RP'}/main.py "
                      "LabelPropagation (+ GaussianKernel) in the official loop",
                      "inputs": {"recipe": "tests/fixtures/rp_parity_inputs.py small_graph(0)", "k": k,
                                 "alpha": alpha, "gamma": gamma, "lr": lr, "steps": steps},
                      "values": {"scores": scores.tolist(), "val_accuracy": accuracies},
                      "tolerance": 1e-5, "official_seconds": seconds})
        print(name, f"val accuracy at the end {accuracies[-1]:.2f}, {seconds * 1e3:.1f} ms")
    write_fixture("rp", "chr26195/ResidualPropagation", commit_of(path), cases,
                  notes="float32 official arithmetic; ours runs in float64, hence the 1e-5 tolerance.")


if __name__ == "__main__":
    main()
