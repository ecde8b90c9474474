"""Record the official FailureShiftRL reward and its DQN as it runs under stable-baselines3 2.2.1
(tests/parity/failure-landscape.json).

    python tools/parity/record_failure_landscape.py   # needs ../peers/FailureShiftRL (a snapshot of
        # somsagar07/FailureShiftRL) and its _deps: pip install --target ../peers/FailureShiftRL/_deps --no-deps \\
        #   stable-baselines3==2.2.1 gymnasium==0.29.1   (the versions the saved agents name; torch is the venv's)

The official classification scripts cannot run offline: ``config.py`` downloads AlexNet weights and the scripts read
ImageNet-mini at import. What runs is recorded:

* ``reward``: the official ``get_reward`` (taken from ``Experiments/Classification/train RL.py`` by its syntax tree,
  so nothing else of the script executes), called with a stub network that returns fixed logits, a stub
  pre-processing transform, and labels / category names built so the official label parsing yields the class.
  Inputs: logits from ``numpy.random.default_rng(0)`` (64 rows, 10 classes, a third of them made confident) and
  labels from the same stream; both are stored in the fixture.
* ``dqn_settings``: ``DQN("MlpPolicy", env, verbose=0, exploration_final_eps=0.6, buffer_size=10000,
  exploration_initial_eps=1.0)`` exactly as the official ``train RL.py`` builds it (plus ``seed=0`` and CPU, for
  a reproducible record), under stable-baselines3 2.2.1 on our digits environment, trained 600 steps: its
  settings, its gradient updates (0: ``learning_starts`` is 50,000) and its training queries.
* ``saved_agents``: the settings the official saved agents (``Experiments/*/RL models/*.zip``; the classification
  agents are Git LFS objects absent from the snapshot) record.
"""

from __future__ import annotations

import ast
import io
import json
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _record import ROOT, commit_of, official_copy, write_fixture  # noqa: E402

NAME, MARKER = "FailureShiftRL", "Experiments/Classification/train RL.py"


def _official_functions(path: Path, names: tuple[str, ...], namespace: dict) -> dict:
    """Exec only the named top-level functions of an official script (its imports and training loop never run)."""
    tree = ast.parse(path.read_text())
    keep = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in names]
    exec(compile(ast.Module(body=keep, type_ignores=[]), str(path), "exec"), namespace)
    return {name: namespace[name] for name in names}


def _reward_inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((64, 10)).astype(np.float32)
    logits[::3] *= 8.0  # confident predictions: p near 1
    labels = rng.integers(10, size=64)
    labels[::4] = logits[::4].argmax(1)  # a quarter predicted correctly on purpose (reward -1)
    # the guard's regime: 1 - p from ~1e-5 down to ~1e-20, where 1e-7 in log(p / (1 - p + 1e-7)) decides the value
    guard = np.random.default_rng(1).standard_normal((24, 10)).astype(np.float32)
    guard *= np.repeat(np.float32([12.0, 20.0, 30.0, 45.0]), 6)[:, None]
    wrong = (guard.argmax(1) + 1 + np.arange(24) % 9) % 10  # every guard row a failure
    return np.concatenate([logits, guard]), np.concatenate([labels, wrong])


GUARD = 1e-7
TOLERANCE_DERIVATION = (
    "per entry, from float32's conditioning (no gap seen on any machine enters it): the official score is a float32 "
    "softmax probability p^ = fl32(softmax32(z)), then 10 |log(p^ / (1 - p^ + 1e-7))| in float64. With u = 2^-24, C "
    "classes, q = 1 - p and D = z_top - min(z): the float32 sum of C terms, the division and the exp give "
    "|p^ - p| <= gamma p, gamma = (C + 2 + q (D + 2)) u (each other term's exp argument is rounded to |z_j - z_top| u "
    "and weighs q). L(p) = log(p / (1 - p + 1e-7)) is increasing, so the entry's tolerance is "
    "10 max(L(min(1, p (1 + gamma))) - L(p), L(p) - L(p (1 - gamma))) + 4 eps64 (|reward| + 1), with p and q from "
    "the float64 logits (log-sum-exp). Non-failures are exactly -1 (tolerance 0). Near p = 1 one float32 step of p "
    "moves the reward by up to ~4.7 (the guard bounds 1/(1 - p)); dropping the guard moves it by 20-300 there.")


