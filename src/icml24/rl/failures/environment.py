"""The failure-exploration environment (gymnasium API; the official code uses the old 4-tuple gym API).

* ``mode="macro"`` (macroscopic exploration, one-step episodes): the state is a clean image drawn from the pool,
  the action one combination of concept levels, the reward ``10 |log(p / (1 - p))|`` on a failure and ``-1``
  otherwise; every episode terminates after its step.
* ``mode="micro"`` (microscopic exploration): one action per concept, each adding the concept's ``micro_step`` to a
  cumulative perturbation of the clean image; the episode terminates at the first failure with reward
  ``10 |log(p / (1 - p))| - alpha * steps`` (alpha = 5 in the paper), ``-1`` per step before it, and is truncated
  after ``max_steps``.

Every step is one query of the model under test; ``query_log()`` returns them all (action, failure, reward).
``precompute=True`` (macro mode) evaluates every (action, image) pair once, batched, at construction, so a step is
a table lookup with the same outcome: the finite pool and grid make the whole environment a 125 x n table.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import torch

from icml24._validation import check_positive

from .adapter import as_classifier
from .concepts import ConceptGrid
from .inputs import check_outputs, check_pool
from .model import FAILURE_SCALE, failure_reward

MODES = ("macro", "micro")


class FailureEnv(gym.Env):
    """Explore ``model`` on ``images [n, H, W]`` (values in ``[0, 1]``) with ``labels [n]`` over ``grid``.

    ``model`` is a torch module returning class scores, or any fitted classifier with ``predict_proba`` (it sees
    each image flattened to one row; see ``as_classifier``)."""

    metadata = {"render_modes": []}

    def __init__(self, model, images: np.ndarray, labels: np.ndarray, grid: ConceptGrid,
                 mode: str = "macro", alpha: float = 5.0, max_steps: int = 20, scale: float = FAILURE_SCALE,
                 precompute: bool = False):
        super().__init__()
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if not isinstance(grid, ConceptGrid):
            raise TypeError(f"grid must be a ConceptGrid of actionable concepts, got {type(grid).__name__}")
        x, labels = check_pool(images, labels)
        if x.min() < 0 or x.max() > 1:
            raise ValueError("images must lie in [0, 1]; rescale them (digits: divide by 16)")
        model = as_classifier(model)
        check_positive("alpha", alpha, allow_zero=True)
        if max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        self.model = model.eval()
        with torch.no_grad():
            self.num_classes = check_outputs(self.model(x), labels)  # a model that cannot predict a label is refused
        self.images, self.labels, self.grid = x, labels, grid
        self.mode, self.alpha, self.max_steps, self.scale = mode, float(alpha), int(max_steps), float(scale)
        pixels = int(np.prod(x.shape[1:]))
        if mode == "macro":
            self.action_space = gym.spaces.Discrete(grid.num_actions)
            self.observation_space = gym.spaces.Box(0.0, 1.0, (pixels,), dtype=np.float32)
        else:
            self.action_space = gym.spaces.Discrete(grid.num_concepts)
            # the image plus each cumulative factor as a fraction of its largest reachable value
            self.observation_space = gym.spaces.Box(0.0, 1.0, (pixels + grid.num_concepts,), dtype=np.float32)
        self._table = self._precompute() if precompute and mode == "macro" else None
        self._index = 0
        self._factors = np.zeros(grid.num_concepts, dtype=np.float32)
        self._steps = 0
        self.reset_log()

    @torch.no_grad()
    def _precompute(self) -> dict[str, np.ndarray]:
        """Every (action, image) outcome in one batched pass: a step becomes a lookup with the same result."""
        n, actions = len(self.labels), np.arange(self.grid.num_actions)
        images = self.grid.perturb_actions(self.images.repeat(len(actions), 1, 1), np.repeat(actions, n))
        reward, failure, prediction = failure_reward(self.model(images), np.tile(self.labels, len(actions)),
                                                     self.scale)
        shape = (len(actions), n)
        return {"images": images.reshape(*shape, *self.images.shape[1:]), "reward": reward.reshape(shape).numpy(),
                "failure": failure.reshape(shape).numpy(), "prediction": prediction.reshape(shape).numpy()}

    # ------------------------------------------------------------------ log of queries
    def reset_log(self) -> None:
        self._log_actions: list[int] = []
        self._log_failures: list[bool] = []
        self._log_rewards: list[float] = []

    def query_log(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(actions, failures, rewards)`` of every step since the last ``reset_log``."""
        return (np.asarray(self._log_actions, dtype=np.int64), np.asarray(self._log_failures, dtype=bool),
                np.asarray(self._log_rewards, dtype=np.float64))

    # ------------------------------------------------------------------ gymnasium API
    def _observation(self, image: torch.Tensor) -> np.ndarray:
        flat = image.reshape(-1).numpy().astype(np.float32)
        if self.mode == "macro":
            return flat
        reach = self.grid.micro_steps * self.max_steps
        return np.concatenate([flat, np.clip(self._factors / reach, 0.0, 1.0)]).astype(np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if options and "index" in options:
            index = int(options["index"])
            if not 0 <= index < len(self.labels):
                raise ValueError(f"options['index'] must lie in [0, {len(self.labels)}), got {index}")
            self._index = index
        else:
            self._index = int(self.np_random.integers(len(self.labels)))
        self._factors = np.zeros(self.grid.num_concepts, dtype=np.float32)
        self._steps = 0
        return self._observation(self.images[self._index]), {"index": self._index}

    @torch.no_grad()
    def _query(self, values: np.ndarray) -> tuple[torch.Tensor, float, bool, int]:
        image = self.grid.perturb(self.images[self._index:self._index + 1], torch.from_numpy(values[None]))
        reward, failure, prediction = failure_reward(self.model(image), self.labels[self._index:self._index + 1],
                                                     self.scale)
        return image[0], float(reward[0]), bool(failure[0]), int(prediction[0])

    def step(self, action):
        if not self.action_space.contains(int(action)):
            raise ValueError(f"action {action} is outside {self.action_space}")
        action = int(action)
        self._steps += 1
        if self.mode == "macro" and self._table is not None:
            t, i = self._table, self._index
            image, reward = t["images"][action, i], float(t["reward"][action, i])
            failure, prediction = bool(t["failure"][action, i]), int(t["prediction"][action, i])
            terminated, truncated = True, False
        elif self.mode == "macro":
            image, reward, failure, prediction = self._query(self.grid.values[action])
            terminated, truncated = True, False
        else:
            self._factors[action] += self.grid.micro_steps[action]
            image, reward, failure, prediction = self._query(self._factors.copy())
            if failure:
                reward -= self.alpha * self._steps  # microscopic reward: 10 |logit| - alpha * steps
            terminated, truncated = failure, (not failure) and self._steps >= self.max_steps
        self._log_actions.append(action)
        self._log_failures.append(failure)
        self._log_rewards.append(reward)
        info = {"failure": failure, "prediction": prediction, "label": int(self.labels[self._index]),
                "index": self._index, "steps": self._steps, "factors": self._factors.copy()}
        return self._observation(image), reward, terminated, truncated, info
