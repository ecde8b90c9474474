import json
import re
import signal
import subprocess
import sys
import time
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


def test_run_oracle_judges_each_claim_on_its_own_oracle(tmp_path, capsys):
    store, out = str(tmp_path / "s.sqlite"), tmp_path / "oracle.json"
    assert main(["run", "toy:square", "--oracle", "--seeds", "0", "--backend", "inline", "--store", store,
                 "--json", str(out)]) == 0
    summary = json.loads(out.read_text())  # x = 4 for the first claim, x = 11 for the second: both hold
    assert [(s["claim"], s["verdict"], s["measured"]) for s in summary] == [
        ("x squared exceeds 3", "holds", {"value": 16.0}), ("x squared exceeds 100", "holds", {"value": 121.0})]
    assert "fail for their oracle" not in capsys.readouterr().err
    assert main(["run", "toy:square", "--seeds", "0", "--backend", "inline", "--store", store, "--json",
                 str(out)]) == 0
    real = {s["claim"]: s for s in json.loads(out.read_text())}
    assert real["x squared exceeds 3"]["verdict"] == "holds"  # the oracle's runs did not replace the method's
    assert main(["reproduce", "--only", "toy", "--no-nulls", "--no-controls", "--backend", "inline", "--store", store,
                 "--json", str(out)]) == 1  # toy's crash and broken experiments end in error
    summary = {s["claim"]: s for s in json.loads(out.read_text())}
    assert summary["x squared exceeds 100"]["oracle"]["verdict"] == "holds"
    assert summary["a crash is an error"]["oracle"] == {"label": None, "none": "it crashes", "verdict": "none"}
    capsys.readouterr()
    assert main(["run", "toy:coin", "--oracle", "--backend", "inline", "--store", store]) == 2
    assert "declares no oracle" in _err_line(capsys)


