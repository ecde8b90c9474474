"""genco experiments: GenCO and its baselines on Zelda-like levels, the blackbox lambda, the solver layer."""

from __future__ import annotations

import time

import numpy as np

from icml24.core import Null, experiment, labelled, select
from icml24.generative import (
    GenCO,
    MLPGenerator,
    PlainGenerator,
    RepairedGenerator,
    ShortestPathSolver,
    SolverLayer,
    c2st_accuracy,
    is_playable,
    one_hot,
    random_levels,
    shortest_path_milp,
    tile_histogram_kl,
    wall_fraction,
    wall_loss,
    zelda_milp,
    zelda_penalty,
)

from . import PAPER

METHODS = ("genco", "plain", "repair", "penalty", "penalty_repair")
LAMS = (1.0, 10.0, 100.0)  # the blackbox interpolation strengths tried on validation levels (blackbox_lambda)
LAM = 10.0  # the one chosen there (lowest validation tile KL at quick); zelda's default
# what fills GenCO's slot: the method, a null through the same solver, or an oracle (held-out levels; the MILP's optimum
# of the objective)
GENCO_SLOT = ("genco", "untrained", "noise", "held_out", "optimum")
OPTIMUM_BONUS = 10.0  # the oracle "optimum": cost of an interior wall; N(0, 1) costs elsewhere only break ties
FEASIBLE_BASELINES = ("repair", "penalty_repair")


def _design_metrics(name: str, levels: np.ndarray, train_keys: set[bytes], held_out: np.ndarray,
                    seed: int) -> dict[str, float]:
    keys = [level.tobytes() for level in levels]
    return {
        f"{name}_feasible": float(np.mean([is_playable(level) for level in levels])),  # independent BFS check
        f"{name}_unique": len(set(keys)) / len(keys),
        f"{name}_novel": float(np.mean([k not in train_keys for k in keys])),
        f"{name}_objective": float(wall_fraction(levels).mean()),
        f"{name}_tile_kl": tile_histogram_kl(levels, held_out),  # distribution fit to held-out training levels
        # 0.5: indistinguishable from held-out levels
        f"{name}_c2st": c2st_accuracy(levels, held_out, random_state=seed),
    }


def _margins(out: dict[str, float]) -> None:
    """GenCO against the best feasible baseline of each metric (positive: GenCO better), per seed."""
    out["fit_margin_kl"] = min(out[f"{b}_tile_kl"] for b in FEASIBLE_BASELINES) - out["genco_tile_kl"]
    out["fit_margin_c2st"] = min(out[f"{b}_c2st"] for b in FEASIBLE_BASELINES) - out["genco_c2st"]
    out["objective_margin"] = out["genco_objective"] - max(out[f"{b}_objective"] for b in FEASIBLE_BASELINES)


def _solver_samples(solver, costs) -> np.ndarray:
    """Cost tensors (n, H, W, T) through the solver layer, as tile-index levels (n, H, W)."""
    import torch

    with torch.no_grad():
        return SolverLayer(solver)(torch.as_tensor(costs)).argmax(-1).numpy()


UNTRAINED = Null("the untrained generator (GenCO's initial weights) through the same solver, in GenCO's slot",
                 {"method": "untrained"})
NOISE = Null("Gaussian noise costs through the same solver, in GenCO's slot", {"method": "noise"})
RANDOM_GRADIENT = Null("a random direction of the same norm in each gradient estimator's slot",
                       {"gradient_direction": "random"})


