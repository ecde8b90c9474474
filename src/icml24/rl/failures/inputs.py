"""Checks at the public boundary: a pool of images with integer class labels, and a model's outputs against them.

Labels are class indices ``0 .. C-1``. Float labels are accepted only when they hold whole numbers (``3.0``): a
``1.5`` is refused instead of truncated to ``1``. A model whose outputs have fewer classes than the labels reach is
refused before any failure is counted (a 3-class model scored against 10-class labels would "fail" on every image
of classes 3-9).
"""

from __future__ import annotations

import numpy as np
import torch

from icml24._validation import check_finite


def check_labels(labels, name: str = "labels") -> np.ndarray:
    """``labels`` as an int64 array of class indices ``>= 0``; whole-number floats pass, anything else is refused."""
    raw = np.asarray(labels)
    if raw.dtype == bool or not (np.issubdtype(raw.dtype, np.integer) or np.issubdtype(raw.dtype, np.floating)):
        raise ValueError(f"{name} must be integer class indices 0..C-1, got dtype {raw.dtype}; encode other labels "
                         "first (e.g. sklearn.preprocessing.LabelEncoder)")
    if raw.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array with one class index per image, got shape {raw.shape}")
    if np.issubdtype(raw.dtype, np.floating):
        check_finite(name, raw)
        if not np.all(raw == np.round(raw)):
            bad = raw[raw != np.round(raw)][:3]
            raise ValueError(f"{name} must be whole class indices, got fractional values such as {bad.tolist()} "
                             "(they would be truncated)")
    out = raw.astype(np.int64)
    if out.size and out.min() < 0:
        raise ValueError(f"{name} must be class indices >= 0, got {int(out.min())}")
    return out


def check_pool(images, labels) -> tuple[torch.Tensor, np.ndarray]:
    """A non-empty pool ``images [n, H, W]`` (finite, float32) with one class index each."""
    images = np.asarray(images, dtype=np.float32)
    check_finite("images", images)
    labels = check_labels(labels)
    if images.ndim != 3 or len(images) != len(labels) or len(images) == 0:
        raise ValueError(f"images must be a non-empty [n, H, W] array with one label each, got {images.shape} and "
                         f"{labels.shape}")
    return torch.from_numpy(images), labels


def check_outputs(logits: torch.Tensor, labels: np.ndarray, what: str = "the model") -> int:
    """The number of classes of ``logits [n, C]``; refuses non-finite outputs and labels the model cannot predict."""
    if logits.ndim != 2 or logits.shape[0] != len(labels):
        raise ValueError(f"{what} must map [n, H, W] images to [n, classes] scores, got output shape "
                         f"{tuple(logits.shape)} for {len(labels)} images")
    if not bool(torch.isfinite(logits).all()):
        raise ValueError(f"{what} gave non-finite scores (NaN or inf) on finite images")
    classes = int(logits.shape[1])
    if len(labels) and int(labels.max()) >= classes:
        raise ValueError(f"labels reach class {int(labels.max())} but {what} outputs {classes} classes: score it "
                         f"against labels in 0..{classes - 1} (or train it on all classes)")
    return classes
