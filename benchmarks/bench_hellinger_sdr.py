"""Speed of our Hellinger correlation and inverse-regression SDR against straightforward reference code.

1. The nearest-neighbour Hellinger correlation (rank transform, 1-NN distances, ``B = 2 sqrt(n-1) mean R``)
   against a per-point loop (one row of distances per point, O(n^2)), at n = 400 and 4000: equal ``B``,
   time ratio, for the k-d tree and the sorted sweep; and the paper's objective ``beta -> B(X beta, y)`` as the
   optimizer calls it (integer sweep).
2. SIR, SAVE and directional regression against naive implementations (covariance and slice moments by
   per-observation loops, as a textbook writes them). No maintained peer library installs: ``sliced`` 0.7.0 (the
   Python SDR toolbox, last release 2018) imports ``pkg_resources`` and ``six``, which the venv does not have, and
   R's ``dr`` cannot run here; so the naive code is the peer. Directions must agree (subspace distance < 1e-8).

Every time is the median of ``--repeats`` (>= 5) runs after a warm-up; exits 1 when a comparison's outputs disagree.

    python benchmarks/bench_hellinger_sdr.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from _timing import check, finish, median_of

from icml24.sdr import (
    SAVE,
    SIR,
    DirectionalRegression,
    ProjectionObjective,
    bhattacharyya,
    copula_ranks,
    single_index_data,
    subspace_distance,
)


def loop_bhattacharyya(x, y) -> float:
    """The straightforward estimator: ranks, then for each point a full row of distances and its minimum."""
    u, v = copula_ranks(x), copula_ranks(y)
    n = len(u)
    total = 0.0
    for i in range(n):
        d = np.sqrt((u - u[i]) ** 2 + (v - v[i]) ** 2)
        d[i] = np.inf
        total += d.min()
    return 2.0 * math.sqrt(n - 1) * total / n


def naive_direction(method: str, X: np.ndarray, y: np.ndarray, h: int) -> np.ndarray:
    """SIR / SAVE / DR with per-observation loops for every moment (the peer of our array code)."""
    n, p = X.shape
    mean = sum(X) / n
    cov = sum(np.outer(x - mean, x - mean) for x in X) / (n - 1)
    values, vectors = np.linalg.eigh(cov)
    root = vectors @ np.diag(values ** -0.5) @ vectors.T
    Z = [(x - mean) @ root for x in X]
    order = np.argsort(y)
    sizes = ([n // h] * (h - 1) + [n - (h - 1) * (n // h)] if method == "dr"
             else [n // h + (1 if i < n % h else 0) for i in range(h)])
    M, A, C, start = np.zeros((p, p)), np.zeros((p, p)), np.zeros((p, p)), 0
    for size in sizes:
        rows = [Z[i] for i in order[start:start + size]]
        start += size
        m = sum(rows) / size
        V = sum(np.outer(z - m, z - m) for z in rows) / (size - 1)
        if method == "sir":
            M += size / n * np.outer(m, m)
        elif method == "save":
            M += size / n * (np.eye(p) - V) @ (np.eye(p) - V)
        else:
            A += size / n * (V + np.outer(m, m)) @ (V + np.outer(m, m))
            C += size / n * np.outer(m, m)
    if method == "dr":
        M = 2 * A + 2 * C @ C + 2 * np.trace(C) * C - 2 * np.eye(p)
    return root @ np.linalg.eigh(M)[1][:, -1]


def timed(fn, repeats: int):
    """``(fn(), median seconds of max(repeats, 5) runs after a warm-up)``."""
    return median_of(fn, repeats=max(repeats, 5))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)

    print("Hellinger correlation (B, nearest-neighbour estimator) vs a per-point loop")
    for n in (400, 4000):
        x = rng.standard_normal(n)
        y = np.sin(2 * x) + 0.3 * rng.standard_normal(n)
        reference, loop_s = timed(lambda: loop_bhattacharyya(x, y), args.repeats)  # noqa: B023
        for algorithm in ("kdtree", "sweep"):
            ours, ours_s = timed(lambda: bhattacharyya(x, y, algorithm), args.repeats)  # noqa: B023
            check(abs(ours - reference) < 1e-10, f"B at n={n} ({algorithm}): {ours} vs loop {reference}")
            print(f"  n={n:5d} {algorithm:7s}: loop {loop_s * 1e3:8.2f} ms, ours {ours_s * 1e3:7.3f} ms, "
                  f"speed-up {loop_s / ours_s:6.1f}x, B = {ours:.6f} (loop {reference:.6f})")
        X = rng.standard_normal((n, 10))
        response = (X[:, 0] - X[:, 1]) ** 2
        objective = ProjectionObjective(X, response)
        beta = rng.standard_normal(10)
        ours, ours_s = timed(lambda: objective(beta), args.repeats * 20)  # noqa: B023
        reference, loop_s = timed(lambda: loop_bhattacharyya(X @ beta, response), args.repeats)  # noqa: B023
        check(abs(ours - reference) < 1e-10, f"objective at n={n}: {ours} vs loop {reference}")
        print(f"  n={n:5d} objective B(X beta, y) as the optimizer calls it: {ours_s * 1e6:8.1f} us, "
              f"speed-up {loop_s / ours_s:6.1f}x")

    print("SIR / SAVE / DR (n = 400, p = 10) vs naive per-observation loops")
    X, y, _ = single_index_data("quadratic", np.random.default_rng(1))
    for name, cls, method, h in (("SIR", SIR, "sir", 13), ("SAVE", SAVE, "save", 13),
                                 ("DR", DirectionalRegression, "dr", math.ceil(math.log(400)))):
        ours, ours_s = timed(lambda: cls().fit(X, y).directions_, args.repeats)  # noqa: B023
        naive, naive_s = timed(lambda: naive_direction(method, X, y, h), args.repeats)  # noqa: B023
        distance = subspace_distance(ours, naive)
        check(distance < 1e-8, f"{name}: subspace distance {distance:.1e} to the naive direction")
        print(f"  {name:4s}: naive {naive_s * 1e3:7.2f} ms, ours {ours_s * 1e3:6.2f} ms, "
              f"speed-up {naive_s / ours_s:5.1f}x, subspace distance {distance:.1e}")
    finish()


if __name__ == "__main__":
    main()