@experiment(
    PAPER,
    null=UNTRAINED,
    quick={"height": 7, "width": 9, "steps": 60, "seeds": 3},
    full={"height": 9, "width": 13, "steps": 300, "n_train": 50, "n_samples": 200, "seeds": 5},
    smoke={"height": 7, "width": 9, "steps": 3, "batch_size": 4, "n_train": 10, "n_samples": 8},
    threads=1,
)
def zelda(ctx, height: int = 7, width: int = 9, n_train: int = 50, n_samples: int = 100, steps: int = 60,
          batch_size: int = 8, latent_dim: int = 16, group_loss: str = "gan", gradient: str = "blackbox",
          lam: float = LAM, weight: float = 1.0, penalty_weight: float = 1.0, lr: float = 1e-3,
          method: str = "genco", level_seed: int = 0) -> dict[str, float]:
    """One seed: procedural training levels, then GenCO, the plain generator, generate-then-repair, penalty
    training and penalty training repaired afterwards (equal feasibility), each sampled ``n_samples`` times.

    The regime is ``plain_feasible`` (how often the generator alone meets the constraints) beside
    ``data_feasible`` (the training levels, 1 by construction). GenCO's feasibility is recorded at every
    training step (``genco_min_train_feasible``), checked by BFS, not by the MILP. ``<name>_tile_kl`` is
    KL(held-out || samples) of tile histograms against ``n_train`` fresh levels from the training distribution
    (``data_tile_kl``: the training levels themselves, the floor sampling noise sets).

    ``method`` fills GenCO's slot (keys stay ``genco_*``): "genco" (trained), or the nulls "untrained" (the same
    initial generator, never trained, through the solver) and "noise" (N(0, I) costs through the solver); for a
    null the ``*_train_feasible`` keys are its samples' feasibility and ``genco_fit_seconds`` is 0. The oracles
    (what a perfect method gives, the same bookkeeping): "held_out" puts ``n_samples`` fresh levels of the training
    distribution (their own stream, neither the training nor the held-out levels) in GenCO's slot, a generator that
    learned the distribution exactly; "optimum" puts the MILP's optimum of the individual objective (interior
    walls at cost ``OPTIMUM_BONUS``, N(0, 1) tie-breaking costs) through the same solver, the best feasible
    objective.

    ``level_seed`` picks the instance: 0 draws the training and held-out levels from the run's streams, any other
    value from streams of its own (the family's other draws of the data, on seeds 1000+: no setting was chosen on
    them).
    """
    import matplotlib.pyplot as plt
    import torch

    if method not in GENCO_SLOT:
        raise ValueError(f"method must be one of {', '.join(GENCO_SLOT)}, got {method!r}")
    instance = () if level_seed == 0 else (level_seed,)  # the default instance keeps the streams it always had
    levels = random_levels(n_train, height, width, ctx.rng("levels", *instance))
    held_out = random_levels(max(n_train, n_samples), height, width, ctx.rng("held-out levels", *instance))
    data, train_keys = one_hot(levels), {level.tobytes() for level in levels}
    solver = zelda_milp(height, width)
    shape = (height, width, data.shape[-1])

    def feasibility(batch):
        return [is_playable(level) for level in batch]

    common = {"group_loss": group_loss, "individual_loss": wall_loss, "weight": weight, "feasibility": feasibility,
              "steps": steps, "batch_size": batch_size, "lr": lr}
    out = {"data_feasible": float(np.mean(feasibility(levels))), "data_objective": float(wall_fraction(levels).mean()),
           "data_unique": len(train_keys) / len(levels), "data_tile_kl": tile_histogram_kl(levels, held_out),
           "data_c2st": c2st_accuracy(levels, held_out, random_state=ctx.child_seed("c2st", "data"))}
    models = {
        "genco": GenCO(MLPGenerator(latent_dim, shape, random_state=ctx.child_seed("generator")), solver,
                       gradient=gradient, lam=lam, random_state=ctx.child_seed("genco"), **common),
        "plain": PlainGenerator(MLPGenerator(latent_dim, shape, random_state=ctx.child_seed("generator")),
                                random_state=ctx.child_seed("plain"), **common),
        "penalty": PlainGenerator(MLPGenerator(latent_dim, shape, random_state=ctx.child_seed("generator")),
                                  penalty=zelda_penalty, penalty_weight=penalty_weight,
                                  random_state=ctx.child_seed("penalty"), **common),
    }
    fig, ax = plt.subplots(figsize=(5, 3.2))
    if method != "genco":  # a null or an oracle in GenCO's slot: no training, the same sampling budget
        generator = models.pop("genco").generator
        start = time.perf_counter()
        if method == "held_out":
            samples = random_levels(n_samples, height, width, ctx.rng("oracle levels", *instance))
        else:
            with torch.no_grad():
                latents = torch.randn(n_samples, latent_dim, generator=ctx.torch_generator("samples"))
                costs = generator(latents) if method == "untrained" else torch.randn(
                    (n_samples, *shape), generator=ctx.torch_generator("noise costs"))
            if method == "optimum":  # every interior wall pays OPTIMUM_BONUS: the solver maximises the objective
                wall = int(levels[0, 0, 0])  # a border tile is a wall in every playable level
                costs[:, 1:-1, 1:-1, wall] += OPTIMUM_BONUS
            samples = _solver_samples(solver, costs)
        out.update(_design_metrics("genco", samples, train_keys, held_out, ctx.child_seed("c2st", "genco")))
        out["genco_sample_seconds"] = time.perf_counter() - start
        out["genco_fit_seconds"] = 0.0
        out["genco_mean_train_feasible"] = out["genco_min_train_feasible"] = out["genco_feasible"]
        out["genco_solves"] = float(n_samples)
    for name, model in ctx.progress(list(models.items()), description="genco methods"):
        model.fit(data)
        out[f"{name}_fit_seconds"] = model.fit_seconds_
        out[f"{name}_mean_train_feasible"] = float(np.mean(model.train_feasible_))
        out[f"{name}_min_train_feasible"] = float(np.min(model.train_feasible_))
        ax.plot(model.train_feasible_, label=name)
        start = time.perf_counter()
        out.update(_design_metrics(name, model.sample(n_samples, ctx.torch_generator("samples")), train_keys,
                                   held_out, ctx.child_seed("c2st", name)))
        out[f"{name}_sample_seconds"] = time.perf_counter() - start
    for name, base in (("repair", "plain"), ("penalty_repair", "penalty")):
        start = time.perf_counter()
        repaired = RepairedGenerator(models[base], solver).sample(n_samples, ctx.torch_generator("samples"))
        out[f"{name}_sample_seconds"] = time.perf_counter() - start
        out[f"{name}_fit_seconds"] = out[f"{base}_fit_seconds"]
        out.update(_design_metrics(name, repaired, train_keys, held_out, ctx.child_seed("c2st", name)))
    if method == "genco":
        out["genco_solves"] = float(models["genco"].solves_)
        out["genco_cost_time"] = out["genco_fit_seconds"] / max(out["plain_fit_seconds"], 1e-9)
    else:
        out["genco_cost_time"] = 0.0
    _margins(out)
    ax.set_xlabel("training step")
    ax.set_ylabel("feasible share of the batch (BFS)")
    ax.set_title(f"{height}x{width} levels, {group_loss}, {gradient}", fontsize=9)
    ax.legend(fontsize=7)
    ctx.figure("train_feasibility", fig)
    return out


