"""The timing and agreement helpers the benchmarks share (not a benchmark: ``make bench`` runs ``bench_*.py`` only).

Issue #49: every ratio is the median of at least 5 runs after a warm-up (:func:`median_of`), and a benchmark exits
non-zero when a comparison's outputs disagree (:func:`compare` or :func:`check` record it, :func:`finish` exits).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

_DISAGREED: list[str] = []


def best_of(fn: Callable[[], Any], repeats: int = 3, clock: Callable[[], float] = time.perf_counter
            ) -> tuple[Any, float]:
    """``(fn(), best seconds over repeats)``. Superseded by :func:`median_of` (kept while a benchmark uses it)."""
    best, out = float("inf"), None
    for _ in range(repeats):
        start = clock()
        out = fn()
        best = min(best, clock() - start)
    return out, best


def median_of(fn: Callable[[], Any], repeats: int = 5, warmup: int = 1,
              clock: Callable[[], float] = time.perf_counter) -> tuple[Any, float]:
    """``(fn(), median seconds over repeats after warmup untimed calls)``: what every ratio in ``make bench`` uses
    (issue #49: the median of at least 5 runs after a warm-up).

    ``clock=time.process_time`` counts this process's CPU seconds (single-threaded kernels on a shared machine).
    """
    if repeats < 1 or warmup < 0:
        raise ValueError(f"repeats must be >= 1 and warmup >= 0, got {repeats}, {warmup}")
    out = None
    for _ in range(warmup):
        out = fn()
    times = []
    for _ in range(repeats):
        start = clock()
        out = fn()
        times.append(clock() - start)
    times.sort()
    middle = len(times) // 2
    return out, times[middle] if len(times) % 2 else 0.5 * (times[middle - 1] + times[middle])


def check(agree: bool, what: str) -> bool:
    """Record a comparison whose outputs disagree (``finish`` then exits 1); returns ``agree``."""
    if not agree:
        _DISAGREED.append(what)
        print(f"DISAGREE: {what}")
    return bool(agree)


def _seconds(t: float) -> str:
    return f"{t:.3f} s" if t >= 1 else f"{t * 1e3:.3g} ms"


def compare(name: str, t_ours: float, t_peer: float, agree: bool, detail: str = "", *, ours: str = "ours",
            peer: str = "peer", repeats: int = 5, clock: str = "wall") -> float:
    """Print ``name: ours X, peer Y, ratio Z x (median of n, wall); outputs agree (detail)``, record a
    disagreement, and return the ratio ``t_peer / t_ours`` (above 1: ours is faster)."""
    ratio = t_peer / t_ours if t_ours > 0 else float("inf")
    print(f"{name}: {ours} {_seconds(t_ours)}, {peer} {_seconds(t_peer)}, ratio {ratio:.2f}x (median of {repeats}, "
          f"{clock}); outputs {'agree' if agree else 'DISAGREE'}{f' ({detail})' if detail else ''}")
    if not agree:
        _DISAGREED.append(name)
    return ratio


def finish() -> None:
    """Exit 1 with the list of comparisons whose outputs disagreed, else exit 0."""
    if _DISAGREED:
        print(f"FAIL: {len(_DISAGREED)} comparison(s) disagree: " + "; ".join(_DISAGREED), file=sys.stderr)
        sys.exit(1)
    sys.exit(0)
