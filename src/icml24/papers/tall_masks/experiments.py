"""tall-masks experiments: the MiniLM text setting, the sweep that chose its fine-tuning, and the two digit-MLP
findings, each with what fills the method's slot: TALL masks, a null or the oracle (one seed each)."""

from __future__ import annotations

import numpy as np
import torch

from icml24.core import Null, experiment
from icml24.data import TASK_SPECS
from icml24.merging import (
    TEXT_TASKS,
    BroadBase,
    ConsensusMerging,
    SmallPretrained,
    TALLMasks,
    TaskArithmetic,
    TextMergingSetting,
    TIESMerging,
    build_broad_base,
    evaluate_merging,
    regime_metrics,
)

from . import PAPER

# the paper's methods and the merges they build on (evaluate_merging fits them; `icml24 show` lists where they live)
METHODS = (TALLMasks, ConsensusMerging, TaskArithmetic, TIESMerging)
UNMASKED = Null("TA / TIES merged without masks in TALL masks' slot", {"masks": "none"})
NO_CONSENSUS = Null("a consensus no weight reaches (k = 99): the pre-trained base in Consensus's slot",
                    {"consensus_k": 99})
_METHODS = ("zeroshot", "ta", "ties", "tall_ta", "tall_ties", "consensus_ta", "consensus_ties")
FINETUNED = "finetuned"  # masks=FINETUNED: the oracle, the fine-tuned models in the reconstructions' and merges' slots
ORACLE_SLOTS = ("tall_ta", "tall_ties", "consensus_ta", "consensus_ties")


def _report(ctx, name: str, accuracy, base, tuned, counts: list[int], masks: str, tasks: list[str],
            consensus_k: int = 2) -> dict[str, float]:
    metrics, details = evaluate_merging(accuracy, base, tuned, counts, "tall" if masks == FINETUNED else masks,
                                        lambda count: ctx.torch_generator("random-masks", count),
                                        consensus_k=consensus_k)
    if masks == FINETUNED:
        fine_tuned_in_slots(metrics, details, counts)
    ctx.log(", ".join(f"{k}={v:.3f}" for k, v in metrics.items() if "_" not in k[:3] and ("norm_acc" in k
                                                                                         or k.startswith("tau_"))))
    ctx.artifact(f"{name}_details", {"tasks": list(tasks[:max(counts)]), **details})
    _figures(ctx, name, metrics, sorted(set(counts)), details)
    return metrics


def fine_tuned_in_slots(metrics: dict[str, float], details: dict, counts: list[int]) -> None:
    """The oracle: each task's fine-tuned model itself in the TALL reconstructions' and the Consensus merges' slots
    (``ORACLE_SLOTS``), scored as the protocol scores any model: its test accuracy over the fine-tuned model's, 1 on
    every task the fine-tuned model gets any item of. Everything else (merges, masks, storage) stays measured."""
    individual = np.array(details["individual_test"])
    for count in sorted(set(counts)):
        ref = individual[:count]
        normalized = ref / np.maximum(ref, 1e-12)  # as normalized_accuracy divides
        for slot in ORACLE_SLOTS:
            values = {f"{slot}_norm_acc": normalized.mean(), f"{slot}_acc": (normalized * ref).mean()}
            if slot.startswith("tall_"):
                values[f"{slot}_min_norm_acc"] = normalized.min()
            details[f"t{count}"]["normalized"][slot] = normalized.tolist()
            for key, value in values.items():
                metrics[f"t{count}_{key}"] = float(value)
                if count == max(counts):
                    metrics[key] = float(value)


def _figures(ctx, name: str, metrics: dict[str, float], counts: list[int], details: dict) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for method in _METHODS:
        ax1.plot(counts, [100 * metrics[f"t{c}_{method}_norm_acc"] for c in counts], marker="o", label=method)
    ax1.set(xlabel="number of tasks T", ylabel="mean normalized test accuracy (%)", xticks=counts,
            title=f"{name}: merging and TALL reconstruction vs. T")
    fig.legend(*ax1.get_legend_handles_labels(), loc="lower center", ncol=len(_METHODS), fontsize=8, frameon=False)
    fig.subplots_adjust(bottom=0.2)
    histogram = details[f"t{counts[-1]}"]["histogram"]
    ax2.bar(range(len(histogram)), histogram, color=["tab:red", "tab:orange"] + ["tab:blue"] * (len(histogram) - 2))
    ax2.set(xlabel="number of TALL masks (TA) selecting a weight", ylabel="fraction of weights",
            title=f"Mask overlap, T={counts[-1]} (red: catastrophic, orange: selfish)")
    ctx.figure(f"{name}_accuracy_and_overlap", fig)


