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

from icml24._estimator import Estimator
from icml24._random import seed_int, spawn
from icml24._validation import FittedAttributes, check_positive, check_positive_int

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


#: The official classification agent, ``DQN("MlpPolicy", env, exploration_final_eps=0.6, buffer_size=10000,
#: exploration_initial_eps=1.0)``, with the other settings stable-baselines3 2.2.1 gave it (its defaults).
OFFICIAL_SB3_2_2_1: dict = {"learning_rate": 1e-4, "learning_starts": 50_000, "train_freq": 4, "batch_size": 32,
                            "buffer_size": 10_000, "exploration_fraction": 0.1, "exploration_initial_eps": 1.0,
                            "exploration_final_eps": 0.6, "gamma": 0.99, "target_update_interval": 10_000,
                            "net_arch": (64, 64)}


class DQNExplorer(FittedAttributes, Estimator):
    """Train an SB3 DQN on a ``FailureEnv`` (``fit``), then ``rollout`` episodes with the trained agent.

    Defaults are the paper's (epsilon 1.0 -> 0.6 over the first 10% of steps, buffer 10k) except, by our choice,
    ``learning_rate`` 1e-3, ``train_freq`` 1 and ``learning_starts`` 100, so that a budget of a few thousand queries
    (not 50k) trains the Q-network at all. ``official`` is the official configuration as it ran.
    ``random_state`` (None, an int or a numpy Generator) seeds training; stable-baselines3 takes an int seed, which
    is the int itself when ``random_state`` is one. Rollouts draw from an independent child stream unless given
    their own ``random_state``.
    """

    def __init__(self, total_timesteps: int = 50_000, exploration_initial_eps: float = 1.0,
                 exploration_final_eps: float = 0.6, exploration_fraction: float = 0.1, buffer_size: int = 10_000,
                 learning_rate: float = 1e-3, learning_starts: int = 100, train_freq: int = 1, batch_size: int = 32,
                 net_arch: tuple[int, ...] = (64, 64), gamma: float = 0.99, target_update_interval: int = 10_000,
                 random_state=None):
        self.total_timesteps = total_timesteps
        self.exploration_initial_eps, self.exploration_final_eps = exploration_initial_eps, exploration_final_eps
        self.exploration_fraction, self.buffer_size = exploration_fraction, buffer_size
        self.learning_rate, self.learning_starts, self.train_freq = learning_rate, learning_starts, train_freq
        self.batch_size, self.net_arch, self.random_state = batch_size, net_arch, random_state
        self.gamma, self.target_update_interval = gamma, target_update_interval

    def _check_params(self) -> None:
        check_positive_int("total_timesteps", self.total_timesteps)
        check_positive_int("buffer_size (the replay buffer must hold at least one transition)", self.buffer_size)
        check_positive_int("train_freq", self.train_freq)
        check_positive_int("batch_size", self.batch_size)
        check_positive_int("target_update_interval", self.target_update_interval)
        check_positive("learning_rate", self.learning_rate)
        check_positive("learning_starts", self.learning_starts, allow_zero=True)
        if not 0 <= self.exploration_final_eps <= self.exploration_initial_eps <= 1:
            raise ValueError("need 0 <= exploration_final_eps <= exploration_initial_eps <= 1, got "
                             f"{self.exploration_final_eps} and {self.exploration_initial_eps}")
        if not 0 < self.exploration_fraction <= 1:
            raise ValueError(f"exploration_fraction must lie in (0, 1], got {self.exploration_fraction}")
        if not 0 <= self.gamma <= 1:
            raise ValueError(f"gamma must lie in [0, 1], got {self.gamma}")
        for width in self.net_arch:
            check_positive_int("net_arch widths", width)

    @classmethod
    def official(cls, total_timesteps: int = 50_000, random_state=None) -> DQNExplorer:
        """The official configuration as it really runs (``OFFICIAL_SB3_2_2_1``): no gradient update before
        50,000 steps, so at the official 50k steps (and any smaller budget) the agent never learns."""
        return cls(total_timesteps=total_timesteps, random_state=random_state, **OFFICIAL_SB3_2_2_1)

    def fit(self, env: FailureEnv) -> DQNExplorer:
        """Learn for ``total_timesteps`` queries; ``training_`` holds them (the exploration they cost)."""
        from stable_baselines3 import DQN
        from stable_baselines3.common.logger import Logger

        if not isinstance(env, FailureEnv):
            raise TypeError(f"env must be a FailureEnv, got {type(env).__name__}")
        self._check_params()
        seed = seed_int(self.random_state)
        self.rollout_seed_ = seed_int(spawn(seed, 1)[0])  # rollouts' own stream, independent of training's
        env.reset_log()
        with preserved_global_rng():
            env.reset(seed=seed)
            env.action_space.seed(seed)
            model = DQN("MlpPolicy", env, learning_rate=self.learning_rate,
                        learning_starts=int(self.learning_starts), batch_size=int(self.batch_size),
                        train_freq=int(self.train_freq), buffer_size=int(self.buffer_size),
                        exploration_fraction=self.exploration_fraction,
                        exploration_initial_eps=self.exploration_initial_eps,
                        exploration_final_eps=self.exploration_final_eps, gamma=self.gamma,
                        target_update_interval=int(self.target_update_interval),
                        policy_kwargs={"net_arch": list(self.net_arch)}, seed=seed, verbose=0, device="cpu")
            model.set_logger(Logger(folder=None, output_formats=[]))  # no empty SB3-* folders in /tmp
            model.learn(int(self.total_timesteps))
        self.model_ = model
        self.n_updates_ = int(model._n_updates)  # gradient steps taken (0: the Q-network is its initialisation)
        self.training_ = ExplorationResult(*env.query_log())
        return self

    def q_softmax(self, observations: np.ndarray) -> np.ndarray:
        """softmax over actions of the Q-values at ``observations [n, d]`` (the landscape's "proxy" probability)."""
        obs = torch.as_tensor(np.asarray(observations, dtype=np.float32))
        with torch.no_grad():
            return torch.softmax(self.model_.policy.q_net(obs), dim=-1).numpy()

    def rollout(self, env: FailureEnv, episodes: int, deterministic: bool = False,
                random_state=None) -> ExplorationResult:
        """Run ``episodes`` episodes with the trained agent (stochastic by default, as the official evaluation);
        ``random_state`` seeds them (None: the rollout stream spawned at ``fit``)."""
        from stable_baselines3.common.utils import set_random_seed

        model = self.model_
        check_positive_int("episodes", episodes)
        seed = self.rollout_seed_ if random_state is None else seed_int(random_state)
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
