"""The results snapshot: the runs of a results store, committed in the repository with their provenance.

The store (``results/icml24.sqlite``) is not part of the repository, so a fresh clone's report and docs would say
"not run" everywhere. ``icml24 snapshot --store S`` writes every run of the current code (per seed: configuration,
setting, metrics, seconds, first error line) into ``results-snapshot/<slug>.json``, each row with where it was made:
date, machine (cores, memory, CPU, accelerator), the command and the git commit. Rows of earlier snapshots that the
store does not replace are kept, so a full run recorded seed by seed over several sessions accumulates. Nothing in
a snapshot is a verdict: ``snapshot_store`` loads the rows into a temporary store and the verdicts are computed from
them as from any store. A row whose experiment's code has changed since is kept, judged, and labelled STALE.
"""

from __future__ import annotations

import atexit
import contextlib
import datetime as dt
import fcntl
import json
import math
import os
import platform
import subprocess
import tempfile
import time
from pathlib import Path

from icml24.core.registry import Paper
from icml24.core.store import RunRecord, Store, config_hash
from icml24.core.versioning import code_version

FORMAT = 1
SNAPSHOT_FOLDER = Path(__file__).resolve().parents[3] / "results-snapshot"  # in a source checkout


def machine() -> dict[str, object]:
    """Where a run was made: cores, memory, CPU model and accelerator of this machine."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30 if hasattr(os, "sysconf") else 0.0
    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cores": os.cpu_count() or 1, "memory_gib": round(memory, 1), "cpu": cpu,
            "accelerator": os.environ.get("ICML24_ACCELERATOR", "none")}


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, timeout=10,
                             cwd=SNAPSHOT_FOLDER.parent)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() or "unknown"


def _row_key(row: dict) -> tuple:
    return row["experiment"], config_hash(row["config"]), int(row["seed"]), row["mode"]


def write_snapshot(store: Store, papers: dict[str, Paper], command: str, out: Path = SNAPSHOT_FOLDER) -> list[Path]:
    """Write (or extend) ``out/<slug>.json`` with every run ``store`` holds of each paper's current code."""
    recorded = {"date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "machine": machine(),
                "command": command, "commit": _git_commit()}
    written = []
    with _folder_lock(out):  # two snapshot commands at once would each rewrite a paper's file from what they read
        for slug, paper in sorted(papers.items()):
            _write_paper(store, slug, paper, recorded, out, written)
    return written


def _write_paper(store: Store, slug: str, paper: Paper, recorded: dict, out: Path, written: list[Path]) -> None:
    runs = [r for exp in paper.experiments.values()
            for r in store.records(slug, exp.name, code_version=code_version(exp))]
    if not runs:
        return
    path = out / f"{slug}.json"
    rows = {_row_key(row): row for row in read_rows(path)}
    for run in runs:  # a store's run replaces the snapshot's row of the same experiment, config, seed, setting
        row = {"experiment": run.experiment, "config": run.config, "seed": run.seed, "mode": run.mode,
               "code_version": run.code_version, "status": run.status, "metrics": run.metrics,
               "seconds": round(run.seconds, 3), "peak_rss_mb": round(run.peak_rss_mb, 1),
               "error": run.error.splitlines()[0] if run.error else "",
               "finished": dt.datetime.fromtimestamp(run.finished_at, dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
               "recorded": recorded}
        rows[_row_key(row)] = row
    data = {"format": FORMAT, "paper": slug,
            "runs": sorted(rows.values(), key=lambda r: (r["experiment"], r["mode"], r["seed"],
                                                           json.dumps(r["config"], sort_keys=True, default=str)))}
    out.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(data, indent=1, sort_keys=True, default=str) + "\n")
    os.replace(partial, path)  # a killed snapshot leaves the previous file whole
    written.append(path)


@contextlib.contextmanager
def _folder_lock(out: Path):
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read_rows(path: Path) -> list[dict]:
    """The rows of one snapshot file (none when absent); a malformed file is a ValueError naming it."""
    return _read_list(path, "runs", "results snapshot", "icml24 snapshot", list)


def _read_list(path: Path, key: str, what: str, rewrite_with: str, convert) -> list[dict]:
    """``convert`` of the list under ``key`` in a snapshot-format JSON file (none when absent); a malformed file is a
    ValueError naming it and the command that rewrites it."""
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text())
        if data["format"] != FORMAT:
            raise ValueError(f"format {data['format']!r}, not {FORMAT}")
        return convert(data[key])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{what} {path} is malformed ({type(exc).__name__}: {exc}); rewrite it with "
                         f"{rewrite_with}") from None


