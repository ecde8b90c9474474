"""tall-masks claims and regimes: TALL reconstruction and compression, Consensus merging, the selfish and
catastrophic shares (MiniLM, text), the sweep's fine-tuning and the digit findings, each judged over task counts,
with the oracle (the fine-tuned models themselves in the method's slot) that must make it hold."""

from __future__ import annotations

from icml24.core import Claim, Family, NoOracle, Oracle, Regime

from .experiments import NO_CONSENSUS, merging, merging_large_vectors, text_merging, text_regime_sweep

_REGIME = ["tau_rel_norm", "tau_mean_abs_cos", "tau_energy_top1", "tau_kurtosis"]
# a normalized-accuracy difference counts beyond 1e-9: one test text moves a task's accuracy by 1/128, so the mean of
# T <= 14 ratios moves by >= 5e-4, while rounding the mean of T ratios moves it by ~1e-15
ACC_TOL = 1e-9
# a share of weights counts as moved beyond 1e-10: one weight moves it by 1/P (4.4e-8 for MiniLM's 22.7M, more for the
# digit MLPs), rounding a difference of two shares by ~1e-16
SHARE_TOL = 1e-10
# the packed masks' byte padding over 2/T + 1/32 (theta_0 and tau_MTL in float32, one bit per weight per task): at
# most 7 bits per task, under 1e-6 of a checkpoint for any model here (0.01 bounds it with room to spare)
STORAGE_TOL = 0.01

# Oracles (not cheap: the masks, merges and evaluation passes run as in the method's run)
FINE_TUNED = Oracle("the fine-tuned models themselves in the TALL reconstructions' and Consensus merges' slots "
                    "(normalized accuracy 1 on every task)", {"masks": "finetuned"})
PERFECT_FINE_TUNING = Oracle("the validation labels as the fine-tuned models' answers (a fine-tuning that learns "
                             "every task)", {"perfect": True})
# The instances: the task counts compared (the tasks are the first max(task_counts) of the list). Shares fixed before
# measuring; not cheap (each member is a run of its experiment, the fine-tunings shared through the cache).
TASK_COUNTS = Family("task counts: the setting's own (4 and 8; full 4, 8, 14), 2 and 4, 3 and 6 (full also 6 and 11)",
                     {"own counts": {}, "T = 4": {"task_counts": [2, 4]}, "T = 6": {"task_counts": [3, 6]}},
                     full={"own counts": {}, "T = 4": {"task_counts": [2, 4]}, "T = 6": {"task_counts": [3, 6]},
                           "T = 11": {"task_counts": [6, 11]}}, share=0.6)
DIGIT_TASK_COUNTS = Family("task counts: the setting's own (4 and 8; full 4, 8, 14), 2 and 4, 3 and 6",
                           {"own counts": {}, "T = 4": {"task_counts": [2, 4]}, "T = 6": {"task_counts": [3, 6]}},
                           share=0.6)
SWEEP_TASKS = Family("how many tasks the sweep fine-tunes: 2 (full 4), 4 (full 2), 8",
                     {"2 tasks": {}, "4 tasks": {"num_tasks": 4}, "8 tasks": {"num_tasks": 8}},
                     full={"4 tasks": {}, "2 tasks": {"num_tasks": 2}, "8 tasks": {"num_tasks": 8}}, share=0.6)


def _tall_recovers(m: dict[str, float]) -> bool:
    return (min(m["tall_ta_norm_acc"], m["tall_ties_norm_acc"]) >= 0.99
            and m["tall_ta_norm_acc"] > m["ta_norm_acc"] + ACC_TOL
            and m["tall_ties_norm_acc"] > m["ties_norm_acc"] + ACC_TOL)


def _consensus_no_worse(m: dict[str, float]) -> bool:
    return (m["consensus_ta_norm_acc"] >= m["ta_norm_acc"] - ACC_TOL
            and m["consensus_ties_norm_acc"] >= m["ties_norm_acc"] - ACC_TOL)


def _shares_grow(m: dict[str, float]) -> bool:
    return all(m[f"{kind}_frac_min_step"] >= -SHARE_TOL and m[f"{kind}_frac_growth"] > SHARE_TOL
               for kind in ("selfish", "catastrophic"))


