"""est: time of one training step (forward + backward + AdamW) of a sampled subnetwork, realised by slicing weights
and skipping blocks, against the full model and against zero-masking the same subnetwork (the peer with no saving).

Both shapes of the default schedule are timed: stage 1 (half the layers, half the heads and MLP units) and stage 2
(all layers, half the heads and units). Sliced and masked outputs must agree (same subnetwork, same weights); the
analytic FLOPs ratio is printed beside the time ratio. The shapes take turns step by step (so a shared machine's
load falls on all alike) and each time is the median of ``repeat`` steps. Exits non-zero only if the outputs
disagree.

Run: python benchmarks/bench_est.py [n_embd] [n_layer]
"""

from __future__ import annotations

import statistics
import sys
import time

import torch

from icml24.llm import GPT, EvolvingSubnetworkSchedule, GPTConfig, SubnetworkSampler, subnetwork_flops


def _step_seconds(model, optimizer, x, subnetwork, mode: str) -> float:
    start = time.perf_counter()
    _, loss = model(x, x, subnetwork=subnetwork, mode=mode)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return time.perf_counter() - start


def _interleaved_times(model, optimizer, x, shapes: dict, repeat: int) -> dict[str, float]:
    """Median step time of each (subnetwork, mode) in ``shapes``, the shapes taking turns step by step."""
    times: dict[str, list[float]] = {name: [] for name in shapes}
    for _ in range(repeat + 1):
        for name, (subnetwork, mode) in shapes.items():
            times[name].append(_step_seconds(model, optimizer, x, subnetwork, mode))
    return {name: statistics.median(t[1:]) for name, t in times.items()}  # the first round warms up


def main(n_embd: int = 128, n_layer: int = 4, batch: int = 16, repeat: int = 7) -> int:
    torch.set_num_threads(1)
    config = GPTConfig(block_size=64, n_layer=n_layer, n_head=4, n_embd=n_embd)
    model = GPT(config, random_state=torch.Generator().manual_seed(0))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randint(0, config.vocab_size, (batch, config.block_size), generator=torch.Generator().manual_seed(1))
    sampler = SubnetworkSampler(config, EvolvingSubnetworkSchedule.default(), torch.Generator().manual_seed(2))
    size = f"{model.num_params() / 1e6:.2f}M params, batch {batch}x{config.block_size}"
    full_flops = subnetwork_flops(config, None, batch, config.block_size)
    failed = 0
    for stage, step in (("stage 1", 0), ("stage 2", 3)):
        sub = sampler.sample(step, 10)
        with torch.no_grad():
            agree = torch.allclose(model(x, subnetwork=sub)[0], model(x, subnetwork=sub, mode="mask")[0], atol=1e-4)
        failed += not agree
        times = _interleaved_times(model, optimizer, x, {"full": (None, "slice"), "sliced": (sub, "slice"),
                                                          "masked": (sub, "mask")}, repeat)
        full_s, sliced_s, masked_s = times["full"], times["sliced"], times["masked"]
        flops_ratio = subnetwork_flops(config, sub, batch, config.block_size) / full_flops
        print(f"{stage} subnetwork vs full model, {size}: sliced {sliced_s * 1e3:.1f} ms, full {full_s * 1e3:.1f} "
              f"ms, time ratio {sliced_s / full_s:.2f} (analytic FLOPs ratio {flops_ratio:.2f})")
        print(f"{stage} slicing vs zero-masking, {size}: sliced {sliced_s * 1e3:.1f} ms, masked {masked_s * 1e3:.1f} "
              f"ms, ratio {sliced_s / masked_s:.2f}, outputs agree: {agree}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(*map(int, sys.argv[1:3])))
