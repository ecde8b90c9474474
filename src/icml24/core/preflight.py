"""What a command checks before any work, creating nothing: outputs, backend and jobs, the planned runs' data.

A refused command leaves no file or folder behind (the store, ``--out`` and ``--json`` are made only once every
check passed); each refusal is a ``ValueError`` or ``FileNotFoundError`` whose message is one line.
"""

from __future__ import annotations

import os
from pathlib import Path

from icml24.core import registry
from icml24.core.runner import machine_cores
from icml24.core.store import check_writable_folder, config_hash


def check_output(path: Path | None, what: str) -> None:
    """Fail before any work if an output file cannot be written; creates nothing (its missing folders are made when
    it is written, so a command refused later leaves no folder behind)."""
    if path is None:
        return
    check_writable_folder(path, what)  # first: a name too long for the file system is one line
    if path.is_dir():
        raise ValueError(f"{what} {path} is a folder; give a file name")
    if path.parent.is_dir() and not os.access(path.parent, os.W_OK):
        raise ValueError(f"cannot write {what} {path}: its folder is not writable")


def check_output_folder(out: Path | None) -> None:
    """``--out`` must be (or become) a writable folder, checked before any paper is imported; creates nothing."""
    if out is None:
        return
    check_writable_folder(out, "--out")  # first: a name too long for the file system is one line
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file; give a folder for REPORT.md and report/index.html")
    check_output(out / "REPORT.md", "--out")
    check_output(out / "report" / "index.html", "--out")


JOBS_PER_CORE = 4  # --jobs above this many per core is refused: see check_backend


def check_backend(backend: str, jobs: int, address: str | None) -> None:
    """``--address`` only with ``--backend ray``; ``--jobs`` from 1 to ``JOBS_PER_CORE`` x this machine's cores
    (unless a Ray cluster of its own runs them)."""
    if address is not None and backend != "ray":
        raise ValueError(f"--address {address} names a Ray cluster, which only --backend ray uses (the backend is "
                         f"{backend}); add --backend ray, or leave --address out")
    if jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {jobs}")
    if backend == "ray" and address:
        return  # the cluster's CPUs decide how many run at once, not this machine's
    cores = machine_cores()
    if jobs > JOBS_PER_CORE * cores:
        raise ValueError(f"--jobs {jobs} is more than {JOBS_PER_CORE} x the {cores} core(s) this process may use "
                         f"({JOBS_PER_CORE * cores}): each job is a process with its own copy of a model and its data, "
                         "and jobs beyond the cores only wait for each other while their memory adds up; give at most "
                         f"--jobs {JOBS_PER_CORE * cores}")


def check_data(tasks: list) -> None:
    """Each planned configuration's declared data is on disk (``@experiment(data=...)``), before any run."""
    seen, problems = set(), []
    for task in tasks:
        key = (task.paper, task.experiment, config_hash(task.config))
        if key in seen:
            continue
        seen.add(key)
        exp = registry.registered()[task.paper].experiments[task.experiment]
        problems += [(f"{task.paper}:{task.experiment}", line) for line in exp.missing_data(task.config)]
    if problems:
        who, first = problems[0]
        more = f" (and {len(problems) - 1} more like it in the plan)" if len(problems) > 1 else ""
        raise FileNotFoundError(f"{who} needs data that is missing, no run started: {first}{more}")
