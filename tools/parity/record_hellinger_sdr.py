"""Record the official R code of hellinger-sdr (JSongLab/SDR_HC) on fixed data (tests/parity/hellinger-sdr.json).

    python tools/parity/record_hellinger_sdr.py [--runs 12]   # needs $ICML24_PEERS/SDR_HC (a clone of
        # JSongLab/SDR_HC) and Rscript with the R packages FNN, HellCor, SphereOptimize and dr (Debian:
        # r-base-core r-cran-fnn r-cran-energy r-cran-orthopolynom r-cran-polynom; HellCor, SphereOptimize and dr
        # from their CRAN sources with R CMD INSTALL). MAVE, Ball, dHSIC and Rdonlp2 are only needed by official
        # paths not recorded here (MAVE and the DCOV/HSIC/BCOV initializers); hcsdr.R's require() of them only warns.

The data are generated here with numpy (seeds below), written to a temporary CSV (``%.17g``: R reads back the same
doubles, checked by echoing every value as a C99 hex float), and an R program of ours sources the official
``hcsdr.R`` and calls its functions; R prints every number as a hex float, so nothing is lost on the way back.

Cases: ``hcxy`` (the official objective ``HCXY`` at 9 fixed directions on the paper's quadratic model),
``hcxy_ties`` (ties in both coordinates: average ranks and zero nearest-neighbour distances), the initializers
``sir`` and ``save`` (``dr::dr(...)$evec[, 1]``, as ``hcsdr`` calls them) and ``dr`` (the official ``drr``), and
``refinement`` (the official ``hcsdr(x, y, "DR")`` pipeline in its two stages, DR start, 20000 SANN steps, then
Nelder-Mead, under R seeds 1..runs, whose spread is the tolerance; our three seeded runs are recorded as ``ours``).
"""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _record import PARITY, commit_of, official_copy, write_fixture  # noqa: E402

NAME, MARKER, SLUG = "SDR_HC", "hcsdr.R", "hellinger-sdr"
U = 2.0 ** -53  # unit roundoff of float64
JITTER_SEEDS = (1, 2, 3, 4, 5)


def gamma(k: int) -> float:
    """Higham's ``gamma_k = k u / (1 - k u)``: the relative error bound of a length-``k`` floating-point sum."""
    return k * U / (1 - k * U)


# ----------------------------------------------------------------------------- data (the test rebuilds them)

def quadratic_data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The paper's quadratic model (official run_hcsdr.R, scenario 2): n = 400, p = 10, beta = (1, -1, 0_8)."""
    from icml24.sdr import single_index_data
    return single_index_data("quadratic", np.random.default_rng(0))


def exponential_data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The paper's exponential model (scenario 3): n = 400, p = 10, beta = (1_5, 0_5)."""
    from icml24.sdr import single_index_data
    return single_index_data("exponential", np.random.default_rng(1))


def ties_data() -> tuple[np.ndarray, np.ndarray]:
    """n = 60, p = 3: X with integer entries 0..3, y rounded to one decimal, so both coordinates have ties."""
    rng = np.random.default_rng(2)
    X = rng.integers(0, 4, size=(60, 3)).astype(np.float64)
    y = np.round(X[:, 0] - X[:, 1] + 0.5 * rng.standard_normal(60), 1)
    return X, y


def hcxy_directions(beta: np.ndarray) -> np.ndarray:
    """9 unit directions [9, 10]: the truth, its negative, e_1, e_10, a near-truth one and 4 random ones."""
    rng = np.random.default_rng(10)
    truth = beta / np.linalg.norm(beta)
    near = truth + 0.05 * rng.standard_normal(truth.shape[0])
    rows = [truth, -truth, np.eye(10)[0], np.eye(10)[9], near / np.linalg.norm(near)]
    for _ in range(4):
        g = rng.standard_normal(10)
        rows.append(g / np.linalg.norm(g))
    return np.array(rows)


# dyadic directions: X @ b is exact on integer X in any summation order, so the ties are the same on every machine
TIES_DIRECTIONS = np.array([[1.0, 0.0, 0.0], [0.5, 0.25, 0.0], [0.75, 0.5, 0.25], [0.0, 0.0, 1.0],
                            [0.5, -0.25, 0.125]])


def checksum(*arrays: np.ndarray) -> str:
    """SHA-256 of the arrays as little-endian float64 (the test checks it regenerated the recorded data)."""
    digest = hashlib.sha256()
    for a in arrays:
        digest.update(np.ascontiguousarray(a, dtype="<f8").tobytes())
    return digest.hexdigest()


