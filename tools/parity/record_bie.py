"""Record torchao's MXFP4 (E2M1 elements, E8M0 scale, blocks of 32) on fixed tensors (tests/parity/bie.json).

    python tools/parity/record_bie.py      # needs ../peers/torchao/_deps (pip install --target ... torchao==0.18.0)

The BiE paper has no public code; its MXFP4 baseline is checked against torchao (a third party: pytorch/ao v0.18.0,
``torchao.prototype.mx_formats.mx_tensor.to_mx`` / ``to_dtype``, FLOOR scale mode), quantize then dequantize. Inputs
are stored in the fixture (float32, or bfloat16 values exactly representable in float32), so the test needs
neither torchao nor a generator. Cases: random heavy-tailed tensors at four scales, exact ties of the E2M1 grid,
saturation (block maxima that the floor rule puts above 6), all-zero blocks and ±0, huge blocks (3.4e38), a
bfloat16 input, and the tiny blocks (amax about 5e-39 to 2e-38) where torchao divides by 2**-126 (its scale
clamped to the smallest normal) but multiplies back by the stored 2**-127: there ours (the stored scale both
ways, as the OCP spec reads) differs, and the case records both.
The fixture's ref_* cases (BiE, BFP, INT, MXFP4 against an independent reference) come from
tools/parity/record_bie_reference.py; this script keeps them as they are.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import torch

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from _record import commit_of, official_copy, write_fixture  # noqa: E402

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]
REFERENCE_NOTE = (" Cases named ref_* (BiE, BFP, INT, MXFP4) are not torchao's: tools/parity/record_bie_reference.py "
                  "computes them from the formats' definitions in exact arithmetic (no official BiE code is public); "
                  "each says so in 'reference'.")


def _official(x: torch.Tensor) -> tuple[torch.Tensor, float]:
    from torchao.prototype.mx_formats import mx_tensor as mx

    tick = time.perf_counter()
    scale, data = mx.to_mx(x, torch.float4_e2m1fn_x2, 32)
    out = mx.to_dtype(data, scale, torch.float4_e2m1fn_x2, 32, x.dtype)
    return out, time.perf_counter() - tick


def _inputs() -> dict[str, torch.Tensor]:
    rng = np.random.default_rng(0)
    cases = {}
    for scale in (1e-3, 1.0, 300.0, 1e30):  # heavy tails: a log-normal magnitude on a Gaussian
        x = rng.standard_normal((4, 64)) * np.exp(rng.standard_normal((4, 64))) * scale
        cases[f"random_scale_{scale:g}"] = torch.from_numpy(x.astype(np.float32))
    grid = np.array([0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
    mids = (grid[:-1] + grid[1:]) / 2  # exact ties between E2M1 neighbours (and 0.25 between 0 and 0.5)
    row = np.concatenate([[6.0, 0.25, -0.25], mids, -mids, [0.75, 1.25, 1.75, 2.5, 3.5, 5.0]])
    row = np.resize(row, 32)
    row[0] = 6.0  # the block maximum fixes the scale at 2**0
    cases["ties"] = torch.from_numpy(np.stack([row, row * 2.0**-20, row * 2.0**40]).astype(np.float32))
    sat = np.linspace(-1.0, 1.0, 32)
    sat[0] = 7.99  # floor(log2 7.99) - 2 = 0: 7.99 saturates to 6
    cases["saturation"] = torch.from_numpy(np.stack([sat, sat * 2.0**-10, sat * 2.0**60]).astype(np.float32))
    zeros = np.zeros((3, 32))
    zeros[1, :] = -0.0
    zeros[2, 0] = 1.0
    zeros[2, 1] = -0.0
    cases["zeros"] = torch.from_numpy(zeros.astype(np.float32))
    huge = np.full((2, 32), 3.4e38)
    huge[1, 1::2] = -1e30
    cases["huge"] = torch.from_numpy(huge.astype(np.float32))
    b = rng.standard_normal((2, 64)) * 3.0
    cases["bfloat16"] = torch.from_numpy(b.astype(np.float32)).to(torch.bfloat16)
    tiny = np.stack([np.linspace(-1, 1, 32) * a for a in (5e-39, 1e-38, 2e-38, 4e-38, 1e-37)])
    cases["tiny_amax"] = torch.from_numpy(tiny.astype(np.float32))
    return cases


def _floats(t: torch.Tensor) -> list:
    return t.float().tolist()


def main() -> None:
    path = official_copy("torchao", "_deps/torchao/prototype/mx_formats/mx_tensor.py")
    sys.path.insert(0, str(ROOT / "src"))
    from icml24.llm import MXFormat

    ours_fmt = MXFormat("e2m1", 32)
    cases = []
    for name, x in _inputs().items():
        official, seconds = _official(x)
        entry = {"name": f"mxfp4_{name}", "call": "torchao.prototype.mx_formats.mx_tensor.to_mx + to_dtype "
                 "(torch.float4_e2m1fn_x2, block_size=32, FLOOR)",
                 "inputs": {"dtype": str(x.dtype).removeprefix("torch."), "x": _floats(x)},
                 "values": _floats(official), "signbit": torch.signbit(official).int().tolist(),
                 "tolerance": 0.0, "official_seconds": seconds}
        ours = ours_fmt.quantize(x)
        if not torch.equal(ours, official):
            entry["ours"] = _floats(ours)
            entry["deviation"] = ("blocks with amax below 2**-124: torchao divides by its scale clamped to 2**-126 "
                                  "(the smallest normal) but dequantizes with the stored E8M0 code 2**-127, so its "
                                  "values are half the grid; ours uses the stored scale both ways (OCP MX v1.0)")
        cases.append(entry)
    fixture = ROOT / "tests" / "parity" / "bie.json"  # keep the ref_* cases of tools/parity/record_bie_reference.py
    kept = [c for c in json.loads(fixture.read_text())["cases"] if "reference" in c] if fixture.exists() else []
    write_fixture("bie", "pytorch/ao", commit_of(path), cases + kept, third_party=True,
                  notes="No official BiE code exists; torchao v0.18.0 (PyPI wheel, tag v0.18.0) is the MXFP4 peer. "
                        "Values are quantize-then-dequantize outputs, exact (tolerance 0). Where ours differs (tiny "
                        "blocks), 'ours' holds our values." + (REFERENCE_NOTE if kept else ""))


if __name__ == "__main__":
    main()