def test_run_family_reads_each_claim_over_its_instances(tmp_path, capsys):
    store, out = str(tmp_path / "s.sqlite"), tmp_path / "family.json"
    assert main(["run", "toy:square", "--family", "--seeds", "0", "--backend", "inline", "--store", store,
                 "--json", str(out)]) == 0
    (first,) = json.loads(out.read_text())  # the second claim is a single instance: no family to read
    family = first["family"]  # x = 2 (own), 1.5, 2.5: 4, 2.25, 6.25 > 3 on 2 of 3, and 0.6 of 3 needs 2
    assert (first["verdict"], family["holds"], family["of"], family["required"]) == ("holds", 2, 3, 2)
    assert [(m["name"], m["verdict"]) for m in family["members"]] == [("own", "holds"), ("small", "fails"),
                                                                       ("large", "holds")]
    assert "instances" in capsys.readouterr().out  # the table's column (its text folds in a narrow terminal)
    assert main(["report", "--store", store, "--out", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "REPORT.md").read_text()
    row = next(line for line in report.splitlines() if line.startswith("| toy | x squared exceeds 3 |"))
    assert "holds on 2 of 3 instances (needs 2; fails on: small) (x from 1.5 to 2.5)" in row
    single = next(line for line in report.splitlines() if line.startswith("| toy | x squared exceeds 100 |"))
    assert "one instance: one x is the claim" in single
    assert "1 claims read over their whole family" in report


def test_a_family_member_not_run_leaves_the_instance_verdict_and_says_so(tmp_path):
    store, out = str(tmp_path / "s.sqlite"), tmp_path / "s.json"
    assert main(["run", "toy:square", "--seeds", "0", "--backend", "inline", "--store", store,
                 "--set", "x=1.5"]) == 0  # one member besides the experiment's own instance
    assert main(["reproduce", "--only", "toy", "--no-nulls", "--backend", "inline", "--store", store,
                 "--json", str(out)]) == 1
    first = next(s for s in json.loads(out.read_text()) if s["claim"] == "x squared exceeds 3")
    assert first["verdict"] == first["instance_verdict"] == "holds"
    assert first["family"]["verdict"] == "not run" and first["family"]["holds"] == 1


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


_LIST_PROBE = """
import json, sys
from icml24.cli import main
codes = [main(argv) for argv in json.loads(sys.argv[1])]
fields = json.loads(sys.argv[2])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "torch_geometric", "matplotlib")
               or (m.startswith("icml24.") and m.split(".")[1] in fields) or m.startswith("icml24.papers."))
print("LOADED " + json.dumps([codes, heavy]))
"""


def _list_in_fresh_interpreter(tmp_path, *commands: list[str]) -> tuple[list[int], list[str], str]:
    """The icml24 commands run in a new interpreter (80 columns): exit codes, the heavy modules it loaded, stdout."""
    env = {**toy_cli_env(), "COLUMNS": "80"}
    fields = sorted(p.name for p in (ROOT / "src" / "icml24").iterdir() if (p / "__init__.py").exists()
                    and p.name not in ("core", "papers"))
    proc = subprocess.run([sys.executable, "-c", _LIST_PROBE, json.dumps(commands), json.dumps(fields)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out, _, loaded = proc.stdout.rpartition("LOADED ")
    codes, heavy = json.loads(loaded)
    return codes, heavy, out


def test_list_and_show_read_the_index_without_importing_a_paper_field_or_torch(tmp_path):
    """Issue #59: `icml24 list` imported every paper (torch, torch_geometric: 7-10 CPU s); now it reads
    icml24/papers/index.json, and fits an 80-column terminal with one line per claim, cut with its id."""
    from icml24.core import index

    codes, heavy, out = _list_in_fresh_interpreter(tmp_path, ["list", "--store", str(tmp_path / "none.sqlite")],
                                                   ["show", "rp"])
    assert codes == [0, 0] and heavy == [], heavy
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    claims = sum(len(entry["claims"]) for entry in index.stored().values())
    rows = [line for line in lines if re.match(r"^\s+(\S+\s+)?\d+\s+not run\s+\S", line)]
    assert len(rows) == claims  # one line each: none wrapped
    assert sum(line.rstrip().endswith("…") for line in rows) > claims // 2  # long texts shortened, not wrapped
    assert "rp: How Graph Neural Networks Learn" in out and "Install: pip install 'icml24[graph]'" in out


def test_list_judges_only_the_papers_the_store_holds_runs_of(tmp_path):
    """With --store, a paper with current runs stored is imported and judged (its error verdicts shown); papers without
    runs are not imported (gdem is: its full-only claim has a recorded run in the repository)."""
    from icml24.core.registry import get_paper
    from icml24.core.store import RunRecord, Store
    from icml24.core.versioning import code_version

    exp = get_paper("e4").experiments["random_regret"]
    with Store(tmp_path / "s.sqlite") as db:
        for seed in range(exp.seeds["quick"]):
            db.put(RunRecord("e4", exp.name, exp.config(setting="quick"), seed, code_version(exp), "quick", "error",
                             error="boom"))
    codes, heavy, out = _list_in_fresh_interpreter(tmp_path, ["list", "--store", str(tmp_path / "s.sqlite")])
    assert codes == [0]
    assert {m.split(".")[2] for m in heavy if m.startswith("icml24.papers.")} == {"e4", "gdem"}  # packages
    section = out[out.index("\n  e4 "):out.index("\n  est ")]
    verdicts = dict(re.findall(r"^\s+(?:e4\s+)?(\d+)\s+(not run|error|holds|fails)\s", section, re.M))
    assert verdicts == {"1": "not run", "2": "not run", "3": "error", "4": "not run", "5": "not run", "6": "not run",
                        "7": "not run"}, section


def _nothing_written(tmp_path: Path) -> None:
    assert not any(tmp_path.iterdir()), sorted(tmp_path.rglob("*"))


def test_an_over_long_store_path_is_one_line_exit_2(tmp_path, capsys):
    long = tmp_path / ("a" * 300) / "s.sqlite"
    for argv in (["run", "toy:square", "--store", str(long)], ["report", "--store", str(long)],
                 ["list", "--store", str(long)],
                 ["reproduce", "--only", "toy", "--store", str(long)],
                 ["reproduce", "--only", "toy", "--store", str(tmp_path / "s.sqlite"), "--out", str(long.parent)]):
        assert main(argv) == 2
        line = _err_line(capsys)
        assert "File name too long" in line and len(line) < 400
    _nothing_written(tmp_path)


def test_a_repeated_only_slug_is_planned_once(tmp_path, capsys):
    store = str(tmp_path / "s.sqlite")
    assert main(["reproduce", "--only", "toy", "--dry-run", "--store", store]) == 0
    once = capsys.readouterr().out.splitlines()[0]
    assert main(["reproduce", "--only", "toy,toy, toy", "--dry-run", "--store", store]) == 0
    assert capsys.readouterr().out.splitlines()[0] == once and once.startswith("9 run(s) planned")


@pytest.mark.parametrize("argv, expected", [
    (["run", "toy:square", "--address", "127.0.0.1:1"], "only --backend ray uses"),
    (["reproduce", "--only", "toy", "--address", "auto", "--backend", "local"], "only --backend ray uses"),
    (["run", "toy:square", "--jobs", "100000"], "core(s) this process may use"),
    (["sweep", "toy:square", "--set", "x=1,2", "--jobs", "100000", "--backend", "ray"], "give at most --jobs"),
    (["reproduce", "--only", "toy", "--backend", "ray", "--address", "127.0.0.1:1"], "no Ray cluster answers"),
])
def test_refused_options_are_one_line_exit_2_and_write_nothing(argv, expected, tmp_path, capsys):
    """Everything is checked before anything is created: no store file, no --out or --json folder."""
    extra = ["--store", str(tmp_path / "new" / "s.sqlite"), "--json", str(tmp_path / "j" / "x.json")]
    extra += ["--out", str(tmp_path / "out")] if argv[0] == "reproduce" else []
    assert main([*argv, *extra]) == 2
    assert expected in _err_line(capsys)
    _nothing_written(tmp_path)


def test_a_refused_store_leaves_no_out_folder_and_a_newer_store_is_refused(tmp_path, capsys):
    import sqlite3

    from icml24.core.store import SCHEMA_VERSION

    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as con:
        con.execute("CREATE TABLE runs (id INTEGER, payload TEXT)")
    newer = tmp_path / "newer.sqlite"
    with sqlite3.connect(newer) as con:
        con.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    for store, expected in ((foreign, "other columns"), (newer, "newer than this icml24 reads")):
        assert main(["reproduce", "--only", "toy", "--store", str(store), "--out", str(tmp_path / "out"),
                     "--json", str(tmp_path / "j" / "x.json")]) == 2
        assert expected in _err_line(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["foreign.sqlite", "newer.sqlite"]


def test_missing_data_in_the_default_folder_exits_2_before_any_run(tmp_path, capsys, monkeypatch):
    """ICML24_DATA unset and ~/.cache/icml24 without the Planetoid files: refused with the path and the fix, instead
    of one error row per seed."""
    monkeypatch.delenv("ICML24_DATA", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    store = tmp_path / "s.sqlite"
    assert main(["run", "rp:alignment", "--store", str(store)]) == 2
    line = _err_line(capsys)
    folder = tmp_path / "home" / ".cache" / "icml24" / "Cora" / "raw"
    assert "rp:alignment needs data that is missing" in line and str(folder) in line
    assert "ICML24_DATA" in line and "planetoid('cora')" in line
    assert not store.exists() and not (tmp_path / "home").exists()
    from icml24.core import registry

    for key in ("rp:accuracy", "gdem:accuracy", "gdem:cross_architecture", "gdem:efficiency"):  # also declared
        (exp,) = registry.resolve(key)
        assert exp.missing_data(exp.config()), key
    (exp,) = registry.resolve("gdem:cross_architecture")
    assert not exp.missing_data(exp.config(setting="smoke"))  # its smoke setting reads a synthetic graph: no file


def test_ctrl_c_in_the_first_moments_of_the_command_is_one_line_and_exit_130():
    """The console script defers Ctrl-C from its first statement (the package's __init__ imports only os); a Ctrl-C
    sent at several moments after the interpreter reached our package prints no traceback and exits 130. Reached:
    -X importtime's line for the package; loading _entry, up to its first statement, follows (a millisecond; the
    interpreter's own start-up before it is out of any package's reach), then ~20-60 ms of imports it defers."""
    script = Path(sys.executable).with_name("icml24")
    command = [sys.executable, "-X", "importtime", *([str(script)] if script.exists() else ["-m", "icml24"])]
    for delay in (0.01, 0.015, 0.02, 0.03, 0.05, 0.08):
        proc = subprocess.Popen([*command, "run", "nosuch"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=ROOT)
        seen = []
        while not (seen and seen[-1].split("|")[-1].strip() == "icml24"):  # the package imported: _entry is next
            line = proc.stderr.readline()
            assert line, "".join(seen)
            seen.append(line)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        messages = [line for line in err.splitlines() if line.strip() and not line.startswith("import time:")]
        assert proc.returncode == 130 and "Traceback" not in err, (delay, proc.returncode, messages)
        assert messages == ["interrupted: what finished is stored; run the same command again to resume"], messages
