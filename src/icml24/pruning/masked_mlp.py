"""K masked MLPs 2 -> d1 -> d2 -> d3 -> 1 trained at once (Zhang & Papyan, ICML 2024, Sec. 3.2 and App. B).

Every layer's weight is a tensor [K, out, in] and the forward pass is a ``torch.baddbmm`` per layer, so thousands
of masked networks (the combinatorial search's candidates, or one pruner over many seeds) train in one run. The
mask multiplies the weight in the forward pass, so a masked weight gets no gradient, no weight decay and no
momentum step: the same trajectory as the official loop, which zeroes masked weights before and after each step.
A hidden unit's bias is kept iff the unit has at least one outgoing weight (the paper's convention).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from icml24._random import RandomState, torch_generator
from icml24._validation import check_finite

from . import kernels


def _as_masks(masks, num_networks: int, shapes: list[tuple[int, int]]) -> list[torch.Tensor]:
    if masks is None:
        return [torch.ones(num_networks, o, i) for o, i in shapes]
    if len(masks) != len(shapes):
        raise ValueError(f"need one mask per layer ({len(shapes)}), got {len(masks)}")
    out = []
    for layer, (m, (o, i)) in enumerate(zip(masks, shapes)):
        m = torch.as_tensor(m).float()
        if m.dim() == 2 and tuple(m.shape) == (o, i):
            m = m.expand(num_networks, o, i)
        if tuple(m.shape) != (num_networks, o, i):
            raise ValueError(f"mask {layer} must be [{num_networks}, {o}, {i}] or [{o}, {i}], got {tuple(m.shape)}")
        if not bool(((m == 0) | (m == 1)).all()):
            raise ValueError(f"mask {layer} must hold only 0/1 entries")
        out.append(m.clone())
    return out


def check_data(x: torch.Tensor, y: torch.Tensor, num_in: int | None = None, name: str = "") -> None:
    """Points x [n, in] (finite) and labels y [n, 1] in {0, 1}, the same n; a ValueError says what to fix."""
    tag = f"{name} " if name else ""
    check_finite(f"{tag}x", x)
    check_finite(f"{tag}y", y)
    if x.dim() != 2 or (num_in is not None and x.shape[1] != num_in):
        raise ValueError(f"{tag}x must be [n, {num_in if num_in is not None else 'in'}], got {tuple(x.shape)}")
    if tuple(y.shape) != (len(x), 1):
        raise ValueError(f"{tag}y must be [n, 1] with n = {len(x)} (one 0/1 label per point), got {tuple(y.shape)}")
    if not bool(((y == 0) | (y == 1)).all()):
        raise ValueError(f"{tag}y must hold 0/1 labels")


class BatchedMaskedMLP(torch.nn.Module):
    """K independent MLPs ``widths = (2, d1, d2, d3, 1)`` with weights [K, out, in] and 0/1 masks of that shape.

    ``init_widths`` (default ``widths``) sets the fan-in of PyTorch's default ``nn.Linear`` init, U(+-1/sqrt(fan_in)):
    the official search masks neurons of a width-16 network, so its (3, 3, 3) candidates start from the width-16
    scale. ``random_state`` (``icml24._random.torch_generator``: an int seeds a torch Generator, a torch Generator
    is drawn from as is, advancing it) makes the K initialisations reproducible (network k's draws depend on K
    through the stream; use one stream per seed for seed-matched runs).
    """

    def __init__(self, widths: tuple[int, ...], num_networks: int = 1, masks=None, init_widths=None,
                 random_state: RandomState = None):
        super().__init__()
        widths = tuple(int(w) for w in widths)
        if len(widths) < 2 or min(widths) < 1:
            raise ValueError(f"widths must list >= 2 positive layer sizes, got {widths}")
        if int(num_networks) < 1:
            raise ValueError(f"num_networks must be >= 1, got {num_networks}")
        init_widths = tuple(int(w) for w in (init_widths or widths))
        if len(init_widths) != len(widths) or any(a < b for a, b in zip(init_widths, widths)):
            raise ValueError(f"init_widths {init_widths} must have the layout of widths {widths} and be >= it")
        generator = torch_generator(random_state)
        self.widths, self.num_networks = widths, int(num_networks)
        self.shapes = [(widths[i + 1], widths[i]) for i in range(len(widths) - 1)]
        self.weights = torch.nn.ParameterList()
        self.biases = torch.nn.ParameterList()
        for (o, i), fan_in in zip(self.shapes, init_widths[:-1]):
            bound = 1.0 / math.sqrt(fan_in)  # nn.Linear default (kaiming_uniform with a = sqrt(5))
            w = (torch.rand(self.num_networks, o, i, generator=generator) * 2 - 1) * bound
            b = (torch.rand(self.num_networks, o, generator=generator) * 2 - 1) * bound
            self.weights.append(torch.nn.Parameter(w))
            self.biases.append(torch.nn.Parameter(b))
        self.set_masks(masks)

    @property
    def num_layers(self) -> int:
        return len(self.shapes)

    def set_masks(self, masks, zero: bool = True) -> None:
        """Install weight masks (list of [K, out, in] or [out, in]); bias masks follow: unit kept iff it has an
        outgoing weight (the output unit's bias is always kept). Masked weights and biases are zeroed unless
        ``zero=False`` (a pruner that may revive weights scores under a trial mask)."""
        self.masks = _as_masks(masks, self.num_networks, self.shapes)
        self.bias_masks = [(self.masks[l + 1].sum(1) > 0).float() for l in range(self.num_layers - 1)]
        self.bias_masks.append(torch.ones(self.num_networks, self.shapes[-1][0]))
        if zero:
            with torch.no_grad():
                for w, b, m, bm in zip(self.weights, self.biases, self.masks, self.bias_masks):
                    w.mul_(m)
                    b.mul_(bm)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits [K, B, out] for inputs x [B, in] (shared) or [K, B, in]."""
        if x.dim() not in (2, 3) or x.shape[-1] != self.widths[0] or (x.dim() == 3 and len(x) != self.num_networks):
            raise ValueError(f"x must be [B, {self.widths[0]}] or [{self.num_networks}, B, {self.widths[0]}], "
                             f"got {tuple(x.shape)}")
        h = x.unsqueeze(0).expand(self.num_networks, *x.shape) if x.dim() == 2 else x
        for layer, (w, b, m, bm) in enumerate(zip(self.weights, self.biases, self.masks, self.bias_masks)):
            h = torch.baddbmm((b * bm).unsqueeze(1), h, (w * m).transpose(1, 2))
            if layer < self.num_layers - 1:
                h = torch.relu(h)
        return h

    def weight_nnz(self) -> torch.Tensor:
        """Nonzero weights per network [K] (all layers incl. the classifier, biases excluded: official 'Weight NNZ')."""
        return sum((m * (w != 0)).sum((1, 2)) for w, m in zip(self.weights, self.masks))

    def effective_weights(self) -> list[torch.Tensor]:
        """Masked weights, detached: list of [K, out, in]."""
        return [(w * m).detach() for w, m in zip(self.weights, self.masks)]

    @torch.no_grad()
    def accuracy(self, x: torch.Tensor, y: torch.Tensor, chunk: int = 8192) -> torch.Tensor:
        """Per-network accuracy [K] of sign(logit) against 0/1 labels y [B, 1]."""
        check_data(x, y, self.widths[0])
        correct = torch.zeros(self.num_networks)
        for start in range(0, len(x), chunk):
            logits = self(x[start:start + chunk])
            correct += ((logits > 0).float() == y[start:start + chunk].unsqueeze(0)).float().sum((1, 2))
        return correct / len(x)

    @torch.no_grad()
    def xavier_normal_(self, random_state: RandomState = None) -> BatchedMaskedMLP:
        """Re-draw every weight from N(0, 2 / (fan_in + fan_out)) (``nn.init.xavier_normal_``), biases kept, masks
        reapplied: what the official random-init runs do to the network before SNIP and GraSP score it."""
        generator = torch_generator(random_state)
        for w, (o, i) in zip(self.weights, self.shapes):
            w.copy_(torch.randn(w.shape, generator=generator) * math.sqrt(2.0 / (o + i)))
        self.set_masks(self.masks)
        return self

    def snapshot(self) -> dict[str, list[torch.Tensor]]:
        """Copies of the weights and biases (for rewinding)."""
        return {"weights": [w.detach().clone() for w in self.weights],
                "biases": [b.detach().clone() for b in self.biases]}

    @torch.no_grad()
    def load_snapshot(self, state: dict[str, list[torch.Tensor]]) -> None:
        for p, v in zip(list(self.weights) + list(self.biases), state["weights"] + state["biases"]):
            p.copy_(v)
        self.set_masks(self.masks)


def lr_at(epoch: int, epochs: int, lr: float, schedule: str) -> float:
    """The paper's schedules, stepped per epoch: 'cosine' (CosineAnnealingLR, T_max = epochs), 'step' (x0.1 at
    ceil(30%) and ceil(60%) of the epochs) or 'constant'."""
    if schedule == "cosine":
        return lr * (1 + math.cos(math.pi * epoch / epochs)) / 2
    if schedule == "step":
        return lr * 0.1 ** sum(epoch >= math.ceil(epochs * p) for p in (0.3, 0.6))
    if schedule == "constant":
        return lr
    raise ValueError(f"schedule must be 'cosine', 'step' or 'constant', got {schedule!r}")


class PerNetworkSGD(torch.optim.Optimizer):
    """``torch.optim.SGD`` (momentum, weight decay, the buffer started at the first gradient) with one learning
    rate per network: ``lrs`` [K] scales row k of every parameter [K, ...], so one batch trains K settings."""

    def __init__(self, params, lrs: torch.Tensor, momentum: float = 0.9, weight_decay: float = 5e-4):
        super().__init__(params, {"momentum": float(momentum), "weight_decay": float(weight_decay)})
        self.lrs = torch.as_tensor(lrs, dtype=torch.float32)

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                d = p.grad.add(p, alpha=group["weight_decay"])  # g + lambda w
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = d.clone()  # v_0 = d_0, as torch.optim.SGD
                else:
                    state["momentum_buffer"].mul_(group["momentum"]).add_(d)  # v = mu v + d
                p.sub_(self.lrs.view(-1, *[1] * (p.dim() - 1)) * state["momentum_buffer"])  # w -= lr_k v


def _per_network(value, kind, num_networks: int) -> list:
    values = [value] * num_networks if isinstance(value, (str, int, float)) else list(value)
    if len(values) != num_networks:
        raise ValueError(f"{kind} must be one value or one per network ({num_networks}), got {len(values)}")
    return values


def train_batched(model: BatchedMaskedMLP, x: torch.Tensor, y: torch.Tensor, epochs: int = 50,
                  batch_size: int = 128, lr: float = 0.1, momentum: float = 0.9, weight_decay: float = 5e-4,
                  schedule: str = "cosine", random_state: RandomState = None, on_step=None,
                  fused: bool | None = None) -> BatchedMaskedMLP:
    """SGD (momentum, weight decay) with BCE-with-logits on all K networks at once, batches shared across networks.

    The loss is the sum over networks of each network's batch-mean loss, so network k's gradient equals its own
    single-network gradient. ``on_step(model, step, total_steps, batch=(x_b, y_b), optimizer=optimizer)`` runs
    before each step on its minibatch (GMP prunes there, RigL drops and grows). Masks are reapplied in the forward
    pass. ``lr`` and ``schedule`` may be one per network (the official grid of settings in one batch).
    ``fused`` (default: wherever it applies) computes the gradient and the SGD step with the numba kernel of
    ``kernels.py`` (equal to autograd and torch.optim.SGD within float32 rounding) instead of autograd through
    ``torch.baddbmm``; callbacks then get an optimizer holding the momentum buffers. ``random_state``
    (``icml24._random.torch_generator``: an int seeds a torch Generator, one is used as is) orders the minibatches.
    """
    check_data(x, y, model.widths[0])
    if batch_size < 1 or len(x) < batch_size:
        raise ValueError(f"batch_size must be in [1, {len(x)}] (the number of points), got {batch_size}")
    if epochs < 1:
        raise ValueError(f"epochs must be >= 1, got {epochs}")
    if not (0 <= momentum < 1 and 0 <= weight_decay < math.inf):
        raise ValueError(f"momentum must be in [0, 1) and weight_decay >= 0 (finite), got {momentum}, {weight_decay}")
    lrs = _per_network(lr, "lr", model.num_networks)
    schedules = _per_network(schedule, "schedule", model.num_networks)
    for value in lrs:
        if not (math.isfinite(float(value)) and float(value) > 0):
            raise ValueError(f"lr must be finite and > 0, got {value}")
    for name in set(schedules):
        lr_at(0, epochs, 1.0, name)  # an unknown schedule fails here, before any step
    if fused and not kernels.supported(model):
        raise ValueError("fused=True needs a 2-d1-d2-d3-1 float32 CPU model of widths <= "
                         f"{kernels.MAX_WIDTH}, got widths {model.widths}")
    fused = kernels.supported(model) if fused is None else bool(fused)
    generator = torch_generator(random_state)
    per_epoch = len(x) // batch_size  # drop_last=True
    total = epochs * per_epoch
    shared = len(set(lrs)) == 1 and len(set(schedules)) == 1
    if fused:  # gradient and SGD step in one numba pass per network; the same update as torch.optim.SGD
        stepper = kernels.FusedSGD(model, momentum, weight_decay)
        optimizer = stepper.state
    elif shared:
        optimizer = torch.optim.SGD(model.parameters(), lr=float(lrs[0]), momentum=momentum, weight_decay=weight_decay)
    else:
        optimizer = PerNetworkSGD(model.parameters(), torch.ones(model.num_networks), momentum, weight_decay)
    step = 0
    for epoch in range(epochs):
        rates = [lr_at(epoch, epochs, float(a), b) for a, b in zip(lrs, schedules)]
        if fused:
            rates = np.asarray(rates, np.float32)
        elif shared:
            for group in optimizer.param_groups:
                group["lr"] = rates[0]
        else:
            optimizer.lrs = torch.tensor(rates)
        order = torch.randperm(len(x), generator=generator)
        for i in range(per_epoch):
            idx = order[i * batch_size:(i + 1) * batch_size]
            if on_step is not None:
                on_step(model, step, total, batch=(x[idx], y[idx]), optimizer=optimizer)
            if fused:
                stepper.step(x[idx], y[idx], rates)
            else:
                logits = model(x[idx])
                target = y[idx].unsqueeze(0).expand_as(logits)
                loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, reduction="none")
                optimizer.zero_grad(set_to_none=False)
                loss.mean((1, 2)).sum().backward()
                optimizer.step()
            step += 1
    with torch.no_grad():  # weight decay never moves a masked weight, but keep them exactly zero for nnz counts
        for w, b, m, bm in zip(model.weights, model.biases, model.masks, model.bias_masks):
            w.mul_(m)
            b.mul_(bm)
    return model
