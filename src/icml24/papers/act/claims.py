"""act claims and regimes: finding 1 (sinks beyond the first token), finding 2 (calibrating every head hurts) and
ACT's gain on searched heads, each judged over the label-word tasks, with the oracle that must make it hold."""

from __future__ import annotations

from icml24.core import Claim, Family, Oracle, OutOfRegime, Regime
from icml24.llm import TASK_NAMES

from .experiments import accuracy, sinks

# The instances: the four tasks together (the experiment's own instance) and each task alone. A task the plain model
# does not beat chance on is out of regime; its member then reads "not run". Shares fixed before measuring.
_TASKS = {"all four tasks": {}, **{name: {"tasks": [name]} for name in TASK_NAMES}}
SINK_TASKS = Family("prompts of the label-word tasks: all four together and each alone", _TASKS, share=0.8)
ACCURACY_TASKS = Family("label-word tasks: all four together and each alone", _TASKS, share=0.6)

# Oracles (not cheap: model load and the plain model's test pass, as the null; the planted run costs a sinks run)
PLANTED = Oracle("SmolLM2 with a sink planted beyond the first token in every head (half of each query's attention "
                 "on the sixth-last key)", {"weights": "planted"})
EVERY_ANSWER_RIGHT = Oracle("the test labels in both ACT slots (a calibration that answers every item right)",
                            {"calibration": "oracle"})
EVERY_ANSWER_WRONG = Oracle("every answer wrong in both ACT slots (a calibration that can only hurt, the finding's "
                            "direction at its end)", {"calibration": "adversary"})


# an accuracy change counts beyond 1e-9: one test item moves a task's accuracy by >= 1/250, rounding a mean of
# per-task, per-seed changes by ~1e-16
CHANGE_TOL = 1e-9


def _in_regime(m) -> None:
    """Refuse to judge when the plain model is not above chance on any task (``OutOfRegime``: ``not run``)."""
    if m["act_tasks_in_regime"] < 1:
        raise OutOfRegime(f"the plain model is not above chance by 2 binomial SEs on any of its "
                          f"{int(m['act_tasks_out_of_regime'])} task(s)")


def _all_heads_hurt(m) -> bool:
    _in_regime(m)
    heads, gain, se = m["act_all_num_heads"], m["act_all_gain_mean"], m["act_all_gain_se"]
    # the paper's direction, beyond twice the paired standard error and beyond rounding
    return heads > 0 and gain < -2 * se - CHANGE_TOL


def _searched_heads_help(m) -> bool:
    _in_regime(m)
    heads, gain, se = m["act_filtered_num_heads_min"], m["act_filtered_gain_mean"], m["act_filtered_gain_se"]
    worst = m["act_filtered_worst_task_change"]
    # an empty selection calibrates nothing: it equals the plain model and is never a pass
    return heads >= 1 and gain >= 0.01 and gain > 2 * se and worst >= -0.02


CLAIMS = [
    Claim(
        "Sinks beyond the first token occur in the majority of layers (some head shows them on more than half the "
        "prompts of >= 8, by more than 2 binomial standard errors), on at least 4 of 5 prompt sets (the four tasks "
        "together and each alone)",
        experiment=sinks,
        check=lambda m: m["act_layers_with_hidden_sinks_frac_beyond_2se"] > 0.5 and m["act_num_prompts"] >= 8,
        paper="Finding 1: attention sinks occur not only at the start but also within later tokens (Fig. 1-2)",
        oracle=PLANTED, family=SINK_TASKS,
    ),
    Claim(
        "Not every sink helps: calibrating all heads lowers mean accuracy (over the tasks where the plain model is "
        "above chance) by more than 2 paired standard errors, on at least 3 of 5 instances (the four tasks together "
        "and each alone)",
        experiment=accuracy,
        check=_all_heads_hurt,
        paper="Finding 2: not all attention sinks are harmful; calibrating every head hurts, so ACT filters heads "
              "(Sec. 4)",
        oracle=EVERY_ANSWER_WRONG, family=ACCURACY_TASKS,
    ),
    Claim(
        "ACT on searched heads (at least one kept in every draw) raises mean accuracy over the tasks where the "
        "plain model is above chance by >= 1 point and by more than 2 paired standard errors, no such task "
        "dropping by more than 2 points, on at least 3 of 5 instances (the four tasks together and each alone)",
        experiment=accuracy,
        check=_searched_heads_help,
        paper="up to +7.30% average accuracy on Llama-30B across datasets (abstract)",
        oracle=EVERY_ANSWER_RIGHT, family=ACCURACY_TASKS,
    ),
]

REGIMES = [
    Regime("Tasks in regime (plain accuracy above chance by 2 binomial SEs; the accuracy claims read only these) and "
           "out of it; mean plain accuracy and mean chance level over the tasks", experiment=accuracy,
           metrics=["act_tasks_in_regime", "act_tasks_out_of_regime", "act_mean_plain_acc", "act_mean_chance"],
           paper="Llama-2/Mistral on SST-2, AGNews, ...: far above chance"),
    Regime("Heads the strict search kept: fewest over draws, draws that kept none (the filtered condition is then "
           "the plain model)", experiment=accuracy,
           metrics=["act_filtered_num_heads_min", "act_empty_selections"],
           paper="a head is kept when its calibration alone raises calibration accuracy"),
]
