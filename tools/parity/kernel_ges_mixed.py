"""The official kernel-ges GES on our mixed data (issue #56): is the discrete= path's child-width start faithful?

    .venv/bin/python tools/parity/kernel_ges_mixed.py [--seeds 0 1] [--densities 0.5] [--official-widths 0.01 none]

The data are the ``mixed`` experiment's at its full setting (6 variables, n = 300, official Part2Discrete: half the
columns in 20 bins), drawn from the experiment's own streams (``Context(seed).rng("graph", density index, graph)``).
On each dataset it runs:

- ours: ``LearnedKernelScore`` told the binned columns (``discrete=``, every child width starts at 0.01, clamped to
  0.2, as the official mixed path) and not told (median-heuristic child widths);
- the official ``GES.ges(..., 'local_score_MI')`` (Adam, 200 epochs, threshold 1e-3: main.py's defaults) with
  ``Data_dir['width_init']`` = 0.01 (what official ``Part2Discrete`` sets on mixed data) and unset (the continuous
  path: median-heuristic child widths), on the raw data as main.py feeds it and on standardised data (ours).

It prints skeleton F1 per dataset and writes tests/fixtures/kernel_ges_mixed_official.json. Needs the official
code at ``$ICML24_PEERS/kernel-ges`` (see record_kernel_ges.py) and causal-learn (the venv has it).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from datetime import date
from pathlib import Path

import numpy as np
import torch
from _record import commit_of, official_copy

from icml24.causal import GES, LearnedKernelScore, from_causallearn, generate, skeleton_f1
from icml24.core import Context

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "kernel_ges_mixed_official.json"
LOCAL = ROOT / "tests" / "fixtures" / "kernel_ges_mixed_local_gains.json"
REPOSITORY = "wenjiewang3/Optimal-Kernel-Choice-for-Score-Function-based-Causal-Discovery"
FULL_DENSITIES = (0.3, 0.5, 0.7)  # the mixed experiment's full densities: the stream index is the density's


def dataset(seed: int, density: float, graph: int = 0):
    """The mixed experiment's data at full for (seed, density, graph): 6 variables, n = 300."""
    di = FULL_DENSITIES.index(density)
    return generate(6, 300, density, variant="mixed", random_state=Context(seed=seed).rng("graph", di, graph))


def _standardize(x: np.ndarray) -> np.ndarray:
    std = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(std > 0, std, 1.0)


