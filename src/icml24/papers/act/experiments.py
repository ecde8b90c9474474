"""ACT experiments: where sinks occur (finding 1), and the accuracy of ACT on all heads and on searched heads, each
with its null (an untrained model, the uncalibrated model) and oracles (planted sinks, every answer right or wrong)
in the method's slot (one seed each)."""

from __future__ import annotations

import contextlib
import time

import numpy as np
import torch

from icml24.core import Null, experiment
from icml24.data import smollm2
from icml24.llm import (
    ACT,
    TASK_NAMES,
    HeadSearch,
    attention_maps,
    encode_task,
    hidden_sink_frequency,
    label_word_predictions,
    load_task,
    plot_attention_sinks,
)

from . import PAPER

MIN_VIEWERS = 5  # robust finding-1 count: the key is seen by >= 5 queries ...
MIN_UNIFORM_RATIO = 2.0  # ... and draws >= 2x the attention a uniform head would give it
FILTERS = {"official": {}, "robust": {"min_viewers": MIN_VIEWERS, "min_uniform_ratio": MIN_UNIFORM_RATIO}}
CONDITIONS = ("plain", "all", "filtered")  # the plain model, ACT on all heads, ACT on the searched heads
CALIBRATIONS = ("act", "none", "oracle", "adversary")  # ACT; the null; every answer right; every answer wrong


def _check_tasks(tasks: list[str]) -> list[str]:
    names = list(tasks)
    unknown = [t for t in names if t not in TASK_NAMES]
    if unknown or not names:
        raise ValueError(f"tasks must name some of {', '.join(TASK_NAMES)}; got {names!r}")
    return names


def _layer_range(num_layers: int) -> list[int]:
    return list(range(2, max(num_layers - 1, 3)))


def _untrained_like(model, generator: torch.Generator):
    """The same architecture at a fresh initialisation drawn from ``generator`` (transformers' Llama init: matrices
    and embeddings N(0, initializer_range), zero biases, unit norm weights): a model whose attention learned nothing."""
    import copy

    fresh = copy.deepcopy(model)
    std = float(getattr(fresh.config, "initializer_range", 0.02))
    with torch.no_grad():
        for module in fresh.modules():
            weight = getattr(module, "weight", None)
            if isinstance(module, (torch.nn.Linear, torch.nn.Embedding)):
                module.weight.normal_(0.0, std, generator=generator)
                if getattr(module, "bias", None) is not None:
                    module.bias.zero_()
            elif isinstance(weight, torch.nn.Parameter) and weight.ndim == 1:  # RMSNorm
                weight.fill_(1.0)
    return fresh


PLANT_KEY = 6  # the planted sink (the oracle of finding 1): the 6th-last key, seen by the last 6 queries (>= 5) ...
PLANT_SHARE = 0.5  # ... which give it half of their attention (col_j = 0.5 > 0.1, ~10x what uniform gives it)


def plant_sink(weights: torch.Tensor) -> torch.Tensor:
    """Post-softmax maps ``[..., L, L]`` with a share ``PLANT_SHARE`` of every row that sees key ``L - PLANT_KEY``
    moved onto that key (rows still sum to 1; prompts are left-padded, so every prompt ends at ``L - 1``)."""
    key = weights.shape[-1] - PLANT_KEY
    if key < 1:
        raise ValueError(f"a planted sink needs prompts of more than {PLANT_KEY} tokens, got {weights.shape[-1]}")
    planted = weights.clone()
    planted[..., key:, :] *= 1.0 - PLANT_SHARE
    planted[..., key:, key] += PLANT_SHARE
    return planted


@contextlib.contextmanager
def _planted_sinks(model):
    """The model with every attention module's reported map passed through ``plant_sink`` (a forward hook, removed
    after): a sink beyond the first token in every head of every layer by construction."""

    def hook(module, args, output):
        if not isinstance(output, tuple) or len(output) < 2 or output[1] is None:
            return output
        return (output[0], plant_sink(output[1]), *output[2:])

    handles = [layer.self_attn.register_forward_hook(hook) for layer in model.model.layers]
    try:
        yield model
    finally:
        for handle in handles:
            handle.remove()


