"""Small image-like datasets that need no download, and tasks derived from them for model-merging studies.

* ``digits``: scikit-learn's bundled 8x8 handwritten digits (1797 images, 10 classes).
* ``mnist1d``: MNIST-1D (Greydanus, 2020), 40-sample 1-D signals of 10 digit templates, *generated* offline
  with ``mnist1d.data.make_dataset`` (never downloaded).
* ``derive_task`` / ``image_tasks``: new tasks from the same inputs by input transforms (rotations,
  fixed pixel permutations, inversion, mirroring) and label maps (parity, ``> 4``, ``mod 3``, shifts), written as
  specs such as ``"rot90"``, ``"perm:1"``, ``"invert+parity"``. ``LABEL_MAPS`` names the label maps and
  ``label_map`` gives a spec's source-class -> task-class map (to derive a task head from a source classifier).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from icml24._random import check_random_state, seed_int
from icml24._validation import check_finite

#: A fixed task order (the first 4, 8 or 14 are used, as the TALL-masks paper uses the first T of a fixed list).
TASK_SPECS: tuple[str, ...] = (
    "rot90", "perm:1", "invert", "parity", "rot180", "mod3", "rot270", "gt4",
    "flip", "perm:2", "rot90+invert", "shift:3", "mod5", "perm:3",
)

#: Input transforms a task spec may use (``perm:<k>``, ``rot90``, ...); they change ``x`` and keep the labels.
INPUT_TRANSFORMS: tuple[str, ...] = ("identity", "rot90", "rot180", "rot270", "perm", "invert", "flip")
#: Label maps a task spec may use, with the number of classes each leaves (``shift:<k>`` keeps all 10 digits).
LABEL_MAPS: dict[str, int] = {"parity": 2, "gt4": 2, "mod3": 3, "mod5": 5, "shift": 10}
#: Entropy of the fixed pixel permutations behind ``perm:<k>``. A permutation is part of the task's *definition*
#: (a dataset constant, like the digits themselves): ``perm:1`` is the same permutation for every run seed, so
#: this is not a run seed and never derives from one.
PERMUTATION_SEED = 12345


@dataclass
class ImageTask:
    """One classification task with a train / validation / test split.

    ``x_*: [n, num_features]`` float32 (flattened images or signals), ``y_*: [n]`` int64 in
    ``[0, num_classes)``.
    """

    name: str
    num_classes: int
    x_train: np.ndarray
    y_train: np.ndarray
    x_val: np.ndarray
    y_val: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray

    @property
    def num_features(self) -> int:
        return int(self.x_train.shape[1])

    def __repr__(self) -> str:
        return (f"ImageTask({self.name!r}, classes={self.num_classes}, train={len(self.y_train)}, "
                f"val={len(self.y_val)}, test={len(self.y_test)})")


def digits() -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """scikit-learn's digits: ``x [1797, 64]`` float32 in ``[0, 1]``, ``y [1797]`` int64, image shape ``(8, 8)``."""
    from sklearn.datasets import load_digits

    data = load_digits()
    return (data.data / 16.0).astype(np.float32), data.target.astype(np.int64), (8, 8)


def mnist1d(num_samples: int = 5000, random_state=None) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """MNIST-1D generated offline: ``x [num_samples, 40]`` float32 (standardized), ``y`` int64, shape ``(40,)``.

    Uses ``mnist1d.data.make_dataset`` with the package's default arguments (``random_state=42``, the package's own
    default seed, with 5000 samples gives the standard dataset); the package takes an int seed: ``random_state``
    itself when an int, else one draw from it (``icml24._random.seed_int``). The global ``random``/``numpy``
    states it reseeds are restored afterwards.
    """
    if num_samples < 10:
        raise ValueError(f"num_samples must be at least 10 (one per class), got {num_samples}")
    x, y = _generate_mnist1d(int(num_samples), seed_int(random_state))
    return x.copy(), y.copy(), (x.shape[1],)


