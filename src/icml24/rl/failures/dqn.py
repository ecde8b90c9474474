"""The deep-RL explorer: stable-baselines3 DQN with the paper's high exploration.

The official classification runs use ``DQN("MlpPolicy", exploration_initial_eps=1.0, exploration_final_eps=0.6,
buffer_size=10_000)`` for 50k steps, then roll out 5000 episodes with ``predict`` (stochastic: still 60% random)
to draw the landscape. Exploration stays high on purpose: the agent should map the landscape, not converge on one
failure. Every training step is a query of the model under test and is counted.
"""

from __future__ import annotations

import contextlib
import random

import numpy as np
import torch

from icml24._validation import FittedAttributes

from .environment import FailureEnv
from .result import ExplorationResult


@contextlib.contextmanager
def preserved_global_rng():
    """stable-baselines3 seeds ``random``, ``numpy`` and ``torch`` globally (and samples exploration from the global
    numpy stream): run it inside this block so the caller's global state is restored afterwards."""
    py_state, np_state = random.getstate(), np.random.get_state()
    with torch.random.fork_rng():
        try:
            yield
        finally:
            random.setstate(py_state)
            np.random.set_state(np_state)


class DQNExplorer(FittedAttributes):
    """Train an SB3 DQN on a :class:`FailureEnv` (``fit``), then ``rollout`` episodes with the trained agent.

    Defaults are the paper's (epsilon 1.0 -> 0.6 over the first 10% of steps, buffer 10k) except
    ``learning_rate``, ``train_freq`` and ``learning_starts``, raised / lowered so that a budget of a few thousand
    queries (not 50k) still trains the Q-network.
    """

    def __init__(self, total_timesteps: int = 50_000, exploration_initial_eps: float = 1.0,
                 exploration_final_eps: float = 0.6, exploration_fraction: float = 0.1, buffer_size: int = 10_000,
                 learning_rate: float = 1e-3, learning_starts: int = 100, train_freq: int = 1, batch_size: int = 32,
                 net_arch: tuple[int, ...] = (64, 64), seed: int = 0):
        if total_timesteps < 1:
            raise ValueError(f"total_timesteps must be >= 1, got {total_timesteps}")
        if not 0 <= exploration_final_eps <= exploration_initial_eps <= 1:
            raise ValueError("need 0 <= exploration_final_eps <= exploration_initial_eps <= 1, got "
                             f"{exploration_final_eps} and {exploration_initial_eps}")
        self.total_timesteps = int(total_timesteps)
        self.exploration_initial_eps, self.exploration_final_eps = exploration_initial_eps, exploration_final_eps
        self.exploration_fraction, self.buffer_size = exploration_fraction, buffer_size
        self.learning_rate, self.learning_starts, self.train_freq = learning_rate, learning_starts, train_freq
        self.batch_size, self.net_arch, self.seed = batch_size, tuple(net_arch), int(seed)

    def fit(self, env: FailureEnv) -> DQNExplorer:
        """Learn for ``total_timesteps`` queries; ``training_`` holds them (the exploration they cost)."""
        from stable_baselines3 import DQN
        from stable_baselines3.common.logger import Logger

        if not isinstance(env, FailureEnv):
            raise TypeError(f"env must be a FailureEnv, got {type(env).__name__}")
        env.reset_log()
        with preserved_global_rng():
            env.reset(seed=self.seed)
            env.action_space.seed(self.seed)
            model = DQN("MlpPolicy", env, learning_rate=self.learning_rate, buffer_size=self.buffer_size,
                        learning_starts=self.learning_starts, batch_size=self.batch_size, train_freq=self.train_freq,
                        exploration_fraction=self.exploration_fraction,
                        exploration_initial_eps=self.exploration_initial_eps,
                        exploration_final_eps=self.exploration_final_eps,
                        policy_kwargs={"net_arch": list(self.net_arch)}, seed=self.seed, verbose=0, device="cpu")
            model.set_logger(Logger(folder=None, output_formats=[]))  # no empty SB3-* folders in /tmp
            model.learn(self.total_timesteps)
        self.model_ = model
        self.training_ = ExplorationResult(*env.query_log())
        return self

    def q_softmax(self, observations: np.ndarray) -> np.ndarray:
        """softmax over actions of the Q-values at ``observations [n, d]`` (the landscape's "proxy" probability)."""
        obs = torch.as_tensor(np.asarray(observations, dtype=np.float32))
        with torch.no_grad():
            return torch.softmax(self.model_.policy.q_net(obs), dim=-1).numpy()

    def rollout(self, env: FailureEnv, episodes: int, deterministic: bool = False,
                seed: int | None = None) -> ExplorationResult:
        """Run ``episodes`` episodes with the trained agent (stochastic by default, as the official evaluation)."""
        from stable_baselines3.common.utils import set_random_seed

        model = self.model_
        if episodes < 1:
            raise ValueError(f"episodes must be >= 1, got {episodes}")
        seed = self.seed + 1 if seed is None else int(seed)
        env.reset_log()
        starts = []
        with preserved_global_rng():
            set_random_seed(seed)
            model.action_space.seed(seed)
            obs, _ = env.reset(seed=seed)
            for _ in range(episodes):
                starts.append(obs)
                done = False
                while not done:
                    action, _ = model.predict(obs, deterministic=deterministic)
                    obs, _, terminated, truncated, _ = env.step(int(action))
                    done = terminated or truncated
                obs, _ = env.reset()
        return ExplorationResult(*env.query_log(), q_softmax=self.q_softmax(np.stack(starts)))
