"""Runs experiments in-process, in a local process pool or as Ray tasks; only the driver writes the store."""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import inspect
import itertools
import math
import os
import resource
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass
from importlib import metadata
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from icml24.core.context import Context
from icml24.core.registry import Experiment, register_module
from icml24.core.store import RunRecord, Store, config_hash

BACKENDS = ("inline", "local", "ray")
_VERSIONED_PACKAGES = ("icml24", "numpy", "scipy", "torch", "torch_geometric", "scikit-learn")


@dataclass(frozen=True)
class Task:
    """One (experiment, config, seed) to run; plain data so it crosses process and Ray boundaries."""

    module: str
    paper: str
    experiment: str
    config: dict[str, Any]
    seed: int
    full: bool
    code_version: str
    out_dir: str
    show_progress: bool = False

    @property
    def label(self) -> str:
        return f"{self.paper}:{self.experiment} seed={self.seed}"


def code_version(exp: Experiment) -> str:
    """The package version and a hash of the code an experiment runs.

    The hash covers the experiment's module and every file of each ``icml24`` field package it imports
    (``icml24.graph``, ``icml24.data``, ...; ``icml24.core`` aside): fixing a method reruns the papers that use it
    instead of reporting results of the old code.
    """
    import icml24

    module = inspect.getmodule(exp.fn)
    path = getattr(module, "__file__", None)
    digest = _source_digest(path) if path else hashlib.sha256(exp.fn.__module__.encode()).hexdigest()[:8]
    return f"{icml24.__version__}+{digest}"


@functools.cache
def _source_digest(module_path: str) -> str:
    import icml24

    package_root = Path(icml24.__file__).parent
    source = Path(module_path).read_text()
    files = {Path(module_path)}
    for subpackage in sorted(_imported_subpackages(source)):
        folder = package_root / subpackage
        files.update(folder.rglob("*.py") if folder.is_dir() else [folder.with_suffix(".py")])
    sha = hashlib.sha256()
    for file in sorted(f for f in files if f.exists()):
        sha.update(file.name.encode())
        sha.update(file.read_bytes())
    return sha.hexdigest()[:8]


