"""Simformer (Gloeckler et al., ICML 2024): posterior C2ST vs NPE, arbitrary conditionals, graph-masked attention."""

from __future__ import annotations

import time

import numpy as np
import torch

from icml24.core import Claim, Paper, experiment
from icml24.sbi import NPE, Simformer, c2st, get_task

PAPER = Paper(
    slug="simformer",
    title="All-in-one simulation-based inference",
    authors="Manuel Gloeckler, Michael Deistler, Christian Weilbach, Frank Wood, Jakob H. Macke",
    venue="ICML 2024",
    code="https://github.com/mackelab/simformer",
    summary=(
        "The Simformer is a score-based diffusion model over the joint vector (theta, x) whose score network is a "
        "transformer with one token per variable, an attention mask from the simulator's graph and a condition "
        "mask that marks observed variables; trained on random conditionals, one network samples the posterior, "
        "the likelihood or any conditional. We re-implement it in PyTorch (icml24.sbi.Simformer) and check, with "
        "the standard random-forest C2ST against exact or SBIBM reference samples, that its posterior matches sbi's "
        "NPE (neural spline flow) on gaussian_linear and two_moons, that the same network answers likelihood and "
        "random conditionals, and that graph-masked attention is no worse than dense attention at 10^3 simulations."
    ),
    deviations=[
        "Quick mode trains a 2-layer transformer for 1500 steps of batch 128 and samples with 100 steps on 3 "
        "observations (paper: 6 layers, up to 100k steps of batch 1000, 500 steps, 10 observations); full mode uses "
        "the paper's settings.",
        "Quick mode runs only the 10^4-simulation budget of the NPE comparison; full mode adds 10^3 and 10^5.",
        "NPE in quick mode is capped at 15 epochs of batch 500; full mode trains it to sbi's early stopping.",
        "graph_vs_dense trains 800 steps in quick mode instead of the paper's 5000 at 10^3 simulations.",
        "The Gaussian tree and Markov chain are linear-Gaussian versions of the paper's tasks, so that every "
        "conditional has an exact reference.",
        "SLCP and gaussian_mixture are not run (CPU budget).",
        "Data are z-scored per variable; the official config leaves z-scoring off.",
        "The directed mask eliminates a node only after all its unobserved children (Webb et al.'s reverse "
        "topological order), unlike the official frontier update.",
        "Transformer blocks are standard pre-LayerNorm.",
        "Early stopping is patience-based on a fixed-noise validation loss, as sbi does.",
    ],
)

LINEAR_GAUSSIAN = ("gaussian_linear", "gaussian_tree", "markov_chain")


def _simulate(task, budget: int, generator: torch.Generator) -> torch.Tensor:
    return task.simulate_joint(budget, generator)


