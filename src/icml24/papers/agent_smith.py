"""Agent Smith: A Single Image Can Jailbreak One Million Multimodal LLM Agents Exponentially Fast (Gu et al., 2024).

A vectorized pair-wise chat simulation up to 2^20 agents counting infection as the official code does, beside the
theory (Eq. 5, 7, 8, 13-15, beta <= 2 gamma), and a small real society of retrieval + response models under attack.
"""

from __future__ import annotations

import math

import numpy as np

from icml24.agents import (
    InfectionSimulation,
    closed_form,
    contained,
    first_round_reaching,
    fit_rates,
    limit_ratio,
    rate_grid,
    recurrence,
    rounds_needed,
    sequential_jailbreak,
    sequential_rounds_to,
)
from icml24.core import Claim, Null, Paper, Regime, experiment

PAPER = Paper(
    slug="agent-smith",
    title="Agent Smith: A Single Image Can Jailbreak One Million Multimodal LLM Agents Exponentially Fast",
    authors="Xiangming Gu, Xiaosen Zheng, Tianyu Pang, Chao Du, Qian Liu, Ye Wang, Jing Jiang, Min Lin",
    venue="ICML 2024",
    code="https://github.com/sail-sg/Agent-Smith",
    summary=("One adversarial image spreads through randomized pair-wise chats: a carrier questioner retrieves it "
             "(beta), the answerer stores it, an agent is infected when its output in a chat is the target (alpha = "
             "retrieval x jailbreak). We simulate up to 2^20 agents, check the paper's numbers at its rates and its "
             "theory, and craft the border attack against a small real society."),
    deviations=[
        "No LLaVA/CLIP agents at scale: retrieval and jailbreak are draws per chat at the rates beta and alpha / beta "
        "(the paper's abstraction, Sec. 3.1); FIFO albums as in the paper; the text history (|H| = 3) is inert.",
        "Infection is counted as the official code counts it (the chat's output is the target, which needs V_adv "
        "retrieved in that chat); the theory's independent symptom coin per carrier is kept as "
        "definition='bernoulli'.",
        "The paper's rates are read as alpha = beta = 1 (our reading): the official round loop at rates 1 reproduces "
        "Table 1's low-diversity cells exactly (93.75% / round 15 / 99.61%, identical for every attack there), and "
        "the paper does not tabulate the rates of its 1M run; the (alpha, beta) sensitivity is reported as a figure.",
        "The paper's '~100%' cumulative level of Fig. 1 is read as 99.9% (our reading: 100.0% at one decimal).",
        "The real society is a stand-in: 8 x 8-patch encoders on 112 px procedural images, a responder with one "
        "HARMFUL token, 512 benign records (paper 1024); the paper's h = 6 border on 336 px is h = 2 here (7%).",
        "The defence sweep uses beta = 0.8 with jailbreak 0.95 (alpha = 0.76), since Fig. 9's alpha = 0.95 > beta "
        "is impossible under the official definition; the claim reads carriers only.",
    ],
)

SEQUENTIAL = Null("the sequential (one-to-one) jailbreak in the infectious image's slot: one new agent jailbroken "
                  "per round, from the same seeded agents, nobody passing it on", {"attack": "sequential"}, cheap=True)
NO_DEFENCE = Null("no defence in the defence's slot (no purge: gamma = 0 in the chats, theory at the swept gamma)",
                  {"defence": "none"})
ATTACKS = ("infectious", "sequential")
PAPER_CURRENT_ROUND22 = {14: 0.9503, 17: 0.9602, 20: 0.9623}  # App. E.1, c0 = 1/1024
PAPER_TABLE1 = {"cumulative_p16": 0.9375, "rounds_to_90_cumulative": 15.0, "cumulative_p24": 0.9961}


class _Sequential:
    """The sequential jailbreak's curves under a simulation's names (carriers = infected = cumulative)."""

    def __init__(self, num_agents: int, seed_ratio: float, rounds: int):
        self.num_agents = num_agents
        self.num_seeded = max(1, int(round(seed_ratio * num_agents)))
        self.carriers_ = sequential_jailbreak(num_agents, rounds, seeded=self.num_seeded)
        self.infected_ = self.cumulative_ = self.carriers_[:rounds]


