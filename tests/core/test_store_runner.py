import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from toy_cli import command as toy_cli_command
from toy_cli import env as toy_cli_env

from icml24.core.params import parse_grid, parse_seeds, parse_value
from icml24.core.runner import execute, plan, run_tasks
from icml24.core.store import RunRecord, Store
from icml24.core.verdicts import aggregate, evaluate_paper

ROOT = Path(__file__).resolve().parents[2]


def test_store_roundtrip_and_replace(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    record = RunRecord("p", "e", {"a": 1}, 0, "v1", "quick", "ok", {"m": 1.5}, 2.0, 10.0, {"numpy": "x"})
    store.put(record)
    store.put(record)  # same key: replaced, not duplicated
    assert store.count() == 1
    assert store.has_ok("p", "e", {"a": 1}, 0, "v1")
    assert not store.has_ok("p", "e", {"a": 2}, 0, "v1")
    (back,) = store.records("p")
    assert back.metrics == {"m": 1.5} and back.config == {"a": 1}


def test_store_rejects_folder_and_garbage(tmp_path):
    with pytest.raises(ValueError, match="is a folder"):
        Store(tmp_path)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(ValueError, match="not an icml24 results store"):
        Store(junk)


def test_execute_records_nan_and_crash_as_errors(toy, tmp_path):
    (nan_task,) = plan([toy.broken], [0], store_folder=tmp_path)
    record = execute(nan_task)
    assert record.status == "error" and "non-finite" in record.error
    (crash_task,) = plan([toy.crash], [0], store_folder=tmp_path)
    record = execute(crash_task)
    assert record.status == "error" and "toy failure" in record.error


def test_run_skips_stored_and_verdicts(toy, tmp_path):
    store = Store(tmp_path / "s.sqlite")
    tasks = plan(toy.PAPER.experiments.values(), [0, 1], store_folder=tmp_path)
    tasks = [t for t in tasks if t.experiment != "slow"]
    done = run_tasks(tasks, store)
    assert len(done) == 8
    # errored runs are tried again; successful ones are not
    again = run_tasks(tasks, store)
    assert {r.experiment for r in again} == {"broken", "crash"}
    statuses = [r.verdict.status for r in evaluate_paper(toy.PAPER, store)]
    assert statuses == ["holds", "fails", "error", "error", "holds"]


def test_aggregate_means_and_std():
    records = [RunRecord("p", "e", {}, s, "v", "quick", "ok", {"m": float(s)}) for s in (1, 2, 3)]
    summary = aggregate(records)
    assert summary["m"] == 2.0 and summary["m_std"] == 1.0 and summary["num_seeds"] == 3.0


def test_parsers(toy):
    assert parse_seeds("0-3") == [0, 1, 2, 3]
    assert parse_seeds("5,1,1") == [1, 5]
    for bad in ("a-b", "3-1", "", "-1"):
        with pytest.raises(ValueError, match="--seeds"):
            parse_seeds(bad)
    assert parse_value(toy.square, "x", "2.5") == 2.5
    assert parse_value(toy.square, "noisy", "true") is True
    with pytest.raises(ValueError, match="expects float"):
        parse_value(toy.square, "x", "abc")
    with pytest.raises(ValueError, match="expects int"):
        parse_value(toy.square, "repeats", "1.5")
    grid = parse_grid(toy.square, ["x=1,2", "label=u,v"], allow_lists=True)
    assert len(grid) == 4 and {"x": 2.0, "label": "v"} in grid


def test_process_pool_backend(toy, tmp_path):
    store = Store(tmp_path / "s.sqlite")
    tasks = plan([toy.square], [0, 1], store_folder=tmp_path)
    done = run_tasks(tasks, store, backend="local", jobs=2)
    assert sorted(r.seed for r in done) == [0, 1]
    assert all(r.status == "ok" and r.peak_rss_mb > 0 for r in done)


def _cli(*args, env_extra=None, **kwargs):
    return subprocess.Popen(toy_cli_command(*args), env=toy_cli_env(**(env_extra or {})), cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def _count(db: Path) -> tuple[int, int]:
    if not db.exists():
        return 0, 0
    try:
        with sqlite3.connect(db, timeout=30) as con:
            total = con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
            distinct = con.execute("SELECT COUNT(DISTINCT seed) FROM runs").fetchone()[0]
    except sqlite3.OperationalError:  # the schema is not created yet
        return 0, 0
    return total, distinct


def test_resume_after_sigkill(tmp_path):
    """A run killed with SIGKILL, started again, finishes with no lost and no duplicated rows."""
    db = tmp_path / "kill.sqlite"
    args = ("run", "toy:slow", "--seeds", "0-7", "--backend", "inline", "--store", str(db))
    proc = _cli(*args)
    deadline = time.time() + 120
    while _count(db)[0] < 2 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed_at = _count(db)[0]
    assert 2 <= killed_at < 8
    out, err = _cli(*args).communicate(timeout=180)
    assert "already in the store were skipped" in out, out + err
    assert _count(db) == (8, 8)


def test_code_version_covers_imported_field_packages(toy):
    from icml24.core.versioning import _imported_subpackages, code_version

    source = "from icml24.graph import X\nimport icml24.data.graphs\nfrom icml24.core import Paper\nimport numpy\n"
    assert _imported_subpackages(source) == {"graph", "data"}
    assert code_version(toy.square) == code_version(toy.slow)  # same module, same code
    assert code_version(toy.square).startswith("0.")
