"""The peer: causal-learn's GES with Huang et al.'s generalized scores (median-heuristic kernels), and the same local
scores behind our ``KernelScore`` interface so that both searches can run on one score.

causal-learn is imported only when one of these is called.
"""

from __future__ import annotations

import time

import numpy as np

from icml24._validation import check_finite

from .graphs import from_causallearn
from .scores import KernelScore

CAUSALLEARN_SCORES = {"cv": "local_score_CV_general", "marginal": "local_score_marginal_general"}


def _standardize(data: np.ndarray) -> np.ndarray:
    std = data.std(axis=0)
    return (data - data.mean(axis=0)) / np.where(std > 0, std, 1.0)


def causallearn_ges(data: np.ndarray, score: str = "marginal", max_parents: int | str | None = None,
                    standardize: bool = True) -> tuple[np.ndarray, float]:
    """Run ``causallearn.search.ScoreBased.GES.ges`` with the CV (10-fold, lambda 0.01, width 2 x median) or the
    marginal-likelihood generalized score; return (CPDAG in our encoding, seconds). ``max_parents`` is causal-learn's
    ``maxP`` (None: its default, no cap; ``"half"``: int(d / 2), the official cap of the paper's code)."""
    from causallearn.search.ScoreBased.GES import ges

    if score not in CAUSALLEARN_SCORES:
        raise ValueError(f"score must be one of {sorted(CAUSALLEARN_SCORES)}, got {score!r}")
    data = np.asarray(check_finite("data", data), dtype=float)
    if data.ndim != 2:
        raise ValueError(f"data must be 2-d (samples x variables), got shape {data.shape}")
    if max_parents == "half":
        max_parents = data.shape[1] // 2
    if standardize:
        data = _standardize(data)
    start = time.perf_counter()
    record = ges(data, score_func=CAUSALLEARN_SCORES[score], maxP=max_parents)
    return from_causallearn(record["G"].graph), time.perf_counter() - start


class CausalLearnScore(KernelScore):
    """causal-learn's ``local_score_CV_general`` / ``local_score_marginal_general`` as a cached ``KernelScore``
    (one column per variable). causal-learn's GES maximises these, so they are negated (ours: lower is better)."""

    def __init__(self, score: str = "marginal", standardize: bool = True):
        super().__init__(standardize)
        self.score = score

    def _check_params(self) -> None:
        if self.score not in CAUSALLEARN_SCORES:
            raise ValueError(f"score must be one of {sorted(CAUSALLEARN_SCORES)}, got {self.score!r}")

    def fit(self, data: np.ndarray, groups: list[list[int]] | None = None) -> CausalLearnScore:
        super().fit(data, groups)
        if any(len(g) != 1 for g in self.groups_):
            raise ValueError("CausalLearnScore takes one column per variable (the *_general scores)")
        return self

    def _compute(self, child: int, parents: list[int]) -> float:
        from causallearn.score import LocalScoreFunction as scores

        if self.score == "cv":
            return -float(scores.local_score_cv_general(self.data_, child, parents, {"kfold": 10, "lambda": 0.01}))
        return -float(scores.local_score_marginal_general(self.data_, child, parents, {}))