def _check_attack(attack: str) -> None:
    if attack not in ATTACKS:
        raise ValueError(f"attack must be one of {', '.join(ATTACKS)}, got {attack!r}")


def _simulate(attack: str, num_agents: int, rounds: int, rng: np.random.Generator, **rates):
    _check_attack(attack)
    if attack == "sequential":
        return _Sequential(num_agents, rates.get("seed_ratio", 1 / 1024), rounds)
    return InfectionSimulation(num_agents, **rates).run(rounds, rng)


def _mean_abs(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean(np.abs(np.asarray(a) - np.asarray(b))))


def _prediction_z(per_seed: list[dict[str, float]], key: str, paper: float) -> float:
    """|paper - our mean| in run-to-run standard deviations of one run (the paper reports single runs):
    sd sqrt(1 + 1/n), floored at 0.002 so that a degenerate spread is not an infinitely sharp test."""
    values = np.array([m[key] for m in per_seed], dtype=float)
    sd = float(values.std(ddof=1)) if len(values) > 1 else 0.0
    return abs(paper - float(values.mean())) / max(sd * math.sqrt(1 + 1 / len(values)), 0.002)


@experiment(
    PAPER,
    null=SEQUENTIAL,
    quick={"log2_sizes": [14, 17, 20], "seeds": 5},
    full={"log2_sizes": list(range(8, 21)), "seeds": 10},
    smoke={"log2_sizes": [10, 14], "rounds": 32},
    threads=1,
)
def scaling(ctx, log2_sizes: list[int] = (14, 17, 20), rounds: int = 32, alpha: float = 1.0, beta: float = 1.0,
            gamma: float = 0.0, seed_ratio: float = 1 / 1024, album_size: int = 10, history_size: int = 3,
            level: float = 0.999, definition: str = "official", attack: str = "infectious") -> dict[str, float]:
    """(a) App. E.1 / Fig. 1: N = 2^14 .. 2^20 with the paper's seeding c0 = 1/1024 at the paper's rates: the current
    infection ratio at round 22 and the rounds to the cumulative level, beside the recurrence (Eq. 5) and the closed
    form (Eq. 7). Rounds are indexed as the official notebook indexes them (round 0 is the first chat).

    ``attack`` = "sequential" (the null) puts the one-new-agent-per-round jailbreak in the infectious slot.
    """
    import matplotlib.pyplot as plt

    metrics = {"alpha": alpha, "beta": beta, "gamma": gamma, "c0": seed_ratio, "level": level}
    large = []
    fig, axes = plt.subplots(1, len(log2_sizes), figsize=(4 * len(log2_sizes), 3.5), squeeze=False)
    for ax, k in zip(axes[0], ctx.progress(log2_sizes, description="agent-smith sizes")):
        sim = _simulate(attack, 2**k, rounds, ctx.rng("scaling", k), album_size=album_size, history_size=history_size,
                        alpha=alpha, beta=beta, gamma=gamma, seed_ratio=seed_ratio, definition=definition)
        c0 = sim.num_seeded / sim.num_agents
        rec = recurrence(c0, beta, gamma, rounds)
        ode = closed_form(c0, beta, gamma, np.arange(rounds + 1))
        tag = f"n2e{k}"
        out = {
            f"{tag}_c0": c0,
            f"{tag}_carriers_final": float(sim.carriers_[-1]),
            f"{tag}_cumulative_final": float(sim.cumulative_[-1]),
            f"{tag}_rounds_to_99_cumulative": float(first_round_reaching(sim.cumulative_, 0.99)),
            f"{tag}_rounds_to_level_cumulative": float(first_round_reaching(sim.cumulative_, level)),
            f"{tag}_rounds_to_9999_cumulative": float(first_round_reaching(sim.cumulative_, 0.9999)),
            f"{tag}_rounds_to_90_current": float(first_round_reaching(sim.infected_, 0.9)),
            f"{tag}_current_round22": float(sim.infected_[min(22, rounds - 1)]),
            f"{tag}_mad_recurrence": _mean_abs(sim.carriers_, rec),
            f"{tag}_mad_infected_recurrence": _mean_abs(sim.infected_, alpha * rec[:-1]),  # Eq. 4
            f"{tag}_mad_closed_form": _mean_abs(sim.carriers_, ode),
            f"{tag}_fit_alpha": fit_rates(sim.carriers_[:-1], sim.infected_)["alpha"],
        }
        metrics.update(out)
        if k >= 14:
            large.append(out[f"{tag}_mad_recurrence"])
        ax.plot(np.arange(rounds + 1), sim.carriers_, label="carriers c_t")
        ax.plot(np.arange(rounds), sim.infected_, label="current p_t")
        ax.plot(np.arange(rounds), sim.cumulative_, label="cumulative p_t")
        ax.plot(np.arange(rounds + 1), rec, "--", label="recurrence Eq. 5")
        ax.plot(np.arange(rounds + 1), ode, ":", label="closed form Eq. 7")
        if k in PAPER_CURRENT_ROUND22:
            ax.plot([22], [PAPER_CURRENT_ROUND22[k]], "k*", label="paper, round 22")
        ax.set_title(f"N=2^{k}, c0={c0:.2g}, a={alpha}, b={beta}, g={gamma}", fontsize=8)
        ax.set_xlabel("chat round t")
    axes[0][0].legend(fontsize=7)
    ctx.figure("scaling", fig)
    top = f"n2e{max(log2_sizes)}"
    metrics["largest_log2_size"] = float(max(log2_sizes))
    for key in ("rounds_to_level_cumulative", "rounds_to_99_cumulative", "rounds_to_9999_cumulative",
                "current_round22"):
        metrics[f"largest_{key}"] = metrics[f"{top}_{key}"]
    metrics["mad_recurrence_large"] = max(large) if large else metrics[f"{top}_mad_recurrence"]
    return metrics