# threads=1: on a shared 2-core machine two torch threads spin, and the smoke runs took 10x longer; use --jobs instead
# smoke: 8 prompts, the fewest the claim judges (its oracle must hold at smoke)
@experiment(PAPER, quick={"prompts_per_task": 8, "seeds": 1}, full={"prompts_per_task": 80, "seeds": 1},
            smoke={"tasks": ["sentiment"], "prompts_per_task": 8, "batch_size": 8}, threads=1,
            null=Null("SmolLM2's architecture at a random initialisation (attention that learned nothing)",
                      {"weights": "untrained"}))
def sinks(ctx, tasks: list[str] = TASK_NAMES, prompts_per_task: int = 16, threshold: float = 0.1,
          batch_size: int = 16, weights: str = "pretrained") -> dict[str, float]:
    """Where sinks occur: per layer, the share of heads with sinks beyond the first token (paper finding 1).

    ``weights="untrained"`` counts them in the same architecture at a random initialisation instead (the null);
    ``weights="planted"`` in SmolLM2 with a sink planted beyond the first token in every head (``plant_sink``: the
    oracle, what the detector must find).

    Two counts from one forward per prompt: the official rule (``col_j > 0.1`` at a key after the first), and a
    robust one that also asks the key to be seen by at least 5 queries and to draw at least twice the attention a
    uniform head would give it: on our ~20-token prompts the official rule flags the last tokens, and even the second
    token of a uniform head. The claim reads the robust count, and counts a layer only where some head shows
    hidden sinks on more than half the prompts by more than two binomial standard errors of the prompt sample.
    """
    if weights not in ("pretrained", "untrained", "planted"):
        raise ValueError(f"weights must be 'pretrained', 'untrained' or 'planted', got {weights!r}")
    model, tokenizer = smollm2()
    if weights == "untrained":
        model = _untrained_like(model, ctx.torch_generator("untrained weights"))
    with _planted_sinks(model) if weights == "planted" else contextlib.nullcontext(model):
        return _sinks(ctx, model, tokenizer, _check_tasks(tasks), prompts_per_task, threshold, batch_size)


def _sinks(ctx, model, tokenizer, names, prompts_per_task, threshold, batch_size) -> dict[str, float]:
    batches = []
    for i, name in enumerate(names):
        task = load_task(name, random_state=0)  # the templates and distractors: one fixed task
        sample = task.subset(ctx.rng(i).choice(len(task), prompts_per_task, replace=False))
        batches.extend(encode_task(sample, tokenizer, batch_size))
    freq = hidden_sink_frequency(model, batches, threshold, filters=FILTERS)
    raw, robust = freq["official"], freq["robust"]  # [layers, heads]
    num_layers = raw.shape[0]
    layer_share_raw, layer_share = raw.mean(axis=1), robust.mean(axis=1)
    num_prompts = sum(len(b.labels) for b in batches)
    consistent = (robust >= 0.5).any(axis=1)  # some head of the layer shows hidden sinks on most prompts
    # ... and beyond the noise of the prompt sample: the head's frequency exceeds 1/2 by more than 2 binomial SEs
    beyond_noise = (robust - 2 * np.sqrt(robust * (1 - robust) / num_prompts) > 0.5).any(axis=1)
    ctx.artifact("hidden_sink_frequency", {"official_rule": raw, "robust": robust})
    _sink_figures(ctx, model, tokenizer, batches, robust, layer_share_raw, layer_share, threshold)
    metrics = {
        "act_layers_with_hidden_sinks_frac": float(consistent.mean()),
        "act_layers_with_hidden_sinks_frac_beyond_2se": float(beyond_noise.mean()),
        "act_layers_any_hidden_sink_frac": float((robust > 0).any(axis=1).mean()),
        "act_layers_any_hidden_sink_frac_official_rule": float((raw > 0).any(axis=1).mean()),
        "act_heads_hidden_sink_share": float(robust.mean()),
        "act_heads_hidden_sink_share_official_rule": float(raw.mean()),
        "act_num_prompts": float(num_prompts),
    }
    metrics.update({f"act_layer{la:02d}_hidden_sink_share": float(layer_share[la]) for la in range(num_layers)})
    return metrics


