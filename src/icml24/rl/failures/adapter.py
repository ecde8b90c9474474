"""A user's own model as the model under test: a torch module, or any classifier with ``predict_proba``.

The environment, the ground truth and the reward all call ``model(images [n, H, W]) -> scores [n, classes]`` and
take a softmax (the paper's top-1 probability ``p``). ``as_classifier`` makes any supported object look so:

* a ``torch.nn.Module`` is used as it is (its outputs are logits);
* an object with ``predict_proba(X [n, features]) -> [n, classes]`` (scikit-learn and its look-alikes) is wrapped
  in ``ProbaClassifier``, which flattens each image to one feature row (row-major, as ``digits`` stores them)
  and returns ``log p``; the softmax of ``log p`` is ``p`` again. Where the estimator has integer ``classes_``,
  column ``j`` of ``predict_proba`` is placed at class index ``classes_[j]`` (a model fitted on a subset of
  classes gives probability 0 to the others).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

#: what the error for an unsupported object says the model under test must be
INTERFACE = ("a torch nn.Module mapping images [n, H, W] to class scores [n, classes], or a fitted classifier with "
             "predict_proba(X [n, features]) -> [n, classes] (e.g. any scikit-learn classifier)")

_FLOOR = 1e-12  # log(0) guard: a class with probability 0 gets log 1e-12, finite and still ~0 after the softmax


class ProbaClassifier(nn.Module):
    """Wrap ``estimator`` (with ``predict_proba``) as a module returning log-probabilities ``[n, classes]``."""

    def __init__(self, estimator):
        super().__init__()
        if not callable(getattr(estimator, "predict_proba", None)):
            raise TypeError(f"the model under test must be {INTERFACE}; {type(estimator).__name__} has no "
                            "predict_proba")
        self.estimator = estimator
        classes = getattr(estimator, "classes_", None)
        self.columns = None
        if classes is not None:
            classes = np.asarray(classes)
            if not np.issubdtype(classes.dtype, np.integer) or classes.min() < 0:
                raise ValueError(f"{type(estimator).__name__}.classes_ must be integer class indices >= 0, got "
                                 f"{classes[:5].tolist()}...; fit it on integer labels 0..C-1")
            self.columns = classes.astype(np.int64)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        rows = images.detach().reshape(len(images), -1).cpu().numpy()
        proba = np.asarray(self.estimator.predict_proba(rows), dtype=np.float64)
        if proba.ndim != 2 or proba.shape[0] != len(rows):
            raise ValueError(f"predict_proba must return [n, classes], got shape {proba.shape} for {len(rows)} rows")
        if self.columns is not None:
            if proba.shape[1] != len(self.columns):
                raise ValueError(f"predict_proba gave {proba.shape[1]} columns for {len(self.columns)} classes_")
            full = np.zeros((len(rows), int(self.columns.max()) + 1))
            full[:, self.columns] = proba
            proba = full
        return torch.from_numpy(np.log(np.clip(proba, _FLOOR, None))).to(images.dtype)


def as_classifier(model) -> nn.Module:
    """``model`` as the module the environment and the ground truth call (see the module docstring)."""
    if isinstance(model, nn.Module):
        return model
    if callable(getattr(model, "predict_proba", None)):
        return ProbaClassifier(model)
    raise TypeError(f"the model under test must be {INTERFACE}; got {type(model).__name__}"
                    + (" (it has predict but no predict_proba: use a probabilistic classifier, e.g. "
                       "SVC(probability=True))" if callable(getattr(model, "predict", None)) else ""))