def _text_finetuned(ctx, setting: TextMergingSetting, knobs: dict, steps: int, lr: float):
    """``theta_t [T, P]`` for every task of ``setting``, each fine-tuning cached (keyed by task, knobs and a seed
    drawn from the run's seed, so every seed fine-tunes anew and later runs load)."""
    if steps == 0:  # no step: every theta_t is theta_0 (nothing to cache)
        return setting.theta0.expand(len(setting.tasks), -1).clone()
    out = torch.empty(len(setting.tasks), setting.theta0.numel())  # filled row by row: no second [T, P] copy
    for t, task in enumerate(ctx.progress(setting.tasks, description="fine-tuning tasks", total=len(setting.tasks))):
        key = {"task": task.name, "steps": steps, "lr": lr, **knobs, "seed": ctx.child_seed("finetune", task.name)}
        build = lambda b, t=t: {"theta": setting.finetune(t, steps, lr, b.torch_generator("finetune"),  # noqa: E731
                                                          knobs["batch_size"])}
        out[t] = ctx.cached("text-finetune", key, build)["theta"]
    return out


def _text_setting(num_tasks: int, size: str, num_train: int, max_length: int) -> TextMergingSetting:
    if not 2 <= num_tasks <= len(TEXT_TASKS):
        raise ValueError(f"task counts must lie between 2 and {len(TEXT_TASKS)}, got {num_tasks}")
    return TextMergingSetting(TEXT_TASKS[:num_tasks], size, num_train=num_train, max_length=max_length,
                              random_state=0)  # the splits (and tiny weights): one fixed benchmark


_TINY = {"size": "tiny", "steps": 10, "lr": 3e-3, "num_train": 32, "max_length": 12}


# MiniLM: every core of the run's share; smoke fine-tunes 40 steps, where the merge falls below the fine-tuned models
@experiment(PAPER, quick={"task_counts": [4, 8], "seeds": 1}, full={"task_counts": [4, 8, 14], "seeds": 3},
            smoke={"task_counts": [2, 3], **_TINY, "steps": 40, "seeds": 1}, null=UNMASKED)
def text_merging(ctx, task_counts: list[int] = (4, 8), size: str = "minilm", steps: int = 100, lr: float = 1e-4,
                 batch_size: int = 16, num_train: int = 256, max_length: int = 32, masks: str = "tall",
                 consensus_k: int = 2) -> dict[str, float]:
    """One seed of the main setting: MiniLM-L6 lightly fine-tuned on the first ``max(task_counts)`` text tasks.

    Every metric is reported per count (``t{T}_...``) and, for the largest count, without prefix (what the claims
    read). ``masks`` puts a null in TALL masks' slot (``"none"``, ``"random"``) or the oracle (``"finetuned"``: the
    fine-tuned models in the reconstructions' and Consensus merges' slots); ``consensus_k`` is Consensus's k.
    ``task_counts`` (the instance) names the task counts compared; the tasks are the first ``max(task_counts)``.

    Cost at quick: about 5 minutes on 2 cores with an empty cache: fine-tuning 8 tasks x 100 steps (cached), then
    716 validation and test passes of the encoder (alpha grid of TA, TIES and both Consensus merges, lambda grid of
    both TALL masks, at 4 and 8 tasks), which is most of it.
    """
    setting = _text_setting(max(task_counts), size, num_train, max_length)
    knobs = {"size": size, "batch_size": batch_size, "num_train": num_train, "max_length": max_length}
    tuned = _text_finetuned(ctx, setting, knobs, steps, lr)
    return _report(ctx, "text_merging", setting.accuracy, setting.theta0, tuned, task_counts, masks,
                   [t.name for t in setting.tasks], consensus_k)


@experiment(PAPER, quick={"lrs": [3e-5, 1e-4], "steps": [50, 100], "seeds": 1},
            full={"lrs": [1e-5, 3e-5, 1e-4], "steps": [50, 100, 200], "num_tasks": 4, "seeds": 1},
            smoke={"lrs": [3e-3], "steps": [3, 10], **{k: v for k, v in _TINY.items() if k not in ("steps", "lr")},
                   "seeds": 1},
            null=Null("no fine-tuning (theta_t = theta_0)", {"finetune": False}, cheap=True))