def _sink_figures(ctx, model, tokenizer, batches, robust, share_raw, share, threshold):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3))
    layers = np.arange(len(share))
    ax.bar(layers - 0.2, share_raw, width=0.4, label="official rule (col_j > 0.1)")
    robust_label = f"robust: seen by >= {MIN_VIEWERS} queries, >= {MIN_UNIFORM_RATIO:g}x uniform"
    ax.bar(layers + 0.2, share, width=0.4, label=robust_label)
    ax.set_xlabel("layer")
    ax.set_ylabel("share of (prompt, head) with\na sink beyond the first token")
    ax.legend(fontsize=8)
    ctx.figure("act_hidden_sinks_per_layer", fig)
    b = batches[-1]  # one prompt, the heads with the most frequent hidden sinks (paper Fig. 1 style)
    row = b.input_ids.shape[0] - 1
    ids = b.input_ids[row : row + 1, b.attention_mask[row].bool()]
    maps = attention_maps(model, ids)
    shown = np.unique(np.linspace(0, robust.shape[0] - 1, 8).round().astype(int))
    pairs = [(int(layer), int(np.argmax(robust[layer]))) for layer in shown]  # most sink-prone head per layer
    panel = torch.stack([maps[layer][0, head] for layer, head in pairs])
    tokens = [tokenizer.decode([t]) for t in ids[0].tolist()]
    ctx.figure("act_attention_maps", plot_attention_sinks(panel, [f"layer {la}, head {h}" for la, h in pairs],
                                                          threshold, tokens))


@experiment(PAPER, quick={"num_calibration": 8, "num_test": 60, "search_heads": 4, "shots": 2, "seeds": 3},
            full={"num_calibration": 40, "num_test": 250, "search_heads": 0, "shots": 2, "seeds": 5},
            # continent (5-way, plain 0.73-0.85 at 2 shots): the plain model sits above chance by 2 SEs on 12 items;
            # 24 items: the oracle's gain (every answer right) passes 2 paired SEs once the plain model errs 4 times
            smoke={"tasks": ["continent"], "num_calibration": 2, "num_test": 24, "search_heads": 1, "batch_size": 12,
                   "shots": 1},
            # the null is not cheap: model load and the plain model's test pass are half of quick (88 s of 177 s)
            threads=1, null=Null("the uncalibrated model (no ACT) in both ACT conditions' slots",
                                 {"calibration": "none"}))