def _se(values: list[float]) -> float:
    """Standard error of a mean over seeds (0 for one seed, where no spread is measured)."""
    return float(np.std(values, ddof=1) / np.sqrt(len(values))) if len(values) > 1 else 0.0


@zelda.summarizer
def _zelda_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    return {f"{key}_se": _se([m[key] for m in per_seed]) for key in ("fit_margin_kl", "fit_margin_c2st",
                                                                      "objective_margin")}


@experiment(
    PAPER,
    quick={"seeds": 2},
    smoke={"height": 7, "width": 9, "steps": 3, "batch_size": 4, "n_train": 10, "n_samples": 8},
    threads=1,
)
def blackbox_lambda(ctx, lams: list[float] = LAMS, height: int = 7, width: int = 9, n_train: int = 50,
                    n_samples: int = 100, steps: int = 60, batch_size: int = 8, latent_dim: int = 16,
                    weight: float = 1.0, lr: float = 1e-3) -> dict[str, float]:
    """The blackbox interpolation strength lambda (Vlastelica et al., 2020) chosen on validation levels.

    GenCO is trained as in ``zelda`` (the same training levels and initial generator for every lambda) and its
    samples are compared with ``n_samples`` fresh *validation* levels (their own stream, never the held-out levels
    the claims read): ``val_tile_kl[lam=<l>]`` and ``val_c2st[lam=<l>]``. The summary's ``chosen_lam`` is the lambda of
    the lowest mean validation tile KL; ``LAM`` (zelda's default) is set to it.
    """
    levels = random_levels(n_train, height, width, ctx.rng("levels"))
    validation = random_levels(n_samples, height, width, ctx.rng("validation levels"))
    solver, shape = zelda_milp(height, width), (height, width, one_hot(levels).shape[-1])
    out = {}
    for lam in lams:
        model = GenCO(MLPGenerator(latent_dim, shape, random_state=ctx.child_seed("generator")), solver, lam=lam,
                      individual_loss=wall_loss, weight=weight, steps=steps, batch_size=batch_size, lr=lr,
                      random_state=ctx.child_seed("genco")).fit(one_hot(levels))
        samples = model.sample(n_samples, ctx.torch_generator("samples"))
        out[labelled("val_tile_kl", lam=float(lam))] = tile_histogram_kl(samples, validation)
        out[labelled("val_c2st", lam=float(lam))] = c2st_accuracy(samples, validation,
                                                                  random_state=ctx.child_seed("c2st"))
        out[labelled("val_objective", lam=float(lam))] = float(wall_fraction(samples).mean())
    return out


@blackbox_lambda.summarizer
def _lambda_summary(per_seed: list[dict[str, float]]) -> dict[str, float]:
    lams = [labels["lam"] for labels, _ in select(per_seed[0], "val_tile_kl")]
    kl = [np.mean([m[labelled("val_tile_kl", lam=lam)] for m in per_seed]) for lam in lams]
    return {"chosen_lam": lams[int(np.argmin(kl))]}


