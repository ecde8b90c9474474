"""The model under test (NUT) and the paper's classification reward.

A failure is a top-1 prediction that differs from the label (the human expectation). Its reward is
``10 * |log(p / (1 - p + 1e-7))|`` with ``p`` the top-1 softmax probability, and ``-1`` otherwise (the official
classification experiments, ``train RL.py``): confident failures earn more.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from icml24._random import RandomState, torch_generator

from .adapter import as_classifier
from .inputs import check_labels, check_outputs, check_pool

FAILURE_SCALE = 10.0
NO_FAILURE_REWARD = -1.0
_GUARD = 1e-7


def failure_reward(logits: torch.Tensor, labels: torch.Tensor | np.ndarray,
                   scale: float = FAILURE_SCALE) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(reward, failure, prediction)`` per row of ``logits [n, classes]`` against integer ``labels [n]``.

    The reward is float64 and computed from the logits in float64 without forming ``p`` near 1:
    ``log p = z_top - lse(z)`` and ``log(1 - p + 1e-7) = logaddexp(lse(z_others) - lse(z), log 1e-7)``, so it does not
    hinge on how one CPU rounds a float32 probability (a float32 ``1 - p`` of 2.5e-5 is only good to ~2e-3 relative).
    """
    labels = check_labels(labels.cpu().numpy() if isinstance(labels, torch.Tensor) else labels)
    check_outputs(logits, labels, "logits")
    labels = torch.from_numpy(labels)
    z = logits.detach().to(torch.float64)
    prediction = z.argmax(dim=-1)
    failure = prediction != labels
    log_total = torch.logsumexp(z, dim=-1)
    others = z.scatter(-1, prediction[:, None], float("-inf"))  # every class but the top-1
    log_p = z.gather(-1, prediction[:, None])[:, 0] - log_total
    log_rest = torch.logsumexp(others, dim=-1) - log_total  # log(1 - p), -inf for a single class
    log_odds = log_p - torch.logaddexp(log_rest, torch.tensor(math.log(_GUARD), dtype=z.dtype))
    reward = torch.where(failure, scale * log_odds.abs(), torch.full_like(log_p, NO_FAILURE_REWARD))  # 10 |log p/(1-p)|
    return reward, failure, prediction


class DigitClassifier(nn.Module):
    """An MLP on ``[n, H, W]`` images: ``features`` (frozen when restructuring) then a linear ``head``.

    Weights ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)), biases ~ U(-0.05, 0.05), drawn from ``random_state`` (None, an int,
    a numpy Generator or a torch Generator, which is used as is; ``icml24._random.torch_generator``)."""

    def __init__(self, image_shape: tuple[int, int] = (8, 8), hidden: int = 64, num_classes: int = 10,
                 random_state: RandomState = None):
        super().__init__()
        size = int(np.prod(image_shape))
        self.image_shape = tuple(image_shape)
        self.features = nn.Sequential(nn.Flatten(), nn.Linear(size, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                      nn.ReLU())
        self.head = nn.Linear(hidden, num_classes)
        generator = torch_generator(random_state)
        with torch.no_grad():
            for p in self.parameters():
                bound = 1.0 / np.sqrt(p.shape[-1]) if p.ndim > 1 else 0.05
                p.uniform_(-bound, bound, generator=generator)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(images))


def train_classifier(images: np.ndarray, labels: np.ndarray, hidden: int = 64, epochs: int = 30,
                     lr: float = 1e-2, batch_size: int = 128, weight_decay: float = 1e-4,
                     random_state: RandomState = None) -> DigitClassifier:
    """Train a ``DigitClassifier`` with Adam on clean ``images [n, H, W]`` (the pre-trained NUT);
    ``random_state`` (None, an int, a numpy or a torch Generator) draws the initialization, then the batch orders."""
    x, labels = check_pool(images, labels)
    y = torch.from_numpy(labels)
    generator = torch_generator(random_state)  # one torch stream: the weights, then every epoch's order
    model = DigitClassifier(tuple(x.shape[1:]), hidden, int(labels.max()) + 1, random_state=generator)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    for _ in range(epochs):
        order = torch.randperm(len(x), generator=generator)
        for start in range(0, len(x), batch_size):
            idx = order[start:start + batch_size]
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model.eval()


@torch.no_grad()
def clean_accuracy(model, images: np.ndarray | torch.Tensor, labels: np.ndarray) -> float:
    """Clean top-1 accuracy of ``model`` (a torch module or a classifier with ``predict_proba``)."""
    x, y = check_pool(images, labels)
    logits = as_classifier(model)(x)
    check_outputs(logits, y)
    return float((logits.argmax(-1).numpy() == y).mean())