def accuracy(ctx, tasks: list[str] = TASK_NAMES, num_calibration: int = 40, num_test: int = 250, shots: int = 2,
             search_heads: int = 0, threshold: float = 0.1, beta: float = 0.4,
             batch_size: int = 32, calibration: str = "act") -> dict[str, float]:
    """Accuracy of the plain model, ACT on all heads and ACT on searched heads, per task; cost of the search.

    Cost at quick: about 5 minutes per seed (3 seeds): per task, the head search's calibration prompts for each
    candidate plus 60 test items under three conditions, each a SmolLM2-135M forward pass over a 2-shot prompt;
    fewer test items would put the binomial SE (about 6 points at 60) above the effects the claims read.

    ``calibration="none"`` is the null: no head search and no calibration, so both ACT conditions score the plain
    model (zero heads calibrated, zero search cost) under their own names. The oracles put the ends of the claims'
    directions in both ACT slots, with no search: ``"oracle"`` answers every test item right (a calibration that
    cannot be improved on), ``"adversary"`` every item wrong (a calibration that can only hurt); each reports the
    heads of the all-heads condition as calibrated (the stand-in replaces a calibration of every head).

    One seed is one draw per task, as one of the official few-shot runs: ``shots`` solved demonstrations
    (between the instruction and every test query), ``num_calibration`` zero-shot calibration items for the head
    search (the official search reads zero-shot prompts) and up to ``num_test`` test items (every remaining item
    when fewer), all disjoint. Every accuracy comes with its binomial standard error (``_se``) and the task's chance
    level beside it (``act_<task>_chance``: the larger of the uniform guess and the majority share of the test
    items, the best constant answer); every change over the plain model with the paired standard error of the
    per-item differences (the same items are scored by each condition); the mean over tasks has
    ``sqrt(sum se_t^2) / T``. Across seeds the SE is the root mean square of the per-seed SEs (not shrunk by the
    number of seeds: the country tasks test nearly the same items each seed).

    Regime: a task whose plain accuracy (mean over seeds) is not above its chance level by 2 binomial SEs at
    chance is out of regime (``act_<task>_in_regime`` = 0): a model that cannot do the task says nothing about
    calibration. The claims average only the tasks in regime and read ``not run (out of regime)`` when none is.
    The number of heads each ACT condition calibrates is reported beside its accuracy; under the paper's strict
    keep rule a search where every candidate ties the plain model keeps no head, which is reported as such
    (``act_filtered_num_heads`` = 0 per seed, ``act_filtered_num_heads_min``, ``act_empty_selections``), never as
    heads, and fails the searched-heads claim (the filtered condition is then the plain model).

    Head search: quick ranks heads by how often their maps hold robust hidden sinks on the calibration prompts and
    searches the top ``search_heads`` (ACT leaves a map without hidden sinks unchanged, so sink-free heads cannot
    gain; ``act_search_sink_head_coverage`` is the share of sink-holding heads searched); full searches all 270.
    The heads of one layer are scored in one batched forward (``HeadSearch``).
    Quick: 8 calibration and 60 test items per task, 4 searched heads, 2 demonstrations, 3 draws; full: 40 / 250
    items, 2 demonstrations, the official 5 draws, every head (hours). An effect inside twice its SE fails its
    claim.
    """
    if calibration not in CALIBRATIONS:
        raise ValueError(f"calibration must be one of {', '.join(CALIBRATIONS)}, got {calibration!r}")
    model, tokenizer = smollm2()
    names = _check_tasks(tasks)
    num_layers = model.config.num_hidden_layers
    all_heads = {layer: "all" for layer in _layer_range(num_layers)}
    split_seed = ctx.child_seed(0)  # stream 0: the demonstrations and calibration/test split of this seed
    cal, test, chance = [], [], []
    for name in names:
        task = load_task(name, random_state=0)  # the templates and distractors: one fixed task
        n_test = min(num_test, len(task) - num_calibration - shots)
        c, t = task.draw(num_calibration, n_test, shots, random_state=split_seed)
        cal.append(encode_task(c, tokenizer, batch_size))
        test.append(encode_task(t, tokenizer, batch_size))
        chance.append(_chance(t))
    all_count = sum(len(h) for h in ACT(all_heads).selected_heads(model).values())
    if calibration != "act":  # the null (the plain model) or an oracle in both ACT slots, nothing searched
        plain = [_correct(model, b) for b in test]
        slot = plain if calibration == "none" else [np.full(len(c), calibration == "oracle") for c in plain]
        heads = 0 if calibration == "none" else all_count
        correct = {"plain": plain, "all": list(slot), "filtered": list(slot)}
        return _accuracy_metrics(ctx, names, correct, cal, num_layers, shots, _NoSearch(model, cal, heads),
                                 float(heads), 0.0, chance)
    tick = time.perf_counter()
    candidates, coverage = _candidates(model, cal, search_heads, threshold, num_layers)
    ctx.log(f"act: candidate heads chosen in {time.perf_counter() - tick:.1f}s")
    search = HeadSearch(candidates, threshold=threshold, beta=beta)
    search.fit(model, cal, progress=ctx.progress_callback("ACT head search"))
    ctx.log(f"act: searched {len(search.head_accuracy_)} heads in {search.seconds_:.1f}s, "
            f"kept {search.num_selected_}: {search.selected_heads_}")
    start = time.perf_counter()
    correct = {"plain": [_correct(model, b) for b in test]}  # per task: bool per test item
    with ACT(all_heads, threshold=threshold, beta=beta).attach(model) as m:
        correct["all"] = [_correct(m, b) for b in test]
    with ACT(search.selected_heads_, threshold=threshold, beta=beta).attach(model) as m:
        correct["filtered"] = [_correct(m, b) for b in test]
    ctx.log(f"act: test evaluation of 3 conditions done in {time.perf_counter() - start:.1f}s")
    ctx.artifact("act_selected_heads", {
        "split_seed": split_seed, "selected_heads": search.selected_heads_,
        "head_accuracy": {f"{la},{h}": a for (la, h), a in search.head_accuracy_.items()},
        "head_log_likelihood": {f"{la},{h}": a for (la, h), a in search.head_log_likelihood_.items()},
        "baseline_calibration_accuracy": search.baseline_accuracy_})
    return _accuracy_metrics(ctx, names, correct, cal, num_layers, shots, search, float(all_count), coverage,
                             chance)