@experiment(
    PAPER,
    null=RANDOM_GRADIENT,
    quick={"problems": 20, "grid": 12, "seeds": 1},
    full={"problems": 100, "grid": 24, "seeds": 3},
    smoke={"problems": 8, "grid": 6, "height": 5, "width": 6, "descent_steps": 20},
)
def solver_check(ctx, problems: int = 20, height: int = 7, width: int = 9, grid: int = 12,
                 descent_steps: int = 20, gradient_direction: str = "estimator") -> dict[str, float]:
    """The solver layer against direct solves on random costs, and each gradient estimator on a simple objective.

    (1) Zelda: ``SolverLayer`` forward on random costs against ``scipy.optimize.milp`` called directly on the same
    polytope (objective gap) and the BFS checker (feasibility). (2) Shortest path: the batched Dijkstra routine
    against the path MILP solved by HiGHS (objective gap, times). (3) Each estimator minimizes a random linear
    loss ``t^T x(c)`` of shortest paths by gradient descent on ``c``; we report the mean loss decrease, the share
    of problems whose loss went down, and whether every gradient was finite. ``gradient_direction="random"`` (the
    null) replaces each estimator's gradient by a random direction of the same norm per problem (keys unchanged).
    """
    import torch
    from scipy.optimize import Bounds, milp

    if gradient_direction not in ("estimator", "random"):
        raise ValueError(f"gradient_direction must be 'estimator' or 'random', got {gradient_direction!r}")
    rng = np.random.default_rng(ctx.child_seed("costs"))
    solver = zelda_milp(height, width)
    costs = rng.standard_normal((problems, height, width, 6))
    x = SolverLayer(solver)(torch.as_tensor(costs)).numpy()
    direct = [-milp(-np.r_[c.ravel(), np.zeros(solver.n_vars - solver.n_cost)], constraints=solver.constraints,
                    bounds=Bounds(solver.lb, solver.ub), integrality=solver.integrality).fun for c in costs]
    layer_obj = np.einsum("bi,bi->b", costs.reshape(problems, -1), x.reshape(problems, -1))
    out = {"zelda_forward_feasible": float(np.mean([is_playable(level) for level in x.argmax(-1)])),
           "zelda_forward_onehot": float(np.allclose(x.sum(-1), 1) and np.isin(x, (0.0, 1.0)).all()),
           "zelda_max_objective_gap": float(np.max(np.abs(layer_obj - np.asarray(direct))))}

    sp_costs = rng.uniform(0.1, 10.0, (problems, grid * grid))
    fast, exact = ShortestPathSolver(grid, grid, clip=True), shortest_path_milp(grid, grid)
    start = time.perf_counter()
    paths = fast.solve(sp_costs)
    out["sp_dijkstra_seconds"] = time.perf_counter() - start
    start = time.perf_counter()
    milp_paths = exact.solve(sp_costs)
    out["sp_milp_seconds"] = time.perf_counter() - start
    out["sp_speedup_time"] = out["sp_milp_seconds"] / max(out["sp_dijkstra_seconds"], 1e-9)
    out["sp_max_objective_gap"] = float(np.max(np.abs(fast.objective(sp_costs, paths)
                                                     - exact.objective(sp_costs, milp_paths))))

    target = torch.as_tensor(rng.uniform(-1, 1, (problems, grid * grid)))
    for name in ("blackbox", "perturbed", "identity"):
        layer = SolverLayer(fast, gradient=name, lam=5.0, sigma=1.0, samples=8, random_state=ctx.child_seed(name))
        c = torch.as_tensor(sp_costs).clone().requires_grad_(True)
        opt = torch.optim.SGD([c], lr=0.5)
        null_gen = ctx.torch_generator("random gradient", name)
        first, finite = None, True
        for _ in range(descent_steps):
            loss = (layer(c) * target).sum(1)  # a linear loss of each path
            first = loss.detach().clone() if first is None else first
            opt.zero_grad()
            loss.sum().backward()  # problems are independent: each gets its own full gradient
            finite &= bool(torch.isfinite(c.grad).all())
            if gradient_direction == "random":  # the null: the same step size, a direction ignoring the loss
                direction = torch.randn(c.shape, generator=null_gen, dtype=c.dtype)
                c.grad = direction * (c.grad.norm(dim=1, keepdim=True) / direction.norm(dim=1, keepdim=True))
            opt.step()
            with torch.no_grad():
                c.clamp_(min=0.0)  # Dijkstra needs costs >= 0
        with torch.no_grad():
            final = (layer(c) * target).sum(1)
        out[f"grad_{name}_finite"] = float(finite)
        out[f"grad_{name}_loss_decrease"] = float((first - final).mean())
        out[f"grad_{name}_improved"] = float((final < first - 1e-9).double().mean())
    return out