# ----------------------------------------------------------------------------- running the official R code

PRELUDE = r"""
suppressWarnings(suppressMessages(source("hcsdr.R")))   # the official file; MAVE, Ball, dHSIC, Rdonlp2 may be absent
for (pkg in c("FNN", "HellCor", "SphereOptimize", "dr")) suppressMessages(library(pkg, character.only = TRUE))
emit <- function(key, v) cat(key, sprintf("%a", as.numeric(v)), "\n")
rd <- function(f) unname(as.matrix(read.csv(f, header = FALSE)))
"""

VERSIONS = r"""
cat("VERSION R", paste(R.version$major, R.version$minor, sep = "."), "\n")
for (pkg in c("FNN", "HellCor", "SphereOptimize", "dr")) cat("VERSION", pkg, as.character(packageVersion(pkg)), "\n")
"""


def rscript(copy: Path, program: str, data: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], dict, str]:
    """Run ``program`` (after PRELUDE) with Rscript in the official copy; each array of ``data`` is written to
    ``<name>.csv`` in a temporary folder (R: ``rd("<name>.csv")``, round trip checked). Returns the emitted
    values by key, the R versions and the command."""
    with tempfile.TemporaryDirectory(prefix="hellinger_sdr_") as tmp:
        folder = Path(tmp)
        echo = []
        for name, array in data.items():
            array = np.atleast_2d(array.T).T if array.ndim == 1 else array
            np.savetxt(folder / f"{name}.csv", array, fmt="%.17g", delimiter=",")
            echo.append(f'emit("roundtrip_{name}", t(rd("{folder}/{name}.csv")))')
        body = program.replace("@DIR@", str(folder))
        script = folder / "run.R"
        script.write_text(PRELUDE + VERSIONS + "\n".join(echo) + "\n" + body)
        command = ["Rscript", "--vanilla", str(script)]
        done = subprocess.run(command, cwd=copy, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"Rscript failed ({done.returncode}):\n{done.stderr[-3000:]}")
    values, versions = {}, {}
    for line in done.stdout.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "VERSION":
            versions[parts[1]] = parts[2]
            continue
        values[parts[0]] = np.array([float.fromhex(x) for x in parts[1:]])
    for name, array in data.items():
        back = values.pop(f"roundtrip_{name}")
        if not np.array_equal(back, np.asarray(array, dtype=np.float64).ravel()):
            raise SystemExit(f"R did not read {name}.csv back to the same doubles")
    shown = f"(cd $ICML24_PEERS/{NAME} && Rscript --vanilla <tmp>/run.R)"
    return values, versions, shown


# ----------------------------------------------------------------------------- tolerances

def rank_margin(X: np.ndarray, directions: np.ndarray) -> float:
    """min over directions of (smallest gap between distinct sorted projections) / (rounding bound of a projection).

    The rounding bound is ``gamma_p max_i sum_j |x_ij b_j|``, the error of a length-p dot product in any order (FMA
    or not); a margin above 2 means the ranks of ``X b`` are the same on every machine."""
    margins = []
    for b in directions:
        z = np.sort(X @ b)
        gaps = np.diff(z)
        gaps = gaps[gaps > 0]
        bound = gamma(X.shape[1]) * np.abs(X * b).sum(axis=1).max()
        margins.append(gaps.min() / bound)
    return float(min(margins))


HCXY_DERIVATION = (
    "per entry, from the conditioning of B = 2 sqrt(n-1) mean_i R_i given identical ranks (no gap seen on any machine "
    "enters it). Ranks: {ranks} Given the ranks, the official u = rank/(n+1) is rounded (relative u = 2^-53), so a "
    "coordinate difference (>= 1/(2(n+1)) when nonzero: average ranks are half-integers) carries a relative error "
    "<= 4(n+1)u; squaring, summing two coordinates and sqrt add <= 3u; the mean of n terms adds <= n u. Ours works "
    "on exact integer ranks up to the "
    "sqrt and a sum of n terms (<= (n+2)u). Tolerance: (4(n+1) + 2n + 5) u B, about {rel:.2g} B at n = {n}. A changed "
    "constant (sqrt(n) for sqrt(n-1): relative 1/(2n)) or one rank off moves B by >= 1e-4 relative.")


