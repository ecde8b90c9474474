"""BiE experiments: per-layer error of each format on SmolLM2's linear layers, and held-out perplexity at matched bits
(one seed each), with BFP (the null) or the unquantized values (the oracle) in BiE's slot."""

from __future__ import annotations

import functools
import time

import numpy as np
import torch

from icml24.core import Null, experiment, labelled, select
from icml24.data import smollm2
from icml24.llm import (
    BFPFormat,
    BiEFormat,
    IntFormat,
    LinearQuantizer,
    MXFormat,
    block_outlier_share,
    channel_ratio,
    collect_linear_inputs,
    exponent_bimodality,
    flushed_share,
    kurtosis,
    linear_layers,
    minimize_threshold,
    outlier_share,
    perplexity_ratio_ci,
    search_layer,
    sqnr_db,
    window_nll,
)

from . import PAPER

# matched bits per element, metadata included: 4.25 and 5.25
FORMATS = {
    "int4_g64": lambda: IntFormat(4, 64), "bfp_m3_b32": lambda: BFPFormat(3, 32),
    "mxfp4": lambda: MXFormat("e2m1", 32), "bie_m2_b64": lambda: BiEFormat(2, 64),
    "int5_g64": lambda: IntFormat(5, 64), "bfp_m4_b32": lambda: BFPFormat(4, 32),
    "bie_m3_b64": lambda: BiEFormat(3, 64), "bfp_m3_b64": lambda: BFPFormat(3, 64),
}
LOW, HIGH = ["int4_g64", "bfp_m3_b32", "mxfp4", "bie_m2_b64"], ["int5_g64", "bfp_m4_b32", "bie_m3_b64"]
WA = ["bie_m3_b64", "bfp_m4_b32", "bie_m2_b64", "bfp_m3_b32", "mxfp4"]  # weights + inputs
# what fills BiE's slot: BiE itself, (the null) the BFP format with the same bits per element, or (the oracle) the
# unquantized values
SAME_BITS_BFP = {"bie_m2_b64": "bfp_m3_b32", "bie_m3_b64": "bfp_m4_b32"}
BIE_SLOT = ("bie", "bfp", "exact")
# which linear layers: every one, the attention projections alone or the MLPs alone (names hold "self_attn"/"mlp")
LAYER_GROUPS = {"all": (), "attention": ("mlp",), "mlp": ("self_attn",)}  # group -> name parts left out
TENSORS = ("input", "weight")  # what the errors experiment quantizes: the layers' inputs or their weight matrices
# no representation of float32 data is resolved beyond float32's own rounding (relative 2^-24 per element): the
# SQNR of the exact values (the oracle) is capped at 20 log10(2^24) = 144.5 dB instead of inf
SQNR_CAP_DB = 20 * np.log10(2.0**24)
# a same-m SQNR gain counts beyond 1e-6 dB: the float64 sums over <= 1e7 elements round by <= 1e-9 relative
# (4.3e-9 dB each), far below any gain a block could make (one flushed element of 64 moves it by ~0.01 dB)
SQNR_TOL_DB = 1e-6
# a layer counts as bimodal when the BIC gain per sample exceeds 2e-3: GaussianMixture stops EM when the mean
# log-likelihood per sample changes by < 1e-3 (its tol), so each BIC per sample is resolved to about 2e-3
BIMODAL_TOL = 2e-3
BLOCK_FACTORS = (8, 16, 64)  # max/median of a block: past 8 (m = 2) or 16 (m = 3) BFP flushes the median element
BFP_IN_BIE_SLOT = Null("BFP at the same bits per element (m3 B32 for 4.25 b, m4 B32 for 5.25 b) in BiE's slot",
                       {"bie_slot": "bfp"})


def _format(name: str):
    if name not in FORMATS:
        raise ValueError(f"unknown format {name!r}; choose from {', '.join(FORMATS)}")
    return FORMATS[name]()


