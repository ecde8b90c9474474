"""Digit-task merging settings (the first two stand-ins of the TALL-masks reproduction), outside the paper's regime.

Two small MLP backbones on scikit-learn's 8x8 digits and derived tasks (``icml24.data.image_tasks``):

* ``BroadBase``: a backbone pre-trained on a broad mixture of digit variants (``build_broad_base``,
  meant for a cache), then lightly fine-tuned per held-out task with SGD;
* ``SmallPretrained``: a backbone pre-trained on the digits alone, then fine-tuned for epochs per task
  ("large, conflicting task vectors").

Each task's frozen head is the base's digit classifier averaged through the task's label map (as CLIP derives
zero-shot heads from text); only the backbone is merged. ``DigitsEvaluator`` scores a flat backbone vector.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn
from torch.func import functional_call

from icml24._random import RandomState, torch_generator
from icml24.data import (
    TASK_SPECS,
    ImageTask,
    image_tasks,
    label_map,
    load_source,
    pretraining_mixture,
    pretraining_specs,
    split_indices,
)

from .task_vectors import StateDictLayout

GeneratorFor = Callable[[int], torch.Generator]  # task index -> its fine-tuning stream


def _linear(in_features: int, out_features: int, generator: torch.Generator | None = None) -> nn.Linear:
    """``nn.Linear`` with PyTorch's default init drawn from ``generator`` (``skip_init``: the global RNG is left
    alone); without a generator the weights stay uninitialized (the caller overwrites them)."""
    layer = nn.utils.skip_init(nn.Linear, in_features, out_features)
    if generator is not None:
        bound = 1.0 / math.sqrt(in_features)
        with torch.no_grad():
            layer.weight.uniform_(-bound, bound, generator=generator)
            layer.bias.uniform_(-bound, bound, generator=generator)
    return layer


class Backbone(nn.Module):
    """``depth`` ReLU layers of width ``hidden``, PyTorch's default init drawn from ``random_state``
    (``icml24._random.torch_generator``; the global generator is left alone)."""

    def __init__(self, num_features: int, hidden: int, random_state: RandomState = None, depth: int = 2):
        super().__init__()
        generator = torch_generator(random_state)
        sizes = [num_features] + [hidden] * depth
        self.layers = nn.Sequential(*[layer for fan_in, fan_out in zip(sizes[:-1], sizes[1:])
                                      for layer in (_linear(fan_in, fan_out, generator), nn.ReLU())])

    def forward(self, x):
        return self.layers(x)


def train(backbone: nn.Module, head: nn.Module, x: torch.Tensor, y: torch.Tensor, epochs: int, lr: float,
          random_state: RandomState = None, noise: float = 0.0, batch_size: int = 64, optimizer: str = "adam") -> None:
    """Minibatch Adam or SGD with momentum on the backbone (and the head when it requires grad); minibatch order
    and input noise drawn from ``random_state`` (a torch Generator is used as is, so a caller's stream advances)."""
    if optimizer not in ("adam", "sgd"):
        raise ValueError(f"optimizer must be 'adam' or 'sgd', got {optimizer!r}")
    generator = torch_generator(random_state)
    params = [p for p in list(backbone.parameters()) + list(head.parameters()) if p.requires_grad]
    opt = torch.optim.Adam(params, lr=lr) if optimizer == "adam" else torch.optim.SGD(params, lr=lr, momentum=0.9)
    for _ in range(epochs):
        order = torch.randperm(len(y), generator=generator)
        for start in range(0, len(y), batch_size):
            idx = order[start:start + batch_size]
            inputs = x[idx] + noise * torch.randn(x[idx].shape, generator=generator) if noise > 0 else x[idx]
            loss = nn.functional.cross_entropy(head(backbone(inputs)), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()


def derived_head(base_head: nn.Linear, spec: str, num_classes: int) -> nn.Linear:
    """A frozen task head from the pre-trained classifier: task class ``c`` gets the mean weight row of the
    source digits the task's label map sends to ``c``."""
    mapped = torch.from_numpy(label_map(spec, base_head.out_features))
    assign = torch.zeros(num_classes, base_head.out_features)
    assign[mapped, torch.arange(base_head.out_features)] = 1.0
    assign /= assign.sum(dim=1, keepdim=True).clamp(min=1.0)
    head = _linear(base_head.in_features, num_classes)
    with torch.no_grad():
        head.weight.copy_(assign @ base_head.weight)
        head.bias.copy_(assign @ base_head.bias)
    head.requires_grad_(False)
    return head


class DigitsEvaluator:
    """Accuracy of a flat backbone vector on a task's split, with the task's frozen head."""

    def __init__(self, backbone: nn.Module, layout: StateDictLayout, heads: list[nn.Module], tasks: list[ImageTask]):
        self.backbone, self.layout, self.heads = backbone, layout, heads
        self.data = {split: [(torch.from_numpy(getattr(t, f"x_{split}")), torch.from_numpy(getattr(t, f"y_{split}")))
                             for t in tasks] for split in ("val", "test")}

    @torch.no_grad()
    def accuracy(self, vector: torch.Tensor, task: int, split: str = "val") -> float:
        x, y = self.data[split][task]
        logits = self.heads[task](functional_call(self.backbone, self.layout.unflatten(vector), (x,)))
        return float((logits.argmax(dim=1) == y).float().mean())


class _Setting:
    """Shared by the digit settings: the problem the merging methods meet (a backbone, its tasks and heads)."""

    KIND = "environment"  # icml24._contract

    def _flat(self, finetuned: list[dict]):
        self.backbone.load_state_dict(self.base_state)
        layout = StateDictLayout.from_state_dict(self.base_state)
        ev = DigitsEvaluator(self.backbone, layout, self.heads, self.tasks)
        return layout.flatten(self.base_state), layout.flatten_many(finetuned), ev


class SmallPretrained(_Setting):
    """A 2-layer backbone and digit head pre-trained on the digits alone (``random_state``: init, minibatches and
    noise, one torch stream), the tasks on one split."""

    def __init__(self, source: str, num_tasks: int, hidden: int, pretrain_epochs: int, split_seed: int,
                 random_state: RandomState = None):
        generator = torch_generator(random_state)
        self.tasks = image_tasks(source, TASK_SPECS[:num_tasks], random_state=split_seed)
        x, y, _ = load_source(source)
        train_idx, _, _ = split_indices(len(y), split_seed)
        self.backbone = Backbone(x.shape[1], hidden, generator)
        base_head = _linear(hidden, int(y.max()) + 1, generator)
        train(self.backbone, base_head, torch.from_numpy(x[train_idx]), torch.from_numpy(y[train_idx]),
              pretrain_epochs, 1e-3, generator, noise=0.1)
        self.base_state = {k: v.clone() for k, v in self.backbone.state_dict().items()}
        self.heads = [derived_head(base_head, task.name, task.num_classes) for task in self.tasks]

    def finetune(self, epochs: int, lr: float, optimizer: str, generator_for: GeneratorFor):
        """Fine-tune the whole backbone per task from theta_0; ``(theta_0 [P], theta_t [T, P], evaluator)``."""
        finetuned = []
        for t, task in enumerate(self.tasks):
            self.backbone.load_state_dict(self.base_state)
            train(self.backbone, self.heads[t], torch.from_numpy(task.x_train), torch.from_numpy(task.y_train),
                  epochs, lr, generator_for(t), optimizer=optimizer)
            finetuned.append({k: v.clone() for k, v in self.backbone.state_dict().items()})
        return self._flat(finetuned)


def build_broad_base(source: str, hidden: int, depth: int, epochs: int, num_permutations: int, split_seed: int,
                     random_state: RandomState = None) -> dict:
    """Pre-train the backbone on the broad mixture (one 10-class head per spec); a dict of tensors for a cache.
    Init, minibatches and noise come from one torch stream of ``random_state``."""
    generator = torch_generator(random_state)
    x, y, _ = load_source(source)
    train_idx, _, _ = split_indices(len(y), split_seed)
    specs = pretraining_specs(num_permutations)
    xs, ys = (torch.from_numpy(a) for a in pretraining_mixture(source, specs, train_idx))
    backbone = Backbone(xs.shape[2], hidden, generator, depth)
    heads = nn.Parameter(torch.randn(len(specs), 10, hidden, generator=generator) / math.sqrt(hidden))
    optimizer = torch.optim.Adam(list(backbone.parameters()) + [heads], lr=1e-3)
    for _ in range(epochs):  # each step: a minibatch of 32 images under every spec of the mixture
        order = torch.randperm(xs.shape[1], generator=generator)
        for start in range(0, len(order), 32):
            idx = order[start:start + 32]
            inputs = xs[:, idx] + 0.1 * torch.randn(xs[:, idx].shape, generator=generator)
            features = backbone(inputs.reshape(-1, xs.shape[2])).reshape(len(specs), len(idx), hidden)
            logits = torch.einsum("kbh,kch->kbc", features, heads)
            loss = nn.functional.cross_entropy(logits.reshape(-1, 10), ys[:, idx].reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return {"backbone": backbone.state_dict(), "digit_head": heads.detach()[specs.index("identity")].clone(),
            "split_seed": split_seed, "final_loss": float(loss.detach())}


class BroadBase(_Setting):
    """The broadly pre-trained backbone ``built`` by ``build_broad_base``, its held-out tasks and fine-tuning."""

    def __init__(self, built: dict, source: str, num_tasks: int, hidden: int, depth: int):
        self.tasks = image_tasks(source, TASK_SPECS[:num_tasks], random_state=int(built["split_seed"]))
        self.backbone = Backbone(self.tasks[0].num_features, hidden, 0, depth)  # the weights are loaded next
        self.backbone.load_state_dict(built["backbone"])
        self.base_state = {k: v.clone() for k, v in built["backbone"].items()}
        digit_head = _linear(hidden, 10)
        with torch.no_grad():
            digit_head.weight.copy_(built["digit_head"])
            digit_head.bias.zero_()
        self.heads = [derived_head(digit_head, task.name, task.num_classes) for task in self.tasks]

    def finetune(self, steps: int, lr: float, generator_for: GeneratorFor, batch_size: int = 64):
        """SGD (momentum 0.9) on the whole backbone for ``steps`` minibatches per task, heads frozen; returns
        ``(theta_0 [P], theta_t [T, P], evaluator)``."""
        finetuned = []
        for t, task in enumerate(self.tasks):
            self.backbone.load_state_dict(self.base_state)
            generator = generator_for(t)
            x, y = torch.from_numpy(task.x_train), torch.from_numpy(task.y_train)
            optimizer = torch.optim.SGD(self.backbone.parameters(), lr=lr, momentum=0.9)
            for _ in range(steps):
                idx = torch.randint(len(y), (batch_size,), generator=generator)
                loss = nn.functional.cross_entropy(self.heads[t](self.backbone(x[idx])), y[idx])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            finetuned.append({k: v.clone() for k, v in self.backbone.state_dict().items()})
        return self._flat(finetuned)