class _Numpy1Where:
    """numpy with numpy 1's ``where`` on a 0-d condition (official GES.py calls ``np.where(G.graph[i, 0] != 0)``,
    which numpy 2 refuses; numpy 1 treated the scalar as a 1-element array)."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def where(condition, *args):
        return np.where(np.atleast_1d(condition), *args) if np.ndim(condition) == 0 and not args else \
            np.where(condition, *args)


def official(data, width_init: float | None, standardize: bool, seed: int) -> np.ndarray:
    import GES.GES as official_ges
    from GES.GES import ges

    official_ges.np = _Numpy1Where()

    np.random.seed(seed)  # the official model draws placeholder widths from numpy's global stream
    matrix = _standardize(data.data) if standardize else data.data.copy()
    data_dir = {"data_mat": matrix, "var_idx": [list(g) for g in data.groups]}
    if width_init is not None:
        data_dir["width_init"] = width_init
    parameters = {"epochs": 200, "device": "cpu", "optim": "adam", "threshold": 1e-3}
    record = ges(data_dir, "local_score_MI", parameters=parameters)
    return from_causallearn(np.asarray(record["G"].graph))


def official_gains(data, pairs, width_init: float | None, standardize: bool) -> list[float]:
    """Official MI local-score gain of each (parent, child) pair: score(child | {}) - score(child | {parent})
    (lower scores are better, so a gain > 0 favours the edge), Adam 200 epochs, threshold 1e-3."""
    from Score.MIScore import local_score_mi_lbfgsb

    matrix = np.asmatrix(_standardize(data.data) if standardize else data.data.copy())
    param = {"epochs": 200, "device": "cpu", "optim": "adam", "threshold": 1e-3,
             "var_idx": [list(g) for g in data.groups], "width_init": width_init}
    alone: dict[int, float] = {}
    gains = []
    for parent, child in pairs:
        if child not in alone:
            alone[child] = float(np.ravel(local_score_mi_lbfgsb(matrix, child, [], dict(param)))[0])
        gains.append(alone[child] - float(np.ravel(local_score_mi_lbfgsb(matrix, child, [parent], dict(param)))[0]))
    return gains


def our_gains(data, pairs, told: bool, optimizer: str = "lbfgsb") -> list[float]:
    score = LearnedKernelScore(optimizer=optimizer).fit(data.data, data.groups,
                                                        discrete=data.discrete if told else None)
    return [score.local_score(child, []) - score.local_score(child, [parent]) for parent, child in pairs]


def local(args) -> list[dict]:
    """Per dataset: the local-score gain of every true edge (parent -> child) and of as many non-adjacent pairs,
    ours told / not told (L-BFGS-B) and told with the official Adam loop, and official with each width_init (raw
    data, and standardised as ours; ``--ours-only`` skips the official runs and merges into the recorded rows)."""
    recorded = {(r["seed"], r["density"]): r for r in json.loads(LOCAL.read_text())["rows"]} \
        if args.ours_only and LOCAL.exists() else {}
    rows = []
    for seed in args.seeds:
        for density in args.densities:
            data = dataset(seed, density)
            dag = data.dag.astype(bool)
            edges = [(int(p), int(c)) for p, c in zip(*np.nonzero(dag), strict=True)]
            absent = [(p, c) for p in range(len(dag)) for c in range(len(dag))
                      if p != c and not dag[p, c] and not dag[c, p]][: len(edges)]
            row = {**recorded.get((seed, density), {}), "seed": seed, "density": density,
                   "discrete": np.flatnonzero(data.discrete).tolist(), "edges": edges, "absent": absent}
            for told, optimizer in ((True, "lbfgsb"), (False, "lbfgsb"), (True, "adam")):
                name = f"ours_{'told' if told else 'not_told'}" + ("_adam" if optimizer == "adam" else "")
                row[name] = {"edges": our_gains(data, edges, told, optimizer),
                             "absent": our_gains(data, absent, told, optimizer)}
                print(name, json.dumps(row[name]), flush=True)
            for width in [] if args.ours_only else args.official_widths:
                value = None if width == "none" else float(width)
                for standardize in (False,) if args.raw_only else (False, True):
                    name = f"official_width_{width}_{'standardized' if standardize else 'raw'}"
                    row[name] = {"edges": official_gains(data, edges, value, standardize),
                                 "absent": official_gains(data, absent, value, standardize)}
                    print(name, json.dumps(row[name]), flush=True)
            print(json.dumps(row), flush=True)
            rows.append(row)
    return rows


def ours(data, told: bool) -> np.ndarray:
    score = LearnedKernelScore().fit(data.data, data.groups, discrete=data.discrete if told else None)
    return GES(score, max_parents="half").fit().cpdag_


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--densities", type=float, nargs="+", default=[0.5])
    parser.add_argument("--official-widths", nargs="+", default=["0.01", "none"])
    parser.add_argument("--raw-only", action="store_true", help="official runs on the raw data only")
    parser.add_argument("--ours-only", action="store_true", help="with --local: our scores only, merged into the "
                        "recorded official rows")
    parser.add_argument("--local", action="store_true", help="local-score gains of true edges and non-edges only "
                        "(a few official local scores instead of whole searches: 9 CPU s each at n = 300)")
    args = parser.parse_args()
    path = official_copy("kernel-ges", "GES/GES.py")
    if not hasattr(np, "mat"):
        np.mat = np.asmatrix  # removed in numpy 2; the official code calls it
    torch.set_num_threads(1)
    if args.local:
        rows = local(args)
        LOCAL.write_text(json.dumps({
            "what": "local-score gain score(child | {}) - score(child | {parent}) (> 0 favours the edge) of every "
                    "true edge and as many non-adjacent pairs, on the kernel-ges mixed experiment's full-setting "
                    "data: ours told / not told the binned columns, the official MI score with width_init 0.01 "
                    "(official Part2Discrete) or unset",
            "official": {"repository": REPOSITORY, "commit": commit_of(path)},
            "recorded": {"script": "tools/parity/kernel_ges_mixed.py --local", "date": date.today().isoformat(),
                         "machine": platform.machine(), "python": platform.python_version()},
            "rows": rows}, indent=1) + "\n")
        return
    rows = []
    for seed in args.seeds:
        for density in args.densities:
            data = dataset(seed, density)
            row = {"seed": seed, "density": density, "discrete_columns": np.flatnonzero(data.discrete).tolist(),
                   "true_edges": int(data.dag.sum())}
            for told in (True, False):
                start = time.process_time()
                row[f"ours_{'told' if told else 'not_told'}_f1"] = skeleton_f1(data.dag, ours(data, told))
                row[f"ours_{'told' if told else 'not_told'}_seconds"] = time.process_time() - start
            for width in args.official_widths:
                value = None if width == "none" else float(width)
                for standardize in (False,) if args.raw_only else (False, True):
                    key = f"official_width_{width}_{'standardized' if standardize else 'raw'}"
                    start = time.process_time()
                    row[f"{key}_f1"] = skeleton_f1(data.dag, official(data, value, standardize, seed))
                    row[f"{key}_seconds"] = time.process_time() - start
            print(json.dumps(row), flush=True)
            rows.append(row)
    keys = [k for k in rows[0] if k.endswith("_f1")]
    means = {k: float(np.mean([r[k] for r in rows])) for k in keys}
    print(json.dumps(means, indent=1))
    OUT.write_text(json.dumps({
        "what": "skeleton F1 of GES on the kernel-ges mixed experiment's full-setting data (6 variables, n = 300, "
                "half the columns in 20 bins): ours told / not told the binned columns, and the official MI score "
                "(GES/GES.py, Adam 200 epochs) with width_init 0.01 (official Part2Discrete) or unset",
        "official": {"repository": REPOSITORY, "commit": commit_of(path)},
        "recorded": {"script": "tools/parity/kernel_ges_mixed.py", "date": date.today().isoformat(),
                     "machine": f"{platform.machine()}", "python": platform.python_version()},
        "rows": rows, "means": means}, indent=1) + "\n")


if __name__ == "__main__":
    main()