class _NoSearch:
    """The null's and the oracles' stand-in for a fitted HeadSearch: nothing searched, no cost, ``kept`` heads
    reported (0 for the null); the calibration-set accuracy is the plain model's."""

    def __init__(self, model, cal, kept: int = 0):
        self.selected_heads_, self.head_accuracy_, self.num_selected_ = {}, {}, kept
        self.seconds_, self.forward_passes_, self.forward_layers_ = 0.0, 0, 0
        self.baseline_accuracy_ = float(np.concatenate([_correct(model, b) for b in cal]).mean())


def _accuracy_metrics(ctx, names, correct, cal, num_layers, shots, search, all_count: float,
                      coverage: float, chance: list[float]) -> dict[str, float]:
    """The accuracy experiment's metrics from the per-item correctness of each condition and the search."""
    metrics: dict[str, float] = {}
    for k, name in enumerate(names):
        n = len(correct["plain"][k])
        metrics[f"act_{name}_num_test"] = float(n)
        metrics[f"act_{name}_chance"] = chance[k]
        for cond in CONDITIONS:
            acc = float(correct[cond][k].mean())
            metrics[f"act_{name}_{cond}_acc"] = acc
            metrics[f"act_{name}_{cond}_acc_se"] = _binomial_se(acc, n)
            if cond != "plain":
                diff = correct[cond][k].astype(float) - correct["plain"][k].astype(float)
                metrics[f"act_{name}_{cond}_change_se"] = float(diff.std(ddof=1) / np.sqrt(n)) if n > 1 else 1.0
    metrics["act_mean_chance"] = float(np.mean(chance))
    for cond in CONDITIONS:
        accs = np.array([metrics[f"act_{name}_{cond}_acc"] for name in names])
        metrics[f"act_mean_{cond}_acc"] = float(accs.mean())
        metrics[f"act_mean_{cond}_acc_se"] = float(np.sqrt(sum(metrics[f"act_{name}_{cond}_acc_se"] ** 2
                                                               for name in names)) / len(names))
    metrics.update({"act_all_num_heads": all_count, "act_filtered_num_heads": float(search.num_selected_)})
    metrics.update(_accuracy_summary([metrics]))
    n_cand = len(search.head_accuracy_)
    items = sum(len(b.labels) for task in cal for b in task)
    metrics.update({
        "act_search_seconds": float(search.seconds_),
        "act_search_heads": float(n_cand),
        "act_search_sink_head_coverage": float(coverage),
        "act_search_forward_passes": float(search.forward_passes_),
        "act_search_seconds_per_head": float(search.seconds_ / max(n_cand, 1)),
        # decoder-layer passes of the cached search over those of one full forward per head (timing-free cost)
        "act_search_layer_passes_vs_full_forwards": float(search.forward_layers_ / ((n_cand + 1) * num_layers * items)),
        "act_calibration_plain_acc": float(search.baseline_accuracy_),
        "act_calibration_best_head_acc": float(max(search.head_accuracy_.values(), default=search.baseline_accuracy_)),
        "act_shots": float(shots),
    })
    _accuracy_figure(ctx, names, {cond: np.array([c.mean() for c in correct[cond]]) for cond in CONDITIONS})
    return metrics


def _correct(model, batches) -> np.ndarray:
    preds, labels = label_word_predictions(model, batches)
    return preds == labels


def _chance(task) -> float:
    """The best constant answer's accuracy on ``task``: the larger of the uniform guess and the majority share."""
    return float(max(task.chance, np.bincount(task.labels).max() / len(task)))


def _binomial_se(acc: float, n: int) -> float:
    return float(np.sqrt(acc * (1.0 - acc) / n)) if n > 0 else 1.0


def _task_names(metrics: dict[str, float]) -> list[str]:
    return [k[len("act_"):-len("_num_test")] for k in metrics if k.startswith("act_") and k.endswith("_num_test")]


