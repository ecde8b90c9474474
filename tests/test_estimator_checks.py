"""scikit-learn's ``check_estimator`` on every exported learner that fits array data as ``fit(X, y)``/``fit(X)``
(issue #58), with no expected failures.

The SDR transformers run the same checks in tests/sdr/test_base.py (``CHECKED_THERE``). Every other exported
learner is in ``NOT_ARRAY_ESTIMATORS`` with the reason the checks do not apply; a new learner must be checked here
or listed with its reason (the last test).
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

from sklearn.utils.estimator_checks import parametrize_with_checks

from icml24.kernels import KernelRidgeCV, KernelRidgeless

ESTIMATORS = [KernelRidgeless(), KernelRidgeCV()]

CHECKED_THERE = {name: "tests/sdr/test_base.py"
                 for name in ("SIR", "SAVE", "DirectionalRegression", "OPG", "MAVE", "DCOVSDR", "HellingerSDR")}

_BANDIT = "fit(contexts, arms, rewards, behaviour): logged bandit feedback, not (X, y)"
_SCORE = ("fit(data, groups): a decomposable causal-graph score; its second argument groups the columns into "
          "variables (not a target y) and it is read by local_score(child, parents), with no predict/transform")
_GRAPH = "fits a graph (torch_geometric Data or an adjacency), not an array of samples"
_MERGE = "fit(pretrained, finetuned): model weights to merge"
_DESIGNS = ("fit(designs): a generative model whose required generator module fixes the design shape, which the "
            "checks' random (n, d) arrays cannot match; it samples, with no predict/transform")
_PRUNE = ("fit(x, y, random_state): torch tensors of 2-d points for networks of fixed widths (2, w, w, w, 1), its "
          "randomness a fit argument: a training comparison, not an array estimator")
_TRAJECTORIES = "fit(data): a dataset of POMDP trajectories, not an array of samples"
NOT_ARRAY_ESTIMATORS = {
    **dict.fromkeys(("IPS", "IPSGreedy", "RSBPI", "RSPE", "SBPI", "SIPS"), _BANDIT),
    **dict.fromkeys(("CausalLearnScore", "KernelScore", "LearnedKernelScore", "MarginalKernelScore",
                     "MedianKernelScore", "MarginalLikelihoodScore"), _SCORE),
    "GES": "fit(): searches a graph with the score it was built with; no data argument",
    "CellClassifier": "fit(): trains on crops it draws itself; no data argument",
    "TextDiffusion": "fit(images, tokens): torch images with their text tokens",
    **dict.fromkeys(("GenCO", "PlainGenerator"), _DESIGNS),
    **dict.fromkeys(("CollectiveCertificate", "GCond", "GDEM", "GeneralizedRP", "NodeAwareSmoothing",
                     "ResidualPropagation"), _GRAPH),
    "EvolvingSubnetworkTrainer": "fit(train_tokens, val_tokens): a language model's token streams",
    "HeadSearch": "fit(model, task_batches): a torch language model and prompts",
    "LinearQuantizer": "fit(model, calibration_ids): a torch model to quantize",
    **dict.fromkeys(("ConsensusMerging", "TALLMasks", "TIESMerging", "TaskArithmetic"), _MERGE),
    **dict.fromkeys(("CombinatorialSearch", "PrunerComparison"), _PRUNE),
    "ConfidenceSet": "fit(estimator): a fitted bridge estimator",
    "PessimisticPolicyOptimizer": "fit(estimator, policies): a fitted bridge estimator and candidate policies",
    "DQNExplorer": "fit(env): a gymnasium environment",
    "FailureLandscape": "fit(result): an exploration result",
    "LastLayerFinetuner": "fit(model, images, labels, grid, actions): a torch model and a concept grid",
    **dict.fromkeys(("NaiveObservationMDP", "TwoStageBridgeEstimator"), _TRAJECTORIES),
    "HellingerCorrelation": ("a statistic of two scalar samples: fit(x, y) takes a 1-d x (check_fit1d demands "
                             "refusing exactly that), with no predict/transform"),
}

SRC = Path(__file__).resolve().parents[1] / "src" / "icml24"
FIELDS = sorted(p.name for p in SRC.iterdir() if (p / "__init__.py").exists() and p.name not in ("core", "papers"))


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def _exported_learners() -> set[str]:
    found = set()
    for field in FIELDS:
        module = importlib.import_module(f"icml24.{field}")
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if inspect.isclass(obj) and callable(getattr(obj, "fit", None)) and obj.__module__.startswith("icml24."):
                found.add(name)
    return found


def test_every_exported_learner_is_checked_or_says_why():
    checked = {type(e).__name__ for e in ESTIMATORS} | set(CHECKED_THERE)
    assert not checked & set(NOT_ARRAY_ESTIMATORS)
    learners = _exported_learners()
    assert learners - checked - set(NOT_ARRAY_ESTIMATORS) == set(), "run check_estimator on it or say why not"
    assert (checked | set(NOT_ARRAY_ESTIMATORS)) - learners == set(), "no longer an exported learner"
    root = Path(__file__).resolve().parents[1]
    for name, path in CHECKED_THERE.items():
        text = (root / path).read_text()
        assert "parametrize_with_checks" in text and f"{name}(" in text, (name, path)
