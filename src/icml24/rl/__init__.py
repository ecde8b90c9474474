"""icml24.rl: reinforcement learning methods (failure landscapes; offline RL in confounded POMDPs)."""

from icml24._extras import require
from icml24._lazy import lazy_exports

require("rl")  # the modules of icml24[rl] are installed, or an ImportError names the extra

# exported name -> submodule that defines it; each method adds its own block
_EXPORTS: dict[str, str] = {
    # failure landscapes (failures/)
    "ProbaClassifier": ".failures.adapter",
    "as_classifier": ".failures.adapter",
    "BayesianOptimization": ".failures.baselines",
    "EpsilonGreedy": ".failures.baselines",
    "RandomSearch": ".failures.baselines",
    "Threshold": ".failures.baselines",
    "ClassEpsilonGreedy": ".failures.class_baselines",
    "ClassThreshold": ".failures.class_baselines",
    "Concept": ".failures.concepts",
    "ConceptGrid": ".failures.concepts",
    "DIGIT_LEVELS": ".failures.concepts",
    "digit_concepts": ".failures.concepts",
    "DQNExplorer": ".failures.dqn",
    "OFFICIAL_SB3_2_2_1": ".failures.dqn",
    "FailureEnv": ".failures.environment",
    "GroundTruth": ".failures.ground_truth",
    "exhaustive_failure_rates": ".failures.ground_truth",
    "looped_failure_rates": ".failures.ground_truth",
    "FailureLandscape": ".failures.landscape",
    "landscape_distance": ".failures.landscape",
    "value_distance": ".failures.landscape",
    "DigitClassifier": ".failures.model",
    "clean_accuracy": ".failures.model",
    "failure_reward": ".failures.model",
    "train_classifier": ".failures.model",
    "LastLayerFinetuner": ".failures.restructure",
    "OracleFeedback": ".failures.restructure",
    "PromptFeedback": ".failures.restructure",
    "ExplorationResult": ".failures.result",
    # confounded POMDPs (confounded/)
    "NaiveObservationMDP": ".confounded.baselines",
    "calibrate_xi_scale": ".confounded.calibration",
    "excess_losses": ".confounded.calibration",
    "coverage_ratio": ".confounded.coverage",
    "stage_distribution": ".confounded.coverage",
    "doubly_robust": ".confounded.baselines",
    "importance_sampling": ".confounded.baselines",
    "TwoStageBridgeEstimator": ".confounded.estimator",
    "DeltaFeatures": ".confounded.features",
    "HistoryInstrument": ".confounded.features",
    "RBFFeatures": ".confounded.features",
    "Bridges": ".confounded.identification",
    "bridge_error": ".confounded.identification",
    "chain_gradients": ".confounded.identification",
    "chain_value": ".confounded.identification",
    "true_bridges": ".confounded.identification",
    "continuous_toy": ".confounded.instances",
    "partial_coverage_toy": ".confounded.instances",
    "random_continuous": ".confounded.instances",
    "random_tabular": ".confounded.instances",
    "tabular_toy": ".confounded.instances",
    "ConfidenceSet": ".confounded.pessimism",
    "PessimisticPolicyOptimizer": ".confounded.pessimism",
    "ConfoundedPOMDP": ".confounded.simulator",
    "DiscreteEmission": ".confounded.simulator",
    "GaussianEmission": ".confounded.simulator",
    "Trajectories": ".confounded.simulator",
    "check_episodes": ".confounded.simulator",
    "check_policy": ".confounded.simulator",
    "deterministic_policies": ".confounded.simulator",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