def text_regime_sweep(ctx, lrs: list[float] = (3e-5, 1e-4), steps: list[int] = (50, 100), num_tasks: int = 2,
                      size: str = "minilm", batch_size: int = 16, num_train: int = 256, max_length: int = 32,
                      tolerance: float = 0.0, finetune: bool = True, perfect: bool = False) -> dict[str, float]:
    """Choose lr and steps on validation accuracy and regime metrics only (no merge, no test split read).

    Per (lr, steps): mean validation accuracy of the first ``num_tasks`` tasks, the smallest per-task gain over the
    zero-shot head (``min_gain``) and the regime metrics (``lr{i}_s{steps}_...``). The rule: the highest mean
    validation accuracy (``tolerance`` > 0: among settings within it of the best, the smallest ``tau_rel_norm``),
    ties to the smallest ``tau_rel_norm``: ``chosen_lr``, ``chosen_steps``.
    ``text_merging``'s defaults are the rule's choice at quick; the fine-tunings are shared with it by the cache.
    ``finetune=False`` is the null (no step: theta_t = theta_0); ``perfect=True`` the oracle (the validation labels
    as every fine-tuned model's answers: accuracy 1 on every task, task vectors of size 0, no fine-tuning run).
    """
    if not lrs or not all(lr > 0 for lr in lrs) or not steps or min(steps) < 1:
        raise ValueError(f"lrs must be positive and steps >= 1, got {list(lrs)} and {list(steps)}")
    setting = _text_setting(num_tasks, size, num_train, max_length)
    knobs = {"size": size, "batch_size": batch_size, "num_train": num_train, "max_length": max_length}
    per_task = lambda vectors: np.array([setting.accuracy(v, t, "val") for t, v in enumerate(vectors)])  # noqa: E731
    zeroshot = per_task([setting.theta0] * num_tasks)
    out, rows = {"zeroshot_val_acc": float(zeroshot.mean())}, []
    tunes = finetune and not perfect
    for i, lr in enumerate(lrs):
        for num_steps in sorted(set(steps)):
            tuned = _text_finetuned(ctx, setting, knobs, num_steps if tunes else 0, lr)
            regime = regime_metrics(setting.theta0, tuned)[0] if tunes else {"tau_rel_norm": 0.0}
            tag = f"lr{i}_s{num_steps}_"
            accs = np.ones(num_tasks) if perfect else per_task(tuned)
            out.update({tag + "val_acc": float(accs.mean()), tag + "min_gain": float((accs - zeroshot).min()),
                        **{tag + k: v for k, v in regime.items()}})
            rows.append((out[tag + "val_acc"], regime["tau_rel_norm"], lr, num_steps, out[tag + "min_gain"]))
    best = max(row[0] for row in rows)
    chosen = min((row for row in rows if row[0] >= best - tolerance), key=lambda row: row[1])
    out.update({"best_val_acc": best, "chosen_val_acc": chosen[0], "chosen_tau_rel_norm": chosen[1],
                "chosen_lr": float(chosen[2]), "chosen_steps": float(chosen[3]), "chosen_min_gain": chosen[4]})
    return out


@experiment(PAPER, quick={"task_counts": [4, 8], "seeds": 1}, full={"task_counts": [4, 8, 14], "seeds": 10},
            smoke={"task_counts": [4, 8], "hidden": 24, "pretrain_epochs": 1, "finetune_steps": 20, "seeds": 1},
            threads=1, null=UNMASKED)
def merging(ctx, source: str = "digits", task_counts: list[int] = (4, 8), hidden: int = 256, depth: int = 3,
            pretrain_epochs: int = 8, finetune_steps: int = 400, finetune_lr: float = 0.01,
            masks: str = "tall") -> dict[str, float]:
    """One seed of the digit setting: an MLP pre-trained (cached) on 31 digit variants, lightly fine-tuned (SGD,
    lr 0.01, 400 steps, the second pass's sweep) on held-out derived digit tasks; a finding outside the regime."""
    key = {"source": source, "hidden": hidden, "depth": depth, "epochs": pretrain_epochs, "num_permutations": 12,
           "seed": 0}
    built = ctx.cached("broad-base", key, lambda b: build_broad_base(
        source, hidden, depth, pretrain_epochs, 12, b.child_seed("split"), b.torch_generator("pretrain")))
    broad = BroadBase(built, source, max(task_counts), hidden, depth)
    base, tuned, ev = broad.finetune(finetune_steps, finetune_lr, lambda t: ctx.torch_generator("finetune", t))
    return _report(ctx, "merging", ev.accuracy, base, tuned, task_counts, masks, TASK_SPECS)


@experiment(PAPER, quick={"task_counts": [4, 8], "seeds": 1}, full={"task_counts": [4, 8, 14], "seeds": 10},
            smoke={"task_counts": [4, 8], "hidden": 32, "pretrain_epochs": 2, "finetune_epochs": 3, "seeds": 1},
            threads=1, null=UNMASKED)
def merging_large_vectors(ctx, source: str = "digits", task_counts: list[int] = (4, 8), hidden: int = 256,
                          pretrain_epochs: int = 40, finetune_epochs: int = 15, finetune_lr: float = 0.02,
                          masks: str = "tall") -> dict[str, float]:
    """One seed of "large, conflicting task vectors": a 2-layer MLP pre-trained on the digits alone, then 15 epochs
    of SGD (lr 0.02) per derived task; where TALL and Consensus stop working is the finding it records."""
    pretrained = SmallPretrained(source, max(task_counts), hidden, pretrain_epochs, ctx.child_seed("split"),
                                 ctx.torch_generator("pretrain"))
    base, tuned, ev = pretrained.finetune(finetune_epochs, finetune_lr, "sgd",
                                          lambda t: ctx.torch_generator("finetune", t))
    return _report(ctx, "merging_large_vectors", ev.accuracy, base, tuned, task_counts, masks, TASK_SPECS)