def snapshot_store(papers: dict[str, Paper], folder: Path = SNAPSHOT_FOLDER) -> tuple[Store, dict[str, str]]:
    """A temporary store holding the snapshot's rows of ``papers``, and the experiments judged on STALE rows
    (``slug:experiment`` -> the code version the rows were made with).

    Rows of an experiment whose code has changed are kept only where no row of the current code exists; they are
    loaded under the current version (so the verdicts read them) and reported as stale.
    """
    handle, path = tempfile.mkstemp(prefix="icml24-snapshot-", suffix=".sqlite")
    os.close(handle)
    os.unlink(path)
    atexit.register(_remove_store_files, path)  # a temporary store: gone with this process (each read left 2 MB)
    store = Store(path)
    stale: dict[str, str] = {}
    for slug, paper in papers.items():
        rows = read_rows(folder / f"{slug}.json")
        for name, exp in paper.experiments.items():
            mine = [row for row in rows if row["experiment"] == name]
            current = code_version(exp)
            if mine and not any(row["code_version"] == current for row in mine):
                stale[exp.key] = sorted({row["code_version"] for row in mine})[-1]
            for row in mine:
                if row["code_version"] != current and exp.key not in stale:
                    continue  # an older row beside current ones
                store.put(RunRecord(slug, name, row["config"], int(row["seed"]), current, row["mode"],
                                    row["status"], {k: float(v) for k, v in row["metrics"].items()},
                                    float(row["seconds"]), float(row.get("peak_rss_mb", 0.0)), {}, row.get("error", ""),
                                    [], _timestamp(row.get("finished", ""))))
    return store, stale


def _remove_store_files(path: str) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(OSError):
            os.unlink(path + suffix)


def _timestamp(text: str) -> float:
    try:
        return dt.datetime.strptime(text, "%Y-%m-%d %H:%M UTC").replace(tzinfo=dt.UTC).timestamp()
    except ValueError:
        return 1.0


def provenance(folder: Path = SNAPSHOT_FOLDER, slug: str | None = None) -> list[dict]:
    """The distinct provenance entries (date, machine, command, commit) of the snapshot, of one paper or all."""
    paths = [folder / f"{slug}.json"] if slug else sorted(folder.glob("*.json"))
    found: dict[str, dict] = {}
    for path in paths:
        for row in read_rows(path):
            found.setdefault(json.dumps(row["recorded"], sort_keys=True), row["recorded"])
    return list(found.values())


def provenance_text(entry: dict) -> str:
    """One provenance line, e.g. ``2026-12-07 06:10 UTC, 2 cores / 23.4 GiB (AMD EPYC ...), no accelerator,
    commit 1a2b3c: make reproduce``."""
    m = entry.get("machine", {})
    accelerator = m.get("accelerator", "none")
    return (f"{entry.get('date', '?')}, {m.get('cores', '?')} cores / {m.get('memory_gib', '?')} GiB "
            f"({m.get('cpu', '?')}), {'no accelerator' if accelerator == 'none' else accelerator}, "
            f"commit {entry.get('commit', '?')}: {entry.get('command', '?')}")


def estimate_lines(tasks: list, folder: Path = SNAPSHOT_FOLDER, jobs: int | None = None) -> list[str]:
    """What a plan will cost, from the snapshot's recorded seconds per seed of each experiment at the same setting
    (any configuration): one line per experiment and the total; experiments with no recorded seed are named.

    With ``jobs`` (a CLI plan), the start-up is added: this process's CPU time so far (its imports of the papers and
    their libraries, measured, not guessed), once for itself and once per worker process that will import the same
    (a small experiment's recorded seconds are a fraction of its start-up: gdem:efficiency 8 s against 22 CPU s)."""
    planned: dict[tuple[str, str, str], int] = {}
    for task in tasks:
        key = (task.paper, task.experiment, task.setting)
        planned[key] = planned.get(key, 0) + 1
    per_seed = recorded_seconds(planned, folder)
    lines, total, unknown = [], 0.0, []
    for (slug, name, setting), runs in planned.items():
        seconds = per_seed.get((slug, name, setting))
        if seconds is None:
            unknown.append(f"{slug}:{name} ({setting})")
            continue
        cost = runs * seconds
        total += cost
        lines.append(f"  {slug}:{name} ({setting}): {runs} run(s) x {seconds:.0f} s = {_duration(cost)}")
    startup_seconds = 0.0 if jobs is None else _startup(jobs, len(tasks))  # measured once, shown and added
    startup = "" if jobs is None else f", start-up included ({_duration(startup_seconds)})"
    total += startup_seconds
    head = (f"estimated run time {_duration(total)} in all (one run after another{startup}), from the results "
            "snapshot's recorded seconds per seed" + (f"; no recorded seed for {len(unknown)} experiment(s): "
                                                      f"{', '.join(unknown)}" if unknown else ""))
    return [head, *lines] if lines or unknown else []


