"""Agent Smith: A Single Image Can Jailbreak One Million Multimodal LLM Agents Exponentially Fast (Gu et al., 2024).

Infectious jailbreak dynamics: a vectorized randomized pair-wise chat simulation up to 2^20 agents beside the paper's
recurrence (Eq. 5), closed form (Eq. 7, 14, 15), rounds-needed formula (Eq. 8, 13) and containment rule beta <= 2 gamma.
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
    recurrence,
    rounds_needed,
    sequential_jailbreak,
    sequential_rounds_to,
    society_experiment,
)
from icml24.core import Claim, Null, Paper, Regime, experiment

PAPER = Paper(
    slug="agent-smith",
    title="Agent Smith: A Single Image Can Jailbreak One Million Multimodal LLM Agents Exponentially Fast",
    authors="Xiangming Gu, Xiaosen Zheng, Tianyu Pang, Chao Du, Qian Liu, Ye Wang, Jing Jiang, Min Lin",
    venue="ICML 2024",
    code="https://github.com/sail-sg/Agent-Smith",
    summary=(
        "One adversarial image in the album of a few agents spreads through randomized pair-wise chats: a carrier "
        "questioner retrieves it (beta), the answerer stores it, carriers emit the harmful target (alpha) and may "
        "recover (gamma). We simulate the chats of up to 2^20 agents with FIFO albums, vectorized in numpy, and "
        "check the paper's theory: the recurrence and closed form, O(log N) rounds, and containment iff "
        "beta <= 2 gamma."
    ),
    deviations=[
        "No LLaVA/CLIP agents: at scale, retrieval and jailbreak are Bernoulli draws with the rates alpha, beta, gamma "
        "(the paper's own abstraction, Sec. 3.1); albums are FIFO as in the paper, so eviction adds real recovery.",
        "The regime takes alpha = 0.95, beta = 0.8 from the theory check of Fig. 9 with no defence (gamma = 0); the "
        "paper does not tabulate the per-round rates of its 1M run, so the 27-31 round check uses these.",
        "The sequential jailbreak baseline is the deterministic one-new-agent-per-round curve, not a model run.",
        "The text history (|H| = 3) is recorded but does not change who carries the virus in the simulation.",
    ],
)

SEQUENTIAL = Null("the sequential (one-to-one) jailbreak in the infectious image's slot: one new agent jailbroken "
                  "per round, from the same seeded agents, nobody passing it on", {"attack": "sequential"}, cheap=True)
NO_DEFENCE = Null("no defence in the defence's slot (no purge: gamma = 0 in the chats, theory at the swept gamma)",
                  {"defence": "none"})
CLEAN_IMAGE = Null("a clean, unoptimized image (the attack's starting image) in the adversarial image's slot",
                   {"image": "clean"})
ATTACKS = ("infectious", "sequential")


class _Sequential:
    """The sequential jailbreak's curves under the names of a simulation's (carriers = infected = cumulative)."""

    def __init__(self, num_agents: int, seed_ratio: float, rounds: int):
        self.num_agents = num_agents
        self.num_seeded = max(1, int(round(seed_ratio * num_agents)))
        self.carriers_ = self.infected_ = self.cumulative_ = sequential_jailbreak(num_agents, rounds,
                                                                                  seeded=self.num_seeded)


def _check_attack(attack: str) -> None:
    if attack not in ATTACKS:
        raise ValueError(f"attack must be one of {', '.join(ATTACKS)}, got {attack!r}")


def _regime(alpha: float, beta: float, gamma: float, c0: float) -> dict[str, float]:
    return {"alpha": alpha, "beta": beta, "gamma": gamma, "c0": c0}


def _mean_abs(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean(np.abs(np.asarray(a) - np.asarray(b))))


@experiment(
    PAPER,
    null=SEQUENTIAL,
    quick={"log2_sizes": [8, 10, 12, 14, 16, 18, 20], "seeds": 5},
    full={"log2_sizes": list(range(8, 21)), "seeds": 10},
    smoke={"log2_sizes": [8, 12], "rounds": 32},
    threads=1,
)
def scaling(ctx, log2_sizes: list[int] = (8, 14, 20), rounds: int = 32, alpha: float = 0.95, beta: float = 0.8,
            gamma: float = 0.0, seed_ratio: float = 1 / 1024, album_size: int = 10, history_size: int = 3,
            attack: str = "infectious") -> dict[str, float]:
    """(a) N = 2^8 .. 2^20 with the paper's seeding c0 = 1/1024 (App. E.1; at least one agent): carriers and
    infected per round against the recurrence (Eq. 5) and the closed form (Eq. 7).

    Measured (quick, 5 seeds, alpha 0.95, beta 0.8, gamma 0): at 2^20 the cumulative infected ratio passes 99% at
    round 30.2 (carriers 90% at 25.8); mean |sim - recurrence| 0.014 at 2^14 and 0.0015 at 2^20, but 0.09 at 2^8,
    where one seeded agent makes the take-off time random. The closed form (the ODE) lags the discrete recurrence
    (mean |Delta| 0.07-0.09): one round multiplies early growth by 1 + beta/2, the ODE by exp(beta/2). The current
    infected ratio at round 22 is 0.66 at 2^20 against the paper's 96% (App. E.1): the paper's real rates must be
    higher than this regime's beta = 0.8. fit_rates recovers alpha 0.95, beta 0.80, gamma 0.00 from the 2^20 curve.

    ``attack`` fills the infectious image's slot: "infectious" (the method) or the null "sequential" (one new agent
    jailbroken per round from the same seeded agents, nobody passing it on); the metric keys stay the same.
    """
    import matplotlib.pyplot as plt

    _check_attack(attack)
    metrics = _regime(alpha, beta, gamma, seed_ratio)
    large = []
    fig, axes = plt.subplots(1, len(log2_sizes), figsize=(4 * len(log2_sizes), 3.5), squeeze=False)
    for ax, k in zip(axes[0], ctx.progress(log2_sizes, description="agent-smith sizes")):
        if attack == "infectious":
            sim = InfectionSimulation(2**k, album_size=album_size, history_size=history_size, alpha=alpha, beta=beta,
                                      gamma=gamma, seed_ratio=seed_ratio).run(rounds, ctx.rng("scaling", k))
        else:
            sim = _Sequential(2**k, seed_ratio, rounds)
        c0 = sim.num_seeded / sim.num_agents
        rec = recurrence(c0, beta, gamma, rounds)
        ode = closed_form(c0, beta, gamma, np.arange(rounds + 1))
        tag = f"n2e{k}"
        fitted = fit_rates(sim.carriers_, sim.infected_)
        out = {
            f"{tag}_c0": c0,
            f"{tag}_carriers_final": float(sim.carriers_[-1]),
            f"{tag}_cumulative_final": float(sim.cumulative_[-1]),
            f"{tag}_rounds_to_99_cumulative": float(first_round_reaching(sim.cumulative_, 0.99)),
            f"{tag}_rounds_to_90_current": float(first_round_reaching(sim.infected_, 0.9)),
            f"{tag}_rounds_to_90_carriers": float(first_round_reaching(sim.carriers_, 0.9)),
            f"{tag}_current_infected_round22": float(sim.infected_[min(22, rounds)]),
            f"{tag}_mad_recurrence": _mean_abs(sim.carriers_, rec),
            f"{tag}_mad_infected_recurrence": _mean_abs(sim.infected_, alpha * rec),  # Eq. 4
            f"{tag}_mad_closed_form": _mean_abs(sim.carriers_, ode),
            f"{tag}_fit_alpha": fitted["alpha"], f"{tag}_fit_beta": fitted["beta"],
            f"{tag}_fit_gamma": fitted["gamma"],
        }
        metrics.update(out)
        if k >= 14:
            large.append(out[f"{tag}_mad_recurrence"])
        t = np.arange(rounds + 1)
        ax.plot(t, sim.carriers_, label="carriers (sim)")
        ax.plot(t, sim.infected_, label="infected (sim)")
        ax.plot(t, sim.cumulative_, label="cumulative (sim)")
        ax.plot(t, rec, "--", label="recurrence Eq. 5")
        ax.plot(t, ode, ":", label="closed form Eq. 7")
        ax.set_title(f"N=2^{k}, c0={c0:.2g}, a={alpha}, b={beta}, g={gamma}", fontsize=8)
        ax.set_xlabel("round")
    axes[0][0].legend(fontsize=7)
    ctx.figure("scaling", fig)
    top = f"n2e{max(log2_sizes)}"
    metrics["largest_log2_size"] = float(max(log2_sizes))
    metrics["largest_rounds_to_99_cumulative"] = metrics[f"{top}_rounds_to_99_cumulative"]
    metrics["largest_rounds_to_99_carriers_theory"] = rounds_needed(0.99, beta, gamma, c0=metrics[f"{top}_c0"])
    metrics["mad_recurrence_large"] = max(large) if large else metrics[f"{top}_mad_recurrence"]
    return metrics


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
def rounds_vs_size(ctx, log2_sizes: list[int] = (8, 10, 12, 14, 16, 18, 20), alpha: float = 0.95,
                   beta: float = 0.8, gamma: float = 0.0, level: float = 0.9, max_rounds: int = 96,
                   baseline_agents: int = 256, baseline_rounds: int = 32,
                   attack: str = "infectious") -> dict[str, float]:
    """(b) rounds to 90% carriers from one seeded agent (c0 = 1/N, Eq. 8) against ln N, beside a sequential
    jailbreak (one new agent per round) whose rounds grow like N; (d) at N = 256 and 32 rounds (Fig. 3, left) the
    infectious image, the sequential jailbreak and a non-infectious jailbroken image (beta = 0).

    Measured (quick, 5 seeds): rounds to 90% carriers ~24 / ~34 / ~48 at 2^8 / 2^14 / 2^20, slope 2.89 per unit
    of ln N (R^2 0.96) against Eq. 8's 2/(beta - 2 gamma) = 2.5 (the ODE; the discrete recurrence's early growth
    rate ln(1 + beta/2) gives 2.97); the sequential jailbreak needs 230 / 14745 / 943718 rounds (log-log slope 1).
    At N = 256 after 32 rounds: infectious 99.6-100% in 4 of 5 seeds, but seed 3's lone carrier was evicted
    from its FIFO album before passing V_adv on (0.35% of 2000 runs do so), so the mean is 0.80; sequential 12.9%,
    non-infectious 1/256.

    ``attack`` fills the infectious image's slot (the sweep and the N = 256 "infectious" run): "infectious" (the
    method) or the null "sequential", whose rounds to 90% are exact (``sequential_rounds_to``, not capped at
    ``max_rounds``: the baseline at full strength); the metric keys stay the same.
    """
    _check_attack(attack)
    sizes = np.array([2**k for k in log2_sizes], dtype=float)
    infect, seq = [], []
    metrics = _regime(alpha, beta, gamma, math.nan)
    for k in ctx.progress(log2_sizes, description="agent-smith rounds"):
        if attack == "infectious":
            sim = InfectionSimulation(2**k, alpha=alpha, beta=beta, gamma=gamma, seed_ratio=0.0)
            sim.run(max_rounds, ctx.rng("rounds", k))
            infect.append(first_round_reaching(sim.carriers_, level))
        else:
            infect.append(sequential_rounds_to(2**k, level))
        seq.append(sequential_rounds_to(2**k, level))
        metrics[f"n2e{k}_rounds_to_90_carriers"] = float(infect[-1])
        metrics[f"n2e{k}_sequential_rounds_to_90"] = float(seq[-1])
        metrics[f"n2e{k}_rounds_theory_eq8"] = rounds_needed(level, beta, gamma, num_agents=2**k)
    del metrics["c0"]
    metrics["c0_times_n"] = 1.0
    log_n = np.log(sizes)
    metrics["infection_slope_vs_ln_n"], metrics["infection_r2_vs_ln_n"] = _fit_line(log_n, np.array(infect, float))
    metrics["theory_slope_vs_ln_n"] = 2 / (beta - 2 * gamma) if beta > 2 * gamma else math.inf  # Eq. 8
    metrics["infection_loglog_slope"], _ = _fit_line(log_n, np.log(np.array(infect, float)))
    metrics["sequential_loglog_slope"], _ = _fit_line(log_n, np.log(np.array(seq, float)))
    # (d) baselines at the paper's default N = 256
    runs = {}
    sequential = sequential_jailbreak(baseline_agents, baseline_rounds)
    for name, b in (("infectious", beta), ("noninfectious", 0.0)):
        if name == "infectious" and attack == "sequential":
            runs[name] = sequential  # the null in the infectious image's slot
            continue
        sim = InfectionSimulation(baseline_agents, alpha=alpha, beta=b, gamma=gamma, seed_ratio=0.0)
        runs[name] = sim.run(baseline_rounds, ctx.rng("baseline", name)).cumulative_
    runs["sequential"] = sequential
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
def defence(ctx, gammas: list[float] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6), alpha: float = 0.95,
            beta: float = 0.8, num_agents: int = 2**16, seed_ratio: float = 0.05,
            rounds: int = 300, defence: str = "purge") -> dict[str, float]:
    """(c) defence sweep over the recovery rate gamma from a 5% seed: the carrier ratio settles at 1 - 2 gamma / beta
    when beta > 2 gamma and decays to 0 when beta <= 2 gamma (Remark II); fit_rates recovers beta and gamma.

    Measured (quick, 2-3 seeds, beta 0.8, N 2^16, 300 rounds): final carriers 1.000 / 0.751 / 0.499 / 0.251 against the
    limits 1 / 0.75 / 0.5 / 0.25 for gamma 0-0.3; 0.0083 at the threshold gamma = 0.4 (algebraic decay, Eq. 14) and 0
    above it. Fitted (beta, gamma) at gamma = 0.2: (0.797, 0.199); below the threshold the fit is ill-posed.

    ``defence`` fills the defence's slot: "purge" (the method: carriers purge V_adv at rate gamma) or the null
    "none" (no purge in the chats, gamma = 0, while the theory columns keep the swept gamma); same keys.
    """
    import matplotlib.pyplot as plt

    if defence not in ("purge", "none"):
        raise ValueError(f"defence must be 'purge' or 'none', got {defence!r}")

    metrics = _regime(alpha, beta, math.nan, seed_ratio)
    del metrics["gamma"]
    contained_finals, gaps = [], []
    fig, ax = plt.subplots(figsize=(6, 4))
    for g in ctx.progress(gammas, description="agent-smith defence"):
        applied = g if defence == "purge" else 0.0
        sim = InfectionSimulation(num_agents, alpha=alpha, beta=beta, gamma=applied, seed_ratio=seed_ratio)
        sim.run(rounds, ctx.rng("defence", str(g)))
        tag = f"gamma{str(g).replace('.', 'p')}"
        final = float(sim.carriers_[-10:].mean())
        metrics[f"{tag}_carriers_final"] = final
        metrics[f"{tag}_limit_theory"] = limit_ratio(beta, g)
        fitted = fit_rates(sim.carriers_, sim.infected_)
        metrics[f"{tag}_fit_beta"], metrics[f"{tag}_fit_gamma"] = fitted["beta"], fitted["gamma"]
        if contained(beta, g):
            contained_finals.append(final)
        else:
            gaps.append(abs(final - limit_ratio(beta, g)))
        ax.plot(sim.carriers_, label=f"gamma={g} ({'contained' if contained(beta, g) else 'spreads'})")
    ax.set_xlabel("round")
    ax.set_ylabel("carrier ratio")
    ax.set_title(f"defence sweep, N={num_agents}, beta={beta}, c0={seed_ratio}", fontsize=9)
    ax.legend(fontsize=7)
    ctx.figure("defence", fig)
    metrics["max_contained_final"] = max(contained_finals) if contained_finals else 0.0
    metrics["max_uncontained_gap"] = max(gaps) if gaps else 0.0
    metrics["num_contained"] = float(len(contained_finals))
    metrics["num_uncontained"] = float(len(gaps))
    return metrics


@experiment(
    PAPER,
    quick={"num_agents": 128, "rounds": 32, "attack_epochs": 100, "seeds": 2},
    full={"num_agents": 256, "rounds": 32, "attack_epochs": 100, "seeds": 5},
    smoke={"num_agents": 64, "rounds": 8, "attack_epochs": 2},
    threads=1,
    null=CLEAN_IMAGE,
)
def real_society(ctx, num_agents: int = 128, rounds: int = 32, attack_epochs: int = 100,
                 border: int = 1, image: str = "crafted") -> dict[str, float]:
    """(e) the small real-retrieval society (icml24.agents.society): a tiny CLIP retriever and responder, V_adv
    crafted by the MI-FGSM border attack, spread from one agent through real retrieval and responses; the measured
    alpha^Q, alpha^A and beta are the regime, beside the curve of a clean image. ``border`` is the attack frame in
    pixels (1 on 16 px scales the paper's h = 6 on 336 px; the frame's area fraction is reported as a metric).

    ``image`` fills the adversarial image's slot: "crafted" (the method) or the null "clean" (the attack's starting
    image, not optimized: same society, same population, same seed); the keys stay ``crafted_*``."""
    import matplotlib.pyplot as plt

    if image not in ("crafted", "clean"):
        raise ValueError(f"image must be 'crafted' or 'clean', got {image!r}")
    metrics, curves = society_experiment(num_agents, rounds, attack_epochs, ctx.child_seed("society"), border=border,
                                         craft=image == "crafted")
    out = {k: float(v) for k, v in metrics.items()}
    out["num_agents"], out["rounds"] = float(num_agents), float(rounds)
    out["alpha"] = (out["alpha_q"] + out["alpha_a"]) / 2  # one alpha as in Eq. 4 (the Q/A split is the extension)
    fig, ax = plt.subplots(figsize=(6, 4))
    for name in ("crafted_cumulative", "clean_cumulative"):
        if name in curves:
            ax.plot(np.arange(1, len(curves[name]) + 1), curves[name], label=name)
    ax.set_xlabel("round")
    ax.set_ylabel("cumulative infection ratio")
    ax.set_title(f"real society N={num_agents}: alpha_Q={out['alpha_q']:.2f}, alpha_A={out['alpha_a']:.2f}, "
                 f"beta={out['beta']:.2f}", fontsize=9)
    ax.legend(fontsize=8)
    ctx.figure("real_society", fig)
    return out


CLAIMS = [
    Claim(
        "With 2^20 agents, c0 = 1/1024 and the regime rates, the cumulative infected ratio reaches 99% within "
        "27-31 rounds",
        experiment=scaling,
        check=lambda m: 27 <= m["largest_rounds_to_99_cumulative"] <= 31,
        paper="Fig. 1: p_t reaches ~100% after 27-31 chat rounds at N ~ 1M (c0 = 1/1024, App. E.1)",
    ),
    Claim(
        "Simulation and recurrence (Eq. 5) agree: mean |c_sim - c_rec| over rounds < 0.03 for N >= 2^14",
        experiment=scaling,
        check=lambda m: m["mad_recurrence_large"] < 0.03,
        paper="App. B, Fig. 9: simulation at N = 2^14 matches the theory",
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
        "At N = 256 after 32 rounds the infectious image infects >= 90% of the agents cumulatively",
        experiment=rounds_vs_size,
        check=lambda m: m["baseline_infectious_cumulative_final"] >= 0.9,
        paper="Table 1: cumulative p_24 99.5-99.6% at N = 256; Fig. 3 (left): sequential jailbreak ~1/8 after 32 "
              "rounds",
    ),
    Claim(
        "The real society: the crafted image infects >= 90% of agents within 32 rounds",
        experiment=real_society,
        check=lambda m: m["crafted_cumulative_final"] >= 0.9,
        paper="Table 1: cumulative p_24 99.5-99.6% at N = 256; Fig. 3: a clean image / prompt injection infects none",
    ),
]

REGIMES = [
    Regime("Rounds to 90% carriers per unit ln N beside Eq. 8's 2 / (beta - 2 gamma), and the sequential "
           "jailbreak's log-log slope (1 by its one-agent-per-round schedule)", experiment=rounds_vs_size,
           metrics=["infection_slope_vs_ln_n", "theory_slope_vs_ln_n", "sequential_loglog_slope"],
           paper="Eq. 8: 2 / (beta - 2 gamma) = 2.5 at beta 0.8; Fig. 3: sequential linear in N"),
    Regime("Fig. 3 baselines at N = 256 after 32 rounds: the sequential jailbreak (33/256 by its schedule) and a "
           "non-infectious jailbroken image (beta = 0: only its seed)", experiment=rounds_vs_size,
           metrics=["baseline_sequential_cumulative_final", "baseline_noninfectious_cumulative_final"],
           paper="Fig. 3 (left): sequential ~1/8; prompt injections infect none"),
    Regime("The real society's clean control image: cumulative infection and the responder's HARMFUL rate on clean "
           "bank images (0 by instruction tuning, which never targets HARMFUL on training-kind images)",
           experiment=real_society, metrics=["clean_cumulative_final", "clean_harmful_rate", "attack_val_jsr"],
           paper="Fig. 3: a clean image infects none"),
]

__all__ = ["PAPER", "CLAIMS", "REGIMES", "scaling", "rounds_vs_size", "defence", "real_society"]
