"""est: time of one training step (forward + backward + AdamW) of a sampled subnetwork, realised by slicing weights
and skipping blocks, against the peer library's full model, our full model and zero-masking the same subnetwork.

Peer line: Hugging Face transformers' ``GPT2LMHeadModel``, the GPT a user would otherwise pick to train, built
locally from a ``GPT2Config`` with our sizes (n_embd, n_layer, n_head, n_inner, context 64, vocab 256; exact GELU and
no dropout, as ours; it keeps GPT-2's linear biases, which ours drops) and randomly initialised: nothing is
downloaded. One step of it (next-token cross-entropy on its logits) on the same batch stands against one step of our
full GPT and of our stage-1 and stage-2 subnetworks. Outputs agree when both models' losses at initialisation
(before any step) are finite and within 0.1 nats of ln(vocab), the loss of the uniform prediction a GPT-2-initialised
model starts near (a wrong target alignment or a broken model misses it: predicting the input token itself gives
4.5 here).

Secondary lines (our own code): both shapes of the default schedule, stage 1 (half the layers, half the heads and
MLP units) and stage 2 (all layers, half the heads and units), against our full model and against zero-masking the
same subnetwork (the variant with no saving). Sliced and masked outputs must agree (same subnetwork, same weights);
the analytic FLOPs ratio is printed beside the time ratio.

Every time is process CPU seconds (one torch thread), the median of ``repeat`` (>= 5) steps after a warm-up round;
the steps compared on one line take turns step by step, so a shared machine's load falls on all alike (sequential
``_timing.median_of`` blocks swung 2x between lines on the loaded 2-core machine). Lines are printed by
``_timing.compare``/``check``; ``finish`` exits 1 only if some outputs disagree.

Run: python benchmarks/bench_est.py [n_embd] [n_layer]
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F
from _timing import check, compare, finish

from icml24.llm import GPT, EvolvingSubnetworkSchedule, GPTConfig, SubnetworkSampler, subnetwork_flops

LOSS_TOLERANCE = 0.1  # nats from ln(vocab) at initialisation
CPU = time.process_time  # one torch thread: CPU seconds, which a shared machine disturbs least


def _step(model, optimizer, inputs, targets, subnetwork=None, mode: str = "slice") -> Callable[[], None]:
    """One training step of our GPT (the subnetwork, or the full model with ``None``)."""
    def step():
        _, loss = model(inputs, targets, subnetwork=subnetwork, mode=mode)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return step


def _interleaved_times(steps: dict[str, Callable[[], None]], repeat: int) -> dict[str, float]:
    """Median CPU seconds of each step in ``steps``, the steps taking turns (so a shared machine's load falls on
    all alike); the first round warms up."""
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(repeat + 1):
        for name, step in steps.items():
            start = CPU()
            step()
            times[name].append(CPU() - start)
    return {name: statistics.median(t[1:]) for name, t in times.items()}


def _hf_gpt2(config: GPTConfig):
    """transformers' GPT2LMHeadModel of our sizes, randomly initialised from seed 3 (torch's global stream kept)."""
    from transformers import GPT2Config, GPT2LMHeadModel
    from transformers.utils import logging

    logging.set_verbosity_error()
    hf_config = GPT2Config(vocab_size=config.vocab_size, n_positions=config.block_size, n_embd=config.n_embd,
                           n_layer=config.n_layer, n_head=config.n_head, n_inner=config.n_mlp,
                           activation_function="gelu", resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                           bos_token_id=None, eos_token_id=None)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(3)
        return GPT2LMHeadModel(hf_config).train()


def _against_transformers(config: GPTConfig, subnetworks: dict, inputs, targets, repeat: int) -> None:
    """One step of HF GPT2LMHeadModel against one step of our full model and of each subnetwork, same batch."""
    ours = GPT(config, random_state=torch.Generator().manual_seed(0))
    hf = _hf_gpt2(config)

    def hf_loss() -> torch.Tensor:  # the same next-token cross-entropy as ours, on GPT2LMHeadModel's logits
        logits = hf(input_ids=inputs).logits
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

    with torch.no_grad():  # the agreement check: losses at initialisation, before any step
        loss_ours, loss_hf = float(ours(inputs, targets)[1]), float(hf_loss())
    uniform = math.log(config.vocab_size)
    agree = all(math.isfinite(v) and abs(v - uniform) <= LOSS_TOLERANCE for v in (loss_ours, loss_hf))
    detail = (f"losses at init: ours {loss_ours:.3f}, GPT2LMHeadModel {loss_hf:.3f}; both finite and within "
              f"{LOSS_TOLERANCE} of ln({config.vocab_size}) = {uniform:.3f}")
    optimizer = torch.optim.AdamW(ours.parameters(), lr=1e-4)
    opt_hf = torch.optim.AdamW(hf.parameters(), lr=1e-4)

    def hf_step():
        loss = hf_loss()
        opt_hf.zero_grad(set_to_none=True)
        loss.backward()
        opt_hf.step()

    steps = {name: _step(ours, optimizer, inputs, targets, sub) for name, sub in subnetworks.items()}
    times = _interleaved_times({"GPT2LMHeadModel": hf_step, **steps}, repeat)
    size = (f"{ours.num_params() / 1e6:.2f}M params (GPT2LMHeadModel {hf.num_parameters() / 1e6:.2f}M), batch "
            f"{inputs.shape[0]}x{inputs.shape[1]}")
    for name in steps:
        compare(f"training step, our {name} vs transformers GPT2LMHeadModel (full), {size}", times[name],
                times["GPT2LMHeadModel"], agree, detail, ours=f"ours ({name})", peer="GPT2LMHeadModel",
                repeats=repeat, clock="CPU, interleaved")


def main(n_embd: int = 128, n_layer: int = 4, batch: int = 16, repeat: int = 7) -> None:
    if repeat < 5:
        raise ValueError(f"repeat must be >= 5 (the median of at least 5 steps), got {repeat}")
    torch.set_num_threads(1)
    config = GPTConfig(block_size=64, n_layer=n_layer, n_head=4, n_embd=n_embd)
    tokens = torch.randint(0, config.vocab_size, (batch, config.block_size + 1),
                           generator=torch.Generator().manual_seed(1))
    inputs, targets = tokens[:, :-1], tokens[:, 1:]  # next-token prediction
    sampler = SubnetworkSampler(config, EvolvingSubnetworkSchedule.default(), torch.Generator().manual_seed(2))
    subnetworks = {"stage 1": sampler.sample(0, 10), "stage 2": sampler.sample(3, 10)}
    _against_transformers(config, {"full model": None, **{f"{k} subnetwork": v for k, v in subnetworks.items()}},
                          inputs, targets, repeat)

    model = GPT(config, random_state=torch.Generator().manual_seed(0))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    size = f"{model.num_params() / 1e6:.2f}M params, batch {batch}x{config.block_size}"
    full_flops = subnetwork_flops(config, None, batch, config.block_size)
    for stage, sub in subnetworks.items():
        with torch.no_grad():
            agree = torch.allclose(model(inputs, subnetwork=sub)[0], model(inputs, subnetwork=sub, mode="mask")[0],
                                   atol=1e-4)
        check(agree, f"{stage}: sliced and masked outputs differ")
        times = _interleaved_times({"full": _step(model, optimizer, inputs, targets),
                                    "sliced": _step(model, optimizer, inputs, targets, sub),
                                    "masked": _step(model, optimizer, inputs, targets, sub, "mask")}, repeat)
        full_s, sliced_s, masked_s = times["full"], times["sliced"], times["masked"]
        flops_ratio = subnetwork_flops(config, sub, batch, config.block_size) / full_flops
        print(f"(secondary) {stage} subnetwork vs full model, {size}, CPU: sliced {sliced_s * 1e3:.1f} ms, full "
              f"{full_s * 1e3:.1f} ms, time ratio {sliced_s / full_s:.2f} (analytic FLOPs ratio {flops_ratio:.2f})")
        print(f"(secondary) {stage} slicing vs zero-masking, {size}, CPU: sliced {sliced_s * 1e3:.1f} ms, masked "
              f"{masked_s * 1e3:.1f} ms, ratio {sliced_s / masked_s:.2f}, outputs agree: {agree}")
    finish()


if __name__ == "__main__":
    main(*map(int, sys.argv[1:3]))
