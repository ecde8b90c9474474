"""Record the Simformer's official denoising loss and reverse-SDE step on fixed inputs (tests/parity/simformer.json).

    python tools/parity/record_simformer.py      # needs ../peers/simformer (or $ICML24_PEERS), jax in its _deps

The official code is JAX (mackelab/simformer: ``src/probjax`` and ``src/scoresbibm``); its score transformer's
initialisation cannot be matched from torch, so every case uses a fixed analytic score function instead of a network
(``s(x, t) = -(x - 0.3) / (1 + sigma(t)^2)``, sigma from the official SDE), given to the official functions as their
``model_fn`` / ``score_fn``. The Gaussian draws come from JAX keys inside the official functions; they are re-drawn
here with the same key (``jax.random.normal(key, shape)``, what the official loss does) and stored, so that the test
can feed the same noise to ours.

Cases:

- ``loss_<sde>``: ``probjax.nn.loss_fn.denoising_score_matching_loss`` with the official ``init_sde_related`` mean,
  std and weight functions (the paper's VESDE sigma in [1e-4, 15], VPSDE beta in [0.01, 10]; ``rebalance_loss``
  False, the official training default; the weight reshaped to ``[B, 1, 1]`` as ``score_transformer.py`` does), on
  x0, times and condition masks from ``numpy.random.default_rng(35)``.
- ``em_step_<sde>_s<s>``: one Euler–Maruyama step of the official sampler: the drift and diffusion of
  ``AllConditionalScoreModel._init_backward_sde`` (bound to a stub holding the fixed score and the official SDE)
  passed to ``probjax.utils.sdeint._euler_maruyama_step_fn`` at reversed time ``s`` with ``dt = (T_max - T_min) /
  (500 - 1)``, the step of the official grid ``linspace(0, T_max - T_min, num_steps)``.
- ``time_grid_5``: the times ``t = T_max - s`` the official sampler visits for ``num_steps = 5``.
"""

from __future__ import annotations

import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _record import commit_of, official_copy, write_fixture  # noqa: E402

BATCH, N, SEED = 8, 4, 35
SDES = {"vesde": {"sigma_min": 1e-4, "sigma_max": 15.0}, "vpsde": {"beta_min": 0.01, "beta_max": 10.0}}
T_MIN, T_MAX, NUM_STEPS = 1e-5, 1.0, 500


def inputs() -> dict:
    """x0 [8, 4], times [8] in [T_MIN, T_MAX], condition masks [8, 4] (Bernoulli 0.3, one joint row)."""
    import numpy as np

    rng = np.random.default_rng(SEED)
    x0 = rng.normal(size=(BATCH, N))
    times = rng.uniform(T_MIN, T_MAX, size=BATCH)
    mask = rng.random((BATCH, N)) < 0.3
    mask[0] = False
    return {"x0": x0, "times": times, "mask": mask}