def _imported_subpackages(source: str) -> set[str]:
    """Top-level ``icml24`` subpackages named by the import statements of ``source`` (``core`` excluded)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    parts = (name.split(".") for name in names)
    return {p[1] for p in parts if len(p) > 1 and p[0] == "icml24" and p[1] != "core"}


def plan(experiments: Iterable[Experiment], seeds: Iterable[int], full: bool = False,
         grid: list[dict[str, Any]] | None = None, store_folder: str | Path = "results",
         show_progress: bool = False) -> list[Task]:
    """Expand experiments x configurations (``grid`` of overrides) x seeds into tasks."""
    tasks = []
    for exp in experiments:
        version = code_version(exp)
        for overrides in grid or [{}]:
            config = exp.config(full=full, overrides=overrides)
            for seed in seeds:
                out_dir = Path(store_folder) / "runs" / exp.paper.slug / exp.name / f"{config_hash(config)}-s{seed}"
                tasks.append(Task(exp.fn.__module__, exp.paper.slug, exp.name, config, int(seed), full, version,
                                  str(out_dir), show_progress))
    return tasks


def execute(task: Task) -> RunRecord:
    """Run one task in this process and return its record (never raises for an experiment's failure)."""
    module = importlib.import_module(task.module)
    paper = register_module(module)
    exp = paper.experiments[task.experiment]
    ctx = Context(seed=task.seed, out_dir=task.out_dir, full=task.full, show_progress=task.show_progress)
    record = RunRecord(task.paper, task.experiment, task.config, task.seed, task.code_version,
                       "full" if task.full else "quick", "error", versions=_versions())
    start = time.perf_counter()
    try:
        metrics = exp(ctx, **task.config)
        record.metrics, problem = _clean_metrics(metrics)
        record.status = "error" if problem else "ok"
        record.error = problem
    except Exception as exc:  # an experiment's failure is stored as an error row, with the traceback tail
        record.error = f"{type(exc).__name__}: {exc}\n" + "".join(traceback.format_exc().splitlines(True)[-8:])
    record.seconds = time.perf_counter() - start
    record.peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    record.figures = list(ctx.figures)
    return record


def _clean_metrics(metrics: Any) -> tuple[dict[str, float], str]:
    if not isinstance(metrics, dict):
        return {}, f"experiment returned {type(metrics).__name__}, expected dict[str, float]"
    clean, bad = {}, []
    for key, value in metrics.items():
        try:
            number = float(value)
        except (TypeError, ValueError):
            bad.append(f"{key}={value!r} (not a number)")
            continue
        if not math.isfinite(number):
            bad.append(f"{key}={number}")
        clean[str(key)] = number
    return clean, ("non-finite or non-numeric metrics: " + ", ".join(bad)) if bad else ""


def _versions() -> dict[str, str]:
    found = {"python": ".".join(map(str, os.sys.version_info[:3]))}
    for name in _VERSIONED_PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return found


def _execute_dict(task: Task) -> dict[str, Any]:
    # process pools and Ray return plain data
    return asdict(execute(task))


def run_tasks(tasks: list[Task], store: Store, backend: str = "inline", jobs: int = 1, address: str | None = None,
              force: bool = False, on_result: Callable[[RunRecord], None] | None = None) -> list[RunRecord]:
    """Run every task not already stored (all of them with ``force``); store each result as it arrives."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {jobs}")
    todo = [t for t in tasks if force or not store.has_ok(t.paper, t.experiment, t.config, t.seed, t.code_version)]
    done: list[RunRecord] = []

    def accept(record: RunRecord) -> None:
        store.put(record)
        done.append(record)
        if on_result is not None:
            on_result(record)

    if backend == "inline":
        for task in todo:
            accept(execute(task))
    elif backend == "local":
        _run_pool(todo, jobs, accept)
    else:
        _run_ray(todo, jobs, address, accept)
    return done


def _run_pool(todo: list[Task], jobs: int, accept: Callable[[RunRecord], None]) -> None:
    # a fresh process per task: exact peak memory, and a crashing experiment cannot take the driver down
    if not todo:
        return
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn"), max_tasks_per_child=1) as pool:
        pending = {pool.submit(_execute_dict, task): task for task in todo}
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                task = pending.pop(future)
                try:
                    accept(RunRecord(**future.result()))
                except Exception as exc:  # the worker died (out of memory, signal)
                    accept(_crashed(task, exc))


def _crashed(task: Task, exc: BaseException) -> RunRecord:
    return RunRecord(task.paper, task.experiment, task.config, task.seed, task.code_version,
                     "full" if task.full else "quick", "error", versions=_versions(),
                     error=f"worker crashed: {type(exc).__name__}: {exc}")


def _run_ray(todo: list[Task], jobs: int, address: str | None, accept: Callable[[RunRecord], None]) -> None:
    if not todo:
        return
    try:
        import ray
    except ImportError:
        raise ValueError("--backend ray needs Ray: pip install 'ray[default]'") from None
    started_here = not ray.is_initialized()
    if started_here:
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(num_cpus=jobs, include_dashboard=False, object_store_memory=80 * 1024**2,
                     log_to_driver=False, configure_logging=False)
    try:
        remote = ray.remote(num_cpus=1, max_retries=0)(_execute_dict)
        pending = {remote.remote(task): task for task in todo}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                task = pending.pop(ref)
                try:
                    accept(RunRecord(**ray.get(ref)))
                except Exception as exc:
                    accept(_crashed(task, exc))
    finally:
        if started_here:
            ray.shutdown()


def parse_seeds(text: str) -> list[int]:
    """``"0-4"`` -> [0, 1, 2, 3, 4]; ``"1,3,7"`` -> [1, 3, 7]; ``"5"`` -> [5]."""
    seeds: list[int] = []
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part:
                low, high = part.split("-", 1)
                if int(low) > int(high):
                    raise ValueError
                seeds.extend(range(int(low), int(high) + 1))
            elif part:
                seeds.append(int(part))
    except ValueError:
        raise ValueError(f"--seeds {text!r} is not a seed list; write e.g. 0-4 or 0,2,5") from None
    if not seeds or min(seeds) < 0:
        raise ValueError(f"--seeds {text!r} names no seed; write e.g. 0-4 or 0,2,5")
    return sorted(set(seeds))


def parse_value(exp: Experiment, key: str, text: str) -> Any:
    """Convert a ``--set`` value by the experiment's type hint, with a clear error."""
    types = exp.parameters()
    if key not in types:
        raise ValueError(f"{exp.key} takes no parameter {key!r}; it takes: {', '.join(types) or 'none'}")
    kind = types[key]
    try:
        if kind is bool:
            lowered = text.strip().lower()
            if lowered not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError
            return lowered in ("true", "1", "yes")
        if kind in (int, float, str):
            return kind(text)
    except ValueError:
        raise ValueError(f"--set {key}={text}: {exp.key} expects {kind.__name__} for {key}") from None
    return text


def parse_grid(exp: Experiment, assignments: list[str], allow_lists: bool) -> list[dict[str, Any]]:
    """``["k=a,b", "m=1"]`` -> the grid of override dicts (lists only when ``allow_lists``)."""
    axes: dict[str, list[Any]] = {}
    for item in assignments:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set {item!r} must look like key=value")
        key = key.strip()
        values = value.split(",") if allow_lists else [value]
        axes[key] = [parse_value(exp, key, v) for v in values]
    keys = list(axes)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(axes[k] for k in keys))] or [{}]
