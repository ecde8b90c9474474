"""Evolving Subnetwork Training for Large Language Models (Li et al., ICML 2024).

A byte-level GPT on the Shakespeare plays trained twice with the same seed, tokens and learning-rate schedule: the
full model at every step (baseline) and EST (a fresh subnetwork per step, growing over three stages). We compare
held-out loss against steps and against analytic FLOPs, the wall-clock time, and ablate the sampled dimensions.
"""

from icml24.core import Paper

PAPER = Paper(
    slug="est",
    title="Evolving Subnetwork Training for Large Language Models",
    authors="Hanqi Li, Lu Chen, Da Ma, Zijian Wu, Su Zhu, Kai Yu",
    venue="ICML 2024",
    code="https://github.com/OpenDFM/EST",
    summary=(
        "EST samples a subnetwork (layers, attention heads, MLP width) at every training step, with sizes that grow "
        "over three stages until the full model trains, and rescales sampled heads and MLP units by 1/p. On a "
        "byte-level GPT trained on Shakespeare we measure the FLOPs saved at the same tokens, the final held-out "
        "loss against a full-model baseline, the wall-clock time and the loss at equal FLOPs."
    ),
    deviations=[
        "The official repository holds no code and the paper's stage boundaries and rates are not public, so the "
        "schedule (20% / 30% / 50% of steps, p = 0.5 / (1, 0.5, 0.5) / 1) is ours.",
        "Tiny byte-level GPTs on Shakespeare (quick 60k / 36k parameters, full 218k / 127k) trained on 20-31 "
        "tokens per parameter replace GPT-2 and TinyLlama, keeping the pre-training regime rather than the size.",
        "Skipped layers are the identity with no 1/p_L rescaling, and one AdamW optimizer runs through all stages.",
        "FLOPs are analytic matmul FLOPs (3 x forward, attention as the full T x T square), checked against "
        "torch.utils.flop_counter on one step of each stage shape.",
        "Wall clock is the summed step time of runs trained in lockstep in one process (one step of each in turn), "
        "so the shared CPU's load falls on both alike; the per-step CPU-time ratio is reported beside it.",
        "Model size and learning rate were chosen on the baseline's loss on a validation slice of the training "
        "text, under a CPU budget and at >= 20 tokens per parameter.",
        "Loss, time and equal-FLOPs claims are judged over >= 3 seeds on the mean paired difference (same seed for "
        "EST and baseline) plus 2 standard errors; the time claim on CPU time, wall clock beside it.",
        "Quick efficiency runs the 36k-parameter model for 360 steps (20.6 tokens/param) so three seeds fit the "
        "budget; the ablation's loss claim is judged at full (3 seeds), quick runs it with one.",
    ],
)

from . import claims, experiments  # noqa: E402  (experiments register on PAPER, then the claims on them)
from .claims import CLAIMS, REGIMES  # noqa: E402

__all__ = ["PAPER", "CLAIMS", "REGIMES", "claims", "experiments"]
