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


def test_parity_text_says_why_a_paper_without_official_code_has_no_fixture(tmp_path):
    import json

    from icml24.core.summary import NO_OFFICIAL_CODE, PARITY_FOLDER, parity_text

    for slug in ("est", "genco"):  # their paper notes: no official code, no third-party implementation to record
        assert not (PARITY_FOLDER / f"{slug}.json").exists()
        text = parity_text(slug)
        assert text.startswith("no official code: ") and text.endswith(NO_OFFICIAL_CODE[slug]) and "|" not in text
    assert "Coming Soon" in parity_text("est") and "OpenReview" in parity_text("genco")
    assert parity_text("est", tmp_path).startswith("no official code")  # the reason does not need a checkout
    assert parity_text("toy", tmp_path) == "no fixture"  # a paper not in the table still reads "no fixture"
    fixture = {"source": {"repository": "o/r", "commit": "a" * 40}, "cases": [{"tolerance": 1e-6}]}
    (tmp_path / "genco.json").write_text(json.dumps(fixture))  # a fixture, once there is one, wins over the reason
    assert parity_text("genco", tmp_path) == "1 case(s) vs o/r@aaaaaaa, tolerance ≤ 1e-06"


def test_the_setting_shown_is_the_one_the_runs_used(toy, tmp_path):
    """coin's quick and full settings differ only in their seed counts (one configuration): a quick run with 8 seeds
    was labelled "(full)". The label is the setting stored with the runs; a full run beside it is its own rows."""
    store = str(tmp_path / "s.sqlite")
    assert main(["run", "toy:coin", "--seeds", "0-7", "--backend", "inline", "--store", store]) == 0
    assert main(["report", "--store", store, "--out", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "REPORT.md").read_text()
    assert "### coin (quick)" in report and "### coin (full)" not in report
    row = next(line for line in report.splitlines() if "| the summary sees every seed |" in line)
    assert "| quick | 8 |" in row
    assert main(["run", "toy:coin", "--full", "--seeds", "0-1", "--backend", "inline", "--store", store]) == 0
    assert main(["report", "--store", store, "--out", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "REPORT.md").read_text()
    row = next(line for line in report.splitlines() if "| the summary sees every seed |" in line)
    assert "### coin (full)" in report and "| full | 2 |" in row  # the full run's own two seeds, not the quick 8


def test_code_links_are_urls_or_text_and_everything_is_escaped(tmp_path):
    from icml24.core import Paper
    from icml24.core.report import write_report
    from icml24.core.store import Store

    codes = {  # genco's and confounded-pomdp's code fields (text around a URL), a plain URL, and a crafted one
        "genco": "none found (related: https://github.com/icaros-usc/milp_constrained_gan, read only)",
        "pomdp": "none (theory paper); third-party study: https://github.com/soheilsayahvarg/model-based-rl-confounded-"
                 "pomdps",
        "plain": "https://github.com/o/r",
        "crafted": "javascript:alert(1) <script>x</script> https://e.org/a'onclick='b",
    }
    papers = {f"x-{slug}": Paper(slug=f"x-{slug}", title="<b>T</b>", authors="A", code=code)
              for slug, code in codes.items()}  # slugs with no page in the user guide: no docs link
    with Store(tmp_path / "s.sqlite") as db:
        md_path, page_path = write_report(papers, db, tmp_path / "out")
    page, md = page_path.read_text(), md_path.read_text()
    hrefs = [h for h in page.split("href='")[1:] if not h.startswith("#")]
    hrefs = [h[:h.index("'")] for h in hrefs]
    assert hrefs == ["https://github.com/icaros-usc/milp_constrained_gan",
                     "https://github.com/soheilsayahvarg/model-based-rl-confounded-pomdps", "https://github.com/o/r",
                     "https://e.org/a"]
    assert "Code: none found (related: <a href='https://github.com/icaros-usc/milp_constrained_gan'>" in page
    assert "<script>" not in page and "<b>T</b>" not in page and "<script>" not in md and "<b>T</b>" not in md
    assert "[https://github.com/o/r](https://github.com/o/r)" in md
    assert "Code: none found (related: [https://github.com/icaros-usc/milp_constrained_gan](https://github.com/" \
           "icaros-usc/milp_constrained_gan), read only)" in md
    assert "](javascript" not in md and "&lt;script&gt;" in md


def test_stored_text_is_escaped_in_the_markdown_too(toy, tmp_path):
    from icml24.core.store import RunRecord, Store
    from icml24.core.versioning import code_version

    store_path = tmp_path / "s.sqlite"
    with Store(store_path) as db:
        db.put(RunRecord("toy", "crash", toy.crash.config(), 0, code_version(toy.crash), "quick", "error",
                         error="RuntimeError: <script>alert(1)</script> | `x`"))
        db.put(RunRecord("toy", "coin", toy.coin.config(), 0, code_version(toy.coin), "quick", "ok",
                         {"heads": 1.0, "<img src=x onerror=alert(2)>": 1.0}))
    assert main(["report", "--store", str(store_path), "--out", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "REPORT.md").read_text()
    page = (tmp_path / "out" / "report" / "index.html").read_text()
    for text in (report, page):
        assert "<script>" not in text and "<img src=x" not in text
    assert "Error: RuntimeError: &lt;script&gt;alert(1)&lt;/script&gt; \\| \\`x\\`" in report
    assert "| &lt;img src=x onerror=alert(2)&gt; | 1 |" in report


def test_the_docs_links_are_right_from_any_out_folder(tmp_path):
    from pathlib import Path

    from icml24.core.report import _REPOSITORY, _Links

    for out in (tmp_path / "a" / "b" / "out", _REPOSITORY / "results", Path("relative-out")):
        links = _Links(out)
        source = Path(os.path.abspath(out)) / links.docs("rp")
        assert source.resolve() == (_REPOSITORY / "docs" / "papers" / "rp.md").resolve()
        page = (Path(os.path.abspath(out)) / "report" / links.docs("rp", html=True)).resolve()
        assert page.is_file() and page.name in ("rp.md", "index.html")
    assert _Links(tmp_path).docs("toy") is None  # no page in the user guide: no link
    site = tmp_path / "repo"
    (site / "docs" / "papers").mkdir(parents=True)
    (site / "docs" / "papers" / "rp.md").write_text("# rp")
    (site / "mkdocs.yml").write_text("site_name: x\nsite_url: https://example.org/icml24/\n")
    assert _Links(tmp_path / "out", site).docs("rp", html=True) == "https://example.org/icml24/papers/rp/"
    (site / "mkdocs.yml").write_text("site_name: x\nsite_url: javascript:alert(1)\n")  # not a site: a relative link
    assert _Links(site / "results", site).docs("rp") == "../docs/papers/rp.md"


def test_every_seed_s_figure_is_shown_and_the_caption_says_so(toy, tmp_path):
    store = str(tmp_path / "s.sqlite")
    assert main(["run", "toy:square", "--seeds", "0-2", "--backend", "inline", "--store", store]) == 0
    assert main(["report", "--store", store, "--out", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "REPORT.md").read_text()
    figures = tmp_path / "out" / "report" / "figures"
    assert (figures / "toy-square-curve-all-seeds.png").is_file() and not (figures / "toy-square-curve.png").exists()
    assert "![curve](report/figures/toy-square-curve-all-seeds.png)" in report
    assert "*curve: every seed, one panel each (seeds 0, 1, 2); the claims read the mean over these seeds*" in report
    page = (tmp_path / "out" / "report" / "index.html").read_text()
    assert "<figcaption>curve: every seed, one panel each (seeds 0, 1, 2)" in page
    one = str(tmp_path / "one.sqlite")
    assert main(["run", "toy:square", "--seeds", "0", "--backend", "inline", "--store", one]) == 0
    assert main(["report", "--store", one, "--out", str(tmp_path / "out1")]) == 0
    assert "*curve: seed 0, the only seed with this figure*" in (tmp_path / "out1" / "REPORT.md").read_text()


def test_no_symlink_under_the_results_folder_is_followed(toy, tmp_path):
    from icml24.core.store import RunRecord, Store
    from icml24.core.versioning import code_version

    outside = tmp_path / "outside"
    (outside / "toy").mkdir(parents=True)
    (outside / "hostname").write_text("secret")
    (outside / "toy" / "plot.png").write_text("secret")
    results = tmp_path / "res"
    (results / "runs" / "toy").mkdir(parents=True)
    (results / "runs" / "toy" / "link.png").symlink_to(outside / "hostname")  # a file link inside runs/
    (results / "runs" / "linked").symlink_to(outside / "toy")  # a folder link inside runs/
    exp = toy.square
    metrics = {"value": 4.0, "draw": 0.5, "repeats": 1.0}
    with Store(results / "s.sqlite") as db:
        db.put(RunRecord("toy", "square", exp.config(), 0, code_version(exp), "quick", "ok", metrics,
                         figures=[str(results / "runs" / "toy" / "link.png"),
                                  str(results / "runs" / "linked" / "plot.png")]))
    assert main(["report", "--store", str(results / "s.sqlite"), "--out", str(tmp_path / "out")]) == 0
    assert sorted(f.name for f in (tmp_path / "out" / "report" / "figures").iterdir()) == ["verdicts.png"]
    other = tmp_path / "res2"  # the runs folder itself a link (to /etc in the report that found the defect)
    other.mkdir()
    (other / "runs").symlink_to(outside)
    with Store(other / "s.sqlite") as db:
        db.put(RunRecord("toy", "square", exp.config(), 0, code_version(exp), "quick", "ok", metrics,
                         figures=[str(other / "runs" / "hostname"), str(other / "runs" / "toy" / "plot.png")]))
    assert main(["report", "--store", str(other / "s.sqlite"), "--out", str(tmp_path / "out2")]) == 0
    assert sorted(f.name for f in (tmp_path / "out2" / "report" / "figures").iterdir()) == ["verdicts.png"]
    assert "secret" not in (tmp_path / "out2" / "REPORT.md").read_text()


def test_a_claim_judged_at_full_shows_its_quick_verdict_and_the_full_seeds_recorded_so_far(toy, tmp_path):
    store = str(tmp_path / "s.sqlite")
    assert main(["run", "toy:square", "--seeds", "0", "--backend", "inline", "--store", store]) == 0
    assert main(["report", "--store", store, "--out", str(tmp_path / "out")]) == 0
    row = next(x for x in (tmp_path / "out" / "REPORT.md").read_text().splitlines() if "exceeds 3 |" in x)
    assert "quick:" not in row  # nothing at full: the quick verdict alone
    assert main(["run", "toy:square", "--full", "--seeds", "0", "--backend", "inline", "--store", store]) == 0
    assert main(["report", "--store", store, "--out", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "REPORT.md").read_text()
    row = next(x for x in report.splitlines() if "exceeds 3 |" in x)
    assert "value = 9 [full: 1 of the full setting's 2 seeds; quick: holds]" in row, row
    html = (tmp_path / "out" / "report" / "index.html").read_text()
    assert "1 of the full setting&#x27;s 2 seeds; quick: holds" in html or "1 of the full setting's 2 seeds" in html