def recorded_seconds(keys, folder: Path = SNAPSHOT_FOLDER) -> dict[tuple[str, str, str], float]:
    """Mean recorded seconds per seed of each (paper, experiment, setting) in ``keys`` that the snapshot has."""
    found: dict[tuple[str, str, str], float] = {}
    rows_of: dict[str, list[dict]] = {}
    for slug, name, setting in set(keys):
        try:
            rows = rows_of.setdefault(slug, read_rows(folder / f"{slug}.json"))
        except ValueError:
            rows = []
        seconds = [float(r["seconds"]) for r in rows if r["experiment"] == name and r["mode"] == setting
                   and r["status"] == "ok"]
        if seconds:
            found[(slug, name, setting)] = sum(seconds) / len(seconds)
    return found


def longest_first(tasks: list, folder: Path = SNAPSHOT_FOLDER) -> list:
    """The tasks ordered by recorded seconds, longest first (unrecorded ones first of all, their cost unknown), so
    runs side by side do not end on one long run started last; ties keep the plan's order."""
    per_seed = recorded_seconds({(t.paper, t.experiment, t.setting) for t in tasks}, folder)
    return sorted(tasks, key=lambda t: -per_seed.get((t.paper, t.experiment, t.setting), float("inf")))


def _startup(jobs: int, runs: int) -> float:
    """This process's CPU seconds so far (its imports), for itself and for each worker that imports the same (a
    worker runs task after task and is replaced every ``MAX_TASKS_PER_WORKER`` runs)."""
    from icml24.core.runner import MAX_TASKS_PER_WORKER

    workers = min(max(jobs, 1), runs) + runs // MAX_TASKS_PER_WORKER
    return time.process_time() * (1 + workers) if runs else 0.0


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h" if seconds < 2 * 86400 else f"{seconds / 86400:.1f} days"


UNFINISHED = "unfinished"  # results-snapshot/unfinished/<slug>.json: seeds measured and stopped at a time limit


def record_unfinished(slug: str, experiment: str, seed: int, limit_s: float, command: str,
                      out: Path = SNAPSHOT_FOLDER) -> Path:
    """Record that one seed of ``slug:experiment`` at the full setting ran ``limit_s`` seconds without finishing and
    was stopped: the measured lower bound of what a seed costs, with the same provenance as a run's row. A later
    measurement of the same experiment and seed replaces it."""
    if limit_s <= 0 or not math.isfinite(limit_s):
        raise ValueError(f"limit_s must be a positive number of seconds, got {limit_s!r}")
    with _folder_lock(out):
        return _write_unfinished(slug, experiment, int(seed), float(limit_s), command, out)


def _write_unfinished(slug: str, experiment: str, seed: int, limit_s: float, command: str, out: Path) -> Path:
    path = out / UNFINISHED / f"{slug}.json"
    entries = {(e["experiment"], e["seed"]): e for e in unfinished_entries(slug, out)}
    entries[(experiment, int(seed))] = {
        "experiment": experiment, "seed": int(seed), "mode": "full", "stopped_after_s": round(float(limit_s), 1),
        "recorded": {"date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "machine": machine(),
                     "command": command, "commit": _git_commit()}}
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps({"format": FORMAT, "paper": slug, "unfinished": sorted(
        entries.values(), key=lambda e: (e["experiment"], e["seed"]))}, indent=1, sort_keys=True) + "\n")
    os.replace(partial, path)
    return path


def unfinished_entries(slug: str, folder: Path = SNAPSHOT_FOLDER) -> list[dict]:
    """The recorded stopped seeds of one paper (none when absent); a malformed file is a ValueError naming it."""
    return _read_list(folder / UNFINISHED / f"{slug}.json", "unfinished", "unfinished-seed record",
                      "tools/time_full_seed.py",
                      lambda entries: [dict(e, stopped_after_s=float(e["stopped_after_s"])) for e in entries])


def full_cost_text(slug: str, experiment: str, declared_seeds: int, folder: Path = SNAPSHOT_FOLDER) -> str:
    """What the full setting of ``slug:experiment`` costs, from the snapshot: the recorded seconds per seed times
    the declared seeds, or a stopped seed's lower bound; empty when nothing was measured."""
    per_seed = recorded_seconds({(slug, experiment, "full")}, folder).get((slug, experiment, "full"))
    if per_seed is not None:
        return (f"{_duration(per_seed)} per seed recorded, so the {declared_seeds} seed(s) take about "
                f"{_duration(per_seed * declared_seeds)} one after another")
    stopped = [e for e in unfinished_entries(slug, folder) if e["experiment"] == experiment]
    if not stopped:
        return ""
    longest = max(stopped, key=lambda e: e["stopped_after_s"])
    m = longest["recorded"].get("machine", {})
    return (f"seed {longest['seed']} ran {_duration(longest['stopped_after_s'])} on {m.get('cores', '?')} cores "
            f"without finishing and was stopped ({longest['recorded'].get('date', '?')}), so the "
            f"{declared_seeds} seed(s) take more than {_duration(longest['stopped_after_s'] * declared_seeds)} "
            "one after another")
