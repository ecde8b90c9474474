"""A per-cell attribute classifier: the evaluator of attribute binding (the BLIP-VQA stand-in of T2I-CompBench).

Each object slot of a scene is cropped to 8 x 8 and classified into one of the 12 entities (colour x shape) or
"none". An object counts as bound when the predicted entity is the prompt's entity at that slot; attribute-binding
accuracy is the fraction of bound objects. Trained on procedurally drawn crops with jitter, pixel noise and blur, so
that it reads imperfect generations; its accuracy on held-out drawn crops is reported.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from icml24._validation import FittedAttributes, check_finite

from .scenes import OBJECTS, object_centers, render

NONE = len(OBJECTS)  # the "no recognisable object" class


def crop_slots(images: torch.Tensor, num_objects: int) -> torch.Tensor:
    """(B, 3, 16, 16) -> (B, num_objects, 3, 8, 8): the 8 x 8 window around each object slot, reading order."""
    return _crop(images, object_centers(num_objects))


def _crop(images: torch.Tensor, centers: list[tuple[float, float]]) -> torch.Tensor:
    out = []
    for cy, cx in centers:
        top, left = int(round(cy - 3.5)), int(round(cx - 3.5))
        out.append(images[:, :, top:top + 8, left:left + 8])
    return torch.stack(out, dim=1)


def _training_crops(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    crops, labels = np.empty((n, 3, 8, 8), dtype=np.float32), np.empty(n, dtype=np.int64)
    for i in range(n):
        label = int(rng.integers(0, NONE + 1))
        if label == NONE:
            canvas = -np.ones((3, 16, 16))
            if rng.random() < 0.5:  # a faint or fragmentary blob is still "none"
                canvas += rng.uniform(0, 0.6) * (rng.random((3, 16, 16)) < 0.15)
        else:
            canvas = render([OBJECTS[label]], rng, slots=[2], jitter=1.0)  # slot 2: top-left quadrant
        crop = canvas[:, 0:8, 0:8]
        crop = crop + rng.normal(0, rng.uniform(0, 0.25), crop.shape)  # generation noise
        crops[i], labels[i] = np.clip(crop, -1, 1), label
    return crops, labels


class CellClassifier(FittedAttributes):
    """A two-conv CNN over 8 x 8 crops with 13 classes (12 entities + none)."""

    def __init__(self, num_train: int = 6000, epochs: int = 6, lr: float = 3e-3):
        self.num_train, self.epochs, self.lr = num_train, epochs, lr

    @staticmethod
    def _net() -> nn.Module:
        return nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 16, 64), nn.ReLU(),
                             nn.Linear(64, NONE + 1))

    def fit(self, rng: np.random.Generator) -> CellClassifier:
        """Train on freshly drawn crops; ``holdout_accuracy_`` is measured on 1000 more."""
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
    def slot_correct(self, images: torch.Tensor, prompts: list[tuple[str, ...]]) -> torch.Tensor:
        """(B, k) bool: whether slot j of image b shows entity ``prompts[b][j]``."""
        check_finite("images", images)
        k = len(prompts[0])
        crops = crop_slots(images, k)
        pred = self.predict_crops(crops.reshape(-1, 3, 8, 8)).reshape(len(images), k)
        target = torch.tensor([[OBJECTS.index(e) for e in p] for p in prompts])
        return pred == target

    def binding_accuracy(self, images: torch.Tensor, prompts: list[tuple[str, ...]]) -> float:
        return float(self.slot_correct(images, prompts).float().mean())

    @torch.no_grad()
    def object_fidelity(self, images: torch.Tensor, entities: list[str]) -> float:
        """Single-object fidelity: the fraction of 1-object generations in which one of the six places a lone
        object may occupy (the 2- and 4-object slots) shows the prompt's entity."""
        check_finite("images", images)
        if len(entities) != len(images):
            raise ValueError(f"{len(images)} images but {len(entities)} entities; give one entity per image")
        centers = object_centers(2) + object_centers(4)
        pred = self.predict_crops(_crop(images, centers).reshape(-1, 3, 8, 8)).reshape(len(images), len(centers))
        target = torch.tensor([OBJECTS.index(e) for e in entities])[:, None]
        return float((pred == target).any(dim=1).float().mean())