@accuracy.summarizer
def _accuracy_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """Per task, whether it is in regime (its plain accuracy, mean over seeds, above its chance level by more than
    2 binomial SEs at chance: ``act_<task>_in_regime``, with the margin in SEs ``act_<task>_plain_above_chance_se``);
    then, over the tasks in regime only, the change of each ACT condition over the plain model averaged over seeds,
    with its SE (root mean square of the per-seed paired SEs): the mean over tasks (``act_<cond>_gain_mean``, SE
    ``act_<cond>_gain_se`` = sqrt(sum se_t^2) / T) and the minimum over tasks (``act_<cond>_worst_task_change``, the
    worst task of the mean changes, not the mean of per-seed worst tasks); none of these when no task is in regime.
    Also the fewest heads any seed's search kept and the number of seeds whose search kept none."""
    tasks = _task_names(per_seed[0])
    metrics: dict[str, float] = {}
    judged = []
    for t in tasks:
        plain = float(np.mean([m[f"act_{t}_plain_acc"] for m in per_seed]))
        chance = float(np.mean([m[f"act_{t}_chance"] for m in per_seed]))
        se = _binomial_se(chance, int(round(np.mean([m[f"act_{t}_num_test"] for m in per_seed]))))
        metrics[f"act_{t}_plain_above_chance_se"] = (plain - chance) / max(se, 1e-12)
        metrics[f"act_{t}_in_regime"] = float(plain - chance > 2 * se)
        if metrics[f"act_{t}_in_regime"]:
            judged.append(t)
    metrics["act_tasks_in_regime"] = float(len(judged))
    metrics["act_tasks_out_of_regime"] = float(len(tasks) - len(judged))
    for cond in ("all", "filtered"):
        metrics[f"act_{cond}_num_heads_min"] = float(min(m[f"act_{cond}_num_heads"] for m in per_seed))
        if not judged:
            continue
        change = np.array([np.mean([m[f"act_{t}_{cond}_acc"] - m[f"act_{t}_plain_acc"] for m in per_seed])
                           for t in judged])
        se = np.array([np.sqrt(np.mean([m[f"act_{t}_{cond}_change_se"] ** 2 for m in per_seed])) for t in judged])
        metrics[f"act_{cond}_gain_mean"] = float(change.mean())
        metrics[f"act_{cond}_gain_se"] = float(np.sqrt((se ** 2).sum()) / len(judged))
        metrics[f"act_{cond}_worst_task_change"] = float(change.min())
    metrics["act_empty_selections"] = float(sum(m["act_filtered_num_heads"] == 0 for m in per_seed))
    return metrics


def _candidates(model, cal_batches, search_heads: int, threshold: float, num_layers: int):
    """All heads (``search_heads <= 0``), else the ``search_heads`` heads of layers 2..L-3 whose maps most often
    hold (robust) sinks beyond the first token on the calibration prompts; and the share of the heads with such
    sinks on some prompt that the candidates cover."""
    if search_heads <= 0:
        return "all", 1.0
    batches = [b for task in cal_batches for b in task]
    freq = hidden_sink_frequency(model, batches, threshold, MIN_VIEWERS, MIN_UNIFORM_RATIO)
    allowed_layers = [layer for layer in _layer_range(num_layers) if layer < num_layers - 2]
    masked = np.full_like(freq, -1.0)
    masked[allowed_layers] = freq[allowed_layers]
    order = np.argsort(-masked.ravel(), kind="stable")[:search_heads]
    with_sinks = int((masked > 0).sum())
    coverage = float((masked.ravel()[order] > 0).sum() / with_sinks) if with_sinks else 1.0
    return [divmod(int(k), freq.shape[1]) for k in order], coverage


def _accuracy_figure(ctx, names, acc):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3))
    x = np.arange(len(names) + 1)
    for k, (cond, label) in enumerate([("plain", "plain"), ("all", "ACT, all heads"), ("filtered", "ACT, searched")]):
        values = list(acc[cond]) + [acc[cond].mean()]
        ax.bar(x + (k - 1) * 0.27, values, width=0.27, label=label)
    ax.set_xticks(x)
    ax.set_xticklabels(list(names) + ["mean"])
    ax.set_ylabel("test accuracy")
    ax.legend(fontsize=8)
    ctx.figure("act_accuracy", fig)
