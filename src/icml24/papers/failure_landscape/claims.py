"""failure-landscape claims and regimes: what the DQN explorer and the restructuring are said to do, read from the
experiments' metrics."""

from __future__ import annotations

from icml24.core import Claim, Regime

from .experiments import explore, restructure

#: a gain counts only beyond this: failures per query are fractions of at most 55,000 queries (steps >= 1.8e-5, a mean
#: over 5 seeds >= 3.6e-6), a relative drop of an exhaustive rate over ~400 test images moves in steps >= 2.5e-3, and
#: W1 between failure counts of <= 5,000 roll-outs in steps >= 2e-4 level units: anything below 1e-6 is rounding
TOL = 1e-6


def _beats(baseline: str):
    return lambda m: m[f"dqn_minus_{baseline}_lower"] > TOL


CLAIMS = [
    Claim(
        "At an equal query budget the DQN explorer finds >= 1.5x the failures per query of random search (the "
        "paired difference over seeds more than 2 standard errors above 0), and its top-10 actions match the "
        "exhaustive ground truth's top-10 with precision >= 0.7, on every model under test (our MLP, a small CNN, "
        "a random forest, a logistic regression)",
        experiment=explore,
        check=lambda m: (m["dqn_over_random"] >= 1.5 and m["dqn_minus_random_lower"] > TOL
                         and m["dqn_precision_at_10"] >= 0.7),
        paper="Sec. 4 / Fig. 3: the RL agent finds more failures than random search and maps the landscape "
              "(issue 18 targets 1.5x and precision 0.7)",
    ),
    *[Claim(
        f"At an equal query budget the DQN explorer finds more failures per query than {label} (the paired "
        "difference over seeds more than 2 standard errors above 0), on every model under test (our MLP, a small "
        "CNN, a random forest, a logistic regression)",
        experiment=explore, check=_beats(name),
        paper=f"Sec. 4 / Fig. 3 and Baselines/: the RL agent finds more failures than {label}",
    ) for name, label in (("epsilon_greedy", "adaptive epsilon-greedy (epsilon 0.1)"),
                          ("threshold", "the threshold explorer (5 correct predictions)"),
                          ("bayes_opt", "Bayesian optimization (GP-UCB over the grid)"))],
    Claim(
        "After restructuring, the chosen failure mode's exhaustive failure rate drops >= 50% (relative, mean over "
        "seeds, and more than 2 standard errors above 0), clean accuracy falls by at most 2 points (mean - 2 "
        "standard errors), and the explored landscape shifts by more than the noise floor (W1 between failure "
        "distributions before and after, minus W1 between two explorers on the unchanged model: more than 2 "
        "standard errors above 0), on every instance of the family (our MLP and a small CNN on the mild grid, our "
        "MLP on the wide grid)",
        experiment=restructure,
        check=lambda m: (m["mode_relative_drop"] >= 0.5 and m["mode_relative_drop_lower"] > TOL
                         and m["clean_accuracy_change_lower"] >= -2.0
                         and m["landscape_w1_minus_seed_to_seed_lower"] > TOL),
        paper="Sec. 5: after fine-tuning with human feedback the failure mode fades and the landscape shifts "
              "(Wasserstein distance)",
    ),
]

REGIMES = [
    Regime("The landscape the explorers face: exhaustive failure rate of a random (image, action) query, of the "
           "true top-10 actions and of the worst action; clean accuracy of the model under test",
           experiment=explore, metrics=["global_failure_rate", "top10_true_failure_rate", "max_true_failure_rate",
                                        "clean_accuracy"],
           paper="ImageNet-mini with AlexNet/ResNet/EfficientNet: not stated"),
    Regime("The official configuration as it really runs (stable-baselines3 2.2.1 defaults, learning_starts "
           "50,000): gradient updates made, failures per query against random search's, precision@10",
           experiment=explore, metrics=["official_dqn_updates", "official_dqn_over_random",
                                        "official_dqn_precision_at_10"],
           paper="the saved official agents record _n_updates = 0"),
    Regime("The official baselines as they run (a uniformly random action, an adaptive choice of the image's "
           "class): their failures per query and the DQN's ratio to each",
           experiment=explore,
           metrics=["official_epsilon_greedy_failures_per_query", "dqn_over_official_epsilon_greedy",
                    "official_threshold_failures_per_query", "dqn_over_official_threshold"],
           paper="Baselines/Classification: epsilon 0.1 on class weights, threshold 5 correct predictions"),
    Regime("The shift's noise floor: W1 between two DQN explorers' failure distributions on the unchanged model, "
           "beside the restructured shift, and the explorer's share of failures at the chosen mode",
           experiment=restructure, metrics=["landscape_w1_seed_to_seed", "landscape_w1", "mode_found_share_before",
                                            "mode_found_share_after", "mode_share_seed_to_seed"],
           paper="Sec. 5 reports the Wasserstein distance between landscapes"),
]
