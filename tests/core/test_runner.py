"""Planning (one task per seed), execution, backends, kill-and-resume."""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from toy_cli import command as toy_cli_command
from toy_cli import env as toy_cli_env

from icml24.core import Paper, experiment
from icml24.core.runner import execute, plan, run_tasks
from icml24.core.store import Store
from icml24.core.verdicts import evaluate_paper

ROOT = Path(__file__).resolve().parents[2]


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
    tasks = [t for t in tasks if t.experiment not in ("slow", "die")]
    done = run_tasks(tasks, store)
    assert len(done) == 8
    # errored runs are tried again; successful ones are not
    again = run_tasks(tasks, store)
    assert {r.experiment for r in again} == {"broken", "crash"}
    statuses = [r.verdict.status for r in evaluate_paper(toy.PAPER, store)]
    assert statuses == ["holds", "fails", "error", "error", "holds"]


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


def _children(pid: int) -> set[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return {int(p) for p in out.split()}


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_ctrl_c_stops_a_pool_sweep_keeps_finished_rows_and_exits_130(tmp_path):
    db = tmp_path / "int.sqlite"
    proc = _cli("sweep", "toy:slow", "--seeds", "0-29", "--set", "pause=1.5", "--jobs", "2", "--store", str(db),
                start_new_session=True)
    deadline = time.time() + 120
    while _count(db)[0] < 2 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None and _count(db)[0] >= 2
    workers = _children(proc.pid)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole process group
    start = time.time()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert time.time() - start < 15  # promptly, not after the 28 queued tasks
    assert "interrupted" in err and "run the same command again to resume" in err and "Traceback" not in err + out
    kept = _count(db)[0]
    assert 2 <= kept < 30
    time.sleep(0.5)
    assert not any(_alive(w) for w in workers)


def test_a_dead_worker_costs_only_its_task_and_the_exit_status_says_so(tmp_path):
    db = tmp_path / "die.sqlite"
    proc = _cli("run", "toy:die", "--seeds", "0-3", "--jobs", "2", "--store", str(db))
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 1, out + err
    with sqlite3.connect(db) as con:
        rows = dict(con.execute("SELECT seed, status FROM runs").fetchall())
        errors = [e for (e,) in con.execute("SELECT error FROM runs WHERE status='error'")]
    assert rows == {0: "ok", 1: "error", 2: "ok", 3: "ok"}, out + err
    assert errors and "worker crashed" in errors[0] and "twice" in errors[0]  # retried once, then marked
    assert "1 of 4 run(s) ended in error, 1 of them lost their worker process twice" in err
    assert "warning: the worker of toy:die seed=1 died" in err and "trying it once more" in err
    assert "Traceback" not in err


def test_workers_exit_when_the_driver_is_killed(tmp_path):
    db = tmp_path / "orphans.sqlite"
    proc = _cli("sweep", "toy:slow", "--seeds", "0-9", "--set", "pause=60", "--jobs", "2", "--store", str(db))
    deadline = time.time() + 60
    workers: set[int] = set()
    while len(workers) < 3 and time.time() < deadline:  # two workers and multiprocessing's resource tracker
        workers = _children(proc.pid)
        time.sleep(0.1)
    assert len(workers) >= 2
    time.sleep(1.0)
    proc.kill()
    proc.wait()
    deadline = time.time() + 10
    while any(_alive(w) for w in workers) and time.time() < deadline:
        time.sleep(0.1)
    assert not any(_alive(w) for w in workers)


@pytest.mark.parametrize("address", ["127.0.0.1:1", "nonexistent-host.invalid:6379", "ray://127.0.0.1:1", "auto"])
def test_an_unreachable_ray_cluster_is_one_line_and_exit_2(address, tmp_path):
    start = time.time()
    out, err = _cli("run", "toy:square", "--backend", "ray", "--address", address, "--store",
                    str(tmp_path / "r.sqlite")).communicate(timeout=60)
    assert time.time() - start < 30
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err and len(lines) == 1 and address in lines[0], err


def test_settings_declare_seeds_and_the_runner_plans_one_task_each(toy, tmp_path):
    assert toy.coin.default_seeds() == [0, 1, 2]
    assert toy.coin.default_seeds(setting="full") == [0, 1, 2]  # full inherits quick's count
    assert toy.coin.default_seeds(setting="smoke") == [0, 1]
    assert toy.square.default_seeds(full=True) == [0, 1]
    assert [t.seed for t in plan([toy.coin], store_folder=tmp_path)] == [0, 1, 2]
    assert [t.seed for t in plan([toy.coin], [4, 9], store_folder=tmp_path)] == [4, 9]  # --seeds overrides
    assert "seeds" not in toy.coin.config()


def test_an_experiment_may_not_loop_over_its_own_seeds():
    paper = Paper(slug="tmp-own-seeds", title="t")
    with pytest.raises(ValueError, match="repetition is the runner's job"):
        @experiment(paper, quick={"seeds": 3})
        def looping(ctx, seeds: int = 3) -> dict[str, float]:
            return {}
    with pytest.raises(ValueError, match="positive int"):
        @experiment(paper, quick={"seeds": 0})
        def zero(ctx) -> dict[str, float]:
            return {}


def test_threads_are_set_by_the_runner(toy, tmp_path):
    (task,) = plan([toy.coin], [0], store_folder=tmp_path)
    assert execute(task).metrics["threads"] == 1.0


def test_a_listener_that_is_not_ray_is_refused_in_one_line_within_the_timeout():
    """An address that answers TCP but never speaks Ray: ray.init would block in native code past any alarm."""
    import socket as socketlib

    from icml24.core.runner import connect_ray

    listener = socketlib.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # accepts connections and never answers
    try:
        start = time.time()
        with pytest.raises(ValueError) as info:
            connect_ray(f"127.0.0.1:{listener.getsockname()[1]}", timeout=6.0)
        assert time.time() - start < 30
        message = str(info.value)
        assert "\n" not in message and "127.0.0.1" in message and "ray start --head" in message
    finally:
        listener.close()


def test_ctrl_c_at_start_up_and_twice_in_a_row_is_one_line_and_exit_130(tmp_path):
    starting = subprocess.Popen([sys.executable, "-m", "icml24", "list", "--store", str(tmp_path / "s.sqlite")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    time.sleep(0.3)  # still importing the command line
    starting.send_signal(signal.SIGINT)
    out, err = starting.communicate(timeout=60)
    assert starting.returncode == 130 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for delay in (0.6, 0.9, 1.2):  # while the papers' modules (torch, scikit-learn) import: an interrupt mid-import
        listing = subprocess.Popen([sys.executable, "-m", "icml24", "list", "--store", str(tmp_path / "s.sqlite")],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        time.sleep(delay)  # once aborted the process from inside torch's C++ import, once marked a paper broken
        listing.send_signal(signal.SIGINT)
        out, err = listing.communicate(timeout=60)
        assert listing.returncode in (0, 130) and "Traceback" not in err, (delay, listing.returncode, err)
        assert listing.returncode == 0 or len(err.strip().splitlines()) == 1, err
    db = tmp_path / "twice.sqlite"
    proc = _cli("sweep", "toy:slow", "--seeds", "0-29", "--set", "pause=1.5", "--jobs", "2", "--store", str(db),
                start_new_session=True)
    deadline = time.time() + 120
    while _count(db)[0] < 1 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # a second Ctrl-C 50 ms after the first
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err + out, err
    assert len([line for line in err.splitlines() if line.strip()]) <= 2, err


def test_runs_side_by_side_share_the_cores_and_a_declared_cap_stays(toy, tmp_path, monkeypatch):
    from icml24.core import runner

    assert runner._threads(0, 0) == 0 and runner._threads(1, 4) == 1 and runner._threads(0, 2) == 2
    assert runner._threads(3, 0) == 3 and runner._threads(8, 2) == 2
    monkeypatch.setattr(runner, "machine_cores", lambda: 4)
    seen = []
    monkeypatch.setattr(runner, "execute", lambda task: seen.append(task.threads) or execute(task))
    run_tasks(plan([toy.coin], [0], store_folder=tmp_path), Store(tmp_path / "a.sqlite"), backend="inline")
    assert seen == [4]  # one run at a time: every core
    pooled = []
    monkeypatch.setattr(runner, "_run_pool", lambda todo, *rest: pooled.extend(t.threads for t in todo))
    run_tasks(plan([toy.coin], [0, 1, 2], store_folder=tmp_path), Store(tmp_path / "b.sqlite"), backend="local",
              jobs=3)
    assert pooled == [1, 1, 1]  # three at once on four cores: one thread each
    (task,) = plan([toy.coin], [0], store_folder=tmp_path)
    assert execute(runner.replace(task, threads=4)).metrics["threads"] == 1.0  # coin declares threads=1


def test_a_ray_worker_that_dies_is_reported_as_lost_once_not_twice(tmp_path):
    """Ray runs a task once (max_retries=0): its lost worker is not "died twice" as a pool worker's is."""
    db = tmp_path / "ray-die.sqlite"
    proc = _cli("run", "toy:die", "--seeds", "1", "--backend", "ray", "--store", str(db),
                env_extra={"RAY_DISABLE_USAGE_STATS": "1"})
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, out + err
    with sqlite3.connect(db) as con:
        (error,) = con.execute("SELECT error FROM runs WHERE status='error'").fetchone()
    assert error.startswith("worker crashed: its Ray worker died, not retried") and "twice" not in error
    assert "1 of 1 run(s) ended in error, 1 of them lost their Ray worker, which Ray does not retry" in err
    assert "twice" not in err and "Traceback" not in err


def test_without_an_address_the_command_starts_a_ray_of_its_own(tmp_path):
    """A head killed with -9 leaves /tmp/ray/ray_current_cluster behind, and a bare ray.init() joined that address
    (then refused num_cpus); the command's own Ray is asked for by address="local"."""
    import shutil
    import tempfile

    temp = Path(tempfile.mkdtemp(prefix="r", dir="/tmp"))  # short: Ray's socket paths must stay under 107 characters
    try:
        (temp / "ray").mkdir()
        (temp / "ray" / "ray_current_cluster").write_text("127.0.0.1:1")
        proc = _cli("run", "toy:square", "--seeds", "0", "--backend", "ray", "--store", str(tmp_path / "s.sqlite"),
                    env_extra={"RAY_TMPDIR": str(temp), "RAY_DISABLE_USAGE_STATS": "1"})
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, out + err
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def test_a_pool_worker_runs_task_after_task_and_reports_each_runs_own_peak_memory(toy, tmp_path):
    """Workers are reused (one import per worker, not per task), and a run's peak memory is its own, not the
    largest of the runs its worker did before."""
    store = Store(tmp_path / "s.sqlite")
    tasks = plan([toy.slow], [0, 1, 2], grid=[{"pause": 0.0, "megabytes": 300}, {"pause": 0.0, "megabytes": 0}],
                 store_folder=tmp_path)
    done = run_tasks(tasks, store, backend="local", jobs=1)
    assert [r.status for r in done] == ["ok"] * 6
    assert len({r.metrics["pid"] for r in done}) == 1  # one worker ran all six
    big = [r.peak_rss_mb for r in done if r.config["megabytes"] == 300]
    small = [r.peak_rss_mb for r in done if r.config["megabytes"] == 0]
    assert min(big) > max(small) + 200, (big, small)
