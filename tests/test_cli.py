import json
import subprocess
import sys
from pathlib import Path

import pytest
from toy_cli import command as toy_cli_command
from toy_cli import env as toy_cli_env

from icml24.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def toy_registered(toy):
    return toy


def _err_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("argv, expected", [
    (["run", "nosuch"], "no paper 'nosuch'"),
    (["run", "toy:nope"], "has no experiment 'nope'"),
    (["run", "toy:square", "--set", "x=abc"], "expects float"),
    (["run", "toy:square", "--set", "bogus=1"], "takes no parameter 'bogus'"),
    (["run", "toy:square", "--set", "novalue"], "key=value"),
    (["run", "toy:square", "--seeds", "x-y"], "--seeds"),
    (["run", "toy:square", "--backend", "spark"], "is not one of"),
    (["sweep", "toy"], "sweep takes one experiment"),
    (["show", "nosuch"], "no paper"),
    (["run", "--no-such-flag", "toy"], "No such option"),
    (["run", "tooy"], "did you mean 'toy'"),
    (["run", "toy:"], "names no experiment after ':'"),
    (["run", ":square"], "names no paper"),
    (["run", "toy:square", "--seed", "-1"], "negative"),
    (["run", "toy:square", "--seeds", ""], "names no seed"),
    (["run", "toy:square", "--seed", "1", "--seeds", "2"], "not both"),
    (["run", "toy:square", "--seeds", "0-1000000"], "add --yes"),
    (["run", "toy:square", "--seeds", "0-99999999999"], "more than 10,000,000 seeds"),
    (["reproduce", "--only", ""], "--only names no paper"),
    (["reproduce", "--only", " , "], "--only names no paper"),
    (["run", "toy:square", "--jobs", "0"], "--jobs must be at least 1"),
])
def test_user_errors_exit_2_with_one_line(argv, expected, capsys, tmp_path):
    assert main([*argv, "--store", str(tmp_path / "s.sqlite")] if argv[0] in ("run", "sweep", "reproduce")
                and "--no-such-flag" not in argv else argv) == 2
    assert expected in _err_line(capsys)


def test_report_without_store_exits_2(capsys, tmp_path):
    assert main(["report", "--store", str(tmp_path / "none.sqlite")]) == 2
    assert "icml24 reproduce" in _err_line(capsys)


def test_run_json_summary(tmp_path, capsys):
    out = tmp_path / "summary.json"
    assert main(["run", "toy:square", "--seeds", "0-1", "--backend", "inline", "--store", str(tmp_path / "s.sqlite"),
                 "--json", str(out)]) == 0
    summary = json.loads(out.read_text())
    assert [s["verdict"] for s in summary] == ["holds", "fails"]
    assert summary[0]["measured"] == {"value": 4.0}
    assert set(summary[0]) >= {"paper", "experiment", "claim", "verdict", "measured", "paper_value", "seconds"}
    assert summary[0]["seeds"] == 2


def test_run_with_set_override(tmp_path):
    out = tmp_path / "summary.json"
    assert main(["run", "toy:square", "--set", "x=20", "--backend", "inline", "--store", str(tmp_path / "s.sqlite"),
                 "--json", str(out)]) == 0
    assert [s["verdict"] for s in json.loads(out.read_text())] == ["holds", "holds"]


def test_reproduce_writes_report(tmp_path, capsys):
    store = tmp_path / "res" / "icml24.sqlite"
    out = tmp_path / "summary.json"
    code = main(["reproduce", "--only", "toy", "--backend", "inline", "--store", str(store), "--json", str(out)])
    assert code == 1  # toy's crash and broken experiments end in error: the report is still written
    report = (tmp_path / "res" / "REPORT.md").read_text()
    assert "x squared exceeds 3" in report and "everything is a toy" in report and "holds" in report
    page = (tmp_path / "res" / "report" / "index.html").read_text()
    assert "<table>" in page and "toy failure" in page
    figures = list((tmp_path / "res" / "report" / "figures").glob("*.png"))
    assert sorted(f.name for f in figures) == ["toy-square-curve.png", "verdicts.png"]
    assert "figures/toy-square-curve.png" in page and "report/figures/toy-square-curve.png" in report
    verdicts = [s["verdict"] for s in json.loads(out.read_text())]
    assert verdicts == ["holds", "fails", "error", "error", "holds"]
    assert main(["list", "--store", str(store)]) == 0
    assert "toy" in capsys.readouterr().out
    assert main(["show", "toy"]) == 0