def _steps_for(task, train_steps: int) -> int | None:
    """``train_steps`` is the budget of a 20-variable task; smaller tasks get proportionally more steps (equal
    compute: the cost of a step grows with the number of tokens). 0 -> the paper's rule clip(3N, 5k, 100k)."""
    if train_steps <= 0:
        return None
    return train_steps * max(1, 20 // task.num_variables)


def _train_simformer(task, joint, graph_kind: str, seed: int, num_layers: int, train_steps: int,
                     batch_size: int) -> tuple[Simformer, float]:
    start = time.perf_counter()
    model = Simformer(graph=task.graph, graph_kind=graph_kind, num_layers=num_layers, seed=seed)
    model.append_simulations(joint[:, : task.num_theta], joint[:, task.num_theta:])
    model.train(max_steps=_steps_for(task, train_steps), batch_size=batch_size)
    return model, time.perf_counter() - start


def _posterior_c2sts(model, task, observations: int, num_samples: int, sampling_steps: int,
                     generator: torch.Generator) -> tuple[list[float], dict]:
    scores, first = [], {}
    for index in range(1, observations + 1):
        x_o = task.observation(index)
        samples = model.sample_posterior(num_samples, x_o, num_steps=sampling_steps, generator=generator)
        reference = _reference(task, x_o, num_samples, generator, index)
        scores.append(c2st(samples, reference))
        if index == 1:
            first = {"samples": samples, "reference": reference}
    return scores, first


def _reference(task, x_o, num_samples: int, generator: torch.Generator, index: int):
    if task.name == "two_moons":
        return task.reference_posterior(x_o, num_samples, generator, index=index)
    return task.reference_posterior(x_o, num_samples, generator)


def _conditional_c2sts(model, task, observations: int, num_samples: int, sampling_steps: int,
                       generator: torch.Generator, rng: np.random.Generator) -> dict[str, list[float]]:
    """Likelihood and Bernoulli(0.3) random conditionals against closed-form references (linear-Gaussian tasks)."""
    n = task.num_variables
    result = {"likelihood": [], "random": []}
    for _ in range(observations):
        truth = task.simulate_joint(1, generator)[0].double().numpy()
        random_mask = rng.random(n) < 0.3
        if random_mask.all():
            random_mask[rng.integers(n)] = False
        for kind, mask in (("likelihood", np.arange(n) < task.num_theta), ("random", random_mask)):
            condition = {int(i): float(truth[i]) for i in np.flatnonzero(mask)}
            samples = model.sample(num_samples, condition, num_steps=sampling_steps, generator=generator)
            reference = task.sample_conditional(num_samples, mask, truth, generator)
            result[kind].append(c2st(samples[:, ~torch.as_tensor(mask)], reference))
    return result


def _npe_c2sts(task, joint, observations: int, num_samples: int, max_epochs: int, batch_size: int, seed: int,
               generator: torch.Generator):
    """sbi's NPE (neural spline flow) on the same simulations; ``max_epochs=0`` trains to early stopping."""
    npe = NPE(task.prior(), seed=seed).append_simulations(joint[:, : task.num_theta], joint[:, task.num_theta:])
    npe.train(max_epochs=max_epochs or None, batch_size=batch_size)
    scores = []
    for index in range(1, observations + 1):
        x_o = task.observation(index)
        samples = npe.sample_posterior(num_samples, x_o, generator=generator)
        scores.append(c2st(samples, _reference(task, x_o, num_samples, generator, index)))
    return scores, npe.seconds_


def _pair_plot(ctx, name: str, samples, reference, title: str) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4, 4))
    ax.scatter(samples[:, 0], samples[:, 1], s=3, alpha=0.4, color="tab:orange", label="Simformer")
    ax.scatter(reference[:, 0], reference[:, 1], s=2, alpha=0.4, color="tab:blue", label="reference")
    ax.set(xlabel="theta_1", ylabel="theta_2", title=title)
    ax.legend(markerscale=4)
    ctx.figure(name, fig)


@experiment(PAPER,
            quick={"tasks": ["gaussian_linear", "two_moons"], "budgets": [10000], "observations": 3,
                   "num_samples": 500, "num_layers": 2, "train_steps": 1500, "batch_size": 128, "sampling_steps": 100,
                   "npe_epochs": 15, "npe_batch_size": 500, "seeds": 1},
            full={"tasks": ["gaussian_linear", "two_moons"], "budgets": [1000, 10000, 100000], "observations": 10,
                  "num_samples": 2000, "num_layers": 6, "train_steps": 0, "batch_size": 1000, "sampling_steps": 500,
                  "npe_epochs": 0, "npe_batch_size": 200, "seeds": 1},
            smoke={"tasks": ["gaussian_linear", "two_moons"], "budgets": [10000], "observations": 1, "num_samples": 40,
                   "num_layers": 1, "train_steps": 3, "batch_size": 32, "sampling_steps": 3, "npe_epochs": 1,
                   "npe_batch_size": 5000},
            threads=1)