CLAIMS = [
    Claim("TALL-mask reconstruction keeps >= 99% mean normalized accuracy at the largest task count run with TA and "
          "TIES multi-task vectors, above the merged model it is cut from (MiniLM, text), on at least 2 of 3 task "
          "counts (8, 4, 6 at quick; 3 of 4 at full: 14, 4, 6, 11)",
          experiment=text_merging, check=_tall_recovers, oracle=FINE_TUNED, family=TASK_COUNTS,
          paper="> 99% of single-task accuracy retained (abstract; Table 2, ViT-B/32 8 tasks 99.x%)"),
    Claim("theta_0 + tau_MTL + T bit masks, at a measured storage ratio within 0.01 of the format's 2/T + 1/32 of "
          "the T float32 checkpoints (under 0.3 from T = 8: 0.28 at quick's 8 tasks), keep >= 99% mean normalized "
          "accuracy (TA masks) and beat TA (largest task count T, MiniLM, text), on at least 2 of 3 task counts (3 of "
          "4 at full)",
          experiment=text_merging, oracle=FINE_TUNED, family=TASK_COUNTS,
          check=lambda m: (m["storage_ratio"] <= 2 / m["num_tasks"] + 1 / 32 + STORAGE_TOL
                           and m["tall_ta_norm_acc"] >= 0.99
                           and m["tall_ta_norm_acc"] > m["ta_norm_acc"] + ACC_TOL),
          paper="20 tasks: 57 Gb -> 8.2 Gb (ratio 0.14) with 99.7% of the performance (abstract)"),
    Claim("Consensus-TA >= TA and Consensus-TIES >= TIES in mean normalized accuracy (largest task count, MiniLM), "
          "on at least 2 of 3 task counts (3 of 4 at full)",
          experiment=text_merging, null=NO_CONSENSUS, oracle=FINE_TUNED, family=TASK_COUNTS,
          check=_consensus_no_worse,
          paper="Consensus improves TA and TIES for 8, 14 and 20 tasks (Table 3; +1 to +5 points)"),
    Claim("Selfish (one task) and catastrophic (no task) weights grow with the number of tasks: each share is "
          "non-decreasing over the task counts run and larger at the largest than at the smallest (TA masks, "
          "MiniLM), on at least 2 of 3 ranges of task counts (3 of 4 at full)",
          experiment=text_merging, check=_shares_grow, family=TASK_COUNTS,
          oracle=NoOracle("an observation about the overlap of the masks themselves as T grows: no output of a "
                          "better method replaces what is measured"),
          paper="Figure 3: the shares of selfish and catastrophic weights grow with the number of tasks"),
    Claim("Light fine-tuning learns the text tasks: at the sweep's choice (the smallest task vectors within tolerance "
          "of the best validation accuracy) mean validation accuracy is >= 5 points above the zero-shot encoder's, "
          "on at least 2 of 3 task counts swept (2, 4, 8)",
          experiment=text_regime_sweep, check=lambda m: m["chosen_val_acc"] >= m["zeroshot_val_acc"] + 0.05,
          oracle=PERFECT_FINE_TUNING, family=SWEEP_TASKS,
          paper="Sec. 3 / Table 2: fine-tuned models far above zero-shot (ViT-B/32, 8 tasks), task vectors small"),
    Claim("Finding, digit MLP pre-trained on digit variants (outside the localized regime): TALL reconstruction keeps "
          ">= 99% mean normalized accuracy with TA and TIES, above the merge (largest task count), on at least 2 of "
          "3 task counts",
          experiment=merging, check=_tall_recovers, oracle=FINE_TUNED, family=DIGIT_TASK_COUNTS,
          paper="> 99% in the paper's regime; a stand-in outside it"),
    Claim("Finding, heavily fine-tuned digit MLP (large, conflicting task vectors, outside the regime): TALL "
          "reconstruction keeps >= 99% mean normalized accuracy with TA and TIES, above the merge, on at least 2 of "
          "3 task counts",
          experiment=merging_large_vectors, check=_tall_recovers, oracle=FINE_TUNED, family=DIGIT_TASK_COUNTS,
          paper="> 99% in the paper's regime; this setting records whether it holds outside it"),
]

REGIMES = [
    Regime(f"Task vectors of the {label}: size ||tau|| / ||theta_0||, mean |cos| between tasks, share of ||tau||^2 in "
           "the top 1% of weights (a dense Gaussian: 0.085), kurtosis (Gaussian: 3)", experiment=exp, metrics=_REGIME,
           paper="Sec. 3: lightly fine-tuned task vectors are small, nearly orthogonal and localized")
    for label, exp in (("MiniLM text setting (main)", text_merging), ("digit MLP on digit variants", merging),
                       ("heavily fine-tuned digit MLP", merging_large_vectors))
] + [Regime("The sweep's choice: its task-vector size, lr and steps, its smallest per-task gain over the zero-shot "
            "head on validation", experiment=text_regime_sweep,
            metrics=["chosen_tau_rel_norm", "chosen_lr", "chosen_steps", "chosen_min_gain"],
            paper="Sec. 3: task vectors small relative to the pre-trained weights"),
     Regime("Whether fine-tuning learns (MiniLM, text): mean validation accuracy fine-tuned and zero-shot, and how "
            "many tasks end at or below their zero-shot head on validation (largest count)", experiment=text_merging,
            metrics=["individual_val_acc", "zeroshot_val_acc", "tasks_not_above_zeroshot_val"],
            paper="Table 2: every fine-tuned model far above its zero-shot head")]
