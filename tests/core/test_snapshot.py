"""The results snapshot: rows with provenance, merged across writes, loaded back as a store, stale rows labelled."""

import json

import pytest

from icml24.core import snapshot as snapshots
from icml24.core.store import RunRecord, Store
from icml24.core.verdicts import evaluate_paper
from icml24.core.versioning import code_version


def _store_with(path, toy, seeds, x=2.0):
    store = Store(path)
    exp = toy.PAPER.experiments["square"]
    for seed in seeds:
        store.put(RunRecord("toy", "square", exp.config(overrides={"x": x}), seed, code_version(exp), "quick", "ok",
                            {"value": x * x, "draw": 0.5, "repeats": 1.0}, 1.5, 10.0))
    return store


def test_a_snapshot_keeps_earlier_rows_and_reads_back_as_the_same_verdicts(tmp_path, toy):
    folder = tmp_path / "snap"
    with _store_with(tmp_path / "a.sqlite", toy, [0]) as first:
        snapshots.write_snapshot(first, {"toy": toy.PAPER}, "first", folder)
    with _store_with(tmp_path / "b.sqlite", toy, [1, 2]) as second:
        snapshots.write_snapshot(second, {"toy": toy.PAPER}, "second", folder)
        direct = {r.claim.text: r.verdict.status for r in evaluate_paper(toy.PAPER, second)}
    rows = snapshots.read_rows(folder / "toy.json")
    assert sorted(r["seed"] for r in rows) == [0, 1, 2]
    assert {r["recorded"]["command"] for r in rows} == {"first", "second"}
    assert set(rows[0]["recorded"]["machine"]) == {"cores", "memory_gib", "cpu", "accelerator"}
    loaded, stale = snapshots.snapshot_store({"toy": toy.PAPER}, folder)
    with loaded:
        results = evaluate_paper(toy.PAPER, loaded)
    assert not stale
    assert {r.claim.text: r.verdict.status for r in results}["x squared exceeds 3"] == direct["x squared exceeds 3"]
    assert next(r for r in results if r.claim.text == "x squared exceeds 3").num_seeds == 3
    assert len(snapshots.provenance(folder, "toy")) == 2


def test_a_malformed_snapshot_is_one_error_naming_the_file(tmp_path):
    (tmp_path / "toy.json").write_text(json.dumps({"format": 99, "runs": []}))
    with pytest.raises(ValueError, match="toy.json is malformed"):
        snapshots.read_rows(tmp_path / "toy.json")
    assert snapshots.read_rows(tmp_path / "absent.json") == []


def test_a_dry_run_estimate_reads_the_recorded_seconds_per_seed(tmp_path, toy):
    from icml24.core.runner import plan

    folder = tmp_path / "snap"
    with _store_with(tmp_path / "a.sqlite", toy, [0, 1]) as store:  # 1.5 s per seed at quick
        snapshots.write_snapshot(store, {"toy": toy.PAPER}, "first", folder)
    tasks = plan([toy.PAPER.experiments["square"], toy.PAPER.experiments["coin"]], seeds=[0, 1, 2, 3],
                 store_folder=tmp_path)
    head, *lines = snapshots.estimate_lines(tasks, folder)
    assert lines == ["  toy:square (quick): 4 run(s) x 2 s = 6 s"]
    assert head.startswith("estimated run time 6 s") and "toy:coin (quick)" in head
    assert snapshots.estimate_lines(tasks, tmp_path / "none")[0].startswith("estimated run time 0 s")
    # a CLI plan adds the start-up it measured (this process's CPU so far), for itself and each of its 2 workers
    startup = snapshots._startup(2, len(tasks))
    assert startup >= 3 * 0.9 * snapshots.time.process_time() - 1e-9 and startup > 0
    with_startup = snapshots.estimate_lines(tasks, folder, jobs=2)[0]
    assert "start-up included" in with_startup and "start-up" not in head


