"""Measure one seed of an experiment at the paper's (``--full``) setting, within a time limit, into the snapshot.

    python tools/time_full_seed.py SLUG:EXPERIMENT --limit 600 [--seed 0] [--store FILE]

Runs ``icml24 run SLUG:EXPERIMENT --full --seeds SEED`` into its own store. When the seed finishes inside the limit,
its run goes into ``results-snapshot/<slug>.json`` (``icml24 snapshot``, with the command as provenance) and is
judged like any recorded seed. When it does not, the run (with its worker processes) is stopped at the limit and
``results-snapshot/unfinished/<slug>.json`` records that the seed ran that long without finishing: the measured lower
bound of its cost, which the paper's page states beside "no full run recorded". Exit status 0 either way; 1 when the
run failed.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", help="SLUG:EXPERIMENT")
    parser.add_argument("--limit", type=float, required=True, help="seconds before the seed is stopped")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--store", type=Path, default=None, help="results store (default: a new temporary one)")
    args = parser.parse_args(argv)
    if ":" not in args.target:
        parser.error(f"target must be SLUG:EXPERIMENT (one experiment), got {args.target!r}")
    if not args.limit > 0:
        parser.error(f"--limit must be a positive number of seconds, got {args.limit}")
    slug, experiment = args.target.split(":", 1)
    store = args.store or Path(tempfile.mkdtemp(prefix="icml24-full-")) / "icml24.sqlite"
    command = f"icml24 run {args.target} --full --seeds {args.seed}"
    icml24 = [sys.executable, "-m", "icml24"]
    run = subprocess.Popen([*icml24, "run", args.target, "--full", "--seeds", str(args.seed), "--store", str(store)],
                           start_new_session=True)  # its own process group: the limit stops its workers too
    try:
        status = run.wait(timeout=args.limit)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
        from icml24.core.snapshot import record_unfinished

        path = record_unfinished(slug, experiment, args.seed, args.limit, command)
        print(f"{args.target} seed {args.seed} did not finish in {args.limit:.0f} s: stopped, recorded in {path}")
        return 0
    if status != 0:
        print(f"{args.target} seed {args.seed} failed (exit status {status}); nothing recorded", file=sys.stderr)
        return 1
    return subprocess.call([*icml24, "snapshot", "--store", str(store), "--command", command])


if __name__ == "__main__":
    sys.exit(main())
