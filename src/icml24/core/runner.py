"""Runs experiments in-process, in a local process pool or as Ray tasks; only the driver writes the store.

Repetition is the runner's: an experiment computes one seed, and ``plan`` makes one task per
(experiment, configuration, seed), so seeds spread over ``--jobs`` processes or a Ray cluster.
"""

from __future__ import annotations

import importlib
import math
import os
import resource
import signal
import socket
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from multiprocessing import connection, get_context
from pathlib import Path
from typing import Any

from icml24._extras import install_hint, missing
from icml24._signals import sigint_deferred
from icml24.core.context import Context, limit_threads
from icml24.core.registry import Experiment, register_module
from icml24.core.store import RunRecord, Store, config_hash
from icml24.core.versioning import code_version, library_versions

BACKENDS = ("inline", "local", "ray")


@dataclass(frozen=True)
class Task:
    """One (experiment, config, seed) to run; plain data so it crosses process and Ray boundaries."""

    module: str
    paper: str
    experiment: str
    config: dict[str, Any]
    seed: int
    setting: str  # "quick", "full" or "smoke"
    code_version: str
    out_dir: str
    show_progress: bool = False
    cache_dir: str = ""  # where ``ctx.cached`` keeps built artifacts (trained models) shared across runs
    threads: int = 0  # the run's share of this machine's cores (cores // jobs; 0: no cap), set by ``run_tasks``

    @property
    def full(self) -> bool:
        return self.setting == "full"

    @property
    def label(self) -> str:
        return f"{self.paper}:{self.experiment} seed={self.seed}"


def plan(experiments: Iterable[Experiment], seeds: Iterable[int] | None = None, full: bool = False,
         grid: list[dict[str, Any]] | None = None, store_folder: str | Path = "results",
         show_progress: bool = False, setting: str | None = None) -> list[Task]:
    """Expand experiments x configurations (``grid`` of overrides) x seeds into one task each.

    ``seeds=None`` uses each experiment's declared seeds for the setting (``quick={"seeds": 3}`` -> 0, 1, 2).
    """
    tasks = []
    for exp in experiments:
        version = code_version(exp)
        name = exp.setting(full, setting)
        seed_list = list(seeds) if seeds is not None else exp.default_seeds(setting=name)
        for overrides in grid or [{}]:
            config = exp.config(overrides=overrides, setting=name)
            for seed in seed_list:
                out_dir = Path(store_folder) / "runs" / exp.paper.slug / exp.name / f"{config_hash(config)}-s{seed}"
                tasks.append(Task(exp.fn.__module__, exp.paper.slug, exp.name, config, int(seed), name, version,
                                  str(out_dir), show_progress, str(Path(store_folder) / "cache" / exp.paper.slug)))
    return tasks


def execute(task: Task) -> RunRecord:
    """Run one task in this process and return its record (never raises for an experiment's failure)."""
    module = importlib.import_module(task.module)
    paper = register_module(module)
    exp = paper.experiments[task.experiment]
    ctx = Context(seed=task.seed, out_dir=task.out_dir, full=task.full, show_progress=task.show_progress,
                  cache_dir=task.cache_dir or None, code_version=task.code_version)
    record = RunRecord(task.paper, task.experiment, task.config, task.seed, task.code_version, task.setting, "error",
                       versions=library_versions())
    tracks_peak = _reset_peak_rss()
    start = time.perf_counter()
    try:
        with limit_threads(_threads(exp.threads, task.threads)):
            metrics = exp(ctx, **task.config)
        record.metrics, problem = _clean_metrics(metrics)
        record.status = "error" if problem else "ok"
        record.error = problem
    except Exception as exc:  # an experiment's failure is stored as an error row, with the traceback tail
        record.error = f"{type(exc).__name__}: {exc}\n" + "".join(traceback.format_exc().splitlines(True)[-8:])
    record.seconds = time.perf_counter() - start
    record.peak_rss_mb = _peak_rss_mb(tracks_peak)
    record.figures = list(ctx.figures)
    return record


