"""A per-cell attribute classifier: the evaluator of attribute binding (the BLIP-VQA stand-in of T2I-CompBench).

Each object slot of a scene (the planner's region for that many objects) is cropped to the 8 x 8 window around its
centre, pixels outside the region blanked to the background, and classified into one of the 12 entities (colour x
shape) or "none". Two readings of a prompt's objects (``binding_scores``): *in place*, the slot shows the prompt's
entity for it (binding and placement); *anywhere*, some slot shows that exact colour-shape pair (binding alone, as a
VQA question "a red circle?" asks it). Trained on procedurally drawn crops with jitter, pixel noise and blur, so
that it reads imperfect generations; its accuracy on held-out drawn crops is reported.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from icml24._estimator import Estimator
from icml24._random import check_random_state
from icml24._validation import FittedAttributes, check_finite

from .scenes import OBJECTS, object_boxes, render_jittered, single_places

NONE = len(OBJECTS)  # the "no recognisable object" class


def crop_slots(images: torch.Tensor, num_objects: int) -> torch.Tensor:
    """(B, 3, 16, 16) -> (B, num_objects, 3, 8, 8): the window around each object slot, reading order."""
    return _crop(images, object_boxes(num_objects, images.shape[-1]))


def _crop(images: torch.Tensor, boxes: list[tuple[int, int, int, int]]) -> torch.Tensor:
    """The 8 x 8 window centred on each box (the canvas padded with background), blank outside the box, so a crop
    sees its own region only."""
    padded = F.pad(images, (4, 4, 4, 4), value=-1.0)
    out = []
    for t, b, left, r in boxes:
        top, start = int(round((t + b) / 2 - 4)), int(round((left + r) / 2 - 4))
        window = padded[:, :, top + 4:top + 12, start + 4:start + 12].clone()
        rows, cols = torch.arange(top, top + 8), torch.arange(start, start + 8)
        inside = ((rows >= t) & (rows < b))[:, None] & ((cols >= left) & (cols < r))[None]
        out.append(torch.where(inside, window, torch.full_like(window, -1.0)))
    return torch.stack(out, dim=1)


def _training_crops(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    crops, labels = np.empty((n, 3, 8, 8), dtype=np.float32), np.empty(n, dtype=np.int64)
    for i in range(n):
        label = int(rng.integers(0, NONE + 1))
        if label == NONE:
            canvas = -np.ones((3, 16, 16))
            if rng.random() < 0.5:  # a faint or fragmentary blob is still "none"
                canvas += rng.uniform(0, 0.6) * (rng.random((3, 16, 16)) < 0.15)
        elif rng.random() < 0.5:  # an object shrunk into a 5- or 6-pixel-wide region (3 or 5 objects)
            width = int(rng.integers(5, 7))
            canvas = render_jittered([OBJECTS[label]], rng, slots=[2], jitter=1.0, scale=width / 7.0)
            left = int(rng.integers(1, 9 - width))
            canvas[:, :, :left] = -1.0
            canvas[:, :, left + width:8] = -1.0
        else:
            canvas = render_jittered([OBJECTS[label]], rng, slots=[2], jitter=1.0)  # slot 2: top-left quadrant
        crop = canvas[:, 0:8, 0:8]
        crop = crop + rng.normal(0, rng.uniform(0, 0.25), crop.shape)  # generation noise
        crops[i], labels[i] = np.clip(crop, -1, 1), label
    return crops, labels


class CellClassifier(FittedAttributes, Estimator):
    """A two-conv CNN over 8 x 8 crops with 13 classes (12 entities + none); ``random_state`` (None, an int or a
    numpy Generator) draws its training crops and initialization."""

    def __init__(self, num_train: int = 6000, epochs: int = 6, lr: float = 3e-3, random_state=None):
        self.num_train, self.epochs, self.lr, self.random_state = num_train, epochs, lr, random_state

    @staticmethod
    def _net() -> nn.Module:
        return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 16, 64), nn.ReLU(),
                             nn.Linear(64, NONE + 1))

    def fit(self) -> CellClassifier:
        """Train on freshly drawn crops; ``holdout_accuracy_`` is measured on 1000 more."""
        rng = check_random_state(self.random_state)
        x, y = _training_crops(self.num_train, rng)
        xt, yt = torch.as_tensor(x), torch.as_tensor(y)
        with torch.random.fork_rng():
            torch.manual_seed(int(rng.integers(0, 2**31 - 1)))
            net = self._net()
            opt = torch.optim.Adam(net.parameters(), lr=self.lr)
            for _ in range(self.epochs):
                for idx in torch.randperm(len(xt)).split(128):
                    batch = xt[idx]
                    if torch.rand(()) < 0.5:  # blur augmentation: generated shapes are soft
                        batch = F.avg_pool2d(F.pad(batch, (1, 1, 1, 1), mode="replicate"), 3, stride=1) * 0.5 \
                            + batch * 0.5
                    loss = F.cross_entropy(net(batch), yt[idx])
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
        self.net_ = net.eval().requires_grad_(False)
        hx, hy = _training_crops(1000, rng)
        self.holdout_accuracy_ = float((self.predict_crops(torch.as_tensor(hx)) == torch.as_tensor(hy))
                                       .float().mean())
        return self

    def state(self) -> dict:
        return {"weights": self.net_.state_dict(), "holdout_accuracy": self.holdout_accuracy_,
                "config": {"num_train": self.num_train, "epochs": self.epochs, "lr": self.lr}}

    @classmethod
    def from_state(cls, state: dict) -> CellClassifier:
        est = cls(**state["config"])
        net = cls._net()
        net.load_state_dict(state["weights"])
        est.net_ = net.eval().requires_grad_(False)
        est.holdout_accuracy_ = float(state["holdout_accuracy"])
        return est

    @torch.no_grad()
    def predict_crops(self, crops: torch.Tensor) -> torch.Tensor:
        return self.net_(crops.float()).argmax(-1)

    @torch.no_grad()
    def slot_predictions(self, images: torch.Tensor, num_objects: int) -> torch.Tensor:
        """(B, num_objects) predicted entity index (``NONE``: no recognisable object) of every slot."""
        check_finite("images", images)
        crops = crop_slots(images, num_objects)
        return self.predict_crops(crops.reshape(-1, 3, 8, 8)).reshape(len(images), num_objects)

    @staticmethod
    def _targets(images: torch.Tensor, prompts: list[tuple[str, ...]]) -> torch.Tensor:
        if len(prompts) != len(images) or len({len(p) for p in prompts}) != 1:
            raise ValueError(f"{len(images)} images need as many prompts of one object count, got {len(prompts)}")
        return torch.tensor([[OBJECTS.index(e) for e in p] for p in prompts])

    def slot_correct(self, images: torch.Tensor, prompts: list[tuple[str, ...]]) -> torch.Tensor:
        """(B, k) bool: whether slot j of image b shows entity ``prompts[b][j]`` (in place)."""
        target = self._targets(images, prompts)
        return self.slot_predictions(images, target.shape[1]) == target

    def binding_scores(self, images: torch.Tensor, prompts: list[tuple[str, ...]]) -> dict[str, torch.Tensor]:
        """Per image (B,): ``in_place``, the share of the prompt's objects shown in their own slot; ``anywhere``,
        the share shown (exact colour and shape) in some slot: binding without placement."""
        target = self._targets(images, prompts)
        pred = self.slot_predictions(images, target.shape[1])
        anywhere = (pred[:, None, :] == target[:, :, None]).any(-1)
        return {"in_place": (pred == target).float().mean(1), "anywhere": anywhere.float().mean(1)}

    def binding_accuracy(self, images: torch.Tensor, prompts: list[tuple[str, ...]]) -> float:
        return float(self.slot_correct(images, prompts).float().mean())

    @torch.no_grad()
    def object_fidelity(self, images: torch.Tensor, entities: list[str]) -> float:
        """Single-object fidelity: the fraction of 1-object generations in which one of the six places a lone
        object may occupy (the 2- and 4-object slots) shows the prompt's entity."""
        check_finite("images", images)
        if len(entities) != len(images):
            raise ValueError(f"{len(images)} images but {len(entities)} entities; give one entity per image")
        places = single_places(images.shape[-1])
        pred = self.predict_crops(_crop(images, places).reshape(-1, 3, 8, 8)).reshape(len(images), len(places))
        target = torch.tensor([OBJECTS.index(e) for e in entities])[:, None]
        return float((pred == target).any(dim=1).float().mean())