def float32_tolerance(logits: np.ndarray, failure: np.ndarray, scale: float = 10.0) -> np.ndarray:
    """Per-entry tolerance of the official float32 reward (TOLERANCE_DERIVATION), from the logits in float64."""
    z = logits.astype(np.float64)
    top = z.max(1, keepdims=True)
    log_total = top[:, 0] + np.log(np.exp(z - top).sum(1))
    p = np.exp(top[:, 0] - log_total)
    others = np.exp(z - log_total[:, None])
    others[np.arange(len(z)), z.argmax(1)] = 0.0
    q = others.sum(1)
    u, classes = 2.0 ** -24, z.shape[1]
    gamma = (classes + 2 + q * (top[:, 0] - z.min(1) + 2)) * u

    def log_odds(prob, rest):
        return np.log(prob) - np.log(rest + GUARD)

    value = log_odds(p, q)
    hi = np.minimum(1.0, p * (1 + gamma))
    up = log_odds(hi, np.maximum(q - (hi - p), 0.0)) - value
    down = value - log_odds(p * (1 - gamma), q + p * gamma)
    tolerance = scale * np.maximum(up, down) + 4 * np.finfo(np.float64).eps * (scale * np.abs(value) + 1)
    return np.where(failure, tolerance, 0.0)


def record_reward(copy: Path) -> dict:
    import torch
    from PIL import Image

    logits, labels = _reward_inputs()
    categories = [f"class{c}" for c in range(10)]

    class Fixed:  # the network under test: returns the case's logits whatever the image
        row = None

        def __call__(self, batch):
            return torch.from_numpy(self.row[None])

    namespace = {"np": np, "Image": Image, "index_dict": {c: [categories[c]] for c in range(10)},
                 "cfg": type("cfg", (), {"TRANSFORMS": staticmethod(lambda img: torch.zeros(3, 2, 2))})}
    fns = _official_functions(copy / MARKER, ("classifier_prediction", "get_reward"), namespace)
    model, image, values = Fixed(), Image.new("RGB", (4, 4)), []
    tick = time.perf_counter()
    for row, label in zip(logits, labels):
        model.row = row
        prediction = fns["classifier_prediction"](model, image)
        path = f"img_abcdefg{label}_x_y"  # the official parsing: path.split('_')[-3][7:] is the class id
        values.append(float(fns["get_reward"](model, image, categories[prediction], path)))
    seconds = time.perf_counter() - tick
    failure = np.array(values) != -1.0
    return {"name": "reward", "call": "Experiments/Classification/train RL.py: get_reward (classifier_prediction "
            "for the category), stub network returning fixed logits",
            "inputs": {"recipe": "numpy default_rng(0): standard normal logits [64, 10], every 3rd row x8; integer "
                       "labels, every 4th the argmax; then default_rng(1): standard normal [24, 10] scaled by 12, 20, "
                       "30, 45 (6 rows each), labels (argmax + 1 + row % 9) % 10 (failures in the guard's regime)",
                       "logits": logits.tolist(), "labels": labels.tolist()},
            "values": values, "tolerance": float32_tolerance(logits, failure).tolist(),
            "tolerance_derivation": TOLERANCE_DERIVATION, "official_seconds": seconds}


def _environment():

    from icml24.data import digits
    from icml24.rl.failures import FailureEnv, digit_concepts, train_classifier

    x, y, shape = digits()
    x = x.reshape(-1, *shape)
    order = np.random.default_rng(0).permutation(len(x))
    model = train_classifier(x[order[:800]], y[order[:800]], epochs=15, random_state=0)
    return FailureEnv(model, x[order[800:1000]], y[order[800:1000]], digit_concepts(), precompute=True)


ENV_RECIPE = ("digits, numpy default_rng(0) permutation: train_classifier(first 800, epochs=15, torch generator "
              "seed 0), FailureEnv on the next 200 with digit_concepts('mild'), precompute=True")


