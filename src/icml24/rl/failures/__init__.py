"""Failure landscapes (Sagar, Taparia & Senanayake, ICML 2024): deep-RL exploration of where a model fails under
actionable concepts, baselines at equal query budgets, and restructuring the landscape with human feedback."""

from .adapter import INTERFACE, ProbaClassifier, as_classifier
from .baselines import BayesianOptimization, EpsilonGreedy, RandomSearch, Threshold
from .class_baselines import ClassEpsilonGreedy, ClassThreshold
from .concepts import DIGIT_LEVELS, Concept, ConceptGrid, digit_concepts
from .dqn import OFFICIAL_SB3_2_2_1, DQNExplorer, preserved_global_rng
from .environment import FailureEnv
from .ground_truth import GroundTruth, exhaustive_failure_rates, looped_failure_rates
from .inputs import check_labels
from .landscape import FailureLandscape, landscape_distance, value_distance
from .model import DigitClassifier, clean_accuracy, failure_reward, train_classifier
from .restructure import LastLayerFinetuner, OracleFeedback, PromptFeedback
from .result import ExplorationResult

__all__ = ["DIGIT_LEVELS", "INTERFACE", "OFFICIAL_SB3_2_2_1", "ProbaClassifier", "as_classifier", "check_labels",
           "BayesianOptimization", "ClassEpsilonGreedy", "ClassThreshold", "Concept", "ConceptGrid", "DQNExplorer",
           "DigitClassifier",
           "EpsilonGreedy", "ExplorationResult", "FailureEnv", "FailureLandscape", "GroundTruth",
           "LastLayerFinetuner", "OracleFeedback", "PromptFeedback", "RandomSearch", "Threshold", "clean_accuracy",
           "digit_concepts", "exhaustive_failure_rates", "failure_reward", "landscape_distance",
           "looped_failure_rates", "preserved_global_rng", "train_classifier", "value_distance"]
