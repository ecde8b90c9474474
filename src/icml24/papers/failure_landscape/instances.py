"""failure-landscape instances and oracles: the models under test of the family (our MLP, a small CNN, a random
forest, a logistic regression) and the two perfect stand-ins (an explorer that knows the exhaustive failure table; a
restructuring that removes the chosen failure mode and changes nothing else)."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from icml24.rl import ExplorationResult, as_classifier, train_classifier

#: the models under test (``nut``): the paper's NUTs are torch image models; ours sit beside two scikit-learn ones
NUTS = ("mlp", "cnn", "forest", "logistic")
#: the models whose last layer restructuring can fine-tune (a torch ``features`` module and an ``nn.Linear`` head)
TORCH_NUTS = ("mlp", "cnn")


class _OneChannel(nn.Module):
    """Images ``[n, H, W]`` (or flattened ``[n, H * W]``) as one-channel maps ``[n, 1, H, W]``."""

    def __init__(self, image_shape: tuple[int, int]):
        super().__init__()
        self.image_shape = tuple(image_shape)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return images.reshape(len(images), 1, *self.image_shape)


class DigitCNN(nn.Module):
    """A small CNN on ``[n, H, W]`` images: two 3x3 convolutions (16, 32 channels), a 2x2 max-pool and a hidden layer
    of 64 as ``features`` (which takes the images as they are, as restructuring calls it), then a linear ``head``
    (the layer restructuring fine-tunes). Weights and biases ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) from
    ``generator``; torch's own initialisation (global RNG) runs inside ``fork_rng`` and is overwritten."""

    def __init__(self, image_shape: tuple[int, int], num_classes: int, generator: torch.Generator):
        super().__init__()
        h, w = image_shape
        with torch.random.fork_rng(devices=[]):
            self.features = nn.Sequential(
                _OneChannel((h, w)), nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
                nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                nn.Linear(32 * (h // 2) * (w // 2), 64), nn.ReLU())
            self.head = nn.Linear(64, num_classes)
        with torch.no_grad():
            for module in self.modules():
                if isinstance(module, (nn.Conv2d, nn.Linear)):
                    bound = 1.0 / np.sqrt(module.weight[0].numel())
                    module.weight.uniform_(-bound, bound, generator=generator)
                    module.bias.uniform_(-bound, bound, generator=generator)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(images))


def train_cnn(images: np.ndarray, labels: np.ndarray, generator: torch.Generator, epochs: int = 30,
              lr: float = 3e-3, batch_size: int = 128, weight_decay: float = 1e-4) -> DigitCNN:
    """A ``DigitCNN`` trained with Adam on clean images (the schedule of our MLP's ``train_classifier``, a smaller
    learning rate); ``generator`` draws the initialisation, then every epoch's batch order."""
    x = torch.as_tensor(np.asarray(images), dtype=torch.float32)
    y = torch.as_tensor(np.asarray(labels), dtype=torch.long)
    model = DigitCNN(tuple(x.shape[1:]), int(y.max()) + 1, generator)
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


def model_under_test(ctx, nut: str, x_train: np.ndarray, y_train: np.ndarray):
    """The NUT of the family: our MLP ("mlp"), the small CNN ("cnn"), or a scikit-learn random forest ("forest",
    100 trees) or logistic regression ("logistic", issue 41) seeing each image flattened (through predict_proba)."""
    if nut not in NUTS:
        raise ValueError(f"nut must be one of {', '.join(NUTS)}, got {nut!r}")
    if nut == "mlp":
        return train_classifier(x_train, y_train, random_state=ctx.child_seed("nut"))
    if nut == "cnn":
        return train_cnn(x_train, y_train, ctx.torch_generator("nut", "cnn"))
    rows = x_train.reshape(len(x_train), -1)
    if nut == "forest":
        from sklearn.ensemble import RandomForestClassifier

        return RandomForestClassifier(n_estimators=100, n_jobs=1, random_state=ctx.child_seed("nut", "forest")).fit(
            rows, y_train)
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=1000).fit(rows, y_train)


def oracle_explore(env, failures: np.ndarray, budget: int, rng: np.random.Generator,
                   seed: int) -> tuple[ExplorationResult, ExplorationResult]:
    """The explorer that knows the exhaustive failure table ``failures [actions, images]`` (the oracle in the
    explorer's slot). Each of ``budget`` queries draws its image as every explorer does (``env.reset``) and plays a
    uniformly random action among those that fail on it (a uniformly random action where none does): only failing
    cells are queried where any exists. Returns (its queries, its landscape's queries): the landscape is the
    exhaustive table itself (every action on every image), so its ranking is the ground truth's."""
    num_actions, num_images = failures.shape
    env.reset_log()
    _, info = env.reset(seed=seed)
    for _ in range(budget):
        failing = np.flatnonzero(failures[:, info["index"]])
        action = int(rng.choice(failing)) if len(failing) else int(rng.integers(num_actions))
        env.step(action)
        _, info = env.reset()
    queries = ExplorationResult(*env.query_log())
    table = ExplorationResult(np.repeat(np.arange(num_actions), num_images), failures.reshape(-1),
                              np.zeros(failures.size))
    return queries, table


class ModeRemoved(nn.Module):
    """The perfect restructuring (the oracle in the restructuring's slot): ``model`` unchanged, except that on the
    chosen failure mode's perturbed versions of ``images`` it predicts the true label. The mode's failures are gone
    and nothing else moved (clean accuracy, every other action's failures). Inputs are recognised by their pixels
    rounded to 1e-4 (a pixel lies in [0, 1]; one perturbation's float32 rounding moves it by ~1e-7)."""

    def __init__(self, model, images: torch.Tensor, labels: np.ndarray, grid, mode: int):
        super().__init__()
        self.model = as_classifier(model)
        perturbed = grid.perturb_actions(images, np.full(len(images), int(mode)))
        self._labels = {self._key(row): int(label) for row, label in zip(perturbed, labels)}
        self.num_classes = int(np.max(labels)) + 1

    @staticmethod
    def _key(row: torch.Tensor) -> bytes:
        return np.round(row.detach().numpy().astype(np.float64), 4).tobytes()

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        scores = self.model(images).clone()
        for j, row in enumerate(images):
            label = self._labels.get(self._key(row))
            if label is not None:  # a confident, correct prediction on the mode's inputs
                scores[j] = -30.0
                scores[j, label] = 30.0
        return scores