def _reset_peak_rss() -> bool:
    """Start this run's peak-memory count afresh (Linux: ``clear_refs`` 5 resets VmHWM), so a process that runs task
    after task reports each run's own peak; False where the kernel does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_rss_mb(since_reset: bool) -> float:
    """Peak resident memory in MB: since the last reset where one was made, else over the process's life."""
    if since_reset:
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024.0
        except (OSError, ValueError, IndexError):
            pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


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


def _execute_dict(task: Task) -> dict[str, Any]:
    # process pools and Ray return plain data
    return asdict(execute(task))


def _threads(declared: int, share: int) -> int:
    """Torch/BLAS threads of one run: the experiment's declared cap within the run's share of the cores (0: no
    limit on that side; both 0 leaves the threads alone)."""
    caps = [n for n in (declared, share) if n > 0]
    return min(caps) if caps else 0


def machine_cores() -> int:
    """CPU cores this process may run on (its affinity mask, not the machine's total)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def run_tasks(tasks: list[Task], store: Store, backend: str = "inline", jobs: int = 1, address: str | None = None,
              force: bool = False, on_result: Callable[[RunRecord], None] | None = None,
              on_retry: Callable[[Task, str], None] | None = None) -> list[RunRecord]:
    """Run every task not already stored (all of them with ``force``); store each result as it arrives.

    ``on_retry(task, why)`` is told when a pool worker died and its task is tried once more.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend == "ray":
        require_ray()
    if jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {jobs}")
    todo = [t for t in tasks
            if force or not store.has_ok(t.paper, t.experiment, t.config, t.seed, t.code_version, t.setting)]
    if backend != "inline" and jobs > 1:  # runs side by side: the long ones first, so no long run starts last
        from icml24.core.snapshot import longest_first

        todo = longest_first(todo)
    if backend != "ray":  # runs side by side share this machine's cores: no oversubscribed thread pools
        share = max(1, machine_cores() // (1 if backend == "inline" else jobs))
        todo = [replace(t, threads=share) for t in todo]
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
        _run_pool(todo, jobs, accept, on_retry)
    else:
        _run_ray(todo, jobs, address, accept)
    return done


MAX_TASKS_PER_WORKER = 32  # a worker is replaced after this many runs (bounds what a long sweep can leak)


def _run_pool(todo: list[Task], jobs: int, accept: Callable[[RunRecord], None],
              on_retry: Callable[[Task, str], None] | None = None) -> None:
    """At most ``jobs`` spawned worker processes, each running task after task; only the driver writes the store.

    A worker imports the library once and keeps its modules for the next task (a fresh interpreter and torch import
    per task cost about 3 CPU seconds, a fifth of a quick ``make reproduce``); each run still seeds everything from
    its own seed, as the inline backend does. A worker that dies (out of memory, a signal) costs only its own task,
    which is tried once more in a fresh worker; the others run on. Ctrl-C stops every worker at once and raises
    ``KeyboardInterrupt`` after the finished rows are stored. Workers ignore SIGINT (the driver stops them) and exit
    by themselves when the driver dies.
    """
    spawn = get_context("spawn")
    queue = deque((task, 1) for task in todo)  # (task, attempt)
    idle: list[tuple[Any, Any, int]] = []  # (process, pipe, runs done) waiting for a task
    running: dict[Any, tuple[Any, Any, int, Task, int]] = {}  # sentinel -> (process, pipe, runs done, task, attempt)
    restore: list[Any] = []  # the SIGINT handler to put back after an interrupted run's cleanup

    def start_worker() -> tuple[Any, Any, int]:
        ours, theirs = spawn.Pipe(duplex=True)
        process = spawn.Process(target=_worker, args=(theirs, os.getpid()), name="icml24-worker")
        with sigint_deferred():  # a Ctrl-C cannot cut the child's start-up pipe (it would print EOFError)
            process.start()
        theirs.close()
        return process, ours, 0

    def retire(process, pipe) -> None:
        try:
            pipe.send(None)  # no more work: the worker returns and exits
        except OSError:
            pass
        process.join()
        pipe.close()

    try:
        while queue or running:
            while queue and len(running) < jobs:
                task, attempt = queue.popleft()
                process, pipe, runs = idle.pop() if idle else start_worker()
                process.name = task.label
                pipe.send(task)
                running[process.sentinel] = (process, pipe, runs, task, attempt)
            pipes = {entry[1]: sentinel for sentinel, entry in running.items()}
            for ready in connection.wait([*running, *pipes]):
                sentinel = pipes.get(ready, ready)
                if sentinel not in running:  # the pipe and the sentinel of one worker both woke us
                    continue
                process, pipe, runs, task, attempt = running[sentinel]
                result = _receive(pipe)
                if result is None and process.is_alive():
                    continue  # the pipe woke us before the process finished exiting: wait for its sentinel
                del running[sentinel]
                if result is not None:
                    accept(RunRecord(**result))
                    if runs + 1 < MAX_TASKS_PER_WORKER and queue:
                        idle.append((process, pipe, runs + 1))
                    else:
                        retire(process, pipe)
                    continue
                process.join()
                pipe.close()
                if attempt == 1:
                    queue.append((task, 2))  # the worker died: its task is tried once more, at the end
                    if on_retry is not None:
                        on_retry(task, f"exit code {process.exitcode}")
                else:
                    accept(_crashed(task, f"its worker process died twice (exit code {process.exitcode})"))
        for process, pipe, _ in idle:
            retire(process, pipe)
        idle.clear()
    except KeyboardInterrupt:
        if threading.current_thread() is threading.main_thread():  # a second Ctrl-C cannot cut the cleanup below
            restore = [signal.signal(signal.SIGINT, signal.SIG_IGN)]  # (it printed "Exception ignored" tracebacks)
        raise
    finally:
        for process, pipe, *_ in [*running.values(), *idle]:
            process.kill()
            process.join()
            pipe.close()
        if restore:
            signal.signal(signal.SIGINT, restore[0])


def _receive(pipe) -> dict[str, Any] | None:
    try:
        return pipe.recv() if pipe.poll() else None
    except (EOFError, OSError):
        return None


def _worker(pipe, driver_pid: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group; the driver decides
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked by the driver while this process started
    _exit_with(driver_pid)
    while True:
        try:
            task = pipe.recv()
        except (EOFError, OSError):  # the driver closed its end: nothing more to do
            break
        if task is None:
            break
        record = asdict(execute(task))
        try:
            pipe.send(record)
        except OSError:  # a broken pipe: the driver stopped listening (Ctrl-C) and keeps no result; nothing to print
            os._exit(3)
    pipe.close()


def _exit_with(driver_pid: int, every: float = 0.5) -> None:
    """Leave as soon as the driver is gone (killed with -9, say), instead of computing for nobody."""

    def watch() -> None:
        while os.getppid() == driver_pid:
            time.sleep(every)
        os._exit(3)

    threading.Thread(target=watch, daemon=True, name="icml24-driver-watch").start()


CRASHED = "worker crashed"
RAY_WORKER_DIED = "its Ray worker died"  # in the error of a task Ray lost (ray.remote(max_retries=0): never retried)


def _crashed(task: Task, why: str) -> RunRecord:
    return RunRecord(task.paper, task.experiment, task.config, task.seed, task.code_version, task.setting, "error",
                     versions=library_versions(), error=f"{CRASHED}: {why}")


def _run_ray(todo: list[Task], jobs: int, address: str | None, accept: Callable[[RunRecord], None]) -> None:
    if not todo:
        return
    import ray  # the extra icml24[ray], imported only when a Ray run is asked for

    started_here = not ray.is_initialized()
    if started_here:
        if address:
            connect_ray(address)
        else:
            # "local": a new Ray of this command's own, never a cluster a `ray start` (or a dead one's leftover
            # /tmp/ray/ray_current_cluster) left behind, which Ray would join instead and then refuse num_cpus
            ray.init(address="local", num_cpus=jobs, include_dashboard=False, object_store_memory=80 * 1024**2,
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
                except Exception as exc:  # the experiment's own errors come back as rows: this is Ray's
                    why = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
                    accept(_crashed(task, f"{RAY_WORKER_DIED}, not retried ({type(exc).__name__}: {why[:300]})"))
    finally:
        if started_here:
            ray.shutdown()


_RAY_PROBE = ("import sys, ray\n"
              "ray.init(address=sys.argv[1], log_to_driver=False, configure_logging=False)\n"
              "ray.shutdown()\n")


def connect_ray(address: str, timeout: float = 20.0) -> None:
    """Join the Ray cluster at ``address`` or raise ``ValueError`` in one line within about ``timeout`` seconds.

    ``host:port`` and ``ray://host:port`` are probed over TCP first (an unreachable host or a closed port answers at
    once instead of hanging); ``auto`` needs a running local cluster (``ray start --head``). Then a child process
    joins the cluster and leaves, with a hard timeout: ``ray.init`` can block in native code where no Python alarm
    reaches it (an address that answers TCP but is not Ray), and the child's native warnings stay out of the output.
    """
    import ray

    check_ray_address(address, timeout)
    try:
        ray.init(address=address, log_to_driver=False, configure_logging=False)
    except Exception as exc:  # one line, not Ray's traceback
        first_line = next((line for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        raise ValueError(f"could not join the Ray cluster at {address}: {first_line}; {_RAY_ADVICE}") from None


def require_ray() -> None:
    """A ValueError naming the extra when ray is not installed (before any work)."""
    if missing(["ray"]):
        raise ValueError(f"--backend ray needs ray: {install_hint('ray')}")


_RAY_ADVICE = "start one with `ray start --head` or check the address (host:port of the head node)"
_RAY_PROBED: set[str] = set()  # addresses a probe joined in this process (the command checks, then the runner joins)


def check_ray_address(address: str, timeout: float = 20.0) -> None:
    """Raise ``ValueError`` in one line unless a Ray cluster answers at ``address``; joins nothing in this process.

    The TCP probe and the child process that joins and leaves (see ``connect_ray``); an address probed once in this
    process is not probed again.
    """
    if address in _RAY_PROBED:
        return
    require_ray()
    advice = _RAY_ADVICE
    if address != "auto":
        host, _, port = address.removeprefix("ray://").rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"--address {address!r} is not host:port, ray://host:port or auto")
        try:
            socket.create_connection((host, int(port)), timeout=min(timeout, 5.0)).close()
        except OSError as exc:
            raise ValueError(f"no Ray cluster answers at {address} ({exc.strerror or exc}); {advice}") from None
    _probe_ray(address, timeout, advice)
    _RAY_PROBED.add(address)


def _probe_ray(address: str, timeout: float, advice: str) -> None:
    """Join and leave the cluster in a child process killed after ``timeout`` seconds; one line on failure."""
    import subprocess
    import sys

    try:
        probe = subprocess.run([sys.executable, "-c", _RAY_PROBE, address], capture_output=True, text=True,
                               timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as expired:
        _refused_token(address, expired.stderr)
        raise ValueError(f"no Ray cluster answered at {address} within {timeout:.0f} s (something listens there, "
                         f"but not Ray); {advice}") from None
    if probe.returncode != 0:
        _refused_token(address, probe.stderr)
        lines = [line.strip() for line in probe.stderr.splitlines() if line.strip()]
        errors = [line for line in lines if "Error" in line or "error" in line]
        why = (errors or lines or [f"exit code {probe.returncode}"])[-1]
        raise ValueError(f"could not join the Ray cluster at {address}: {why[:300]}; {advice}")


def _refused_token(address: str, stderr: str | bytes | None) -> None:
    """One line when the cluster answered but refused the probe's token (Ray's token authentication)."""
    text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr or ""
    if "InvalidAuthToken" in text or "Unauthenticated" in text:
        raise ValueError(f"the Ray cluster at {address} refused this driver: it requires its authentication token "
                         "(Ray's token authentication); set RAY_AUTH_MODE=token and give the head's token "
                         "(~/.ray/auth_token there) as ~/.ray/auth_token here, RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH; "
                         "see docs/guides/ray.md")
