"""Recorded runs: a paper-scale run kept in the repository for a claim only the full setting can test.

The results store (``results/``) is not part of the repository, so a full-only claim (``Claim(..., setting="full")``)
reads ``not run`` wherever nobody has hours to re-run it. A recorded run is that run's per-seed metrics, written from
a store by ``python -m icml24.core.records`` to ``<paper module's folder>/records/<slug>_<experiment>_full.json``
with the code version, date, machine and command. When the store holds no full run of the claim's experiment, the
claim's own check judges the recorded metrics (``verdicts.evaluate_paper``), and the report and the docs label the
verdict "recorded run (code version, date), not re-run", naming the parameters it changed from the full setting and
saying "stale" when the experiment's code has changed since. Nothing in a record is a verdict.
"""

from __future__ import annotations

import argparse
import datetime as dt
import inspect
import json
import os
import platform
import sys
from dataclasses import dataclass, field
from pathlib import Path

from icml24.core.registry import Experiment, resolve
from icml24.core.store import RunRecord, Store
from icml24.core.versioning import code_version

FORMAT = 1


@dataclass
class RecordedRun:
    """One recorded run of an experiment (every seed it kept) and where and how it was made."""

    path: Path
    setting: str
    code_version: str
    date: str
    machine: str
    command: str
    config: dict
    records: list[RunRecord] = field(default_factory=list)


def records_folder(exp: Experiment) -> Path:
    """``records/`` beside the module that defines ``exp``."""
    return Path(inspect.getfile(exp.fn)).resolve().parent / "records"


def record_path(exp: Experiment, setting: str = "full") -> Path:
    return records_folder(exp) / f"{exp.paper.slug}_{exp.name}_{setting}.json"


def load_recorded(exp: Experiment, setting: str = "full") -> RecordedRun | None:
    """The recorded run of ``exp`` at ``setting``, or ``None``; a malformed file is a ValueError naming it."""
    path = record_path(exp, setting)
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        if data["format"] != FORMAT or data["paper"] != exp.paper.slug or data["experiment"] != exp.name:
            raise ValueError("it records another experiment or format")
        records = [RunRecord(exp.paper.slug, exp.name, data["config"], int(seed), data["code_version"], setting, "ok",
                             {k: float(v) for k, v in run["metrics"].items()}, float(run["seconds"]),
                             float(run.get("peak_rss_mb", 0.0)), data.get("versions", {}))
                   for seed, run in sorted(data["seeds"].items(), key=lambda item: int(item[0]))]
        if data["setting"] != setting or not records:
            raise ValueError("it records no seed of this setting")
        return RecordedRun(path, setting, data["code_version"], data["date"], data["machine"], data["command"],
                           data["config"], records)
    except (KeyError, TypeError, ValueError, json.JSONDecodeError) as exc:
        raise ValueError(f"recorded run {path} is malformed ({type(exc).__name__}: {exc}); rewrite it with "
                         f"python -m icml24.core.records") from None


def changed_parameters(run: RecordedRun, exp: Experiment) -> dict:
    """The parameters ``run`` ran with that differ from ``exp``'s setting (a recorded part of the setting)."""
    setting = exp.config(setting=run.setting)
    return {k: v for k, v in run.config.items()
            if json.dumps(setting.get(k), sort_keys=True, default=str) != json.dumps(v, sort_keys=True, default=str)}


def label(run: RecordedRun, exp: Experiment) -> str:
    """What the report prints beside a verdict computed from ``run``."""
    changed = changed_parameters(run, exp)
    seeds = ",".join(str(r.seed) for r in run.records)
    text = f"recorded run ({run.setting} setting, seed(s) {seeds}, code {run.code_version}, {run.date}), not re-run"
    if changed:
        text += "; changed from the setting: " + ", ".join(f"{k}={v}" for k, v in changed.items())
    current = code_version(exp)
    if current != run.code_version:
        text += f"; STALE: the experiment's code is now {current}"
    return text + f"; command: {run.command}"


def write_record(store: Store, exp: Experiment, seeds: list[int], command: str, setting: str = "full",
                 out: Path | None = None) -> Path:
    """Write the store's newest ``ok`` run of each seed of ``exp`` (one configuration, one code version) as the
    recorded run of ``setting``; refuses seeds that are missing or errored."""
    rows = [r for r in store.records(exp.paper.slug, exp.name) if r.seed in seeds]
    if not rows:
        raise ValueError(f"{store.path} holds no run of {exp.key} at seed(s) {seeds}")
    newest = rows[-1]
    chosen = {r.seed: r for r in rows if r.config_hash == newest.config_hash and r.code_version == newest.code_version
              and r.mode == newest.mode}
    missing = [s for s in seeds if s not in chosen or chosen[s].status != "ok"]
    if missing:
        raise ValueError(f"seed(s) {missing} of {exp.key} have no ok run with the newest run's configuration and code")
    data = {
        "format": FORMAT, "paper": exp.paper.slug, "experiment": exp.name, "setting": setting,
        "code_version": newest.code_version, "config": newest.config, "command": command,
        "date": dt.datetime.fromtimestamp(max(r.finished_at for r in chosen.values()), dt.UTC)
        .strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python "
                   f"{platform.python_version()}",
        "versions": newest.versions,
        "seeds": {str(s): {"metrics": chosen[s].metrics, "seconds": chosen[s].seconds,
                           "peak_rss_mb": chosen[s].peak_rss_mb} for s in sorted(chosen)},
    }
    path = out or record_path(exp, setting)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a recorded run from a results store.")
    parser.add_argument("target", help="SLUG:EXPERIMENT")
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--seeds", required=True, help="comma-separated seeds, e.g. 0 or 0,1")
    parser.add_argument("--command", required=True, help="the icml24 command that made the run")
    parser.add_argument("--setting", default="full")
    args = parser.parse_args(argv)
    (exp,) = resolve(args.target)
    with Store(args.store) as store:
        path = write_record(store, exp, [int(s) for s in args.seeds.split(",")], args.command, args.setting)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