@scaling.summarizer
def _scaling_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """``current22_max_z``: the largest |paper - mean| over the reported sizes present (App. E.1), in standard
    deviations of one run (``_prediction_z``); inf when no reported size was run."""
    zs = [_prediction_z(per_seed, f"n2e{k}_current_round22", p) for k, p in PAPER_CURRENT_ROUND22.items()
          if f"n2e{k}_current_round22" in per_seed[0]]
    return {"current22_max_z": max(zs) if zs else math.inf}


@experiment(
    PAPER,
    null=SEQUENTIAL,
    quick={"seeds": 20},
    full={"seeds": 50},
    smoke={"rounds": 32},
    threads=1,
)
def table1(ctx, num_agents: int = 256, rounds: int = 32, alpha: float = 1.0, beta: float = 1.0,
           album_size: int = 10, definition: str = "official", attack: str = "infectious") -> dict[str, float]:
    """(b) Table 1's default society, N = 256 with V_adv in one album (c0 = 1/N), at the paper's rates: the cumulative
    ratio at round 16 and 24 and the first round with cumulative >= 90% (the low-diversity cells: 93.75%, 15.0 and
    99.6%, which the official loop at rates 1 reproduces exactly at its seed 42; see tests/parity).

    The take-off of one seeded agent is random, so single runs spread widely; the paper's single run is compared
    with the spread over seeds, not with one of them.
    """
    sim = _simulate(attack, num_agents, rounds, ctx.rng("table1"), album_size=album_size, alpha=alpha, beta=beta,
                    seed_ratio=0.0, definition=definition)
    return {"alpha": alpha, "beta": beta, "c0": 1 / num_agents,
            "cumulative_p16": float(sim.cumulative_[min(16, rounds - 1)]),
            "cumulative_p24": float(sim.cumulative_[min(24, rounds - 1)]),
            "rounds_to_90_cumulative": float(first_round_reaching(sim.cumulative_, 0.9)),
            "current_p16": float(sim.infected_[min(16, rounds - 1)]),
            "rounds_to_90_current": float(first_round_reaching(sim.infected_, 0.9)),
            "cumulative_final": float(sim.cumulative_[-1])}


