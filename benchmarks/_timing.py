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
