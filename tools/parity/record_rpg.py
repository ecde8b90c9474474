"""Record RPG's official region split and regional cross-attention on fixed tensors (tests/parity/rpg.json).

    python tools/parity/record_rpg.py      # needs ../peers/RPG-DiffusionMaster (or $ICML24_PEERS)

The official ``cross_attention.py`` imports xformers and torchvision and ``matrix.py`` imports OpenCV; none of them
is installed here (xformers has no CPU build), so they are stubbed: ``xformers.ops.memory_efficient_attention`` by
plain scaled dot-product attention (what it computes on 3-d inputs, scale 1/sqrt(d)), torchvision and cv2 by empty
modules (neither is used on this path). Everything else is the official code: ``keyconverter`` and ``matrixdealer``
turn the split ratio into rows and cells, and the official ``hook_forward`` runs on a diffusers ``Attention``.

Cases (inputs are recipes the test re-creates with torch 2.13's CPU generator):

- ``region_map_<ratio>_<n>``: which region's prompt every position of an ``n x n`` latent attends to (the queries
  are zeroed so attention is uniform, region i's chunk holds the constant i, values and output are the identity):
  the official slicing of the latent into rows and cells, read off the hook's output.
- ``attention_<ratio>``: the hook's output (cond and uncond halves, beta = 0.5) on random weights and inputs.
"""

from __future__ import annotations

import sys
import time
import types

import torch

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from _record import commit_of, official_copy, write_fixture  # noqa: E402

TOKENS = 77  # the official TOKENSCON: one chunk per prompt part
DIM, HEADS = 8, 2
RATIOS = {"1,1": 2, "1,1,1": 3, "1,1,1;1,1,1": 4, "1,1,1,1;1,1,1": 5, "1;1;1": 3, "2,1,3;1,1": 3}
ATTENTION_RATIOS = ("1,1,1", "1,1,1;1,1,1", "1,1,1,1;1,1,1", "2,1,3;1,1")  # 3, 4, 5 regions and uneven ones


def _stub_imports() -> None:
    def attention(q, k, v, attn_bias=None):  # xformers on (B*H, L, d): softmax(q k^T / sqrt(d)) v
        weights = (q @ k.transpose(-1, -2) * q.shape[-1] ** -0.5).softmax(-1)
        return weights @ v

    xformers = types.ModuleType("xformers")
    xformers.ops = types.SimpleNamespace(memory_efficient_attention=attention)
    sys.modules.setdefault("xformers", xformers)
    tv = types.ModuleType("torchvision")
    tv.transforms = types.ModuleType("torchvision.transforms")
    tv.transforms.functional = types.ModuleType("torchvision.transforms.functional")
    tv.transforms.InterpolationMode = tv.transforms.Resize = object
    stubs = {"torchvision": tv, "torchvision.transforms": tv.transforms,
             "torchvision.transforms.functional": tv.transforms.functional, "cv2": types.ModuleType("cv2")}
    for name, mod in stubs.items():
        sys.modules.setdefault(name, mod)


def _official_hook(ratio: str, regions: int, size: int, base_ratio: float):
    """The official hook (``hook_forward``) configured as its pipeline does for ``ratio`` on a size x size latent."""
    import cross_attention
    import matrix
    from diffusers.models.attention_processor import Attention

    state = types.SimpleNamespace(prompt=" BREAK ".join(["base", *[f"p{k}" for k in range(regions)]]), usebase=True)
    matrix.keyconverter(state, ratio, usebase=True)
    matrix.matrixdealer(state, ratio, base_ratio)
    state.h = state.w = size
    state.pt = [(k, k + 1) for k in range(regions + 1)]
    state.batch_size, state.isvanilla, state.pn, state.isxl = 1, False, True, False
    module = Attention(query_dim=DIM, cross_attention_dim=DIM, heads=HEADS, dim_head=DIM // HEADS)
    return cross_attention.hook_forward(state, module), module


def weights(module, generator: torch.Generator) -> None:
    """The attention weights of the ``attention_*`` cases, drawn in this order (the test draws them alike)."""
    with torch.no_grad():
        for lin in (module.to_q, module.to_k, module.to_v, module.to_out[0]):
            lin.weight.copy_(torch.randn(lin.weight.shape, generator=generator) * 0.4)
        module.to_out[0].bias.copy_(torch.randn(DIM, generator=generator) * 0.1)


def main() -> None:
    path = official_copy("RPG-DiffusionMaster", "cross_attention.py")
    import diffusers.models.attention_processor  # noqa: F401  (before the stubs: it probes torchvision)

    _stub_imports()
    cases = []
    for ratio, regions in RATIOS.items():
        for size in (16, 8, 4):
            forward, module = _official_hook(ratio, regions, size, base_ratio=0.0)
            with torch.no_grad():
                module.to_q.weight.zero_()  # uniform attention: the output is the mean value of the chunk
                module.to_k.weight.zero_()
                module.to_v.weight.copy_(torch.eye(DIM))
                module.to_out[0].weight.copy_(torch.eye(DIM))
                module.to_out[0].bias.zero_()
                context = torch.zeros(1, (regions + 1) * TOKENS, DIM)
                for k in range(regions + 1):
                    context[:, k * TOKENS:(k + 1) * TOKENS, 0] = k - 1  # base -1, region k holds k
                out = forward(torch.zeros(1, size * size, DIM), context)
            cases.append({"name": f"region_map_{ratio}_{size}", "call": "cross_attention.hook_forward (beta = 0)",
                          "inputs": {"ratio": ratio, "latent": [size, size], "context": "chunk k holds k - 1"},
                          "values": out[0, :, 0].reshape(size, size).round().int().tolist(), "tolerance": 0.0})
    for ratio in ATTENTION_RATIOS:
        regions = RATIOS[ratio]
        forward, module = _official_hook(ratio, regions, 8, base_ratio=0.5)
        generator = torch.Generator().manual_seed(35)
        weights(module, generator)
        x = torch.randn((2, 64, DIM), generator=generator)
        context = torch.randn((2, (regions + 1) * TOKENS, DIM), generator=generator)
        with torch.no_grad():
            start = time.perf_counter()
            out = forward(x, context)
            seconds = time.perf_counter() - start
        cases.append({"name": f"attention_{ratio}", "call": "cross_attention.hook_forward (beta = 0.5, cond + uncond)",
                      "inputs": {"ratio": ratio, "latent": [8, 8], "dim": DIM, "heads": HEADS, "tokens": TOKENS,
                                 "generator": "torch.Generator().manual_seed(35): weights (to_q, to_k, to_v, to_out "
                                              "x 0.4, bias x 0.1), x (2, 64, 8), context (2, 77 (R + 1), 8)"},
                      "values": out.double().numpy().round(7).tolist(), "tolerance": 1e-5, "official_seconds": seconds})
    write_fixture("rpg", "YangLing0818/RPG-DiffusionMaster", commit_of(path), cases, notes=(
        "xformers, torchvision and cv2 are stubbed (not installed; xformers has no CPU build): memory_efficient_"
        "attention is plain softmax(q k^T / sqrt(d)) v on 3-d inputs, the others are unused on this path. "
        "keyconverter, matrixdealer and hook_forward are the official code, run on a diffusers 0.42 Attention."))


if __name__ == "__main__":
    main()