class Exact:
    """The oracle in BiE's slot: the unquantized values (``quantize`` returns a copy), charged BiE's bits."""

    def __init__(self, fmt):
        self.label, self.bits_per_element = f"exact values (in {fmt.label}'s slot)", fmt.bits_per_element

    def quantize(self, x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    def with_threshold(self, threshold: float) -> Exact:
        return self


def _slot_format(name: str, bie_slot: str):
    """The format run under ``name``: itself; in the null (``bie_slot="bfp"``) BFP at BiE's bits; in the oracle
    (``"exact"``) the unquantized values (``Exact``) in place of BiE."""
    if bie_slot not in BIE_SLOT:
        raise ValueError(f"bie_slot must be one of {', '.join(BIE_SLOT)}, got {bie_slot!r}")
    if bie_slot == "exact" and name in SAME_BITS_BFP:
        return Exact(_format(name))
    return _format(SAME_BITS_BFP[name] if bie_slot == "bfp" and name in SAME_BITS_BFP else name)


def _sqnr(x: torch.Tensor, q: torch.Tensor) -> float:
    """``sqnr_db``, capped at float32's resolution (``SQNR_CAP_DB``: the exact values give the cap, not inf)."""
    return float(min(sqnr_db(x, q), SQNR_CAP_DB))


def _group_names(names, group: str) -> list[str]:
    """The linear layers of ``group`` (``LAYER_GROUPS``), in model order."""
    if group not in LAYER_GROUPS:
        raise ValueError(f"layer_group must be one of {', '.join(LAYER_GROUPS)}, got {group!r}")
    return [n for n in names if not any(part in n for part in LAYER_GROUPS[group])]


@functools.lru_cache(maxsize=2)
def _pydoc_ids(tokenizer) -> torch.Tensor:
    """CPython's pydoc topics (always installed), tokenized once per process: about 113k SmolLM2 tokens."""
    from pydoc_data.topics import topics

    text = "\n\n".join(topics[key] for key in sorted(topics))
    return tokenizer(text, return_tensors="pt").input_ids[0]


def _windows(ids: torch.Tensor, rng: np.random.Generator, count: int, length: int, start: int, stop: int):
    """``count`` disjoint windows of ``length`` tokens from ``ids[start:stop]`` at random aligned offsets."""
    slots = (stop - start) // length
    picks = np.sort(rng.choice(slots, size=count, replace=False))
    return torch.stack([ids[start + int(p) * length: start + (int(p) + 1) * length] for p in picks])


def _text(ctx, tokenizer, cal_tokens: int, sequences: int, seq_len: int):
    """Calibration tokens from the first 20% of the text, held-out windows from the rest."""
    ids = _pydoc_ids(tokenizer)
    cut = len(ids) // 5
    cal = _windows(ids, ctx.rng("calibration"), 1, cal_tokens, 0, cut)
    held = _windows(ids, ctx.rng("held-out"), sequences, seq_len, cut, len(ids))
    return cal, held


def _bimodal(rng: np.random.Generator, rows: int, cols: int, rate: float, scale: float) -> torch.Tensor:
    """Gaussian data with a share ``rate`` of outliers scaled by ``scale`` (the paper's bimodal picture)."""
    x = rng.standard_normal((rows, cols))
    x[rng.random((rows, cols)) < rate] *= scale
    return torch.from_numpy(x.astype(np.float32))


def _mse(x, q) -> float:
    return float(((x.double() - q.double()) ** 2).mean())


def _synthetic(ctx, rows: int, rate: float, scale: float, n_trials: int) -> dict[str, float]:
    x_cal = _bimodal(ctx.rng("synthetic", "calibration"), rows, 1024, rate, scale)
    x = _bimodal(ctx.rng("synthetic", "test"), rows, 4096, rate, scale)
    out = {}
    for m in (2, 3, 4):
        bie = BiEFormat(m, 64)
        t, _, _ = minimize_threshold(lambda t, b=bie: _mse(x_cal, b.with_threshold(t).quantize(x_cal)),
                                     n_trials=n_trials, random_state=ctx.child_seed("synthetic", m))
        mse_bie, mse_bfp = _mse(x, bie.with_threshold(t).quantize(x)), _mse(x, BFPFormat(m, 64).quantize(x))
        out[f"syn_mse_ratio_bie_over_bfp_m{m}"] = mse_bie / mse_bfp
        out[f"syn_threshold_m{m}"] = t
    for name in LOW + HIGH:
        fmt = _format(name)
        out[f"syn_sqnr_db_{name}"] = sqnr_db(x, fmt.quantize(x))
    return out


@experiment(PAPER, null=BFP_IN_BIE_SLOT,
            quick={"n_trials": 4, "grid_layers": 10, "bimodality_samples": 1000, "seeds": 1},
            full={"eval_sequences": 4, "grid_layers": 210, "n_trials": 12, "bimodality_samples": 4000, "seeds": 2},
            smoke={"eval_sequences": 1, "eval_len": 32, "n_trials": 2, "grid_layers": 1, "synthetic_rows": 8,
                   "bimodality_samples": 1000,
                   "max_layers": 14},
            threads=1)
def errors(ctx, calibration_tokens: int = 64, eval_sequences: int = 2, eval_len: int = 128, n_trials: int = 6,
           grid_layers: int = 21, synthetic_rows: int = 128, outlier_rate: float = 0.01, outlier_scale: float = 50.0,
           max_layers: int = 0, bimodality_samples: int = 4000, bie_slot: str = "bie", layer_group: str = "all",
           tensor: str = "input") -> dict[str, float]:
    """Per-layer error of each format on SmolLM2's linear-layer inputs, the regime, and the synthetic bimodal check.

    The BiE threshold of each layer is searched (TPE) on the calibration tokens' layer-output MSE; SQNR is measured on
    held-out inputs. Outlier layers: the top 10% by input kurtosis. Same-m comparison: BiE m3 vs BFP m3, both B = 64
    (BiE pays 1 flag bit + 8/64 for its second exponent). The BO-vs-grid comparison runs on ``grid_layers`` layers.
    Quick: 4 TPE trials, grid on 10 layers, 1000 GMM samples per layer. The inputs' heavy tails come from the
    first-token massive activations (a few channels carry them), while the weights are near-Gaussian; a block's
    shared exponent is set by its largest value, which is why blocks whose max is far above their median (the
    ``*_blocks_ge*x_median_share_*`` metrics) are where BFP flushes small values and BiE's second exponent helps.
    Same-m comparisons give BiE the extra bits it pays for; the claims compare at equal bits per element.
    ``bie_slot="bfp"`` (the null) quantizes with BFP at the same bits under BiE's names, with no search
    (the search metrics are then 0 seconds and ratio 1); ``bie_slot="exact"`` (the oracle) puts the unquantized
    values there (SQNR at float32's resolution, ``SQNR_CAP_DB``); the synthetic check is unchanged in both.

    The instance: ``layer_group`` takes the outlier layers among every linear layer, the attention projections or
    the MLPs alone (``max_layers`` counts within the group); ``tensor="weight"`` quantizes the weight matrices
    instead of the inputs (outlier layers by weight kurtosis, BiE's weight threshold searched on the layer-output
    MSE of the calibration inputs). The ``act_*`` and ``weight_*`` regime metrics describe both tensors either way.
    """
    _slot_format("bie_m2_b64", bie_slot)  # refuses an unknown slot, group or tensor before the model loads
    _group_names([], layer_group)
    if tensor not in TENSORS:
        raise ValueError(f"tensor must be one of {', '.join(TENSORS)}, got {tensor!r}")
    model, tokenizer = smollm2()
    cal, held = _text(ctx, tokenizer, calibration_tokens, eval_sequences, eval_len)
    layers = linear_layers(model)
    names = _group_names(layers, layer_group)[: max_layers or None]
    x_cal = collect_linear_inputs(model, cal, names)
    x_eval = collect_linear_inputs(model, held, names)
    metrics = _synthetic(ctx, synthetic_rows, outlier_rate, outlier_scale, n_trials)
    rows, seconds, evals, ratio_default, ratio_grid = [], 0.0, 0, [], []
    grid_every = max(len(names) // max(grid_layers, 1), 1)
    for k, name in enumerate(ctx.progress(names, description="bie layers")):
        w, xc, xe = layers[name].weight.detach(), x_cal[name], x_eval[name]
        row = {"act_kurtosis": kurtosis(xe), "act_outlier_share": outlier_share(xe), "act_channel_ratio":
               channel_ratio(xe), "weight_kurtosis": kurtosis(w), "weight_outlier_share": outlier_share(w),
               "act_bimodality": exponent_bimodality(xe, random_state=ctx.child_seed("gmm", k),
                                                     max_samples=bimodality_samples)}
        for f in BLOCK_FACTORS:  # blocks of 64 whose max is >= f x their median magnitude (the regime)
            row[f"act_blocks_max_over_median_ge{f}"] = block_outlier_share(xe, 64, f)
            row[f"weight_blocks_max_over_median_ge{f}"] = block_outlier_share(w, 64, f)
        data, slot = (xe, "act") if tensor == "input" else (w, "weight")  # what is quantized; its search slot
        for fname in FORMATS:
            fmt = _slot_format(fname, bie_slot)
            if fname.startswith("bie") and bie_slot == "bie":
                r = search_layer(xc, w, n_trials=n_trials, random_state=ctx.child_seed("search", fname, k),
                                 **{f"{slot}_format": fmt})
                seconds, evals = seconds + r["seconds"], evals + r["evaluations"]
                ratio_default.append(r["mse"] / max(r["default_mse"], 1e-30))
                fmt = fmt.with_threshold(r[f"{slot}_threshold"])
                if fname == "bie_m3_b64" and k % grid_every == 0:
                    g = search_layer(xc, w, method="grid", n_trials=n_trials, **{f"{slot}_format": _format(fname)})
                    ratio_grid.append(r["mse"] / max(g["mse"], 1e-30))
            row[f"sqnr_{fname}"] = _sqnr(data, fmt.quantize(data))
            if fname in ("bfp_m3_b32", "bie_m2_b64"):
                row[f"flushed_{fname}"] = flushed_share(data, fmt.quantize(data))
        rows.append(row)
    table = {key: np.array([r[key] for r in rows]) for key in rows[0]}
    ctx.artifact("bie_per_layer", {"layers": names, **{k: v.tolist() for k, v in table.items()}})
    kurt = table["act_kurtosis" if tensor == "input" else "weight_kurtosis"]  # of what is quantized
    outlier = kurt >= np.quantile(kurt, 0.9)
    gain = table["sqnr_bie_m3_b64"] - table["sqnr_bfp_m3_b64"]
    for f in BLOCK_FACTORS:
        for kind in ("act", "weight"):
            share = table[f"{kind}_blocks_max_over_median_ge{f}"]
            metrics[f"{kind}_blocks_ge{f}x_median_share_median"] = float(np.median(share))
            metrics[f"{kind}_blocks_ge{f}x_median_share_max"] = float(share.max())
    # equal bits, paired per outlier layer: BiE minus the best competitor (dB), mean and standard error
    for label, bie, rivals in (("4p25", "bie_m2_b64", ("bfp_m3_b32", "mxfp4")),
                               ("5p25", "bie_m3_b64", ("bfp_m4_b32",))):
        d = (table[f"sqnr_{bie}"] - np.max([table[f"sqnr_{r}"] for r in rivals], axis=0))[outlier]
        metrics[f"outlier_layers_sqnr_gain_{label}_db"] = float(d.mean())
        metrics[f"outlier_layers_sqnr_gain_{label}_se"] = float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else 0.0
    metrics.update({
        "outlier_layers_sqnr_gain_bie_vs_bfp_same_m_db": float(gain[outlier].mean()),
        "outlier_layers_bie_beats_bfp_same_m_frac": float((gain[outlier] > SQNR_TOL_DB).mean()),
        "all_layers_sqnr_gain_bie_vs_bfp_same_m_db": float(gain.mean()),
        "num_outlier_layers": float(outlier.sum()),
        "outlier_layer_kurtosis_min": float(kurt[outlier].min()),
        "act_kurtosis_median": float(np.median(table["act_kurtosis"])),
        "act_kurtosis_max": float(table["act_kurtosis"].max()),
        "act_outlier_share_mean": float(table["act_outlier_share"].mean()),
        "act_channel_ratio_max": float(table["act_channel_ratio"].max()),
        "act_bimodal_layer_frac": float((table["act_bimodality"] > BIMODAL_TOL).mean()),
        "act_bimodality_bic_gain_median": float(np.median(table["act_bimodality"])),
        "weight_kurtosis_median": float(np.median(table["weight_kurtosis"])),
        "weight_outlier_share_mean": float(table["weight_outlier_share"].mean()),
        "flushed_share_bfp_m3_b32": float(table["flushed_bfp_m3_b32"].mean()),
        "flushed_share_bie_m2_b64": float(table["flushed_bie_m2_b64"].mean()),
        "search_seconds_per_layer": seconds / (2 * len(names)),
        "search_evaluations_per_layer": evals / (2 * len(names)),
        "searched_over_default_cal_mse": float(np.exp(np.mean(np.log(ratio_default)))) if ratio_default else 1.0,
        "bo_over_grid_cal_mse": float(np.exp(np.mean(np.log(ratio_grid)))) if ratio_grid else 1.0,
    })
    for fname in FORMATS:
        metrics[f"sqnr_db_mean_{fname}"] = float(table[f"sqnr_{fname}"].mean())
        metrics[f"sqnr_db_outlier_layers_{fname}"] = float(table[f"sqnr_{fname}"][outlier].mean())
        metrics[f"bits_{fname}"] = _format(fname).bits_per_element
    _figures(ctx, table, outlier, kurt, tensor)
    return metrics


def _figures(ctx, table, outlier, kurt, tensor):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    idx = np.arange(len(table["act_kurtosis"]))
    axes[0].semilogy(idx, table["act_kurtosis"], label="input kurtosis")
    axes[0].semilogy(idx, table["weight_kurtosis"], label="weight kurtosis")
    axes[0].scatter(idx[outlier], kurt[outlier], color="red", s=12, label="outlier layers")
    axes[0].legend(fontsize=8)
    for fname in LOW + HIGH:
        axes[1].plot(idx, table[f"sqnr_{fname}"], label=f"{fname} ({_format(fname).bits_per_element:g} b)")
    axes[1].set_xlabel("linear layer (model order)")
    axes[1].set_ylabel(f"{tensor} SQNR (dB)")
    axes[1].legend(fontsize=7, ncol=4)
    ctx.figure("bie_regime_and_sqnr_per_layer", fig)


def _nll_metrics(mode: str, name: str, nll: np.ndarray) -> dict[str, float]:
    """Per-window mean NLL, labelled ``wnll[format=<name>,mode=<mode>,window=<i>]`` (the summary pools windows
    over seeds)."""
    return {labelled("wnll", mode=mode, format=name, window=i): float(v) for i, v in enumerate(nll)}


def _windows_of(m: dict[str, float]) -> dict[tuple[str, str], np.ndarray]:
    """(mode, format) -> per-window NLLs (in window order), back from the ``wnll`` metrics of one seed."""
    out: dict[tuple[str, str], list[float]] = {}
    for labels, value in select(m, "wnll"):  # sorted by format, mode, then window
        out.setdefault((labels["mode"], labels["format"]), []).append(value)
    return {k: np.array(v) for k, v in out.items()}


@experiment(PAPER, null=BFP_IN_BIE_SLOT, quick={"wa_formats": ["bie_m3_b64", "bfp_m4_b32"], "n_trials": 4, "seeds": 1},
            full={"sequences": 16, "seq_len": 256, "n_trials": 12, "wa_formats": WA, "seeds": 2},
            smoke={"sequences": 2, "seq_len": 32, "search": "none", "formats": ["bfp_m3_b32", "mxfp4", "bie_m2_b64",
                                                                             "bfp_m4_b32", "bie_m3_b64"]},
            threads=1)
def perplexity_at_matched_bits(ctx, formats: list[str] = LOW + HIGH, wa_formats: list[str] = WA, sequences: int = 8,
                               seq_len: int = 128, calibration_tokens: int = 64, n_trials: int = 6,
                               search: str = "bayes", bie_slot: str = "bie",
                               layer_group: str = "all") -> dict[str, float]:
    """SmolLM2 perplexity on held-out pydoc windows per format: inputs only ("a", the lead result: the weights are
    already Q4_1) and weights + inputs ("wa"); BiE thresholds searched per layer on 64 calibration tokens, and BiE at
    the default threshold 0.5 ("a0", inputs only) for what the search buys on held-out text. Every perplexity ratio
    comes with a paired bootstrap interval over the windows (2000 resamples; the summary pools the seeds' windows).

    Quick: 8 x 128 held-out tokens, 4 TPE trials; weights + inputs only for BiE m3 and BFP m4 (the rest at full).
    ``bie_slot="bfp"`` (the null) runs BFP at the same bits under BiE's names (no threshold, so searched and
    default coincide); ``bie_slot="exact"`` (the oracle) leaves BiE's searched runs unquantized (the unquantized
    model's windows), while BiE at the default threshold (the search claim's baseline) stays. ``layer_group`` (the
    instance) quantizes every linear layer, the attention projections alone or the MLPs alone.
    """
    _slot_format("bie_m2_b64", bie_slot)  # refuses an unknown slot or group before the model loads
    _group_names([], layer_group)
    exclude = ("lm_head", *LAYER_GROUPS[layer_group])  # the layers left in float32 (as LinearQuantizer's default)
    model, tokenizer = smollm2()
    cal, held = _text(ctx, tokenizer, calibration_tokens, sequences, seq_len)
    tick = time.perf_counter()
    base = window_nll(model, held)
    metrics = {"ppl_fp32": float(np.exp(base.mean())), "eval_tokens": float(held.numel()),
               "fp32_eval_seconds": time.perf_counter() - tick, **_nll_metrics("fp32", "model", base)}
    bie_a = [n for n in formats if n.startswith("bie")]
    runs = [("a", n, search) for n in formats] + [("wa", n, search) for n in wa_formats]
    runs += [("a0", n, "none") for n in bie_a]  # BiE at the default threshold 0.5: the search's baseline
    for mode, name, how in ctx.progress(runs, description="bie perplexity"):
        fmt = _format(name) if mode == "a0" and bie_slot == "exact" else _slot_format(name, bie_slot)
        if mode == "a0" and bie_slot == "bfp":  # BFP has no threshold: the default run is the searched one
            nll = _windows_of(metrics)[("a", name)]
        elif isinstance(fmt, Exact):  # the oracle: the unquantized model in BiE's slot
            nll = base
            metrics[f"search_seconds_{mode}_{name}"] = 0.0
        else:
            quantizer = LinearQuantizer(fmt if mode == "wa" else None, fmt, search=how, n_trials=n_trials,
                                        exclude=exclude, random_state=ctx.child_seed(mode[:2], name)).fit(model, cal)
            with quantizer.attach(model):
                nll = window_nll(model, held)
            if name.startswith("bie") and mode != "a0":
                metrics[f"search_seconds_{mode}_{name}"] = quantizer.search_seconds_
        metrics.update(_nll_metrics(mode, name, nll))
        metrics[f"ppl_{mode}_{name}"] = float(np.exp(nll.mean()))
        metrics[f"ppl_ratio_{mode}_{name}"] = float(np.exp(nll.mean() - base.mean()))
        metrics[f"bits_{name}"] = fmt.bits_per_element
    metrics.update(_comparisons(_windows_of(metrics)))
    return metrics


COMPARISONS = {  # name -> (mode and format in BiE's slot, the same-bits competitors; ratio < 1: BiE better)
    "a_bie_over_best_4p25": (("a", "bie_m2_b64"), [("a", "bfp_m3_b32"), ("a", "mxfp4")]),
    "a_bie_over_best_5p25": (("a", "bie_m3_b64"), [("a", "bfp_m4_b32")]),
    "wa_bie_over_best_4p25": (("wa", "bie_m2_b64"), [("wa", "bfp_m3_b32"), ("wa", "mxfp4")]),
    "wa_bie_over_best_5p25": (("wa", "bie_m3_b64"), [("wa", "bfp_m4_b32")]),
    "wa_bie_m3_over_fp32": (("wa", "bie_m3_b64"), [("fp32", "model")]),
    "a_searched_over_default_bie_m2_b64": (("a", "bie_m2_b64"), [("a0", "bie_m2_b64")]),
    "a_searched_over_default_bie_m3_b64": (("a", "bie_m3_b64"), [("a0", "bie_m3_b64")]),
}


def _comparisons(windows: dict[tuple[str, str], np.ndarray]) -> dict[str, float]:
    """Each perplexity ratio of ``COMPARISONS`` whose runs exist, with its paired bootstrap 95% interval."""
    out = {}
    for key, (ours, rivals) in COMPARISONS.items():
        if ours in windows and all(r in windows for r in rivals):
            ratio, low, high = perplexity_ratio_ci(windows[ours], [windows[r] for r in rivals], random_state=0)
            out.update({key: ratio, f"{key}_ci_low": low, f"{key}_ci_high": high})
    return out


@perplexity_at_matched_bits.summarizer
def _perplexity_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """The ratios and intervals over the windows of every seed pooled (each seed draws its own held-out windows)."""
    pooled: dict[tuple[str, str], list[np.ndarray]] = {}
    for m in per_seed:
        for k, v in _windows_of(m).items():
            pooled.setdefault(k, []).append(v)
    return _comparisons({k: np.concatenate(v) for k, v in pooled.items()})
