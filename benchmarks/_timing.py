"""The one timing helper the benchmarks share (not a benchmark: ``make bench`` runs ``bench_*.py`` only)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best_of(fn: Callable[[], Any], repeats: int = 3, clock: Callable[[], float] = time.perf_counter
            ) -> tuple[Any, float]:
    """``(fn(), best seconds over repeats)``: the best of a few runs is the least disturbed by other load.

    ``clock=time.process_time`` counts this process's CPU seconds (single-threaded kernels on a shared machine).
    """
    best, out = float("inf"), None
    for _ in range(repeats):
        start = clock()
        out = fn()
        best = min(best, clock() - start)
    return out, best


def median_of(fn: Callable[[], Any], repeats: int = 5, warmup: int = 1,
              clock: Callable[[], float] = time.perf_counter) -> tuple[Any, float]:
    """``(fn(), median seconds over repeats after warmup untimed calls)``: what every ratio in ``make bench`` uses
    (issue #49: the median of at least 5 runs after a warm-up)."""
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
