"""agent-smith experiments: the infection simulation against the theory and the paper's numbers, the defence
sweep, the rate sensitivity and the small real society, with their nulls."""

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
from icml24.core import Null, experiment

from . import PAPER

SEQUENTIAL = Null("the sequential (one-to-one) jailbreak in the infectious image's slot: one new agent jailbroken "
                  "per round, from the same seeded agents, nobody passing it on", {"attack": "sequential"}, cheap=True)
NO_DEFENCE = Null("no defence in the defence's slot (no purge: gamma = 0 in the chats, theory at the swept gamma)",
                  {"defence": "none"})
ATTACKS = ("infectious", "sequential")
SIMULATORS = ("agents", "recurrence")  # the simulation's slot: the pair-wise chats (the method), the oracle
PAPER_CURRENT_ROUND22 = {14: 0.9503, 17: 0.9602, 20: 0.9623}  # App. E.1, c0 = 1/1024
PAPER_TABLE1 = {"cumulative_p16": 0.9375, "rounds_to_90_cumulative": 15.0, "cumulative_p24": 0.9961}


class _Sequential:
    """The sequential jailbreak's curves under a simulation's names (carriers = infected = cumulative)."""

    def __init__(self, num_agents: int, seed_ratio: float, rounds: int):
        self.num_agents = num_agents
        self.num_seeded = max(1, int(round(seed_ratio * num_agents)))
        self.carriers_ = sequential_jailbreak(num_agents, rounds, seeded=self.num_seeded)
        self.infected_ = self.cumulative_ = self.carriers_[:rounds]


class _Recurrence:
    """The oracle: the large-N recurrence (Eq. 5) under a simulation's names, from the simulation's own c0: carriers
    c_t, infected alpha c_t (Eq. 4), cumulative the running maximum of the infected ratio (exact at gamma = 0)."""

    def __init__(self, num_agents: int, rounds: int, alpha: float = 1.0, beta: float = 1.0, gamma: float = 0.0,
                 seed_ratio: float = 1 / 1024):
        self.num_agents = num_agents
        self.num_seeded = max(1, int(round(seed_ratio * num_agents)))
        self.carriers_ = recurrence(self.num_seeded / num_agents, beta, gamma, rounds)
        self.infected_ = alpha * self.carriers_[:rounds]
        self.cumulative_ = np.maximum.accumulate(self.infected_)


def _check_attack(attack: str, simulator: str = "agents") -> None:
    if attack not in ATTACKS:
        raise ValueError(f"attack must be one of {', '.join(ATTACKS)}, got {attack!r}")
    if simulator not in SIMULATORS:
        raise ValueError(f"simulator must be one of {', '.join(SIMULATORS)}, got {simulator!r}")


