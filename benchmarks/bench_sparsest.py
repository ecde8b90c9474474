"""Speed of the batched mask search (K masks in one [K, out, in] run, the fused numba step) against training the
same masks one by one, the way the official search does (one nn.Linear MLP per mask, mask applied before and after
each SGD step), and against the same batch through autograd and ``torch.baddbmm`` (``fused=False``).

Both train the same eligible (3, 3, 3) masks from the same initialisations on the same minibatch order; we check
the final weights agree, then print masks trained per second and the ratio.

    python benchmarks/bench_sparsest.py [--masks 256] [--points 2000] [--epochs 2] [--single 8]
        [--official /work/peers/sparsest]

With ``--official`` (a local copy of stephenqz/sparsest, never part of this repository) it also times the
official search itself: its ``main_loop`` trains (3, 3, 3) masks one run at a time on its 50,000-point spiral
for one epoch, against our batched run on the same data; the datasets are checked to be identical.
"""

from __future__ import annotations

import argparse
import sys
import time

import torch

from icml24.pruning import BatchedMaskedMLP, candidate_masks, cubist_spiral, train_batched


def one_by_one(state: dict, masks: list[torch.Tensor], k: int, x, y, epochs: int, batch_size: int, lr: float,
               seed: int) -> list[torch.Tensor]:
    """Mask k trained alone: nn.Linear layers, torch.optim.SGD + cosine schedule, official-style masking."""
    layers = [torch.nn.Linear(w.shape[2], w.shape[1]) for w in state["weights"]]
    with torch.no_grad():
        for layer, w, b in zip(layers, state["weights"], state["biases"]):
            layer.weight.copy_(w[k])
            layer.bias.copy_(b[k])
    net = torch.nn.Sequential(layers[0], torch.nn.ReLU(), layers[1], torch.nn.ReLU(), layers[2], torch.nn.ReLU(),
                              layers[3])
    mask = [m[k] for m in masks]
    bias_masks = [(mask[i + 1].sum(0) > 0).float() for i in range(3)] + [torch.ones(1)]

    def apply():
        with torch.no_grad():
            for layer, m, bm in zip(layers, mask, bias_masks):
                layer.weight.mul_(m)
                layer.bias.mul_(bm)

    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        order = torch.randperm(len(x), generator=gen)
        for i in range(len(x) // batch_size):
            idx = order[i * batch_size:(i + 1) * batch_size]
            apply()
            opt.zero_grad()
            torch.nn.functional.binary_cross_entropy_with_logits(net(x[idx]), y[idx]).backward()
            opt.step()
            apply()
        sched.step()
    return [layer.weight.detach() for layer in layers]


def official_side_by_side(path: str, masks_batched: int, runs: int) -> bool:
    """The official comb_search runs (one mask each, 1 epoch) against one batched run of our masks, same data."""
    import tempfile
    import types

    sys.path.insert(0, path)
    # the official RigL helper imports torchvision for model-type checks; the comb_search path never uses it
    sys.modules.setdefault("torchvision", types.ModuleType("torchvision"))
    from cubist_spiral.CubistSpiral import get_data  # the official code, read from the local copy
    from training_loops.main_loop import main_loop

    x_off, y_off = get_data()
    x, y = cubist_spiral(50_000)
    same = x.shape == x_off.shape and torch.allclose(x, x_off, atol=1e-5) and torch.equal(y, y_off)
    config = {"lr_milestones": "cosine_annealing", "d1": 3, "d2": 3, "d3": 3, "momentum": 0.9, "lr": 0.1,
              "batch_size": 128, "weight_decay": 5e-4, "epochs": 1, "prune_type": "comb_search", "w1_nnz": 4,
              "w1_mask": 0, "w2_nnz": 6, "w2_mask": 0, "w3_nnz": 6, "w3_mask": 0, "clf_nnz": "NA", "clf_mask": "NA",
              "out_dim": 1, "in_dim": 2, "width": 16}
    with tempfile.TemporaryDirectory() as tmp:
        import os

        os.makedirs(f"{tmp}/checkpoints")
        start = time.perf_counter()
        for run in range(runs):
            main_loop({**config, "w2_mask": run % 3}, tmp, tmp, run).run()
        official = time.perf_counter() - start
    pool = [m[:masks_batched] for m in candidate_masks((3, 3, 3), 16)]
    k = len(pool[0])
    model = BatchedMaskedMLP((2, 3, 3, 3, 1), k, [*pool, torch.ones(k, 1, 3)], init_widths=(2, 16, 16, 16, 1),
                             random_state=0)
    start = time.perf_counter()
    train_batched(model, x, y, epochs=1, batch_size=128, lr=0.1, random_state=1)
    batched = time.perf_counter() - start
    rate_b, rate_o = k / batched, runs / official
    print(f"sparsest batched vs official search (main_loop, comb_search): (3,3,3) masks x 1 epoch "
          f"({len(x) // 128} steps) on the 50,000-point spiral: batched {batched:.2f} s for {k} ({rate_b:.1f} "
          f"masks/s), official {official:.2f} s for {runs} ({rate_o:.2f} masks/s), ratio {rate_b / rate_o:.1f}x, "
          f"datasets identical: {same}")
    return same


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--masks", type=int, default=256, help="masks trained by the batched run")
    parser.add_argument("--single", type=int, default=8, help="masks trained one by one (timed, then per mask)")
    parser.add_argument("--points", type=int, default=2000)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--official", default="", help="path to a local copy of stephenqz/sparsest")
    parser.add_argument("--official-runs", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(1)  # compare the algorithms, not the thread pools
    x, y = cubist_spiral(args.points)
    pool = [m[: args.masks] for m in candidate_masks((3, 3, 3), 16)]  # 2,580 eligible triples at 16 + 3 nonzeros
    masks = [*pool, torch.ones(len(pool[0]), 1, 3)]
    k = len(masks[0])
    model = BatchedMaskedMLP((2, 3, 3, 3, 1), k, masks, init_widths=(2, 16, 16, 16, 1), random_state=0)
    state = model.snapshot()
    recipe = {"epochs": args.epochs, "batch_size": 128, "lr": 0.1}
    warm = BatchedMaskedMLP((2, 3, 3, 3, 1), k, masks)  # first calls pay allocator and kernel warm-up: not timed
    train_batched(warm, x[:256], y[:256], epochs=1, batch_size=128)
    one_by_one(warm.snapshot(), masks, 0, x[:256], y[:256], epochs=1, batch_size=128, lr=0.1, seed=0)
    start = time.perf_counter()
    train_batched(model, x, y, random_state=1, **recipe)
    batched = time.perf_counter() - start
    autograd = BatchedMaskedMLP((2, 3, 3, 3, 1), k, masks)
    autograd.load_snapshot(state)
    start = time.perf_counter()
    train_batched(autograd, x, y, random_state=1, fused=False, **recipe)
    unfused = time.perf_counter() - start
    close = all(torch.allclose(a, b, atol=1e-4) for a, b in zip(model.weights, autograd.weights))
    print(f"sparsest fused numba step vs autograd through torch.baddbmm: {k} masks x "
          f"{args.epochs * (len(x) // 128)} steps: fused {batched:.2f} s, autograd {unfused:.2f} s, ratio "
          f"{unfused / batched:.1f}x, final weights agree within 1e-4: {close}")
    single_n = min(args.single, k)
    start = time.perf_counter()
    singles = [one_by_one(state, masks, i, x, y, seed=1, **recipe) for i in range(single_n)]
    single = time.perf_counter() - start
    agree = all(torch.allclose(model.weights[layer][i].detach(), w, atol=1e-5)
                for i, ws in enumerate(singles) for layer, w in enumerate(ws))
    rate_b, rate_s = k / batched, single_n / single
    steps = args.epochs * (len(x) // 128)
    print(f"sparsest batched search vs one-by-one: {k} (3,3,3) masks x {steps} SGD steps on {len(x)} points: "
          f"batched {batched:.2f} s ({rate_b:.1f} masks/s), one-by-one {single:.2f} s for {single_n} "
          f"({rate_s:.2f} masks/s), ratio {rate_b / rate_s:.1f}x, final weights agree: {agree}")
    if args.official:
        agree = official_side_by_side(args.official, args.masks, args.official_runs) and agree
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