def record_dqn(steps: int = 600) -> dict:
    import stable_baselines3
    from stable_baselines3 import DQN
    from stable_baselines3.common.logger import Logger

    assert stable_baselines3.__version__ == "2.2.1", f"need stable-baselines3 2.2.1 in _deps, got " \
                                                     f"{stable_baselines3.__version__}"
    env = _environment()
    env.reset(seed=0)
    env.action_space.seed(0)
    agent = DQN("MlpPolicy", env, verbose=0, exploration_final_eps=0.6, buffer_size=10000,
                exploration_initial_eps=1.0, seed=0, device="cpu")  # the official call, seeded for the record
    agent.set_logger(Logger(folder=None, output_formats=[]))
    tick = time.perf_counter()
    agent.learn(steps)
    seconds = time.perf_counter() - tick
    actions, failures, _ = env.query_log()
    linears = [m for m in agent.q_net.q_net if hasattr(m, "out_features")]
    settings = {"learning_rate": agent.learning_rate, "learning_starts": agent.learning_starts,
                "train_freq": agent.train_freq.frequency, "batch_size": agent.batch_size,
                "buffer_size": agent.buffer_size, "gamma": agent.gamma, "tau": agent.tau,
                "gradient_steps": agent.gradient_steps, "target_update_interval": agent.target_update_interval,
                "exploration_fraction": agent.exploration_fraction,
                "exploration_initial_eps": agent.exploration_initial_eps,
                "exploration_final_eps": agent.exploration_final_eps, "max_grad_norm": agent.max_grad_norm,
                "net_arch": [m.out_features for m in linears[:-1]]}
    return {"name": "dqn_settings", "call": "stable_baselines3 2.2.1 DQN('MlpPolicy', env, verbose=0, "
            "exploration_final_eps=0.6, buffer_size=10000, exploration_initial_eps=1.0, seed=0, device='cpu')"
            f".learn({steps}) (the official train RL.py construction)",
            "inputs": {"environment": ENV_RECIPE, "steps": steps, "seed": 0},
            "values": {"settings": settings, "n_updates": int(agent._n_updates),
                       "exploration_rate_after": float(agent.exploration_rate),
                       "failures_per_query": float(failures.mean()), "actions": actions.tolist()},
            "tolerance": 0.0, "official_seconds": seconds}


def record_saved_agents(copy: Path) -> dict:
    keys = ("learning_starts", "_n_updates", "num_timesteps", "learning_rate", "buffer_size", "batch_size",
            "exploration_initial_eps", "exploration_final_eps", "exploration_fraction", "gamma",
            "target_update_interval")
    agents = {}
    for path in sorted(copy.glob("Experiments/*/RL models/*.zip")):
        with zipfile.ZipFile(path) as archive:
            data = json.load(io.BytesIO(archive.read("data")))
            info = archive.read("system_info.txt").decode()
        version = next(line.split(":")[1].strip() for line in info.splitlines() if "Stable-Baselines3" in line)
        agents[str(path.relative_to(copy))] = {"sb3": [int(v) for v in version.split(".")],
                                              **{k: float(data[k]) for k in keys}}
    return {"name": "saved_agents", "call": "the 'data' and 'system_info.txt' members of each saved agent's zip",
            "inputs": {"files": sorted(agents)}, "values": agents, "tolerance": 0.0}


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("reward", "dqn_settings", "saved_agents"),
                        help="re-record one case and keep the others as the fixture has them")
    args = parser.parse_args(argv)
    copy = official_copy(NAME, MARKER)
    recorders = {"reward": lambda: record_reward(copy), "dqn_settings": record_dqn,
                 "saved_agents": lambda: record_saved_agents(copy)}
    if args.only:
        kept = json.loads((ROOT / "tests" / "parity" / "failure-landscape.json").read_text())["cases"]
        cases = [recorders[c["name"]]() if c["name"] == args.only else c for c in kept]
    else:
        cases = [record() for record in recorders.values()]
    write_fixture("failure-landscape", "somsagar07/FailureShiftRL", commit_of(copy), cases,
                  notes="The classification scripts need AlexNet weights and ImageNet-mini (not offline): the reward "
                        "is the official get_reward called with a stub network; the DQN is the official construction "
                        "under stable-baselines3 2.2.1 on our digits environment; the classification agents' zips are "
                        "Git LFS objects absent from the snapshot, the 8 saved generation/summarization agents are "
                        "read. Recorded on CPU." + (f" Case {args.only!r} re-recorded alone on this date; the others "
                                                    "are kept from the earlier record." if args.only else ""))


if __name__ == "__main__":
    main()