def _simulate(attack: str, num_agents: int, rounds: int, rng: np.random.Generator, simulator: str = "agents",
              **rates):
    _check_attack(attack, simulator)
    if attack == "sequential":
        return _Sequential(num_agents, rates.get("seed_ratio", 1 / 1024), rounds)
    if simulator == "recurrence":
        return _Recurrence(num_agents, rounds, **{k: v for k, v in rates.items() if k in
                                                  ("alpha", "beta", "gamma", "seed_ratio")})
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
            level: float = 0.999, definition: str = "official", attack: str = "infectious",
            simulator: str = "agents") -> dict[str, float]:
    """(a) App. E.1 / Fig. 1: N = 2^14 .. 2^20 with the paper's seeding c0 = 1/1024 at the paper's rates: the current
    infection ratio at round 22 and the rounds to the cumulative level, beside the recurrence (Eq. 5) and the closed
    form (Eq. 7). Rounds are indexed as the official notebook indexes them (round 0 is the first chat).

    ``attack`` = "sequential" (the null) puts the one-new-agent-per-round jailbreak in the infectious slot;
    ``simulator`` = "recurrence" (the oracle) puts the large-N recurrence (Eq. 5) in the simulation's slot.
    """
    import matplotlib.pyplot as plt

    metrics = {"alpha": alpha, "beta": beta, "gamma": gamma, "c0": seed_ratio, "level": level}
    large = []
    fig, axes = plt.subplots(1, len(log2_sizes), figsize=(4 * len(log2_sizes), 3.5), squeeze=False)
    for ax, k in zip(axes[0], ctx.progress(log2_sizes, description="agent-smith sizes")):
        sim = _simulate(attack, 2**k, rounds, ctx.rng("scaling", k), simulator, album_size=album_size,
                        history_size=history_size,
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
    # a flat y (total at rounding: 1e-12 of its scale) is fitted exactly by a flat line
    flat = total <= 1e-12 * max(1.0, float(np.sum(y**2)))
    return float(slope), 1.0 if flat else 1.0 - float(np.sum(resid**2)) / total


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
                   attack: str = "infectious", simulator: str = "agents") -> dict[str, float]:
    """(c) rounds to 90% carriers from one seeded agent (c0 = 1/N, Eq. 8) against ln N, beside the sequential
    jailbreak (rounds grow like N); at N = 256 after 32 rounds (Fig. 3, left) the infectious image, the sequential
    jailbreak and a non-infectious jailbroken image (beta = 0). ``attack`` = "sequential" (the null) puts the
    sequential jailbreak in the infectious slot, its rounds exact (``sequential_rounds_to``, not capped);
    ``simulator`` = "recurrence" (the oracle) the large-N recurrence (Eq. 5) from c0 = 1/N in the simulation's slot.

    Eq. 8's 2 / (beta - 2 gamma) rounds per unit of ln N is the ODE's; the discrete recurrence's early growth
    ln(1 + beta / 2) predicts a slightly larger slope.
    """
    _check_attack(attack, simulator)
    sizes = np.array([2**k for k in log2_sizes], dtype=float)
    infect, seq = [], []
    metrics = {"alpha": alpha, "beta": beta, "gamma": gamma, "c0_times_n": 1.0}
    for k in ctx.progress(log2_sizes, description="agent-smith rounds"):
        if attack == "infectious":
            sim = _simulate(attack, 2**k, max_rounds, ctx.rng("rounds", k), simulator, alpha=alpha, beta=beta,
                            gamma=gamma, seed_ratio=0.0)
            infect.append(first_round_reaching(sim.carriers_, level))
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
                        ctx.rng("baseline", name), simulator if name == "infectious" else "agents",
                        alpha=min(alpha, b), beta=b, gamma=gamma, seed_ratio=0.0)
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
            rounds: int = 300, defence: str = "purge", simulator: str = "agents") -> dict[str, float]:
    """(d) defence sweep over the recovery rate gamma from a 5% seed: the carrier ratio settles at 1 - 2 gamma / beta
    when beta > 2 gamma and decays to 0 when beta <= 2 gamma (Remark II); fit_rates recovers beta and gamma.

    At the threshold gamma = beta / 2 the decay is algebraic (Eq. 14), so a finite run sits above the limit 0 there.

    ``defence`` fills the defence's slot: "purge" (the method: carriers purge V_adv at rate gamma) or the null
    "none" (no purge in the chats, gamma = 0, while the theory columns keep the swept gamma); same keys.
    ``simulator`` = "recurrence" (the oracle) puts the large-N recurrence (Eq. 5) in the simulation's slot.
    """
    import matplotlib.pyplot as plt

    if defence not in ("purge", "none"):
        raise ValueError(f"defence must be 'purge' or 'none', got {defence!r}")
    _check_attack("infectious", simulator)
    metrics = {"alpha": alpha, "beta": beta, "c0": seed_ratio}
    contained_finals, gaps = [], []
    fig, ax = plt.subplots(figsize=(6, 4))
    for g in ctx.progress(gammas, description="agent-smith defence"):
        sim = _simulate("infectious", num_agents, rounds, ctx.rng("defence", str(g)), simulator, alpha=alpha,
                        beta=beta, gamma=g if defence == "purge" else 0.0, seed_ratio=seed_ratio)
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
    # smoke keeps the claim's 32 rounds: in 6, even an image that infects in every chat reaches ~1/3 of 32 agents
    smoke={"num_agents": 32, "attack_epochs": 1, "train_steps": 20, "ensemble_rounds": 2, "size": 48},
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

    ``image`` fills the adversarial image's slot: "crafted" (the method), the null "clean" (the attack's starting
    image, not optimized: same society, population and chats) or the oracle "ideal" (an image retrieved and
    jailbreaking in every chat, alpha = beta = 1, spread from one agent of ``num_agents`` by the pair-wise chat
    simulation: no society is trained, only its ``crafted_*`` spread keys are returned); the keys stay
    ``crafted_*``."""
    import matplotlib.pyplot as plt

    from icml24.agents import society_experiment

    if image not in ("crafted", "clean", "ideal"):
        raise ValueError(f"image must be 'crafted', 'clean' or 'ideal', got {image!r}")
    if image == "ideal":
        sim = InfectionSimulation(num_agents, alpha=1.0, beta=1.0, seed_ratio=0.0).run(rounds, ctx.rng("ideal"))
        return {"crafted_cumulative_final": float(sim.cumulative_[-1]), "crafted_carriers_final":
                float(sim.carriers_[-1]), "num_agents": float(num_agents), "rounds": float(rounds), "alpha": 1.0,
                "beta": 1.0}
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
