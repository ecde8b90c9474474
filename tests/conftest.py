import os
import sys
from pathlib import Path

# under pytest-xdist (make test: -n 2) each worker gets its share of the cores for torch, BLAS and OpenMP, set before
# any of them loads (and for the subprocesses tests start), so workers side by side never oversubscribe the machine
WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if "PYTEST_XDIST_WORKER" in os.environ and WORKERS > 1:
    _cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    WORKER_THREADS = max(1, _cores // WORKERS)
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                 "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"):
        os.environ[_var] = str(WORKER_THREADS)
else:
    WORKER_THREADS = 0

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
SHARED_DATA = ROOT.parent / "shared" / "data"

if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))
os.environ.setdefault("ICML24_DATA", str(SHARED_DATA))
# the README's relative form (ICML24_DATA=../shared/data) names the folder from where pytest started; tests that change
# folder (and the CLI subprocesses they start) must see the same folder, so it is made absolute once, here
os.environ["ICML24_DATA"] = os.path.abspath(os.environ["ICML24_DATA"])


@pytest.fixture()
def toy():
    """The toy paper of tests/fixtures, registered for the CLI and the runner (never part of the package)."""
    import toy_paper

    from icml24.core.registry import register_module

    register_module(toy_paper)
    return toy_paper



@pytest.fixture()
def claims_can_fail():
    """``check(claims, good, bad)``: each claim holds on its experiment's good metrics and fails once its bad dict
    (a plausible bad outcome, aligned with ``claims``) is merged in (ARCHITECTURE.md: a claim must be able to fail)."""

    def check(claims, good: dict[str, dict[str, float]], bad: list[dict[str, float]]) -> None:
        assert len(claims) == len(bad)
        for claim, worse in zip(claims, bad, strict=True):
            metrics = good[claim.experiment.name]
            assert claim.evaluate(metrics).status == "holds", claim.text
            assert claim.evaluate({**metrics, **worse}).status == "fails", claim.text

    return check


@pytest.fixture(scope="session", autouse=True)
def _worker_threads():
    """An xdist worker's torch and BLAS pools capped at its share (libraries loaded during collection included)."""
    if not WORKER_THREADS:
        yield
        return
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(WORKER_THREADS)
    with threadpool_limits(WORKER_THREADS):
        yield