def _stub_flax() -> None:
    """haiku 0.0.11 (the official pin) imports flax in ``haiku.experimental``; flax is unused on these paths."""
    class _Any(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            if name[0].isupper():
                return type(name, (), {})
            return lambda *args, **kwargs: args[0] if args else None

    for name in ("flax", "flax.core", "flax.linen", "flax.errors", "flax.core.scope", "IPython", "IPython.display"):
        sys.modules.setdefault(name, _Any(name))
        sys.modules[name].__path__ = []
        if "." in name:
            parent, child = name.rsplit(".", 1)
            setattr(sys.modules[parent], child, sys.modules[name])


def main() -> None:
    path = official_copy("simformer", "src/probjax/probjax/nn/loss_fn.py")
    for sub in ("src/probjax", "src/scoresbibm"):
        sys.path.insert(0, str(path / sub))
    _stub_flax()
    import jax
    import numpy as np

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from probjax.nn.loss_fn import denoising_score_matching_loss
    from probjax.utils.sdeint import _euler_maruyama_step_fn
    from scoresbibm.methods.models import AllConditionalScoreModel
    from scoresbibm.methods.sde import init_sde_related

    data = inputs()
    x0, times, mask = (jnp.asarray(data[k]) for k in ("x0", "times", "mask"))
    recipe = {"generator": f"numpy.random.default_rng({SEED})", "order": "x0 normal (8, 4); times uniform(1e-5, 1) "
              "(8,); mask random (8, 4) < 0.3, row 0 all False", "score": "-(x - 0.3) / (1 + sigma(t)^2)"}
    cases = []
    for name, params in SDES.items():
        sde, t_min, t_max, weight_fn, _ = init_sde_related(np.asarray(x0), name=name, T_min=T_MIN, T_max=T_MAX,
                                                           **params)

        def score(t, x, sde=sde):  # x [..., N, 1], t broadcastable to [..., 1, 1]
            t = jnp.reshape(t, (-1, 1, 1))
            var = sde.marginal_variance(t, x0=jnp.ones_like(x))
            return -(x - 0.3) / (1.0 + var)

        key = jax.random.PRNGKey(SEED)
        eps = jax.random.normal(key, shape=x0[..., None].shape)
        loss = denoising_score_matching_loss(  # as the official trainer calls it: weight_fn(t).reshape(-1, 1, 1)
            None, key, times, x0[..., None], mask[..., None], model_fn=lambda params, t, x: score(t, x),
            mean_fn=sde.marginal_mean, std_fn=sde.marginal_stddev,
            weight_fn=lambda t, w=weight_fn: w(t).reshape(-1, 1, 1),
            rebalance_loss=False)
        cases.append({"name": f"loss_{name}", "call": "probjax.nn.loss_fn.denoising_score_matching_loss",
                      "inputs": {**recipe, **params, "T_min": T_MIN, "eps": np.asarray(eps[..., 0]).tolist(),
                                 "eps_from": f"jax.random.normal(PRNGKey({SEED}), (8, 4, 1)), x64"},
                      "values": float(loss), "tolerance": 1e-9, "rtol": 1e-9})

        stub = types.SimpleNamespace(sde=sde, T_max=t_max, params=None,
                                     score_fn=lambda params, t, x, *a, **k: score(t, x))
        dt = (t_max - t_min) / (NUM_STEPS - 1)
        for s in (0.0, 0.5, 0.99):
            steps, dws, seconds = [], [], 0.0
            for b in range(BATCH):
                drift, diffusion = AllConditionalScoreModel._init_backward_sde(stub, jnp.arange(N), mask[b], None,
                                                                                None)
                dw = jax.random.normal(jax.random.PRNGKey(SEED + b), (N,)) * jnp.sqrt(dt)
                y0 = jnp.where(mask[b], x0[b], 3.0 * x0[b])
                start = time.perf_counter()
                f0, g0 = drift(s, y0), diffusion(s, y0)
                y1, *_ = _euler_maruyama_step_fn(drift, diffusion, s, y0, f0, g0, dt, dw, None, True)
                y1.block_until_ready()
                seconds += time.perf_counter() - start
                steps.append(np.asarray(y1).tolist())
                dws.append(np.asarray(dw).tolist())
            cases.append({"name": f"em_step_{name}_s{s}", "call": "AllConditionalScoreModel._init_backward_sde + "
                          "probjax.utils.sdeint._euler_maruyama_step_fn (diagonal noise)",
                          "inputs": {**recipe, **params, "s": s, "t": t_max - s, "dt": dt,
                                     "y0": "where(mask, x0, 3 x0)", "dW": dws,
                                     "dW_from": f"jax.random.normal(PRNGKey({SEED} + row), (4,)) * sqrt(dt)"},
                          "values": steps, "tolerance": 1e-9, "rtol": 1e-9, "official_seconds": seconds})
    grid = T_MAX - np.asarray(jnp.linspace(0.0, T_MAX - T_MIN, 5))
    cases.append({"name": "time_grid_5", "call": "ScoreModel.sample: t = T_max - linspace(0, T_max - T_min, "
                  "num_steps)", "inputs": {"num_steps": 5, "T_min": T_MIN, "T_max": T_MAX},
                  "values": grid.tolist(), "tolerance": 1e-12,
                  "ours": np.linspace(T_MAX, T_MIN, 6).tolist(),
                  "deviation": "the official sampler visits num_steps times (num_steps - 1 Euler-Maruyama steps); "
                               "ours takes num_steps steps over num_steps + 1 times, one more step at equal "
                               "num_steps (same end points, step (T_max - T_min) / num_steps instead of / "
                               "(num_steps - 1))"})
    write_fixture("simformer", "mackelab/simformer", commit_of(path), cases, notes=(
        "JAX 64-bit on CPU. A fixed analytic score replaces the official score transformer (its haiku "
        "initialisation cannot be reproduced in torch); the loss, the SDE mean/std/weight functions, the backward "
        "drift/diffusion with the condition mask and the Euler-Maruyama update are the official code. The official "
        "JAX key draws (eps of the loss, dW of the step) are stored as inputs."))


if __name__ == "__main__":
    main()