def test_runs_side_by_side_start_with_the_longest_recorded_ones(tmp_path, toy):
    from icml24.core.runner import plan

    folder = tmp_path / "snap"
    with _store_with(tmp_path / "a.sqlite", toy, [0]) as store:  # square: 1.5 s per seed
        exp = toy.PAPER.experiments["slow"]
        store.put(RunRecord("toy", "slow", exp.config(), 0, code_version(exp), "quick", "ok", {"seed": 0.0}, 9.0, 1.0))
        snapshots.write_snapshot(store, {"toy": toy.PAPER}, "first", folder)
    tasks = plan([toy.PAPER.experiments[name] for name in ("square", "slow", "coin")], seeds=[0, 1],
                 store_folder=tmp_path)
    ordered = snapshots.longest_first(tasks, folder)
    assert [(t.experiment, t.seed) for t in ordered] == [("coin", 0), ("coin", 1), ("slow", 0), ("slow", 1),
                                                         ("square", 0), ("square", 1)]
    assert snapshots.longest_first(tasks, tmp_path / "none") == tasks  # nothing recorded: the plan's order


def test_reading_the_snapshot_leaves_no_temporary_store_behind(tmp_path):
    """Every report, docs build and README check reads the snapshot through a temporary store: it must not stay."""
    import subprocess
    import sys

    script = (f"import tempfile; tempfile.tempdir = {str(tmp_path)!r}\n"
              "from icml24.core import registry, snapshot\n"
              "store, _ = snapshot.snapshot_store({'e4': registry.get_paper('e4')})\n"
              "print('read')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not list(tmp_path.glob("icml24-snapshot-*")), list(tmp_path.iterdir())


def test_a_seed_stopped_at_its_limit_is_recorded_as_a_lower_bound_and_a_finished_seed_replaces_it(tmp_path, toy):
    folder = tmp_path / "snap"
    assert snapshots.full_cost_text("toy", "square", 2, folder) == ""  # nothing measured: nothing claimed
    snapshots.record_unfinished("toy", "square", 0, 600, "icml24 run toy:square --full --seeds 0", folder)
    snapshots.record_unfinished("toy", "square", 0, 900, "again, longer", folder)  # the same seed: replaced
    entries = snapshots.unfinished_entries("toy", folder)
    assert [(e["experiment"], e["seed"], e["stopped_after_s"]) for e in entries] == [("square", 0, 900.0)]
    assert set(entries[0]["recorded"]) == {"date", "machine", "command", "commit"}
    text = snapshots.full_cost_text("toy", "square", 2, folder)
    assert "ran 15.0 min" in text and "without finishing" in text and "more than 30.0 min" in text
    assert snapshots.provenance(folder) == []  # the unfinished folder is not read as a paper's rows
    exp = toy.PAPER.experiments["square"]
    with Store(tmp_path / "full.sqlite") as store:  # a finished full seed: its recorded seconds say the cost
        store.put(RunRecord("toy", "square", exp.config(overrides={"x": 3.0}), 0, code_version(exp), "full", "ok",
                            {"value": 9.0, "draw": 0.5, "repeats": 1.0}, 4000.0, 10.0))
        snapshots.write_snapshot(store, {"toy": toy.PAPER}, "full seed 0", folder)
    assert snapshots.full_cost_text("toy", "square", 2, folder) == ("66.7 min per seed recorded, so the 2 seed(s) "
                                                                    "take about 2.2 h one after another")


def test_unfinished_records_are_validated_and_written_under_a_lock(tmp_path):
    import threading

    with pytest.raises(ValueError, match="positive number of seconds"):
        snapshots.record_unfinished("toy", "square", 0, float("nan"), "x", tmp_path)
    (tmp_path / "unfinished").mkdir()
    (tmp_path / "unfinished" / "bad.json").write_text("{}")
    with pytest.raises(ValueError, match="bad.json is malformed"):
        snapshots.unfinished_entries("bad", tmp_path)
    # writers at once (two measuring chains): each reads, adds and rewrites the file; the lock keeps every entry
    threads = [threading.Thread(target=lambda i=i: [snapshots.record_unfinished("toy", f"e{i}", s, 1.0, "x", tmp_path)
                                                      for s in range(5)]) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(snapshots.unfinished_entries("toy", tmp_path)) == 20
