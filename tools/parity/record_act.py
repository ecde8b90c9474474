"""Re-record tests/parity/act.json from a local copy of GATECH-EIC/ACT.

    python tools/parity/record_act.py        # needs $ICML24_PEERS/ACT (models/llama_modelling_aug.py)

The official calibration is ``atten_process_cal(attention_map)`` in ``models/llama_modelling_aug.py`` (the Mistral
module holds the same function): it calibrates head ``HEAD_NUM`` of batch row 0 of a post-softmax map in place,
with ``THRES`` (alpha) and ``BETA`` read from the environment into module globals at import. We set those globals
per case and call it once per head, on CPU (the function is plain torch; importing the module only needs
transformers' Llama rotary helpers, which the venv has). The sinks it calibrated are read back from its output: a
key is a calibrated sink exactly when the last query (which sees every key) gives it less attention than before
(every other key gains, as beta < 1 in every case).
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "fixtures"))
from _record import commit_of, official_copy, write_fixture  # noqa: E402
from act_parity_inputs import DECODE, DEGENERATE, MAPS, TIMING, attention, decode_row, degenerate  # noqa: E402

CALL = "models.llama_modelling_aug.atten_process_cal (HEAD_NUM = each head, THRES = threshold, BETA = beta)"


def official(module, attn: np.ndarray, threshold: float, beta: float) -> np.ndarray:
    """The official calibration of every head of batch row 0 (one call per head, as its head search does)."""
    module.THRES, module.BETA = float(threshold), float(beta)
    out = torch.from_numpy(attn.copy())
    for head in range(attn.shape[1]):
        module.HEAD_NUM = head
        out = module.atten_process_cal(out)
    return out.numpy()


def calibrated_sinks(attn: np.ndarray, out: np.ndarray) -> list[list[int]]:
    """Per head, the keys whose attention from the last query went down: the sinks the official code scaled."""
    return [np.flatnonzero(out[0, h, -1] < attn[0, h, -1]).tolist() for h in range(attn.shape[1])]


def main() -> None:
    path = official_copy("ACT", "models/llama_modelling_aug.py")
    llama = importlib.import_module("models.llama_modelling_aug")
    mistral = importlib.import_module("models.mistral_modelling_aug")
    cases = []
    for name, length, heads, sink, seed, threshold, beta, dtype in MAPS:
        attn = attention(length, heads, sink, seed, dtype)
        out = official(llama, attn, threshold, beta)
        assert np.array_equal(out, official(mistral, attn, threshold, beta)), "llama and mistral versions differ"
        tol = 1e-12 if dtype == "float64" else 2e-6
        cases.append({"name": name, "call": CALL,
                      "inputs": {"recipe": "tests/fixtures/act_parity_inputs.py:attention", "L": length,
                                 "heads": heads, "sink": sink, "seed": seed, "threshold": threshold, "beta": beta,
                                 "dtype": dtype},
                      "values": {"sinks": calibrated_sinks(attn, out), "calibrated": out[0].tolist()},
                      "tolerance": tol})
        print(name, "sinks", calibrated_sinks(attn, out))

    # one decoding step (Lq = 1, as the official MT-Bench generation calibrates every step): a stated deviation
    name, length, heads, sink, seed, threshold, beta, dtype = DECODE
    attn = decode_row(length, heads, sink, seed, dtype)
    out = official(llama, attn, threshold, beta)
    ours = _ours(attn, threshold, beta)
    cases.append({"name": name, "call": CALL,
                  "inputs": {"recipe": "tests/fixtures/act_parity_inputs.py:decode_row", "L": length, "heads": heads,
                             "sink": sink, "seed": seed, "threshold": threshold, "beta": beta, "dtype": dtype},
                  "values": {"sinks": calibrated_sinks(attn, out), "calibrated": out[0].tolist()},
                  "ours": {"calibrated": ours[0].tolist()},
                  "tolerance": 1e-12,
                  "deviation": "With one query row (a decoding step) the official code's copy that zeroes the sink "
                               "columns skips row 0 (`copied[1:, indices] *= 0`), so the removed mass also flows "
                               "back to the sinks, and step 5 sets A[0, 0] = 1 on that row, so it sums to more "
                               "than one. Ours gives the mass to the non-sinks only and leaves key 0 alone: the row "
                               "sums to one, as for prefill rows."})
    print(name, "sinks", calibrated_sinks(attn, out), "official row sum", out.sum(-1).ravel())

    # a row with no non-sink attention (exact zeros): the official division 0/0 gives NaN there
    name, threshold, beta = DEGENERATE
    attn = degenerate()
    out = official(llama, attn, threshold, beta)
    ours = _ours(attn, threshold, beta)
    cases.append({"name": name, "call": CALL,
                  "inputs": {"recipe": "tests/fixtures/act_parity_inputs.py:degenerate", "threshold": threshold,
                             "beta": beta, "dtype": "float64"},
                  "values": {"sinks": calibrated_sinks(attn, out), "calibrated": out[0].tolist()},
                  "ours": {"calibrated": ours[0].tolist()},
                  "tolerance": 1e-12,
                  "deviation": "A row whose attention lies only on calibrated sinks has no other token to take the "
                               "removed mass: the official ratio 0/0 makes the whole row NaN. Ours leaves such a row "
                               "unchanged (a softmax row never has exact zeros in float32, but an fp16 one can)."})
    print(name, "official row 1", out[0, 0, 1], "ours", ours[0, 0, 1])

    # a SmolLM2-sized map (9 heads, L = 256, float32): column sums and sinks per head, and the official time
    name, length, heads, sink, seed, threshold, beta, dtype = TIMING
    attn = attention(length, heads, sink, seed, dtype)
    out = official(llama, attn, threshold, beta)
    seconds = []
    for _ in range(7):
        start = time.perf_counter()
        official(llama, attn, threshold, beta)
        seconds.append(time.perf_counter() - start)
    cases.append({"name": name, "call": CALL,
                  "inputs": {"recipe": "tests/fixtures/act_parity_inputs.py:attention", "L": length, "heads": heads,
                             "sink": sink, "seed": seed, "threshold": threshold, "beta": beta, "dtype": dtype},
                  "values": {"sinks": calibrated_sinks(attn, out), "column_sums": out[0].sum(axis=-2).tolist(),
                             "row_sum_gap": np.abs(out[0].sum(axis=-1) - 1.0).max(axis=-1).tolist()},
                  "tolerance": 2e-4, "official_seconds": float(np.median(seconds))})
    print(name, "sinks", calibrated_sinks(attn, out), f"official {np.median(seconds) * 1e3:.2f} ms (median of 7)")

    write_fixture("act", "GATECH-EIC/ACT", commit_of(path), cases,
                  notes="The official atten_process_cal called on CPU with its module globals THRES/BETA/HEAD_NUM set "
                        "per case (one call per head, batch row 0, as the official head search runs). Inputs: "
                        "causal softmax maps of seeded random scores with key 0 and one hidden sink boosted. Sinks "
                        "are read back from the official output (keys whose attention from the last query fell). "
                        "official_seconds: the 9 per-head calls on a [1, 9, 256, 256] float32 map, median of 7.")


def _ours(attn: np.ndarray, threshold: float, beta: float) -> np.ndarray:
    from icml24.llm.act.sinks import AttentionCalibration

    return AttentionCalibration(threshold, beta)(torch.from_numpy(attn.copy())).numpy()


if __name__ == "__main__":
    main()