@lru_cache(maxsize=4)
def _generate_mnist1d(num_samples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    try:
        from mnist1d.data import get_dataset_args, make_dataset
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("MNIST-1D needs the `mnist1d` package: pip install mnist1d") from exc
    args = get_dataset_args()
    args.num_samples, args.seed = num_samples, seed
    np_state, py_state = np.random.get_state(), random.getstate()
    try:
        data = make_dataset(args)
    finally:
        np.random.set_state(np_state)
        random.setstate(py_state)
    x = np.concatenate([data["x"], data["x_test"]]).astype(np.float32)
    y = np.concatenate([data["y"], data["y_test"]]).astype(np.int64)
    return x, y


def load_source(name: str) -> tuple[np.ndarray, np.ndarray, tuple[int, ...]]:
    """``"digits"`` or ``"mnist1d"`` -> ``(x, y, image_shape)``."""
    if name == "digits":
        return digits()
    if name == "mnist1d":
        return mnist1d(random_state=42)  # the standard MNIST-1D
    raise ValueError(f"unknown image source {name!r}; choose 'digits' or 'mnist1d'")


def _transform_inputs(x: np.ndarray, op: str, arg: int | None, shape: tuple[int, ...],
                      value_range: tuple[float, float]) -> np.ndarray:
    n = x.shape[0]
    if op == "identity":
        return x
    if op in ("rot90", "rot180", "rot270"):
        quarter = int(op[3:]) // 90
        if len(shape) == 2:
            return np.rot90(x.reshape(n, *shape), k=quarter, axes=(1, 2)).reshape(n, -1).copy()
        # 1-D signals: a "rotation" is a circular shift by a quarter of the length per 90 degrees
        return np.roll(x, quarter * shape[0] // 4, axis=1)
    if op == "flip":
        return x.reshape(n, *shape)[..., ::-1].reshape(n, -1).copy()
    if op == "invert":
        low, high = value_range
        return (low + high) - x
    if op == "perm":
        order = np.random.default_rng([PERMUTATION_SEED, arg or 0]).permutation(x.shape[1])  # fixed by the task
        return x[:, order]
    raise ValueError(f"unknown input transform {op!r}; choose from {INPUT_TRANSFORMS}")


def _map_labels(y: np.ndarray, op: str, arg: int | None) -> tuple[np.ndarray, int]:
    if op == "parity":
        return y % 2, 2
    if op == "gt4":
        return (y > 4).astype(np.int64), 2
    if op == "mod3":
        return y % 3, 3
    if op == "mod5":
        return y % 5, 5
    if op == "shift":
        return (y + (arg or 1)) % 10, 10
    raise ValueError(f"unknown label map {op!r}; choose from {sorted(LABEL_MAPS)}")


def derive_task(x: np.ndarray, y: np.ndarray, spec: str, image_shape: tuple[int, ...],
                value_range: tuple[float, float] | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """Apply a task spec to ``(x, y)``; returns ``(x', y', num_classes)``.

    A spec joins steps with ``+``: input transforms ``identity``, ``rot90``/``rot180``/``rot270`` (images rotate;
    1-D signals shift circularly by a quarter length per 90 degrees), ``perm:<seed>`` (a fixed pixel permutation),
    ``invert`` (``min + max - x``), ``flip`` (mirror); label maps ``parity``, ``gt4``, ``mod3``, ``mod5``,
    ``shift:<k>`` (``(y + k) mod 10``). Example: ``"rot90+invert"``, ``"perm:2+parity"``.
    """
    if x.ndim != 2 or len(x) != len(y):
        raise ValueError(f"x must be [n, features] and y [n]; got {x.shape} and {y.shape}")
    if int(np.prod(image_shape)) != x.shape[1]:
        raise ValueError(f"image_shape {image_shape} does not match {x.shape[1]} features")
    check_finite("x", x)
    value_range = value_range or (float(x.min()), float(x.max()))
    num_classes = int(y.max()) + 1
    for step in spec.split("+"):
        op, _, raw = step.strip().partition(":")
        arg = int(raw) if raw else None
        if op in LABEL_MAPS:
            y, num_classes = _map_labels(y, op, arg)
        else:
            x = _transform_inputs(x, op, arg, tuple(image_shape), value_range)
    return x.astype(np.float32), y.astype(np.int64), num_classes


def label_map(spec: str, num_source_classes: int = 10) -> np.ndarray:
    """The task class of each source class under ``spec``'s label maps: ``int64 [num_source_classes]``.

    Input transforms do not move labels, so ``"rot90"`` gives the identity ``[0, 1, ..., 9]``; ``"invert+parity"``
    gives ``[0, 1, 0, 1, ...]``; several label maps compose left to right (``"shift:3+parity"``). Use it to derive a
    task's head from a source classifier (task class ``c`` <- the source classes mapped to ``c``).
    """
    if num_source_classes < 1:
        raise ValueError(f"num_source_classes must be >= 1, got {num_source_classes}")
    labels = np.arange(num_source_classes, dtype=np.int64)
    for step in spec.split("+"):
        op, _, raw = step.strip().partition(":")
        if op in LABEL_MAPS:
            labels, _ = _map_labels(labels, op, int(raw) if raw else None)
        elif op not in INPUT_TRANSFORMS:
            raise ValueError(f"unknown task step {op!r} in {spec!r}; input transforms: {INPUT_TRANSFORMS}, "
                             f"label maps: {sorted(LABEL_MAPS)}")
    return labels.astype(np.int64)


def split_indices(num_samples: int, random_state=None, val_fraction: float = 0.2,
                  test_fraction: float = 0.2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random train / validation / test partition of ``range(num_samples)`` drawn from ``random_state`` (None, an
    int or a numpy Generator; ``icml24._random.check_random_state``)."""
    if not (0 < val_fraction < 1 and 0 < test_fraction < 1 and val_fraction + test_fraction < 1):
        raise ValueError("val_fraction and test_fraction must be in (0, 1) and sum to less than 1")
    order = check_random_state(random_state).permutation(num_samples)
    num_test, num_val = int(round(test_fraction * num_samples)), int(round(val_fraction * num_samples))
    return order[num_test + num_val:], order[num_test:num_test + num_val], order[:num_test]


def image_tasks(source: str = "digits", specs: tuple[str, ...] | list[str] = TASK_SPECS, random_state=None,
                val_fraction: float = 0.2, test_fraction: float = 0.2) -> list[ImageTask]:
    """Derived tasks of ``source`` (``"digits"`` or ``"mnist1d"``), all on the same random split of the inputs
    (``split_indices`` with ``random_state``)."""
    x, y, shape = load_source(source)
    train, val, test = split_indices(len(y), random_state, val_fraction, test_fraction)
    value_range = (float(x.min()), float(x.max()))
    tasks = []
    for spec in specs:
        xs, ys, num_classes = derive_task(x, y, spec, shape, value_range)
        tasks.append(ImageTask(spec, num_classes, xs[train], ys[train], xs[val], ys[val], xs[test], ys[test]))
    return tasks


def pretraining_specs(num_permutations: int = 12) -> tuple[str, ...]:
    """A broad pre-training mixture of task specs, disjoint from ``TASK_SPECS`` (the held-out tasks).

    Every spec keeps 10 classes (label maps are digit shifts ``shift:k`` other than the held-out ``shift:3``), so
    one ``[K, 10, H]`` bank of heads covers the mixture. It holds the identity, the mirror/transpose family
    (``flip+rot90``, ``flip+rot180``, ...), inversions of those, shifted relabellings of rotated or inverted inputs
    and ``num_permutations`` pixel permutations (``perm:100``, ... ; held-out tasks use ``perm:1``-``perm:3``), some
    with shifted labels. The held-out rotations, ``invert``, ``flip`` and label maps parity / gt4 / mod3 / mod5
    appear in no spec *alone*: a held-out task is a new combination the base model never trained on.
    """
    if num_permutations < 0:
        raise ValueError(f"num_permutations must be >= 0, got {num_permutations}")
    specs = ["identity"] + [f"shift:{k}" for k in (1, 2, 4, 5, 6, 7, 8, 9)]
    specs += ["flip+rot90", "flip+rot180", "flip+rot270", "flip+rot180+invert", "flip+rot90+invert"]
    specs += ["rot90+shift:5", "rot270+shift:2", "rot180+shift:7", "invert+shift:4", "flip+shift:6"]
    specs += [f"perm:{100 + i}" + (f"+shift:{1 + i % 9}" if i % 2 else "") for i in range(num_permutations)]
    held_out = set(TASK_SPECS)
    assert not held_out & set(specs), "pre-training specs must not contain a held-out task"
    return tuple(specs)


def pretraining_mixture(source: str = "digits", specs: tuple[str, ...] | list[str] | None = None,
                        indices: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The inputs of ``source`` under every pre-training spec: ``x [K, n, features]`` float32, ``y [K, n]`` int64.

    ``indices`` selects the images (pass a split's train indices so that held-out validation and test images are
    never seen in pre-training); every spec must keep 10 classes (see ``pretraining_specs``).
    """
    x, y, shape = load_source(source)
    specs = pretraining_specs() if specs is None else tuple(specs)
    if not specs:
        raise ValueError("specs must name at least one pre-training task")
    if indices is not None:
        x, y = x[np.asarray(indices)], y[np.asarray(indices)]
    value_range = (float(x.min()), float(x.max()))
    xs, ys = [], []
    for spec in specs:
        xt, yt, num_classes = derive_task(x, y, spec, shape, value_range)
        if num_classes != 10:
            raise ValueError(f"pre-training spec {spec!r} leaves {num_classes} classes; use 10-class specs only")
        xs.append(xt)
        ys.append(yt)
    return np.stack(xs), np.stack(ys)
