"""The report: figures found from the store's own folder, sweep tables, and claims never run counted as such."""

import os

from icml24.cli import main


def test_report_from_another_folder_keeps_figures_and_counts_not_run(toy, tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert main(["run", "toy:square", "--seeds", "0", "--backend", "inline", "--store", "res/s.sqlite"]) == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["report", "--store", os.path.join("..", "work", "res", "s.sqlite"), "--out", "out"]) == 0
    report = (elsewhere / "out" / "REPORT.md").read_text()
    assert "report/figures/toy-square-curve.png" in report
    assert (elsewhere / "out" / "report" / "figures" / "toy-square-curve.png").exists()
    # square ran; broken, crash and coin never did: they are "not run", not "error"
    headline = next(line for line in report.splitlines() if line.startswith("Generated"))
    assert "0 error" in headline and " not run." in headline
    never_run = next(line for line in report.splitlines() if "| NaN is never a verdict |" in line)
    assert "not run" in never_run and "error" not in never_run


def test_a_sweep_gets_its_own_table_and_a_plot(toy, tmp_path):
    store = str(tmp_path / "s.sqlite")
    assert main(["sweep", "toy:square", "--set", "x=1,3,5", "--seeds", "0", "--backend", "inline", "--store",
                 store]) == 0
    assert main(["report", "--store", store, "--out", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "REPORT.md").read_text()
    assert "| x=1.0 | 1 | holds" not in report  # x=1 gives 1: the first claim fails there
    assert "| x=1.0 | 1 | fails: value = 1" in report and "| x=5.0 | 1 | holds: value = 25" in report
    assert (tmp_path / "out" / "report" / "figures" / "toy-square-sweep-x.png").exists()


def test_a_crafted_figure_row_cannot_copy_a_file_from_outside_the_store(toy, tmp_path):
    from icml24.core.store import RunRecord, Store
    from icml24.core.versioning import code_version

    secret = tmp_path / "secret.txt"
    secret.write_text("not for the report")
    store_path = tmp_path / "res" / "s.sqlite"
    exp = toy.square
    with Store(store_path) as db:
        escape = tmp_path / "res" / "runs" / ".." / ".." / "secret.txt"  # inside runs/ by name only
        metrics = {"value": 4.0, "draw": 0.5, "repeats": 1.0}
        db.put(RunRecord("toy", "square", exp.config(), 0, code_version(exp), "quick", "ok", metrics,
                         figures=[str(secret), str(escape)]))
    assert main(["report", "--store", str(store_path), "--out", str(tmp_path / "out")]) == 0
    copied = sorted(f.name for f in (tmp_path / "out" / "report" / "figures").iterdir())
    assert copied == ["verdicts.png"]  # the report's own matrix, and neither crafted path


def test_the_report_opens_with_a_summary_per_paper_and_a_verdict_matrix(toy, tmp_path):
    store = str(tmp_path / "s.sqlite")
    assert main(["run", "toy:square", "--seeds", "0", "--backend", "inline", "--store", store]) == 0
    assert main(["run", "toy:square", "--null", "--seeds", "0", "--backend", "inline", "--store", store]) == 0
    assert main(["report", "--store", store, "--out", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "REPORT.md").read_text()
    glance = report[report.index("## At a glance"):report.index("## Every claim")]
    row = next(line for line in glance.splitlines() if line.startswith("| toy |"))
    # square: 1 holds, 1 fails; broken, crash and coin never ran; both nulls of square stored: one fails, one holds
    assert "1 of 5 hold (1 fails, 3 not run)" in row and "1 of 2 fail, 1 hold" in row
    assert "(#toy-a-toy-paper)" in row and "## toy: A toy paper" in report
    assert "| no fixture |" in row  # the toy paper has no parity fixture
    assert (tmp_path / "out" / "report" / "figures" / "verdicts.png").exists()
    assert "![verdict matrix](report/figures/verdicts.png)" in report
    page = (tmp_path / "out" / "report" / "index.html").read_text()
    assert page.index("At a glance") < page.index("Every claim") and "figures/verdicts.png" in page


def test_parity_text_names_the_fixture_source_and_tolerance(tmp_path):
    import json

    from icml24.core.summary import parity_text

    assert "vs wilrev/LowRankBanditsTwoToInfinity@" in parity_text("lowrank-bandits")  # the checkout's fixture
    fixture = {"source": {"repository": "o/r", "commit": "a" * 40, "third_party": True},
               "cases": [{"tolerance": 1e-6}, {"tolerance": 1e-3}]}
    (tmp_path / "x.json").write_text(json.dumps(fixture))
    assert parity_text("x", tmp_path) == "2 case(s) vs o/r@aaaaaaa (third-party), tolerance ≤ 0.001"
    assert parity_text("y", tmp_path) == "no fixture"
    (tmp_path / "z.json").write_text("{")
    assert parity_text("z", tmp_path) == "unreadable fixture"
    fixture["cases"][1]["tolerance"] = [0.0, 0.5, 0.25]  # one tolerance per entry
    (tmp_path / "w.json").write_text(json.dumps(fixture))
    assert parity_text("w", tmp_path).startswith("2 case(s) vs o/r@aaaaaaa (third-party), tolerance ≤ 0.5 (per entry")
    from icml24.core.summary import PARITY_FOLDER

    for slug in sorted(p.stem for p in PARITY_FOLDER.glob("*.json")):  # every fixture in the checkout reads
        assert "unreadable" not in parity_text(slug) and "case(s)" in parity_text(slug)