def eigen_tolerance(n: int, p: int, top: float, second: float, cond_sigma: float) -> float:
    """``2 gamma_{np} (lambda_1 / (lambda_1 - lambda_2) + kappa(Sigma))`` (see SLICED_DERIVATION)."""
    return 2 * gamma(n * p) * (top / (top - second) + cond_sigma)


SLICED_DERIVATION = (
    "from conditioning (not from a gap seen): the leading eigenvector of the kernel M (p x p) built from sums of n "
    "length-p products; a backward-stable route perturbs M by <= gamma_(np) ||M|| (gamma_k = k u / (1 - k u), "
    "u = 2^-53), which turns the eigenvector by <= gamma_(np) lambda_1 / (lambda_1 - lambda_2) (Davis-Kahan), and "
    "the back-transform by Sigma^(-1/2) adds <= gamma_(np) kappa(Sigma); two sides: tolerance on the subspace distance "
    "(sine of the angle) = 2 gamma_(np) (lambda_1 / (lambda_1 - lambda_2) + kappa(Sigma)), with the official "
    "evalues for the official value and ours for 'ours'.")


def dr_direction_given_sigma(X: np.ndarray, y: np.ndarray, h: int, sigma: np.ndarray) -> np.ndarray:
    """Directional regression (Li & Wang 2007) with a given covariance ``sigma`` for the standardization: used only
    to differentiate the direction with respect to ``sigma`` (the official ``drr`` rounds it to 7 decimals)."""
    values, vectors = np.linalg.eigh((sigma + sigma.T) / 2)
    root = (vectors / np.sqrt(values)) @ vectors.T
    Z = (X - X.mean(axis=0)) @ root
    n, p = Z.shape
    m = n // h
    rank = np.empty(n, dtype=int)
    rank[np.argsort(y)] = np.arange(n)
    labels = np.minimum(rank // m, h - 1)  # h - 1 slices of floor(n / h), the rest in the last
    A, C = np.zeros((p, p)), np.zeros((p, p))
    for s in range(h):
        rows = Z[labels == s]
        w, mean = rows.shape[0] / n, rows.mean(axis=0)
        second = np.cov(rows, rowvar=False) + np.outer(mean, mean)
        A += w * second @ second
        C += w * np.outer(mean, mean)
    M = 2 * A + 2 * C @ C + 2 * np.trace(C) * C - 2 * np.eye(p)
    top = np.linalg.eigh(M)[1][:, -1]
    direction = root @ top
    return direction / np.linalg.norm(direction)


def sine(a: np.ndarray, b: np.ndarray) -> float:
    """Sine of the angle between two lines (the subspace distance of rank 1)."""
    a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
    return float(math.sqrt(max(0.0, 1.0 - float(a @ b) ** 2)))


def sigma_rounding_bound(X: np.ndarray, y: np.ndarray, h: int, half_unit: float = 5e-8, step: float = 1e-6) -> float:
    """First-order bound on how far rounding each entry of Sigma by <= ``half_unit`` turns the DR direction:
    sum over the p(p+1)/2 free entries of |d direction / d Sigma_ij| * half_unit (central differences)."""
    sigma = np.cov(X, rowvar=False)
    p = sigma.shape[0]
    total = 0.0
    for i in range(p):
        for j in range(i, p):
            E = np.zeros((p, p))
            E[i, j] = E[j, i] = step
            total += sine(dr_direction_given_sigma(X, y, h, sigma + E),
                          dr_direction_given_sigma(X, y, h, sigma - E)) / (2 * step)
    return total * half_unit


# ----------------------------------------------------------------------------- cases

def record_hcxy(copy: Path) -> tuple[dict, dict, str]:
    X, y, beta = quadratic_data()
    B = hcxy_directions(beta)
    program = ('X <- rd("@DIR@/X.csv"); Y <- rd("@DIR@/y.csv")[, 1]; D <- rd("@DIR@/D.csv")\n'
               'emit("hcxy", apply(D, 1, function(b) HCXY(b, X, Y)))\n'
               't0 <- proc.time()[["elapsed"]]; for (k in 1:500) HCXY(D[1, ], X, Y)\n'
               'emit("seconds", (proc.time()[["elapsed"]] - t0) / 500)\n')
    values, versions, command = rscript(copy, program, {"X": X, "y": y, "D": B})
    n = X.shape[0]
    factor = (4 * (n + 1) + 2 * n + 5) * U
    margin = rank_margin(X, B)
    assert margin > 2, f"the ranks of X b are not certified (margin {margin})"
    ranks = (f"the smallest gap between distinct sorted projections is {margin:.3g} times the rounding bound "
             "gamma_p max_i sum_j |x_ij b_j| of any dot-product order (> 2: the same ranks on every machine).")
    return ({"name": "hcxy", "call": "hcsdr.R: HCXY(b, X, Y) for each row b of the directions",
             "command": command,
             "inputs": {"recipe": "X, y, beta = icml24.sdr.single_index_data('quadratic', numpy.random.default_rng(0))"
                        " (n = 400, p = 10, beta = (1, -1, 0_8), the official scenario 2); directions: "
                        "tools/parity/record_hellinger_sdr.py hcxy_directions(beta) (truth, -truth, e_1, e_10, "
                        "truth + 0.05 N(0, I) normalized, 4 random unit vectors; numpy default_rng(10))",
                        "data_sha256": checksum(X, y), "directions": B.tolist()},
             "values": values["hcxy"].tolist(),
             "tolerance": (factor * values["hcxy"]).tolist(),
             "tolerance_derivation": HCXY_DERIVATION.format(ranks=ranks, rel=factor, n=n),
             "official_seconds": float(values["seconds"][0])}, versions, command)


def record_hcxy_ties(copy: Path) -> dict:
    X, y = ties_data()
    program = ('X <- rd("@DIR@/X.csv"); Y <- rd("@DIR@/y.csv")[, 1]; D <- rd("@DIR@/D.csv")\n'
               'emit("hcxy", apply(D, 1, function(b) HCXY(b, X, Y)))\n'
               'emit("zeros", apply(D, 1, function(b) sum(get.knn(apply(cbind(X %*% b, Y), 2, rank) / '
               '(nrow(X) + 1), 1)$nn.dist == 0)))\n')
    values, _, command = rscript(copy, program, {"X": X, "y": y, "D": TIES_DIRECTIONS})
    n = X.shape[0]
    factor = (4 * (n + 1) + 2 * n + 5) * U
    assert np.all(TIES_DIRECTIONS * 8 == np.round(TIES_DIRECTIONS * 8))
    ranks = ("X is integer (0..3) and the directions are dyadic (multiples of 1/8), so every X b is exact in any "
             "order: ties are exact on every machine; R's rank and ours both give average ranks to ties.")
    return {"name": "hcxy_ties", "call": "hcsdr.R: HCXY(b, X, Y) for each row b of the directions; the count of zero "
            "nearest-neighbour distances from FNN::get.knn on the same rank pairs",
            "command": command,
            "inputs": {"recipe": "tools/parity/record_hellinger_sdr.py ties_data(): numpy default_rng(2), "
                       "X = integers(0, 4, (60, 3)), y = round(X1 - X2 + 0.5 N(0, 1), 1)",
                       "data_sha256": checksum(X, y), "directions": TIES_DIRECTIONS.tolist()},
            "values": {"hcxy": values["hcxy"].tolist(), "zero_distances": values["zeros"].astype(int).tolist()},
            "tolerance": (factor * values["hcxy"]).tolist(),
            "tolerance_derivation": HCXY_DERIVATION.format(ranks=ranks, rel=factor, n=n)
            + " zero_distances (duplicated rank pairs) are integers: exact."}


def record_sliced(copy: Path) -> list[dict]:
    from icml24.sdr import SAVE, SIR

    X, y, beta = exponential_data()
    program = ('X <- rd("@DIR@/X.csv"); Y <- rd("@DIR@/y.csv")[, 1]\n'
               'dat <- data.frame(y = Y, x = X)\n'
               'for (m in c("sir", "save")) {\n'
               '  fit <- dr::dr(y ~ ., data = dat, method = m)\n'
               '  emit(paste0(m, "_direction"), fit$evec[, 1])\n'
               '  emit(paste0(m, "_evalues"), fit$evalues)\n'
               '  emit(paste0(m, "_sizes"), fit$slice.info$slice.sizes)\n'
               '  t0 <- proc.time()[["elapsed"]]; for (k in 1:20) dr::dr(y ~ ., data = dat, method = m)\n'
               '  emit(paste0(m, "_seconds"), (proc.time()[["elapsed"]] - t0) / 20)\n'
               '}\n')
    values, _, command = rscript(copy, program, {"X": X, "y": y})
    n, p = X.shape
    cond_sigma = float(np.linalg.cond(np.cov(X, rowvar=False)))
    cases = []
    for name, cls in (("sir", SIR), ("save", SAVE)):
        official = values[f"{name}_direction"]
        evalues = values[f"{name}_evalues"]
        sizes = values[f"{name}_sizes"].astype(int).tolist()
        ours = cls().fit(X, y)
        ours_values = np.sort(np.linalg.eigvalsh(ours.kernel_matrix_))[::-1]
        ours_dir = ours.directions_[:, 0]
        deviation = ("slicing: dr.slices makes floor(n/h) = 30-point slices while more than 2 responses remain, so "
                     f"n = 400, h = 13 gives 14 slices {sizes}; ours makes h = 13 balanced slices (10 of 31, 3 of 30)"
                     " (tests/sdr/test_inverse.py fixes ours to balanced slices).")
        if name == "save":
            deviation += (" Covariances: dr's SAVE standardizes with the n-denominator covariance and weights each "
                          "slice covariance by (n_h - 1)/n_h, i.e. uses I - c_h V_h with c_h = (n_h - 1)/n_h * "
                          "n/(n - 1) where ours uses I - V_h (V_h with n_h - 1, Sigma with n - 1).")
        deviation += (" The test rebuilds the official kernel from our slice moments with dr's slices"
                      + (" and c_h" if name == "save" else "") + " and meets the official direction within the "
                      "tolerance; the gap of ours to the official direction is 'deviation_gap'.")
        cases.append({
            "name": name, "call": f"dr::dr(y ~ ., data = data.frame(y = Y, x = X), method = '{name}')$evec[, 1] "
            "(as hcsdr.R's initializer)", "command": command,
            "inputs": {"recipe": "X, y, beta = icml24.sdr.single_index_data('exponential', "
                       "numpy.random.default_rng(1)) (n = 400, p = 10, beta = (1_5, 0_5), official scenario 3)",
                       "data_sha256": checksum(X, y)},
            "values": {"direction": official.tolist(), "evalues": evalues.tolist(), "slice_sizes": sizes,
                       "truth_distance": sine(official, beta)},
            "tolerance": eigen_tolerance(n, p, evalues[0], evalues[1], cond_sigma),
            "tolerance_derivation": SLICED_DERIVATION + f" kappa(Sigma) = {cond_sigma:.4g}; the official "
            f"lambda_1/(lambda_1 - lambda_2) = {evalues[0] / (evalues[0] - evalues[1]):.4g}.",
            "ours": {"direction": ours_dir.tolist(), "n_slices": int(ours.n_slices_),
                     "tolerance": eigen_tolerance(n, p, ours_values[0], ours_values[1], cond_sigma)},
            "deviation": deviation, "deviation_gap": sine(ours_dir, official),
            "official_seconds": float(values[f"{name}_seconds"][0])})
    return cases


def record_dr(copy: Path) -> dict:
    from icml24.sdr import DirectionalRegression

    X, y, beta = exponential_data()
    seeds = ", ".join(str(s) for s in JITTER_SEEDS)
    program = ('X <- rd("@DIR@/X.csv"); Y <- rd("@DIR@/y.csv")[, 1]; n <- nrow(X)\n'
               f'for (s in c({seeds})) {{\n'
               '  set.seed(s); emit(paste0("dr_", s), normalize(drr(X, Y, ceiling(log(n)), 1)))\n}\n'
               't0 <- proc.time()[["elapsed"]]; for (k in 1:20) drr(X, Y, ceiling(log(n)), 1)\n'
               'emit("seconds", (proc.time()[["elapsed"]] - t0) / 20)\n')
    values, _, command = rscript(copy, program, {"X": X, "y": y})
    n, p = X.shape
    h = math.ceil(math.log(n))
    runs = np.array([values[f"dr_{s}"] for s in JITTER_SEEDS])
    spread = max(sine(a, b) for a in runs for b in runs)
    # the jitter y + 1e-5 mean(y) N(0, 1) reorders two responses at a slice boundary only if it beats their gap
    m = n // h
    ordered = np.sort(y)
    gaps = np.array([ordered[k * m] - ordered[k * m - 1] for k in range(1, h)])
    jitter_sd = 1e-5 * abs(float(y.mean()))
    jitter_margin = float(gaps.min() / (math.sqrt(2) * jitter_sd))
    cond_sigma = float(np.linalg.cond(np.cov(X, rowvar=False)))
    ours = DirectionalRegression().fit(X, y)
    kernel = np.sort(np.linalg.eigvalsh(ours.kernel_matrix_))[::-1]
    rounding = eigen_tolerance(n, p, kernel[0], kernel[1], cond_sigma)
    sigma_bound = sigma_rounding_bound(X, y, h)
    tolerance = 2 * sigma_bound + rounding + spread
    return {"name": "dr", "call": "hcsdr.R: normalize(drr(X, Y, ceiling(log(n)), 1)) under set.seed(s), s = "
            f"{seeds} (the jitter in discretize)", "command": command,
            "inputs": {"recipe": "X, y, beta = icml24.sdr.single_index_data('exponential', "
                       "numpy.random.default_rng(1)) (n = 400, p = 10, beta = (1_5, 0_5), official scenario 3)",
                       "data_sha256": checksum(X, y), "seeds": list(JITTER_SEEDS)},
            "values": {"direction": runs[0].tolist(), "jitter_spread": spread, "truth_distance": sine(runs[0], beta)},
            "tolerance": tolerance,
            "tolerance_derivation": (
                "on the subspace distance, from conditioning and the official randomness (no gap seen enters it): "
                f"(1) drr standardizes with round(var(x), 7): each of the p(p+1)/2 free entries moves by <= 5e-8; the "
                f"first-order effect on the direction, sum_ij |d direction / d Sigma_ij| 5e-8 by central differences "
                f"of the DR formula (record_hellinger_sdr.py sigma_rounding_bound), is {sigma_bound:.3g}, taken "
                f"twice for the second-order rest; (2) floating-point rounding, 2 gamma_(np) (lambda_1/(lambda_1 - "
                f"lambda_2) + kappa(Sigma)) = {rounding:.3g} (see the sir case); (3) the official jitter of y in "
                f"discretize: the largest distance between the runs under seeds {seeds} is {spread:.3g}, and the "
                f"smallest gap of y at a slice boundary is {jitter_margin:.3g} standard deviations of the difference "
                "of two jitters, so the slices never change. Ours uses the exact Sigma (no rounding)."),
            "official_seconds": float(values["seconds"][0])}


OUR_SEEDS = (0, 1, 2)


def our_refinement(X: np.ndarray, y: np.ndarray, seed: int) -> tuple:
    """Our two stages exactly as the test runs them (``_our_refinement`` of tests/parity/test_hellinger_sdr.py):
    annealing alone from the DR start, then Nelder-Mead alone from there; also the quantiles of HCXY over the
    annealing's 19999 candidates and of the sine between consecutive candidates."""
    root = Path(__file__).resolve().parents[2]
    sys.path[:0] = [str(root / "tests" / "parity"), str(root / "tests" / "fixtures")]
    from test_hellinger_sdr import _our_refinement

    return _our_refinement(X, y, seed)


def _spread(directions: np.ndarray, beta: np.ndarray, objective: np.ndarray) -> tuple[dict, dict]:
    """Per-run values and their ranges: objective, distance to the truth, distance to the central direction."""
    projections = np.einsum("ki,kj->ij", directions, directions) / directions.shape[0]
    central = np.linalg.eigh(projections)[1][:, -1]
    truth = np.array([sine(d, beta) for d in directions])
    to_central = np.array([sine(d, central) for d in directions])
    values = {"directions": directions.tolist(), "hcxy": objective.tolist(), "truth_distance": truth.tolist(),
              "central_direction": central.tolist(), "to_central": to_central.tolist()}
    ranges = {"hcxy": [float(objective.min()), float(objective.max())],
              "truth_distance": [float(truth.min()), float(truth.max())], "to_central": float(to_central.max())}
    return values, ranges


def record_refinement(copy: Path, runs: int) -> dict:
    X, y, beta = quadratic_data()
    program = ('X <- rd("@DIR@/X.csv"); Y <- rd("@DIR@/y.csv")[, 1]; n <- nrow(X); dat <- data.frame(y = Y, x = X)\n'
               'objective <- function(b) HCXY(b, X = X, Y = Y)\n'
               'logged <- function(b) {\n'
               '  v <- HCXY(b, X = X, Y = Y); k <<- k + 1; visited[k] <<- v; dirs[k, ] <<- b; v\n}\n'
               f'for (s in 1:{runs}) {{\n'
               '  set.seed(s); t0 <- proc.time()[["elapsed"]]; visited <- numeric(20000); k <- 0\n'
               '  dirs <- matrix(0, 20000, ncol(X))\n'
               '  start <- normalize(drr(X, Y, ceiling(log(n)), 1))\n'
               '  annealed <- SphereOptimize(start, logged, method = "SANN", control = list(maxit = 20000))$par\n'
               '  emit(paste0("candidates_", s), quantile(visited[2:k], c(0.01, 0.1, 0.5), names = FALSE))\n'
               '  cosines <- rowSums(dirs[3:k, ] * dirs[2:(k - 1), ])\n'
               '  emit(paste0("steps_", s), quantile(sqrt(pmax(0, 1 - cosines^2)), c(0.1, 0.5, 0.9), names = FALSE))\n'
               '  refined <- sphoptim(annealed, HCXY, X = X, Y = Y, control = list(maxit = 10000))$par\n'
               '  emit(paste0("seconds_", s), proc.time()[["elapsed"]] - t0)\n'
               '  if (s == 1) { set.seed(s); stopifnot(identical(refined, hcsdr(X, Y, SDRmethod = "DR"))) }\n'
               '  emit(paste0("start_", s), start); emit(paste0("hcxy_start_", s), objective(start))\n'
               '  emit(paste0("annealed_", s), annealed); emit(paste0("hcxy_annealed_", s), objective(annealed))\n'
               '  emit(paste0("refined_", s), refined); emit(paste0("hcxy_refined_", s), objective(refined))\n'
               '}\n')
    values, _, command = rscript(copy, program, {"X": X, "y": y})
    seeds = range(1, runs + 1)

    def stage(key: str) -> tuple[dict, dict]:
        directions = np.array([values[f"{key}_{s}"] for s in seeds])
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        return _spread(directions, beta, np.array([values[f"hcxy_{key}_{s}"][0] for s in seeds]))

    annealed, annealed_ranges = stage("annealed")
    candidates = np.array([values[f"candidates_{s}"] for s in seeds])  # [runs, quantiles]
    annealed["candidate_quantiles"] = candidates.tolist()
    annealed_ranges["candidate_quantiles"] = [candidates.min(axis=0).tolist(), candidates.max(axis=0).tolist()]
    steps = np.array([values[f"steps_{s}"] for s in seeds])  # [runs, quantiles]
    annealed["step_quantiles"] = steps.tolist()
    annealed_ranges["step_quantiles"] = [steps.min(axis=0).tolist(), steps.max(axis=0).tolist()]
    refined, refined_ranges = stage("refined")
    starts = np.array([values[f"start_{s}"] for s in seeds])
    ours = [our_refinement(X, y, seed) for seed in OUR_SEEDS]
    ours_values = {"seeds": list(OUR_SEEDS), "annealed_hcxy": [a.bhattacharyya_ for a, _, _, _ in ours],
                   "candidate_quantiles": [c.tolist() for _, _, c, _ in ours],
                   "step_quantiles": [st.tolist() for _, _, _, st in ours],
                   "hcxy": [r.bhattacharyya_ for _, r, _, _ in ours],
                   "truth_distance": [sine(r.directions_[:, 0], beta) for _, r, _, _ in ours]}
    official_median, ours_median = float(np.median(refined["hcxy"])), float(np.median(ours_values["hcxy"]))
    gains = np.array(annealed["hcxy"]) - np.array(refined["hcxy"])
    ours_gains = np.array(ours_values["annealed_hcxy"]) - np.array(ours_values["hcxy"])
    seconds = [float(values[f"seconds_{s}"][0]) for s in seeds]
    return {
        "name": "refinement", "call": "hcsdr.R's pipeline in two stages under set.seed(s), s = 1.." f"{runs}: start = "
        "normalize(drr(X, Y, ceiling(log(n)), 1)); annealed = SphereOptimize(start, b -> HCXY(b, X, Y), method = "
        "'SANN', control = list(maxit = 20000))$par; refined = sphoptim(annealed, HCXY, X = X, Y = Y, control = "
        "list(maxit = 10000))$par (the recorder checks refined is identical to hcsdr(X, Y, SDRmethod = 'DR') for "
        "s = 1); HCXY at each stage", "command": command,
        "inputs": {"recipe": "X, y, beta = icml24.sdr.single_index_data('quadratic', numpy.random.default_rng(0))"
                   " (n = 400, p = 10, beta = (1, -1, 0_8))", "data_sha256": checksum(X, y), "seeds": list(seeds)},
        "values": {"start": starts[0].tolist(), "start_hcxy": float(values["hcxy_start_1"][0]),
                   "start_spread": max(sine(a, b) for a in starts for b in starts),
                   "annealed": annealed, "refined": refined},
        "tolerance": {"annealed": annealed_ranges, "refined": refined_ranges},
        "tolerance_derivation": (
            f"from the official randomness (SANN draws from R's RNG, ours from numpy's, so runs cannot be paired): "
            f"the {runs} official runs give, per stage, the ranges of HCXY and of the distance to the true direction "
            "and the largest distance of a run to their central direction (leading eigenvector of the mean "
            "projection), and for the annealing the ranges of the 1%, 10% and 50% quantiles of HCXY over its 19999 "
            "candidates and of the 10%, 50% and 90% quantiles of the sine between consecutive candidates (the "
            "step kernel and temperature schedule: a wrong step scale moves them). An independent run "
            "of the same algorithm falls inside the range of k exchangeable runs "
            f"with probability (k-1)/(k+1) = {(runs - 1) / (runs + 1):.2f} (below the largest central distance: "
            "k/(k+1)); the test holds the median of our 3 seeded runs to each range widened by half its width on "
            "each side, and to the largest central distance. After Nelder-Mead (see deviation) only the upper end "
            "of the HCXY range binds."),
        "ours": ours_values,
        "deviation": (
            "Nelder-Mead variant: ours is scipy's standard Nelder-Mead (from R's initial simplex, stopped by R's "
            "reltol rule); R's nmmin contracts after every reflection that is not a new best (even one better than "
            "the second-worst vertex) and stops when a shrink does not reduce the simplex. On this piecewise-constant "
            f"objective ours descends further from the same kind of annealed point: median HCXY gain of the "
            f"Nelder-Mead stage {float(np.median(ours_gains)):.4f} (ours, seeds {list(OUR_SEEDS)}) vs "
            f"{float(np.median(gains)):.4f} (official), final median HCXY {ours_median:.4f} vs {official_median:.4f}. "
            "The annealing stage (R's SANN schedule, ported) is held two-sided; R's default reltol is "
            "sqrt(eps) = 1.49e-8 where ours is 1e-8."),
        "official_seconds": float(np.median(seconds))}


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=12, help="official refinement runs (R seeds 1..runs)")
    parser.add_argument("--only", choices=("hcxy", "hcxy_ties", "sir", "save", "dr", "refinement"),
                        help="re-record one case (sir and save together) and keep the others as the fixture has them")
    args = parser.parse_args(argv)
    copy = official_copy(NAME, MARKER)
    tick = time.perf_counter()
    hcxy, versions, command = record_hcxy(copy)
    recorders = {"hcxy": lambda: [hcxy], "hcxy_ties": lambda: [record_hcxy_ties(copy)],
                 "sir": lambda: record_sliced(copy), "dr": lambda: [record_dr(copy)],
                 "refinement": lambda: [record_refinement(copy, args.runs)]}
    if args.only:
        key = "sir" if args.only == "save" else args.only
        fresh = {c["name"]: c for c in recorders[key]()}
        kept = json.loads((PARITY / f"{SLUG}.json").read_text())["cases"]
        cases = [fresh.get(c["name"], c) for c in kept]
    else:
        cases = [c for record in recorders.values() for c in record()]
    path = write_fixture(SLUG, "JSongLab/SDR_HC", commit_of(copy), cases, notes=(
        "Official R (hcsdr.R) run by Rscript on data generated in numpy and passed as CSV; numbers come back as hex "
        "floats. Only HCXY, drr, hcsdr and dr::dr (the official SIR/SAVE call) are run: MAVE and the "
        "DCOV/HSIC/BCOV initializers (packages MAVE, Ball, dHSIC, Rdonlp2) are not recorded."
        + (f" Case {args.only!r} re-recorded alone on this date." if args.only else "")))
    data = json.loads(path.read_text())
    data["recorded"]["command"] = "python tools/parity/record_hellinger_sdr.py" + (
        f" --runs {args.runs}" if args.runs != 12 else "") + (f" --only {args.only}" if args.only else "")
    data["recorded"]["rscript"] = command
    data["recorded"]["r_versions"] = versions
    data["recorded"]["seconds"] = round(time.perf_counter() - tick, 1)
    path.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
