"""BiE: Bi-Exponent Block Floating-Point for LLM Quantization (Zou et al., ICML 2024), on SmolLM2-135M-Instruct.

INT-k, BFP, MXFP4 and BiE as bit-exact fake quantizers compared at matched bits per element (metadata included) on
SmolLM2's linear layers: per-layer input SQNR on the outlier layers, and held-out perplexity with BiE's per-layer
thresholds searched by Bayesian optimization.
"""

from icml24.core import Paper

PAPER = Paper(
    slug="bie",
    title="BiE: Bi-Exponent Block Floating-Point for Large Language Models Quantization",
    authors="Lancheng Zou, Wenqian Zhao, Shuo Yin, Chen Bai, Qi Sun, Bei Yu",
    venue="ICML 2024",
    code="",
    summary=(
        "BiE gives each block of B elements two shared exponents (the block maximum's, for outliers, and the largest "
        "of the rest) and each element a 1-bit selector, so small values beside an outlier keep a fine grid instead "
        "of rounding to zero as in block floating point (BFP). An offline Bayesian optimization sets the outlier "
        "threshold. We implement INT-k, BFP, MXFP4 and BiE as bit-exact fake quantizers with packed encodings, the "
        "flow (calibration, per-layer threshold by optuna's TPE against layer-output MSE, nn.Linear replacement) and "
        "compare them at matched bits per element (metadata included) on SmolLM2-135M with held-out pydoc text."
    ),
    deviations=[
        "No public code: the format is reconstructed from the paper's description, with the outlier rule "
        "|x| >= threshold * block max (threshold per layer, searched) as our reading of its thresholding.",
        "Model: SmolLM2-135M-Instruct (GGUF Q4_1 weights dequantized to fp32) instead of OPT-6.7B..66B and LLaMA-2.",
        "Text: CPython's pydoc_data topics (short 128-token windows at quick) instead of WikiText2.",
        "Bayesian optimization is optuna's TPE sampler with 8-12 trials per layer, first trying threshold 0.5.",
        "W4A4-class means a 4-bit sign + mantissa word (m = 3), which with the flag and two exponents per 64 "
        "elements costs 5.25 bits per element; the 4.25-bit BiE (m = 2) is reported beside it.",
        "Shared exponents avoid saturation (E moves up one where the block maximum would round past the largest "
        "mantissa); MXFP4 follows the OCP floor rule like torchao.",
        "Overflow, our choice for every format: saturation to the largest value finite in the input's dtype (an "
        "exponent or scale past the stored range is capped there), never inf; -0 is kept where a sign bit exists.",
        "MXFP4 is bit-identical to torchao 0.18 (tests/parity/bie.json) except blocks with amax below 2^-124, where "
        "torchao divides by 2^-126 but dequantizes with the stored 2^-127; ours uses the stored scale both ways.",
        "Claims are judged on paired bootstrap 95% intervals over held-out windows (perplexity) and on the per-layer "
        "paired SQNR gain against twice its standard error, not on point ratios.",
    ],
)

from . import claims, experiments  # noqa: E402  (experiments register on PAPER, then the claims on them)
from .claims import CLAIMS, REGIMES  # noqa: E402

__all__ = ["PAPER", "CLAIMS", "REGIMES", "claims", "experiments"]
