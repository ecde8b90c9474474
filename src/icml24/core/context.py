"""What an experiment receives: its seed and random generators, progress bars, figures, logging."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import random
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")

_SAFE_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


class Context:
    """Everything an experiment may use besides its parameters.

    Attributes:
        seed (int): the run's seed; all randomness derives from it, through ``child_seed``, ``rng`` and
            ``torch_generator`` (the one idiom: never ``default_rng([ctx.seed, ...])`` or ``seed + offset``).
        device (str): torch device, ``"cpu"`` unless set.
        full (bool): whether the paper-scale (``full``) setting is running.
        out_dir (Path): where figures and artifacts of this run are written.
        cache_dir (Path): where ``cached`` keeps expensive builds (a trained base model) shared across runs.
    """

    def __init__(self, seed: int = 0, out_dir: str | Path | None = None, device: str = "cpu",
                 full: bool = False, show_progress: bool = False, log: logging.Logger | None = None,
                 cache_dir: str | Path | None = None, code_version: str = ""):
        self.seed = int(seed)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.code_version = code_version
        self.device = device
        self.full = full
        self.show_progress = show_progress
        self.out_dir = Path(out_dir) if out_dir is not None else None
        self.figures: list[str] = []
        self.artifacts: list[str] = []
        self.logger = log or logging.getLogger("icml24.experiment")
        self._rng = np.random.default_rng(self.seed)
        seed_everything(self.seed)

    def child_seed(self, *keys: int | str) -> int:
        """A deterministic 32-bit seed for the sub-stream named by ``keys`` (ints or strings), for libraries
        that take an int seed. Different keys give independent streams; the same keys, the same seed."""
        return int(np.random.SeedSequence([self.seed, *map(_key_entropy, keys)]).generate_state(1)[0])

    def rng(self, *keys: int | str) -> np.random.Generator:
        """A numpy Generator: with no keys, the run's one main stream (the same object on every call);
        with keys, a fresh generator of the independent sub-stream named by ``keys``."""
        if not keys:
            return self._rng
        return np.random.default_rng(np.random.SeedSequence([self.seed, *map(_key_entropy, keys)]))

    def torch_generator(self, *keys: int | str):
        """A fresh seeded ``torch.Generator`` for the sub-stream named by ``keys`` (no keys: the run's seed)."""
        import torch

        return torch.Generator().manual_seed(self.child_seed(*keys) if keys else self.seed)

    def progress(self, iterable: Iterable[T], description: str = "", total: int | None = None) -> Iterator[T]:
        """Wrap a long loop in a progress bar (shown when running interactively)."""
        if not self.show_progress:
            yield from iterable
            return
        from rich.progress import track

        yield from track(iterable, description=description or "working", total=total, transient=True)

    def progress_callback(self, description: str = ""):
        """The methods' progress protocol (``icml24._progress``): a ``(done, total)`` callback drawing a bar when
        running interactively, else ``None``. Pass it as a method's ``progress=``."""
        from icml24._progress import progress_bar

        return progress_bar(description, enabled=self.show_progress)

    @staticmethod
    def limit_threads(threads: int = 1):
        """Context manager: run a block with ``threads`` torch and BLAS threads (``<= 0``: leave them).

        Small models and sparse products run faster on one thread when cores are shared: oversubscribed
        OpenMP threads slowed small GCN epochs about tenfold in our runs. The previous settings are restored.
        """
        return limit_threads(threads)

    def log(self, message: str, *args: Any) -> None:
        self.logger.info(message, *args)

    def _path(self, name: str, suffix: str) -> Path | None:
        if not _SAFE_NAME.match(name):
            raise ValueError(f"name {name!r} must use letters, digits, '.', '_' or '-' only")
        if self.out_dir is None:
            return None
        self.out_dir.mkdir(parents=True, exist_ok=True)
        return self.out_dir / f"{name}{suffix}"

    def figure(self, name: str, fig) -> Path | None:
        """Save a matplotlib figure as ``<out_dir>/<name>.png`` for the report, then close it."""
        import matplotlib.pyplot as plt

        path = self._path(name, ".png")
        if path is not None:
            fig.savefig(path, dpi=110, bbox_inches="tight")
            self.figures.append(str(path))
        plt.close(fig)
        return path

    def artifact(self, name: str, data: Any) -> Path | None:
        """Save a JSON-serializable artifact (e.g. a selected head list) beside the run's figures."""
        path = self._path(name, ".json")
        if path is not None:
            tmp = path.with_suffix(f".{os.getpid()}.json.tmp")
            tmp.write_text(json.dumps(data, indent=2, default=_jsonable))
            os.replace(tmp, path)
            self.artifacts.append(str(path))
        return path

    def cached(self, name: str, key: dict[str, Any], build: Callable[[Context], T]) -> T:
        """Build an expensive artifact once (a trained model's state dict) and reuse it across seeds and runs.

        ``build(ctx)`` receives a fresh Context seeded by ``key.get("seed", 0)`` (never this run's seed, so every
        seed of the experiment shares one build) and returns tensors, dicts, lists and numbers. The result is
        stored with ``torch.save`` as ``<cache_dir>/<name>-<hash of key and code version>.pt``, written atomically;
        an unreadable file is rebuilt. Without a cache folder (a Context made by hand) it just builds.
        """
        import torch

        if not _SAFE_NAME.match(name):
            raise ValueError(f"name {name!r} must use letters, digits, '.', '_' or '-' only")
        if self.cache_dir is None:
            return _isolated_build(build, key, self)
        digest = hashlib.sha256(json.dumps([key, self.code_version], sort_keys=True, default=_jsonable)
                                .encode()).hexdigest()[:16]
        path = self.cache_dir / f"{name}-{digest}.pt"
        loaded = _load_cached(path, self)
        if loaded is not None:
            return loaded
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        with _build_lock(path):  # runs side by side that miss together build once: the others wait, then load
            loaded = _load_cached(path, self)
            if loaded is not None:
                return loaded
            value = _isolated_build(build, key, self)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            torch.save(value, tmp)
            os.replace(tmp, path)
        return torch.load(path, weights_only=True)  # the first run sees exactly what later runs load


def _load_cached(path: Path, ctx: Context) -> Any:
    """The artifact stored at ``path``, or None when there is none or it is unreadable (then it is rebuilt)."""
    import torch

    if not path.exists():
        return None
    try:
        return torch.load(path, weights_only=True)
    except Exception:  # a torn or foreign file: build again
        ctx.log("cache %s unreadable, rebuilding", path)
        return None


@contextlib.contextmanager
def _build_lock(path: Path):
    """An exclusive lock on ``<path>.lock`` for as long as one process builds ``path`` (``flock``: released when
    the holder exits, even killed); where ``fcntl`` is missing, no lock (a miss may then be built twice)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(path.with_suffix(".lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _isolated_build(build: Callable[[Context], T], key: dict[str, Any], parent: Context) -> T:
    """Run ``build`` under its own seed and give the global generators back as they were, so a run that builds
    and a run that loads from the cache continue with the same random state."""
    try:
        from torch.random import fork_rng
    except ImportError:  # no torch here (a field without it): there is no torch state to keep
        fork_rng = contextlib.nullcontext
    python_state, numpy_state = random.getstate(), np.random.get_state()
    with fork_rng():
        try:
            builder = Context(seed=int(key.get("seed", 0)), full=parent.full, show_progress=parent.show_progress,
                              log=parent.logger)
            return build(builder)
        finally:
            random.setstate(python_state)
            np.random.set_state(numpy_state)


@contextlib.contextmanager
def limit_threads(threads: int = 1) -> Iterator[None]:
    """Run a block with ``threads`` torch and BLAS threads (``<= 0``: unchanged), then restore them."""
    if threads <= 0:
        yield
        return
    from threadpoolctl import threadpool_limits

    try:
        import torch
    except ImportError:  # a field without torch (icml24[sdr], icml24[bandits]): the BLAS threads only
        with threadpool_limits(threads):
            yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with threadpool_limits(threads):
            yield
    finally:
        torch.set_num_threads(previous)


def _key_entropy(key: int | str) -> int:
    """An int for SeedSequence: ints as they are, strings by a stable hash (never Python's salted ``hash``)."""
    if isinstance(key, bool) or not isinstance(key, (int, np.integer, str)):
        raise TypeError(f"seed keys must be ints or strings, got {key!r}")
    if isinstance(key, str):
        return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "little")
    if key < 0:
        raise ValueError(f"seed keys must be non-negative, got {key}")
    return int(key)


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot store {type(value).__name__} as JSON")


def seed_everything(seed: int) -> None:
    """Seed Python's, numpy's legacy and torch's global generators."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    try:
        import torch
    except ImportError:  # a field without torch (icml24[sdr], icml24[bandits])
        return
    torch.manual_seed(seed)
