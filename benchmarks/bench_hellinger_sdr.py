"""Speed of our inverse-regression SDR against the ``sliced`` package, and of our Hellinger correlation and SDR
against straightforward reference code.

1. Peer library: our SIR and SAVE (icml24.sdr) against ``sliced`` 0.7.0 (Loyal's scikit-learn-style SDR package, the
   maintained Python one, last release 2018) on the same data: the paper's exponential single-index model, p = 10,
   n = 400 and 20000, ``n_slices = 10`` and ``n_directions = 1`` on both sides (sliced's default ``"auto"`` picks
   the count from an eigenvalue gap; ``directions_`` is ``[d, p]``, unit rows). Ratio = sliced / ours in CPU seconds
   (``time.process_time``), median of ``--repeats`` (>= 5) after a warm-up. A ratio below 1 means sliced is
   faster (it was, 2-5x, until ``slice_moments`` replaced its one-hot einsum by one sort; recorded since: ours
   1.0-1.4x faster).
   Conventions that differ, and how the bench handles them:
   - slicing: sliced puts ``floor(n / h)`` sorted responses in each slice and the remainder in an extra last slice
     (h = 13 at n = 400 gives it 14 slices); ours makes ``h`` slices whose sizes differ by at most one. With ``h``
     dividing ``n`` (and no tied responses) both cut the same 10 slices, so n is a multiple of 10 here;
   - divisors: sliced whitens with ``sqrt(n) Q`` of a QR (covariance over ``n``) and divides a slice's covariance
     by ``n_h``; ours uses ``n - 1`` and ``n_h - 1``. SIR's direction does not depend on them (distance ~1e-15);
     SAVE's ``(I - V_h)^2`` does, by O(h / n). So outputs agree when (a) sliced's direction equals our naive loop
     run with sliced's divisors (subspace distance < 1e-8: the same algorithm), and (b) ours is within 1e-8 (SIR) or
     0.05 (SAVE: the divisor effect, measured and printed) of sliced's.
   The peer is not part of this repository and not in the venv: it lives in ``$ICML24_PEERS/sliced/_deps`` (default
   ``peers/`` beside the repository), made with
   ``pip install --target peers/sliced/_deps sliced six "setuptools<81"`` (pkg_resources and six are its missing
   imports; delete the numpy, scipy, scikit-learn, joblib, threadpoolctl, cloudpickle and narwhals it pulls so the
   venv's are used), then three NumPy 2 edits in its copy: ``np.int`` -> ``np.int64`` in ``sliced/base.py`` and
   ``sliced/datasets/base.py``, ``ComplexWarning`` imported from ``numpy.exceptions`` in
   ``sliced/externals/sklearn_partial.py`` (its own tests then pass but one eigenvector-sign check). The folder is
   appended to ``sys.path``. When sliced
   does not import, the bench prints the times recorded in tests/fixtures/hellinger_sdr_sliced.json (labelled
   "recorded <date>", with machine and load) and checks our live direction against sliced's recorded one;
   ``--record`` rewrites that fixture from a live run.
2. Secondary, loops we wrote: the nearest-neighbour Hellinger correlation (rank transform, 1-NN distances,
   ``B = 2 sqrt(n-1) mean R``) against a per-point loop (one row of distances per point, O(n^2)), at n = 400 and
   4000: equal ``B``, time ratio, for the k-d tree and the sorted sweep; and the paper's objective
   ``beta -> B(X beta, y)`` as the optimizer calls it (integer sweep).
3. Secondary: SIR, SAVE and directional regression against naive implementations (covariance and slice moments by
   per-observation loops, as a textbook writes them); directions must agree (subspace distance < 1e-8).

Every time is the median of ``--repeats`` (>= 5) runs after a warm-up; exits 1 when a comparison's outputs disagree.

    python benchmarks/bench_hellinger_sdr.py [--repeats 5] [--record]
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _timing import check, compare, finish, median_of

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

RECORDING = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "hellinger_sdr_sliced.json"
PEER_CASES = (("SIR", 400), ("SAVE", 400), ("SIR", 20000), ("SAVE", 20000))  # (method, n)
MODEL, SEED, SLICES, DIRECTIONS = "exponential", 1, 10, 1
TOLERANCE = {"SIR": 1e-8, "SAVE": 0.05}  # ours vs sliced (SAVE: the n vs n - 1 divisors, module docstring)
OURS = {"SIR": SIR, "SAVE": SAVE}


def _tol(method: str) -> str:
    return f"{TOLERANCE[method]:g}".replace("e-0", "e-")


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


def naive_direction(method: str, X: np.ndarray, y: np.ndarray, h: int, ddof: int = 1) -> np.ndarray:
    """SIR / SAVE / DR with per-observation loops for every moment (the peer of our array code).

    ``ddof``: covariances divide by ``n - ddof`` and ``n_h - ddof``; 1 is ours, 0 is sliced's.
    """
    n, p = X.shape
    mean = sum(X) / n
    cov = sum(np.outer(x - mean, x - mean) for x in X) / (n - ddof)
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
        V = sum(np.outer(z - m, z - m) for z in rows) / (size - ddof)
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


def timed(fn, repeats: int, clock=time.perf_counter):
    """``(fn(), median seconds of max(repeats, 5) runs after a warm-up)``."""
    return median_of(fn, repeats=max(repeats, 5), clock=clock)


def peer_folder() -> Path:
    """``$ICML24_PEERS/sliced/_deps``, default ``peers/`` beside the repository (as bench_e4.py)."""
    peers = Path(os.environ.get("ICML24_PEERS", Path(__file__).resolve().parents[2] / "peers"))
    return peers / "sliced" / "_deps"


def load_sliced() -> tuple[dict | None, str]:
    """``({"SIR": class, "SAVE": class}, version)`` from the local copy, or ``(None, why not)``."""
    folder = peer_folder()
    if not (folder / "sliced").is_dir():
        return None, f"no local copy at {folder}"
    if str(folder) not in sys.path:
        sys.path.append(str(folder))  # after the venv: its numpy, scipy and scikit-learn stay in use
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pkg_resources' deprecation notice
            import sliced
            from sliced import SlicedAverageVarianceEstimation, SlicedInverseRegression
            probe = np.random.default_rng(0).standard_normal((40, 3))
            SlicedInverseRegression(n_directions=1, n_slices=4).fit(probe, probe[:, 0])  # fails on an unpatched copy
    except Exception as error:  # noqa: BLE001 - any failure means: use the recording
        return None, f"{folder} does not import ({type(error).__name__}: {error})"
    version = getattr(sliced, "__version__", "?")
    return {"SIR": SlicedInverseRegression, "SAVE": SlicedAverageVarianceEstimation}, f"sliced {version}"


def peer_data(n: int) -> tuple[np.ndarray, np.ndarray]:
    X, y, _ = single_index_data(MODEL, np.random.default_rng(SEED), n=n)
    return X, y


def ours_direction(method: str, X, y) -> np.ndarray:
    return OURS[method](n_directions=DIRECTIONS, n_slices=SLICES).fit(X, y).directions_


def live_peer_lines(classes: dict, version: str, repeats: int) -> list[dict]:
    """Time ours and sliced on each case in one process; check (a) and (b) of the module docstring."""
    print(f"SIR / SAVE vs {version} (the Python SDR package; {MODEL} single-index model, p = 10, "
          f"{SLICES} slices, {DIRECTIONS} direction)")
    cases = []
    for method, n in PEER_CASES:
        X, y = peer_data(n)

        def peer(method=method, X=X, y=y):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fitted = classes[method](n_directions=DIRECTIONS, n_slices=SLICES).fit(X, y)
            return fitted.directions_.T  # sliced: [d, p] unit rows

        theirs, peer_s = timed(peer, repeats, time.process_time)
        ours, ours_s = timed(lambda: ours_direction(method, X, y), repeats, time.process_time)  # noqa: B023
        same_algorithm = subspace_distance(theirs, naive_direction(method.lower(), X, y, SLICES, ddof=0))
        distance = subspace_distance(ours, theirs)
        agree = same_algorithm < 1e-8 and distance < TOLERANCE[method]
        compare(f"  {method:4s} n={n:5d}", ours_s, peer_s, agree,
                f"ours-sliced subspace distance {distance:.1e} < {_tol(method)}; sliced vs our naive loop "
                f"with its n, n_h divisors {same_algorithm:.1e} < 1e-8", peer=version, repeats=max(repeats, 5),
                clock="CPU")
        cases.append({"method": method, "n": n, "sliced_seconds": peer_s, "ours_seconds": ours_s,
                      "ratio": peer_s / ours_s, "distance": distance, "same_algorithm": same_algorithm,
                      "sliced_directions": theirs[:, 0].tolist()})
    return cases


def record(cases: list[dict], version: str, repeats: int, load: float) -> None:
    """Write the fixture the clean-clone fallback prints (``--record``)."""
    now = datetime.datetime.now(datetime.UTC)
    fixture = {
        "peer": f"{version} (pip install --target peers/sliced/_deps, NumPy 2 edits: module docstring)",
        "recorded": {"script": "benchmarks/bench_hellinger_sdr.py --record", "date": now.strftime("%Y-%m-%d"),
                     "time_utc": now.strftime("%H:%M"), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
                     "load": f"1-min load average {load:.2f} at the start (shared machine)",
                     "python": platform.python_version(), "numpy": np.__version__},
        "clock": f"CPU seconds (time.process_time), median of {max(repeats, 5)} after a warm-up, both in one process",
        "data": {"model": MODEL, "seed": SEED, "p": 10, "n_slices": SLICES, "n_directions": DIRECTIONS},
        "cases": cases,
    }
    RECORDING.write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"  recorded into {RECORDING.relative_to(RECORDING.parents[2])}")


def recorded_peer_lines(why: str, repeats: int, recording: Path = RECORDING) -> None:
    """Without sliced: the recorded ratios, and our live direction against sliced's recorded one."""
    fixture = json.loads(recording.read_text())
    rec = fixture["recorded"]
    label = f"recorded {rec['date']}"
    print(f"SIR / SAVE vs {fixture['peer'].split(' (')[0]}: {why}; its times as {label} {rec['time_utc']} UTC on "
          f"{rec['machine']}, {rec['load']}; {fixture['clock']}")
    for case in fixture["cases"]:
        X, y = peer_data(case["n"])
        ours, ours_s = timed(lambda: ours_direction(case["method"], X, y), repeats, time.process_time)  # noqa: B023
        distance = subspace_distance(ours, np.asarray(case["sliced_directions"])[:, None])
        agree = check(distance < TOLERANCE[case["method"]],
                      f"{case['method']} n={case['n']}: ours vs the recorded sliced direction {distance:.1e}")
        print(f"  {case['method']:4s} n={case['n']:5d}: ratio {case['ratio']:.2f}x {label} (ours "
              f"{case['ours_seconds'] * 1e3:.3g} ms, sliced {case['sliced_seconds'] * 1e3:.3g} ms then); ours now "
              f"{ours_s * 1e3:.3g} ms live; outputs {'agree' if agree else 'DISAGREE'} (ours live vs sliced's "
              f"recorded direction: subspace distance {distance:.1e} < {_tol(case['method'])})")


def peer_section(repeats: int, write: bool) -> None:
    load = os.getloadavg()[0]
    classes, version = load_sliced()
    if classes is None:
        if write:
            raise SystemExit(f"--record needs sliced: {version}")
        recorded_peer_lines(version, repeats)
        return
    cases = live_peer_lines(classes, version, repeats)
    if write:
        record(cases, version, repeats, load)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--record", action="store_true", help="rewrite the sliced fixture from a live run")
    args = parser.parse_args()
    peer_section(args.repeats, args.record)
    rng = np.random.default_rng(0)

    print("Secondary: Hellinger correlation (B, nearest-neighbour estimator) vs a per-point loop")
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

    print("Secondary: SIR / SAVE / DR (n = 400, p = 10) vs naive per-observation loops")
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