def test_ray_backend_sweep_two_points(tmp_path):
    """A sweep of two grid points submitted as Ray tasks; only the driver writes the store."""
    out = tmp_path / "sweep.json"
    env = toy_cli_env(RAY_DISABLE_USAGE_STATS="1")
    proc = subprocess.run(toy_cli_command("sweep", "toy:square", "--set", "x=1,3", "--seeds", "0", "--backend", "ray",
                                          "--jobs", "2", "--store", str(tmp_path / "s.sqlite"), "--json", str(out)),
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads(out.read_text())
    by_x = {s["config"]["x"]: s for s in summary if s["claim"] == "x squared exceeds 3"}
    assert by_x[1.0]["verdict"] == "fails" and by_x[3.0]["verdict"] == "holds"


def test_cli_help_and_subprocess_error():
    proc = subprocess.run([sys.executable, "-m", "icml24", "run", "nosuch"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "nosuch" in proc.stderr
    assert main(["--help"]) == 0


def test_show_prints_list_types_and_seeds(capsys):
    assert main(["show", "e4"]) == 0
    out = capsys.readouterr().out
    assert "instances: list[str]" in out and "quick (5 seed(s))" in out


def test_output_paths_are_checked_before_any_work(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    store = tmp_path / "s.sqlite"
    for command in (["sweep", "toy:square", "--set", "x=1,2"], ["run", "toy:square"]):
        assert main([*command, "--store", str(store), "--json", str(blocker / "sub" / "out.json")]) == 2
        assert "--json" in _err_line(capsys)
    assert not store.exists()  # nothing ran, nothing was stored
    out = tmp_path / "new" / "folder" / "sweep.json"  # a missing folder is made, before the sweep
    assert main(["sweep", "toy:square", "--set", "x=1,2", "--seeds", "0", "--backend", "inline", "--store", str(store),
                 "--json", str(out)]) == 0
    assert len(json.loads(out.read_text())) == 4


def test_a_large_plan_needs_yes_and_dry_run_runs_nothing(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    assert main(["run", "toy:square", "--seeds", "0-10000", "--yes", "--dry-run", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "10001 run(s) planned" in out and "and 9981 more" in out and not store.exists()


def test_a_mistyped_paper_is_answered_without_importing_papers():
    code = ("import sys, time; t = time.perf_counter(); from icml24.cli import main; rc = main(['run', 'nosuch']); "
            "heavy = [m for m in ('torch', 'icml24.papers.rp', 'torch_geometric') if m in sys.modules]; "
            "print(rc, heavy, time.perf_counter() - t)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    rc, rest = proc.stdout.split(" ", 1)
    assert rc == "2" and rest.startswith("[]"), proc.stdout + proc.stderr


def test_run_null_runs_each_claims_null_beside_the_real_runs(tmp_path, capsys):
    store = str(tmp_path / "s.sqlite")
    out = tmp_path / "null.json"
    assert main(["run", "toy:square", "--null", "--seeds", "0", "--backend", "inline", "--store", store,
                 "--json", str(out)]) == 0
    # two nulls (x = 0.5 for the first claim, x = 11 for the second): each claim judged on its own null's runs
    summary = json.loads(out.read_text())
    assert [(s["claim"], s["verdict"], s["measured"]) for s in summary] == [
        ("x squared exceeds 3", "fails", {"value": 0.25}), ("x squared exceeds 100", "holds", {"value": 121.0})]
    assert "1 claim(s) hold for their null" in capsys.readouterr().err
    assert main(["run", "toy:square", "--seeds", "0", "--backend", "inline", "--store", store,
                 "--json", str(out)]) == 0
    real = json.loads(out.read_text())
    assert [s["verdict"] for s in real] == ["holds", "fails"]  # the null runs did not replace the method's
    assert main(["report", "--store", store, "--out", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "REPORT.md").read_text()
    row = next(line for line in report.splitlines() if line.startswith("| toy | x squared exceeds 3 |"))
    assert "fails: value = 0.25 (x = 0.5 (no method))" in row
    assert "Stored nulls: 1 fail as they should, 1 hold" in report
    assert "| the draw is uniform on [0, 1) | mean 0.5 | draw = " in report  # the regime row, no verdict
    page = (tmp_path / "out" / "report" / "index.html").read_text()
    assert "null (should fail)" in page and "Regime and property measurements" in page


def test_run_null_on_an_experiment_without_one_is_a_user_error(capsys):
    assert main(["run", "toy:coin", "--null", "--backend", "inline"]) == 2
    assert "declares no null" in _err_line(capsys)


def test_reproduce_runs_only_the_cheap_nulls(tmp_path):
    store = tmp_path / "res" / "icml24.sqlite"
    out = tmp_path / "summary.json"
    assert main(["reproduce", "--only", "toy", "--backend", "inline", "--store", str(store), "--json",
                 str(out)]) == 1  # toy's crash and broken experiments end in error
    summary = {s["claim"]: s for s in json.loads(out.read_text())}
    assert summary["x squared exceeds 3"]["null"]["verdict"] == "fails"  # cheap: run by reproduce
    assert summary["x squared exceeds 100"]["null"]["verdict"] == "not run"  # not declared cheap
    assert main(["reproduce", "--only", "toy", "--no-nulls", "--backend", "inline", "--store",
                 str(tmp_path / "other.sqlite"), "--json", str(out)]) == 1
    summary = {s["claim"]: s for s in json.loads(out.read_text())}
    assert summary["x squared exceeds 3"]["null"]["verdict"] == "not run"


def test_runs_that_end_in_error_exit_1_with_one_line(tmp_path, capsys):
    store = str(tmp_path / "s.sqlite")
    assert main(["run", "toy:crash", "--backend", "inline", "--store", store]) == 1
    err = capsys.readouterr().err
    assert "1 of 1 run(s) ended in error; first: toy:crash seed=0: RuntimeError: toy failure" in err
    assert "Traceback" not in err
    assert main(["run", "toy:broken", "--backend", "inline", "--store", store]) == 1  # NaN is an error too
    assert "non-finite" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_non_finite_set_value_is_refused(value, capsys, tmp_path):
    assert main(["run", "toy:square", "--set", f"x={value}", "--store", str(tmp_path / "s.sqlite")]) == 2
    assert "finite" in _err_line(capsys)
    assert not (tmp_path / "s.sqlite").exists()


def test_a_huge_seed_is_refused_before_the_store_is_created(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    assert main(["run", "toy:square", "--seed", str(2**70), "--store", str(store)]) == 2
    assert "below 2**63" in _err_line(capsys) and not store.exists()
    assert main(["run", "toy:square", "--seeds", f"0,{2**64}", "--store", str(store)]) == 2
    assert "below 2**63" in _err_line(capsys) and not store.exists()


def test_a_missing_data_folder_exits_2_before_any_work(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ICML24_DATA", str(tmp_path / "nowhere"))
    store = tmp_path / "s.sqlite"
    assert main(["run", "toy:square", "--store", str(store)]) == 2
    assert "ICML24_DATA" in _err_line(capsys) and not store.exists() and not (tmp_path / "nowhere").exists()


def test_report_onto_a_file_and_a_wrong_store_are_one_line(tmp_path, capsys):
    import sqlite3

    store = tmp_path / "s.sqlite"
    assert main(["run", "toy:square", "--backend", "inline", "--store", str(store)]) == 0
    capsys.readouterr()
    target = tmp_path / "afile"
    target.write_text("x")
    assert main(["report", "--store", str(store), "--out", str(target)]) == 2
    assert "is a file" in _err_line(capsys)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as con:
        con.execute("CREATE TABLE runs (id INTEGER, payload TEXT)")
    for argv in (["report", "--store", str(other)], ["list", "--store", str(other)],
                 ["run", "toy:square", "--store", str(other)]):
        assert main(argv) == 2
        assert "other columns" in _err_line(capsys)


def test_show_a_typo_is_answered_from_file_names(capsys):
    assert main(["show", "rpp"]) == 2
    assert "did you mean 'rp'" in _err_line(capsys)


def test_a_run_and_its_report_write_only_into_the_store_output_and_user_cache(tmp_path):
    """Issue #45: nothing lands outside the store's folder, the report folder and the user cache (numba, matplotlib
    wrote into the package tree and ~/.config)."""
    home, work, store, out = (tmp_path / name for name in ("home", "work", "store", "out"))
    for folder in (home, work):
        folder.mkdir()
    package = Path(__file__).resolve().parents[1] / "src" / "icml24"
    before = {p for p in package.rglob("*") if "__pycache__" not in p.parts}
    env = toy_cli_env(HOME=str(home), XDG_CACHE_HOME="", XDG_CONFIG_HOME="", NUMBA_CACHE_DIR="", MPLCONFIGDIR="")
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "NUMBA_CACHE_DIR", "MPLCONFIGDIR"):
        env.pop(name)
    db = str(store / "r.sqlite")
    runs = (("run", "toy:square", "--store", db, "--backend", "inline"), ("report", "--store", db, "--out", str(out)))
    for args in runs:
        proc = subprocess.run(toy_cli_command(*args), cwd=work, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (out / "REPORT.md").exists()
    assert not any(work.iterdir()), sorted(work.rglob("*"))
    stray = [p for p in home.rglob("*") if p.relative_to(home).parts[0] != ".cache"]
    assert not stray, stray
    after = {p for p in package.rglob("*") if "__pycache__" not in p.parts}
    assert after == before, sorted(after - before)


def test_version_and_uncut_command_summaries(capsys):
    from icml24 import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"icml24 {__version__}"
    assert main(["--help"]) == 0
    listing = capsys.readouterr().out.split("Commands:")[1]
    assert "..." not in listing  # click cuts a long summary with '...'