@table1.summarizer
def _table1_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    """``table1_max_z``: the largest |paper - mean| of Table 1's three low-diversity cells, in one-run sds."""
    return {"table1_max_z": max(_prediction_z(per_seed, key, p) for key, p in PAPER_TABLE1.items())}


def _fit_line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Least-squares slope of y on x and its R^2."""
    slope, intercept = np.polyfit(x, y, 1)
    resid = y - (slope * x + intercept)
    total = float(np.sum((y - y.mean()) ** 2))
    return float(slope), 1.0 - float(np.sum(resid**2)) / total if total > 0 else 1.0


@experiment(
    PAPER,
    null=SEQUENTIAL,
    quick={"log2_sizes": [8, 10, 12, 14, 16, 18, 20], "seeds": 5},
    full={"log2_sizes": list(range(8, 21)), "seeds": 10},
    smoke={"log2_sizes": [8, 10, 12], "max_rounds": 64},
    threads=1,
)
def rounds_vs_size(ctx, log2_sizes: list[int] = (8, 10, 12, 14, 16, 18, 20), alpha: float = 1.0,
                   beta: float = 1.0, gamma: float = 0.0, level: float = 0.9, max_rounds: int = 96,
                   baseline_agents: int = 256, baseline_rounds: int = 32,
                   attack: str = "infectious") -> dict[str, float]:
    """(c) rounds to 90% carriers from one seeded agent (c0 = 1/N, Eq. 8) against ln N, beside the sequential
    jailbreak (rounds grow like N); at N = 256 after 32 rounds (Fig. 3, left) the infectious image, the sequential
    jailbreak and a non-infectious jailbroken image (beta = 0). ``attack`` = "sequential" (the null) puts the
    sequential jailbreak in the infectious slot, its rounds exact (``sequential_rounds_to``, not capped).

    Eq. 8's 2 / (beta - 2 gamma) rounds per unit of ln N is the ODE's; the discrete recurrence's early growth
    ln(1 + beta / 2) predicts a slightly larger slope.
    """
    _check_attack(attack)
    sizes = np.array([2**k for k in log2_sizes], dtype=float)
    infect, seq = [], []
    metrics = {"alpha": alpha, "beta": beta, "gamma": gamma, "c0_times_n": 1.0}
    for k in ctx.progress(log2_sizes, description="agent-smith rounds"):
        if attack == "infectious":
            sim = InfectionSimulation(2**k, alpha=alpha, beta=beta, gamma=gamma, seed_ratio=0.0)
            infect.append(first_round_reaching(sim.run(max_rounds, ctx.rng("rounds", k)).carriers_, level))
        else:
            infect.append(sequential_rounds_to(2**k, level))
        seq.append(sequential_rounds_to(2**k, level))
        metrics[f"n2e{k}_rounds_to_90_carriers"] = float(infect[-1])
        metrics[f"n2e{k}_sequential_rounds_to_90"] = float(seq[-1])
        metrics[f"n2e{k}_rounds_theory_eq8"] = rounds_needed(level, beta, gamma, num_agents=2**k)
    log_n = np.log(sizes)
    metrics["infection_slope_vs_ln_n"], metrics["infection_r2_vs_ln_n"] = _fit_line(log_n, np.array(infect, float))
    metrics["theory_slope_vs_ln_n"] = 2 / (beta - 2 * gamma) if beta > 2 * gamma else math.inf  # Eq. 8
    metrics["infection_loglog_slope"], _ = _fit_line(log_n, np.log(np.array(infect, float)))
    metrics["sequential_loglog_slope"], _ = _fit_line(log_n, np.log(np.array(seq, float)))
    runs = {"sequential": sequential_jailbreak(baseline_agents, baseline_rounds)}
    for name, b in (("infectious", beta), ("noninfectious", 0.0)):
        sim = _simulate(attack if name == "infectious" else "infectious", baseline_agents, baseline_rounds,
                        ctx.rng("baseline", name), alpha=min(alpha, b), beta=b, gamma=gamma, seed_ratio=0.0)
        runs[name] = sim.cumulative_
    for name, curve in runs.items():
        metrics[f"baseline_{name}_cumulative_final"] = float(curve[-1])
    return metrics


@experiment(
    PAPER,
    quick={"gammas": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6], "seeds": 3},
    full={"gammas": [0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.8], "num_agents": 2**18,
          "seeds": 5},
    smoke={"gammas": [0.1, 0.5], "num_agents": 2**12, "rounds": 200},
    threads=1,
    null=NO_DEFENCE,
)
def defence(ctx, gammas: list[float] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6), alpha: float = 0.76,
            beta: float = 0.8, num_agents: int = 2**16, seed_ratio: float = 0.05,
            rounds: int = 300, defence: str = "purge") -> dict[str, float]:
    """(d) defence sweep over the recovery rate gamma from a 5% seed: the carrier ratio settles at 1 - 2 gamma / beta
    when beta > 2 gamma and decays to 0 when beta <= 2 gamma (Remark II); fit_rates recovers beta and gamma.

    At the threshold gamma = beta / 2 the decay is algebraic (Eq. 14), so a finite run sits above the limit 0 there.

    ``defence`` fills the defence's slot: "purge" (the method: carriers purge V_adv at rate gamma) or the null
    "none" (no purge in the chats, gamma = 0, while the theory columns keep the swept gamma); same keys.
    """
    import matplotlib.pyplot as plt

    if defence not in ("purge", "none"):
        raise ValueError(f"defence must be 'purge' or 'none', got {defence!r}")
    metrics = {"alpha": alpha, "beta": beta, "c0": seed_ratio}
    contained_finals, gaps = [], []
    fig, ax = plt.subplots(figsize=(6, 4))
    for g in ctx.progress(gammas, description="agent-smith defence"):
        sim = InfectionSimulation(num_agents, alpha=alpha, beta=beta, gamma=g if defence == "purge" else 0.0,
                                  seed_ratio=seed_ratio).run(rounds, ctx.rng("defence", str(g)))
        tag = f"gamma{str(g).replace('.', 'p')}"
        final = float(sim.carriers_[-10:].mean())
        metrics[f"{tag}_carriers_final"] = final
        metrics[f"{tag}_limit_theory"] = limit_ratio(beta, g)
        fitted = fit_rates(sim.carriers_)
        metrics[f"{tag}_fit_beta"], metrics[f"{tag}_fit_gamma"] = fitted["beta"], fitted["gamma"]
        if contained(beta, g):
            contained_finals.append(final)
        else:
            gaps.append(abs(final - limit_ratio(beta, g)))
        ax.plot(sim.carriers_, label=f"gamma={g} ({'contained' if contained(beta, g) else 'spreads'})")
    ax.set(xlabel="round", ylabel="carrier ratio", title=f"defence, N={num_agents}, beta={beta}, c0={seed_ratio}")
    ax.legend(fontsize=7)
    ctx.figure("defence", fig)
    metrics["max_contained_final"] = max(contained_finals) if contained_finals else 0.0
    metrics["max_uncontained_gap"] = max(gaps) if gaps else 0.0
    return metrics


@experiment(
    PAPER,
    quick={"seeds": 2},
    full={"log2_agents": 20, "seeds": 5},
    smoke={"log2_agents": 12, "betas": [0.8, 0.9, 1.0], "jailbreaks": [0.9, 1.0]},
    threads=1,
)
def sensitivity(ctx, log2_agents: int = 17, betas: list[float] = (0.6, 0.7, 0.8, 0.9, 1.0),
                jailbreaks: list[float] = (0.6, 0.7, 0.8, 0.9, 1.0), rounds: int = 40, seed_ratio: float = 1 / 1024,
                level: float = 0.999) -> dict[str, float]:
    """(e) the current ratio at round 22 and the rounds to the cumulative level over a grid of retrieval rates beta
    and jailbreak rates given retrieval (alpha = beta x jailbreak <= beta, App. E.4), at c0 = 1/1024: a figure, no
    chosen regime.
    """
    import matplotlib.pyplot as plt

    grids = rate_grid(2**log2_agents, betas, jailbreaks, rounds, lambda b, j: ctx.rng("sensitivity", str(b), str(j)),
                      seed_ratio=seed_ratio, level=level)
    grids = {"current_round22": grids["current"], "rounds_to_level_cumulative": grids["rounds_to_level"]}
    metrics: dict[str, float] = {"c0": seed_ratio, "log2_agents": float(log2_agents)}
    for key, grid in grids.items():
        for (i, j), value in np.ndenumerate(grid):
            metrics[f"b{str(betas[i]).replace('.', 'p')}_j{str(jailbreaks[j]).replace('.', 'p')}_{key}"] = float(value)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, (key, grid) in zip(axes, grids.items()):
        image = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
        ax.set(xticks=range(len(jailbreaks)), xticklabels=jailbreaks, yticks=range(len(betas)), yticklabels=betas,
               xlabel="jailbreak rate given retrieval (alpha / beta)", ylabel="retrieval rate beta",
               title=f"{key} (N = 2^{log2_agents}, c0 = 1/1024)")
        for (i, j), v in np.ndenumerate(grid):
            ax.text(j, i, f"{v:.2f}" if key.startswith("current") else f"{v:.0f}", ha="center", va="center",
                    fontsize=7, color="w")
        fig.colorbar(image, ax=ax)
    axes[0].set_title("current ratio at round 22 (paper App. E.1: 0.96)")
    axes[1].set_title(f"rounds to {level:.1%} cumulative (paper Fig. 1: 27-31)")
    ctx.figure("sensitivity", fig)
    return metrics


CLEAN_IMAGE = Null("the clean, unoptimized out-of-kind image (the attack's starting image) in the adversarial "
                   "image's slot", {"image": "clean"})


@experiment(
    PAPER,
    quick={"num_agents": 128, "attack_epochs": 100, "ensemble_rounds": 4, "seeds": 2},
    full={"num_agents": 256, "attack_epochs": 100, "borders": [1, 3, 4, 6, 8, 16], "seeds": 5},
    smoke={"num_agents": 32, "rounds": 6, "attack_epochs": 1, "train_steps": 20, "ensemble_rounds": 2, "size": 48},
    threads=1,
    null=CLEAN_IMAGE,
)
def real_society(ctx, num_agents: int = 128, rounds: int = 32, attack_epochs: int = 100, border: int = 2,
                 borders: list[int] = (1, 4, 8), train_steps: int = 300, ensemble_rounds: int = 8,
                 size: int = 112, image: str = "crafted") -> dict[str, float]:
    """(f) the small real society (icml24.agents.society): 8 x 8-patch CLIP-like retriever and responder on 112 px
    images, V_adv crafted from an out-of-kind image by the MI-FGSM border attack and spread from one agent through
    real retrieval and responses. ``border`` = 2 on 112 px is the paper's h = 6 on 336 px (7% of the pixels); each of
    ``borders`` is crafted and spread too (the budget curve, the main figure, with the paper's budget marked).

    At short chat histories the failures are retrieval's (beta), unlike the paper's low alpha.

    ``image`` fills the adversarial image's slot: "crafted" (the method) or the null "clean" (the attack's starting
    image, not optimized: same society, population and chats); the keys stay ``crafted_*``."""
    import matplotlib.pyplot as plt

    from icml24.agents import society_experiment

    if image not in ("crafted", "clean"):
        raise ValueError(f"image must be 'crafted' or 'clean', got {image!r}")
    metrics, _ = society_experiment(num_agents, rounds, attack_epochs, ctx.child_seed("society"), border=border,
                                         borders=tuple(borders), train_steps=train_steps,
                                         ensemble_rounds=ensemble_rounds, size=size, craft=image == "crafted")
    out = {k: float(v) for k, v in metrics.items()}
    out["num_agents"], out["rounds"] = float(num_agents), float(rounds)
    out["alpha"] = (out["alpha_q"] + out["alpha_a"]) / 2  # one alpha as in Eq. 4 (the Q/A split is the extension)
    frames = sorted({border, *borders})
    fig, ax = plt.subplots(figsize=(6, 4))
    fractions = [out[f"h{b}_border_fraction"] for b in frames]
    for key, label in (("cumulative_final", "cumulative infection"), ("beta", "beta (retrieval)"),
                       ("alpha_q", "alpha^Q"), ("attack_val_jsr", "validation JSR")):
        ax.plot(fractions, [out[f"h{b}_{key}"] for b in frames], "o-", label=label)
    ax.axvline(out["border_fraction"], color="k", ls="--", label="paper's budget (h = 6 on 336 px)")
    ax.axhline(out["clean_cumulative_final"], color="gray", ls=":", label="clean out-of-kind image")
    ax.set(xlabel="border area fraction", ylabel=f"after {rounds} rounds", title="infection vs perturbation budget")
    ax.legend(fontsize=7)
    ctx.figure("real_society", fig)
    return out


CLAIMS = [
    Claim(
        "At the paper's rates and seeding (c0 = 1/1024), the current infection ratio at round 22 matches App. E.1 "
        "(95.03 / 96.02 / 96.23% at N = 2^14 / 2^17 / 2^20) within 3 run-to-run standard deviations",
        experiment=scaling,
        check=lambda m: m["current22_max_z"] <= 3,
        paper="App. E.1: current infection ratio at round 22 of 95.03 / 96.02 / 96.23% for N = 2^14 / 2^17 / 2^20",
    ),
    Claim(
        "With 2^20 agents, c0 = 1/1024 and the paper's rates, the cumulative infection ratio reaches ~100% (99.9%) "
        "within 27-31 rounds",
        experiment=scaling,
        check=lambda m: 27 <= m["largest_rounds_to_level_cumulative"] <= 31,
        paper="Fig. 1: p_t reaches ~100% after 27-31 chat rounds at N ~ 1M (c0 = 1/1024, App. E.1)",
    ),
    Claim(
        "Simulation and recurrence (Eq. 5) agree: mean |c_sim - c_rec| over rounds < 0.03 for N >= 2^14",
        experiment=scaling,
        check=lambda m: m["mad_recurrence_large"] < 0.03,
        paper="App. B, Fig. 9: simulation at N = 2^14 matches the theory",
    ),
    Claim(
        "N = 256 with one seeded agent at the paper's rates: cumulative p_16, p_24 and the first round >= 90% match "
        "Table 1's low-diversity cells (93.75%, 99.61%, 15.0) within 3 run-to-run standard deviations",
        experiment=table1,
        check=lambda m: m["table1_max_z"] <= 3,
        paper="Table 1 (low diversity): p_16 93.75% / 15.0 rounds to 90%; cumulative p_24 99.5-99.6%",
    ),
    Claim(
        "Containment: beta <= 2 gamma drives the carrier ratio below 0.02; beta > 2 gamma settles within 0.05 of "
        "1 - 2 gamma / beta",
        experiment=defence,
        check=lambda m: m["max_contained_final"] < 0.02 and m["max_uncontained_gap"] <= 0.05,
        paper="Sec. 3.1 Remark II, Eq. 7, 14, 15: provably restraining iff beta <= 2 gamma",
    ),
    Claim(
        "Infection is exponential: rounds to 90% carriers are linear in ln N (R^2 >= 0.9, log-log slope < 0.3)",
        experiment=rounds_vs_size,
        check=lambda m: m["infection_r2_vs_ln_n"] >= 0.9 and m["infection_loglog_slope"] < 0.3,
        paper="Eq. 8 / Remark I: O(log N) rounds; Fig. 3: sequential jailbreak grows linearly",
    ),
    Claim(
        "The real society at the paper's budget (a border of 7% of the pixels): the crafted image infects >= 90% of "
        "agents within 32 rounds",
        experiment=real_society,
        check=lambda m: m["crafted_cumulative_final"] >= 0.9,
        paper="Table 1: border h = 6 on 336 px, cumulative p_24 99.5-99.6% at N = 256; Fig. 3: a clean image "
              "infects none",
    ),
]

REGIMES = [
    Regime("The current ratio at round 22 per size and the cumulative rounds to 99% / 99.9% / 99.99% at the largest "
           "size (the paper's '~100%' read at three levels)", experiment=scaling,
           metrics=["largest_log2_size", "largest_current_round22", "largest_rounds_to_99_cumulative",
                    "largest_rounds_to_level_cumulative", "largest_rounds_to_9999_cumulative"],
           paper="App. E.1: 96.23% at round 22 (2^20); Fig. 1: ~100% after 27-31 rounds"),
    Regime("Table 1 cells measured at the paper's rates (means over seeds)", experiment=table1,
           metrics=["cumulative_p16", "rounds_to_90_cumulative", "cumulative_p24", "current_p16",
                    "rounds_to_90_current"], paper="Table 1 low diversity: 93.75% / 15.0; p_24 99.61%"),
    Regime("Rounds to 90% carriers per unit ln N beside Eq. 8's 2 / (beta - 2 gamma), and the sequential "
           "jailbreak's log-log slope (1 by its one-agent-per-round schedule)", experiment=rounds_vs_size,
           metrics=["infection_slope_vs_ln_n", "theory_slope_vs_ln_n", "sequential_loglog_slope"],
           paper="Eq. 8: 2 / (beta - 2 gamma); Fig. 3: sequential linear in N"),
    Regime("Fig. 3 baselines at N = 256 after 32 rounds: the infectious image, the sequential jailbreak (33/256 by "
           "its schedule) and a non-infectious jailbroken image (beta = 0: only its seed)", experiment=rounds_vs_size,
           metrics=["baseline_infectious_cumulative_final", "baseline_sequential_cumulative_final",
                    "baseline_noninfectious_cumulative_final"],
           paper="Fig. 3 (left): sequential ~1/8; prompt injections infect none"),
    Regime("Sensitivity to the rates (figure): current ratio at round 22 and rounds to 99.9% cumulative at "
           "beta = 0.8 / 0.9 / 1 with jailbreak 1 (alpha = beta) and at beta = 1 with jailbreak 0.9",
           experiment=sensitivity,
           metrics=["b0p8_j1p0_current_round22", "b0p9_j1p0_current_round22", "b1p0_j1p0_current_round22",
                    "b1p0_j0p9_current_round22", "b0p9_j1p0_rounds_to_level_cumulative",
                    "b1p0_j0p9_rounds_to_level_cumulative"],
           paper="App. E.4: alpha = retrieval x jailbreak <= beta"),
    Regime("The real society's clean control (the attack's out-of-kind starting image, unoptimized): cumulative "
           "infection, the responder's HARMFUL rate on out-of-kind and on album images, and the attack's validation "
           "JSR", experiment=real_society,
           metrics=["clean_cumulative_final", "clean_ood_harmful_rate", "clean_harmful_rate", "attack_val_jsr"],
           paper="Fig. 3: a clean image infects none"),
    Regime("Infection against the perturbation budget (figure): cumulative infection after 32 rounds per border width "
           "h on 112 px (h = 2 is the paper's 7% of the pixels)", experiment=real_society,
           metrics=["h1_cumulative_final", "h2_cumulative_final", "h4_cumulative_final", "h8_cumulative_final",
                    "h4_beta", "h8_beta", "border_fraction"],
           paper="Sec. 4.3, Fig. 4: failures with h < 6 come from low alpha while beta stays high"),
]

__all__ = ["PAPER", "CLAIMS", "REGIMES", "scaling", "table1", "rounds_vs_size", "defence", "sensitivity",
           "real_society"]