def posterior_benchmark(ctx, tasks: list[str] = ("gaussian_linear", "two_moons"), budgets: list[int] = (10000,),
                        observations: int = 3, num_samples: int = 500, num_layers: int = 2, train_steps: int = 1500,
                        batch_size: int = 128, sampling_steps: int = 100, npe_epochs: int = 15,
                        npe_batch_size: int = 500) -> dict[str, float]:
    """Posterior C2ST of the Simformer (undirected mask) vs sbi's NPE; plus likelihood/random conditionals.

    Per task and budget: one Simformer and one NPE (neural spline flow) on the same simulations, each scored by the
    random-forest C2ST against exact (gaussian_linear) or SBIBM (two_moons) reference samples on ``observations``
    observations. ``train_steps`` is the budget of a 20-variable task; smaller tasks get proportionally more steps at
    equal compute (x5 for two_moons' 4 variables, x2 for the 7-variable tree); 0 is the paper's rule clip(3N, 5k,
    100k). Quick C2STs are higher than the paper's (smaller network, fewer steps), for both methods.
    Measured (quick, seed 0): Simformer vs NPE 0.554 vs 0.553 on gaussian_linear and 0.820 vs 0.695 on two_moons,
    so the claim fails on two_moons. The two_moons Simformer depends on early stopping: runs that stop early score
    0.82 (seed 0, 4351 of 7500 steps) and 0.84 (seed 2, 2851 steps), a run that trains all steps 0.72 (seed 1). Before
    the seed streams were renamed, seed 0 trained all steps and measured 0.725 vs 0.685 (gaussian_linear 0.606 vs
    0.559), inside the +0.05 rule; this code on those old streams still gives 0.724.
    """
    metrics: dict[str, float] = {}
    curves: dict[str, dict[str, list[float]]] = {}
    for name in tasks:
        task = get_task(name)
        for budget in ctx.progress(budgets, description=f"{name} budgets"):
            generator = ctx.torch_generator("posterior", name, budget)
            joint = _simulate(task, budget, generator)
            model, seconds = _train_simformer(task, joint, "undirected", ctx.child_seed("simformer", name), num_layers,
                                              train_steps, batch_size)
            key = f"{name}_{budget}"
            scores, first = _posterior_c2sts(model, task, observations, num_samples, sampling_steps, generator)
            metrics[f"{key}_simformer_c2st"] = float(np.mean(scores))
            metrics[f"{key}_simformer_c2st_obs_std"] = float(np.std(scores))
            metrics[f"{key}_simformer_seconds"] = seconds
            metrics[f"{key}_simformer_steps"] = float(model.steps_trained_)
            npe_scores, npe_seconds = _npe_c2sts(task, joint, observations, num_samples, npe_epochs, npe_batch_size,
                                                 ctx.child_seed("npe", name, budget), generator)
            metrics[f"{key}_npe_c2st"] = float(np.mean(npe_scores))
            metrics[f"{key}_npe_c2st_obs_std"] = float(np.std(npe_scores))
            metrics[f"{key}_npe_seconds"] = npe_seconds
            curves.setdefault(name, {"simformer": [], "npe": []})
            curves[name]["simformer"].append(metrics[f"{key}_simformer_c2st"])
            curves[name]["npe"].append(metrics[f"{key}_npe_c2st"])
            if name in LINEAR_GAUSSIAN:
                extra = _conditional_c2sts(model, task, observations, num_samples, sampling_steps, generator,
                                           ctx.rng("conditionals", name, budget))
                for kind, values in extra.items():
                    metrics[f"{key}_{kind}_c2st"] = float(np.mean(values))
            _pair_plot(ctx, f"posterior_{key}", first["samples"], first["reference"],
                       f"{name}, {budget} sims, obs 1 (C2ST {scores[0]:.2f})")
    if len(budgets) > 1:
        _budget_plot(ctx, list(budgets), curves)
    return metrics


def _budget_plot(ctx, budgets: list[int], curves) -> None:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(curves), figsize=(4 * len(curves), 3.5), squeeze=False)
    for ax, (name, methods) in zip(axes[0], curves.items(), strict=True):
        for method, values in methods.items():
            ax.plot(budgets, values, marker="o", label=method)
        ax.set(xscale="log", xlabel="simulations", ylabel="C2ST", title=name, ylim=(0.45, 1.0))
        ax.legend()
    ctx.figure("c2st_vs_budget", fig)


@experiment(PAPER,
            quick={"tasks": ["gaussian_tree"], "budget": 10000, "observations": 3, "num_samples": 500,
                   "num_layers": 2, "train_steps": 1500, "batch_size": 128, "sampling_steps": 100, "seeds": 1},
            full={"tasks": ["gaussian_tree", "markov_chain", "gaussian_linear"], "budget": 10000, "observations": 10,
                  "num_samples": 2000, "num_layers": 6, "train_steps": 0, "batch_size": 1000, "sampling_steps": 500,
                  "seeds": 1},
            smoke={"tasks": ["gaussian_tree"], "budget": 300, "observations": 1, "num_samples": 40, "num_layers": 1,
                   "train_steps": 3, "batch_size": 32, "sampling_steps": 3},
            threads=1)
def all_conditionals(ctx, tasks: list[str] = ("gaussian_tree",), budget: int = 10000, observations: int = 3,
                     num_samples: int = 500, num_layers: int = 2, train_steps: int = 1500, batch_size: int = 128,
                     sampling_steps: int = 100) -> dict[str, float]:
    """One Simformer per task answers posterior, likelihood and Bernoulli(0.3) random conditionals (C2ST).

    Every conditional of a linear-Gaussian task is Gaussian in closed form, so each is scored against exact samples.
    Measured (quick, seed 0): likelihood 0.569 and random 0.553 on the tree (0.545 and 0.653 on the old streams).
    """
    unknown = [name for name in tasks if name not in LINEAR_GAUSSIAN]
    if unknown:
        raise ValueError(f"all_conditionals needs tasks with closed-form conditionals {LINEAR_GAUSSIAN}, got {unknown}")
    metrics: dict[str, float] = {}
    for name in tasks:
        task = get_task(name)
        generator = ctx.torch_generator("all_conditionals", name)
        joint = _simulate(task, budget, generator)
        model, seconds = _train_simformer(task, joint, "undirected", ctx.child_seed("simformer", name), num_layers,
                                          train_steps, batch_size)
        scores, _ = _posterior_c2sts(model, task, observations, num_samples, sampling_steps, generator)
        metrics[f"{name}_posterior_c2st"] = float(np.mean(scores))
        extra = _conditional_c2sts(model, task, observations, num_samples, sampling_steps, generator,
                                   ctx.rng("conditionals", name))
        for kind, values in extra.items():
            metrics[f"{name}_{kind}_c2st"] = float(np.mean(values))
            metrics[f"{name}_{kind}_c2st_max"] = float(np.max(values))
        metrics[f"{name}_seconds"] = seconds
        metrics[f"{name}_steps"] = float(model.steps_trained_)
    return metrics


