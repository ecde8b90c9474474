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
from _record import commit_of, official_copy, write_fixture  # noqa: E402

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
    logits[::3] *= 8.0  # confident predictions: p near 1, where the 1e-7 guard matters
    labels = rng.integers(10, size=64)
    labels[::4] = logits[::4].argmax(1)  # a quarter predicted correctly on purpose (reward -1)
    return logits, labels


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
    return {"name": "reward", "call": "Experiments/Classification/train RL.py: get_reward (classifier_prediction "
            "for the category), stub network returning fixed logits",
            "inputs": {"recipe": "numpy default_rng(0): standard normal logits [64, 10], every 3rd row x8; integer "
                       "labels, every 4th the argmax", "logits": logits.tolist(), "labels": labels.tolist()},
            "values": values, "tolerance": 1e-4, "rtol": 1e-5, "official_seconds": seconds}


def _environment():
    import torch

    from icml24.data import digits
    from icml24.rl.failures import FailureEnv, digit_concepts, train_classifier

    x, y, shape = digits()
    x = x.reshape(-1, *shape)
    order = np.random.default_rng(0).permutation(len(x))
    model = train_classifier(x[order[:800]], y[order[:800]], epochs=15, generator=torch.Generator().manual_seed(0))
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


def main() -> None:
    copy = official_copy(NAME, MARKER)
    cases = [record_reward(copy), record_dqn(), record_saved_agents(copy)]
    write_fixture("failure-landscape", "somsagar07/FailureShiftRL", commit_of(copy), cases,
                  notes="The classification scripts need AlexNet weights and ImageNet-mini (not offline): the reward "
                        "is the official get_reward called with a stub network; the DQN is the official construction "
                        "under stable-baselines3 2.2.1 on our digits environment; the classification agents' zips are "
                        "Git LFS objects absent from the snapshot, the 8 saved generation/summarization agents are "
                        "read. Recorded on CPU.")


if __name__ == "__main__":
    main()