@experiment(PAPER,
            quick={"task": "gaussian_linear", "budget": 1000, "kinds": ["undirected", "dense"], "observations": 3,
                   "num_samples": 500, "num_layers": 2, "train_steps": 800, "batch_size": 128, "sampling_steps": 100,
                   "seeds": 1},
            full={"task": "gaussian_linear", "budget": 1000, "kinds": ["undirected", "directed", "dense"],
                  "observations": 10, "num_samples": 2000, "num_layers": 6, "train_steps": 0, "batch_size": 1000,
                  "sampling_steps": 500, "seeds": 1},
            smoke={"task": "gaussian_linear", "budget": 300, "kinds": ["undirected", "dense"], "observations": 1,
                   "num_samples": 40, "num_layers": 1, "train_steps": 3, "batch_size": 32, "sampling_steps": 3},
            threads=1)
def graph_vs_dense(ctx, task: str = "gaussian_linear", budget: int = 1000, kinds: list[str] = ("undirected", "dense"),
                   observations: int = 3, num_samples: int = 500, num_layers: int = 2, train_steps: int = 1500,
                   batch_size: int = 128, sampling_steps: int = 100) -> dict[str, float]:
    """Posterior C2ST at a small budget with graph-masked (undirected / directed) vs dense attention.

    Every kind trains from the same simulations and the same initialisation seed; only the attention mask differs.
    Measured (quick, seed 0): undirected 0.739 vs dense 0.932 (0.719 vs 0.938 on the old streams).
    """
    problem = get_task(task)
    joint = _simulate(problem, budget, ctx.torch_generator("graph_vs_dense", task))
    metrics: dict[str, float] = {}
    for kind in kinds:
        model, seconds = _train_simformer(problem, joint, kind, ctx.child_seed("simformer", task), num_layers,
                                          train_steps, batch_size)
        scores, _ = _posterior_c2sts(model, problem, observations, num_samples, sampling_steps,
                                     ctx.torch_generator("sample", kind))
        metrics[f"{kind}_c2st"] = float(np.mean(scores))
        metrics[f"{kind}_seconds"] = seconds
        metrics[f"{kind}_steps"] = float(model.steps_trained_)
    return metrics


CLAIMS = [
    Claim("At 10^4 simulations the Simformer's posterior C2ST is no worse than NPE's + 0.05 on gaussian_linear "
          "and two_moons", experiment=posterior_benchmark,
          check=lambda m: m["gaussian_linear_10000_simformer_c2st"] <= m["gaussian_linear_10000_npe_c2st"] + 0.05
          and m["two_moons_10000_simformer_c2st"] <= m["two_moons_10000_npe_c2st"] + 0.05,
          paper="Fig. 3: Simformer matches or beats NPE on all four SBIBM tasks (figures only, no table)"),
    Claim("The same Simformer that gives the posterior answers likelihood and random conditionals on "
          "gaussian_linear with C2ST <= 0.70", experiment=posterior_benchmark,
          check=lambda m: m["gaussian_linear_10000_likelihood_c2st"] <= 0.70
          and m["gaussian_linear_10000_random_c2st"] <= 0.70,
          paper="Fig. 4: all-conditional C2ST stays low for the Simformer (figures only)"),
    Claim("One Simformer answers likelihood and random conditionals on the Gaussian tree with C2ST <= 0.70",
          experiment=all_conditionals,
          check=lambda m: m["gaussian_tree_likelihood_c2st"] <= 0.70 and m["gaussian_tree_random_c2st"] <= 0.70,
          paper="Fig. 4 (Tree task, nonlinear in the paper): low C2ST on random conditionals"),
    Claim("At 10^3 simulations the graph-masked (undirected) Simformer's posterior C2ST is no worse than dense "
          "attention's", experiment=graph_vs_dense,
          check=lambda m: m["undirected_c2st"] <= m["dense_c2st"],
          paper="Fig. 3: the undirected / directed Simformer is best at low budgets"),
]
