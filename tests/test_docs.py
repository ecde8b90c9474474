"""The user's guide (docs/, built by `make docs`): every python block runs, every `icml24` command is accepted,
every paper has a page, the claim tables are generated, and the site's links resolve."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import shlex
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)


def _load_tool(name: str):
    spec = importlib.util.spec_from_file_location(f"_docs_tool_{name}", ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


OUTPUTS = _load_tool("docs_outputs")
GENERATED = OUTPUTS.GENERATED  # the included parts, written by tools/docs_claims.py


def _pages() -> list[Path]:
    return OUTPUTS.pages()  # the pages written by hand


def _blocks(language: str) -> list[tuple[str, str]]:
    """(``file:line``, code) of every fenced block of ``language`` in the docs."""
    found = []
    for page in _pages():
        text = page.read_text()
        for match in FENCE.finditer(text):
            if match.group(1) == language:
                line = text.count("\n", 0, match.start()) + 1
                found.append((f"{page.relative_to(ROOT)}:{line}", match.group(2)))
    return found


PYTHON_BLOCKS = _blocks("python")
# (where, code, the output shown below it or None) of every python block, as tools/docs_outputs.py reads them
SHOWN = [(f"{page.relative_to(ROOT)}:{page.read_text().count(chr(10), 0, b.start()) + 1}", b["code"], b["shown"])
         for page in _pages() for b in OUTPUTS.blocks(page.read_text())]


def test_the_docs_have_python_blocks_and_no_untagged_fences():
    assert len(PYTHON_BLOCKS) >= 19 and len(SHOWN) == len(PYTHON_BLOCKS)
    untagged = [where for where, _ in _blocks("")]
    assert not untagged, f"fenced blocks without a language (use python, bash or text): {untagged}"


@pytest.mark.parametrize("where,code,shown", SHOWN, ids=[w for w, _, _ in SHOWN])
def test_python_block_runs_and_prints_what_the_page_shows(where, code, shown, tmp_path, monkeypatch):
    """Each ```python block of the site, as written, in a fresh namespace (quickstarts are smoke-sized); what it
    prints is the Output block below it, numbers to their shown precision (tools/docs_outputs.py writes them)."""
    monkeypatch.chdir(tmp_path)  # a block that writes files writes them here
    start = time.process_time()  # CPU seconds (torch on one thread), not wall: load does not make a block slower
    printed = OUTPUTS.run_block(code, where)
    seconds = time.process_time() - start
    assert seconds < 60, f"{where} took {seconds:.0f} CPU s: a quickstart runs in seconds (use smoke-sized data)"
    if printed.strip() or shown is not None:
        assert shown is not None, f"{where} prints but the page shows no output: run python tools/docs_outputs.py"
        why = OUTPUTS.matches(shown, printed)
        assert why is None, f"{where}: {why} (run python tools/docs_outputs.py if the change is meant)"


def test_shown_outputs_are_compared_to_their_precision():
    assert OUTPUTS.matches("accuracy 0.512 in 3 batches", "accuracy 0.513 in 3 batches") is None
    assert OUTPUTS.matches("accuracy 0.512 in 3 batches", "accuracy 0.515 in 3 batches")  # 3 units off
    assert OUTPUTS.matches("accuracy 0.512 in 3 batches", "accuracy 0.512 in 5 batches")  # an integer's unit is 1
    assert OUTPUTS.matches("tensor([0.5, -0.5])", "tensor([0.4, -0.6])") is None
    assert OUTPUTS.matches("tensor([0.5, -0.5])", "tensor([0.3, -0.5])")
    assert OUTPUTS.matches("regret 186", "loss 186")  # the words count
    assert OUTPUTS.matches("residual 1.2e-09", "residual 1.3e-09") is None
    assert OUTPUTS.matches("residual 1.2e-09", "residual 1.2e-07")


def _docs_commands() -> list[tuple[str, list[str]]]:
    """Every `icml24 ...` line of the docs' bash blocks, split as a shell would."""
    commands = []
    for where, code in _blocks("bash"):
        for line in code.splitlines():
            line = line.split(" #")[0].strip()
            if line.startswith("icml24 "):
                commands.append((where, shlex.split(line)[1:]))
    return commands


def test_every_docs_command_is_accepted(tmp_path, capsys):
    """Each `icml24` command shown in the docs, as written; the ones that would do work with --dry-run."""
    from icml24.cli import main
    from icml24.core.store import Store

    store = tmp_path / "docs.sqlite"
    Store(store).close()
    commands = _docs_commands()
    assert len(commands) >= 10
    for where, argv in commands:
        argv = [a if a not in ("results", "results/") else str(tmp_path / "report") for a in argv]
        extra = []
        if argv[0] in ("list", "run", "reproduce", "sweep", "report") and "--store" not in argv:
            extra += ["--store", str(store)]
        if argv[0] in ("run", "reproduce", "sweep") and "--dry-run" not in argv:
            extra.append("--dry-run")
        code = main([*argv, *extra])
        assert code == 0, f"{where}: `icml24 {' '.join(argv)}` exited {code}: {capsys.readouterr().err}"


def test_every_paper_has_a_page_with_its_generated_parts_and_api():
    from icml24.core.registry import paper_modules

    papers = paper_modules()  # the package's papers, from file names (not a toy paper another test registered)
    assert len(papers) >= 19
    nav = (ROOT / "mkdocs.yml").read_text()
    for slug in papers:
        page = DOCS / "papers" / f"{slug}.md"
        assert page.is_file(), f"no page {page.relative_to(ROOT)}"
        text = page.read_text()
        for part in GENERATED:
            assert f'--8<-- "{part}/{slug}.md"' in text, f"{page.name} does not include {part}/{slug}.md"
        assert re.search(r"^::: icml24\.\w+", text, re.M), f"{page.name} has no API reference (::: icml24....)"
        assert len(re.findall(r"^```python", text, re.M)) >= 1, f"{page.name} has no quickstart"
        assert f"papers/{slug}.md" in nav, f"{page.name} is not in mkdocs.yml's nav"
        assert f"]({slug}.md)" in (DOCS / "papers" / "index.md").read_text(), f"{slug} is not in papers/index.md"
    assert _load_tool("docs_claims").missing_pages() == []


def test_claims_tables_come_from_the_registry_and_the_store(tmp_path, toy):
    from icml24.cli import main
    from icml24.core.store import Store

    tool = _load_tool("docs_claims")
    paper = toy.PAPER
    no_store = tool.claims_markdown(paper)
    assert "not run yet, run `icml24 run toy`" in no_store
    for claim in paper.claims:
        assert tool.cell(claim.text) in no_store and tool.cell(claim.paper) in no_store
    assert "x = 0.5 (no method)" in no_store  # the null's label

    store = tmp_path / "toy.sqlite"
    assert main(["run", "toy:square", "--store", str(store)]) == 0
    assert main(["run", "toy:square", "--null", "--store", str(store)]) == 0
    with Store(store) as opened:
        table = tool.claims_markdown(paper, opened)
    row = next(line for line in table.splitlines() if "x squared exceeds 3" in line)
    assert "**holds** (value = 4" in row  # the method's verdict with what it read
    assert "**fails**" in row  # its null's verdict: x = 0.5 gives 0.25
    assert "not run" in next(line for line in table.splitlines() if "summary sees every seed" in line)

    written = tool.write_all(store_path=tmp_path / "absent.sqlite", out=tmp_path / "papers",
                             snapshot=tmp_path / "no-snapshot")
    assert {p.parent.name for p in written} == set(GENERATED)
    assert "not run yet" in (tmp_path / "papers" / "_claims" / "rp.md").read_text()


def test_without_a_store_the_pages_read_the_snapshot_and_say_stale(tmp_path, toy, monkeypatch):
    from icml24.cli import main
    from icml24.core import snapshot as snapshots
    from icml24.core.store import Store

    tool = _load_tool("docs_claims")
    store, folder = tmp_path / "s.sqlite", tmp_path / "snapshot"
    assert main(["run", "toy:square", "--seeds", "0", "--backend", "inline", "--store", str(store)]) == 0
    assert main(["snapshot", "--store", str(store), "--out", str(folder), "--command", "icml24 run toy:square"]) == 0
    with Store(store) as opened:  # a second snapshot keeps the first one's rows and adds the new seed's
        assert main(["run", "toy:square", "--seeds", "1", "--backend", "inline", "--store", str(store)]) == 0
        assert len(snapshots.write_snapshot(opened, {"toy": toy.PAPER}, "seed 1", folder)) == 1
    assert sorted(r["seed"] for r in snapshots.read_rows(folder / "toy.json")) == [0, 1]
    tool.write_all(store_path=tmp_path / "absent.sqlite", out=tmp_path / "papers", snapshot=folder)
    page = (tmp_path / "papers" / "_claims" / "toy.md").read_text()
    row = next(line for line in page.splitlines() if "x squared exceeds 3" in line)
    assert "**holds** (value = 4" in row and "STALE" not in row
    assert "results snapshot" in page and "cores" in page and "icml24 run toy:square" in page
    overview = (tmp_path / "papers" / "_claims" / "_overview.md").read_text()
    assert "| [toy](papers/toy.md) | 5 | 1 of 2 | not run | 0 of 1 |" in overview  # the family's members not run
    from icml24.core import verdicts

    for module in (snapshots, verdicts):  # the experiment's code changed since the snapshot
        monkeypatch.setattr(module, "code_version", lambda exp: "0.0.0+changed")
    store_of_snapshot, stale = snapshots.snapshot_store({"toy": toy.PAPER}, folder)
    with store_of_snapshot:
        page = tool.claims_markdown(toy.PAPER, store_of_snapshot, stale)
    assert stale["toy:square"] != "0.0.0+changed"
    row = next(line for line in page.splitlines() if "x squared exceeds 3" in line)
    assert "STALE (snapshot made with code" in row and "**holds** (value = 4" in row  # judged, and labelled


def test_each_claim_shows_its_paper_scale_verdict_beside_the_quick_one_with_the_seeds_recorded_so_far(tmp_path, toy):
    from icml24.cli import main
    from icml24.core.store import Store

    tool = _load_tool("docs_claims")
    store = tmp_path / "s.sqlite"
    assert main(["run", "toy:square", "--seeds", "0", "--backend", "inline", "--store", str(store)]) == 0
    with Store(store) as opened:
        row = next(x for x in tool.claims_markdown(toy.PAPER, opened).splitlines() if "x squared exceeds 3" in x)
    assert "**holds** (value = 4" in row and "no full run recorded (`icml24 run toy:square --full`: 2 seed(s)" in row
    # one of the full setting's two seeds (x = 3): judged on it, and saying how many of how many
    assert main(["run", "toy:square", "--full", "--seeds", "0", "--backend", "inline", "--store", str(store)]) == 0
    with Store(store) as opened:
        row = next(x for x in tool.claims_markdown(toy.PAPER, opened).splitlines() if "x squared exceeds 3" in x)
    quick, full = row.split(" | ")[4:6]
    assert "**holds** (value = 4" in quick and "quick" in quick
    assert "**holds** (value = 9" in full and "1 of the full setting's 2 seeds recorded so far" in full


def test_link_checker_finds_broken_links_and_anchors(tmp_path):
    tool = _load_tool("check_links")
    site = tmp_path / "site"
    (site / "a").mkdir(parents=True)
    (site / "index.html").write_text('<h1 id="top">x</h1><a href="a/">a</a><a href="#top">t</a>'
                                     '<a href="https://example.org">e</a>')
    (site / "a" / "index.html").write_text('<a href="../index.html#top">ok</a><a href="../missing/">no</a>'
                                           '<a href="../index.html#nowhere">no anchor</a><img src="../x.png">')
    broken, internal, external = tool.broken_links(site)
    assert internal == 6 and external == 1
    assert len(broken) == 3 and any("missing" in b for b in broken) and any("#nowhere" in b for b in broken)
    (site / "a" / "index.html").write_text('<a href="../index.html#top">ok</a>')
    assert tool.main([str(site)]) == 0


@pytest.mark.skipif(not os.environ.get("ICML24_DOCS_BUILD") or importlib.util.find_spec("mkdocs") is None,
                    reason="set ICML24_DOCS_BUILD=1 with the docs extra installed (make docs builds the site)")
def test_the_site_builds_strict_with_no_broken_link(tmp_path):
    import subprocess

    site = tmp_path / "site"
    subprocess.run([sys.executable, str(ROOT / "tools" / "docs_claims.py")], check=True, cwd=ROOT)
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],  # no --quiet: see
                   check=True, cwd=ROOT)  # test_the_strict_build_keeps_the_docstring_warnings_on
    assert _load_tool("check_links").main([str(site)]) == 0


def test_readme_links_the_site():
    readme = (ROOT / "README.md").read_text()
    assert "make docs" in readme and "docs/index.md" in readme


def test_the_browser_check_sees_missing_titles_unhighlighted_code_and_tracebacks():
    tool = _load_tool("browser_check")
    good = '<h1 id="x">T</h1><div class="highlight"><pre><span class="kn">import</span> x</pre></div>'
    assert tool.problems(good) == []
    assert tool.problems('<div class="highlight"><pre>import x</pre></div>') == [
        "no <h1> title", "1 code block(s) without highlighting"]
    assert "Traceback" in tool.problems("<h1>T</h1>Traceback (most recent call last)")[0]


def test_the_strict_build_keeps_the_docstring_warnings_on():
    """`make docs` fails on a warning; mkdocs.yml must not silence the ones that catch a mis-parsed docstring (a
    parameter row the parser garbles, a parameter the signature lacks)."""
    config = (ROOT / "mkdocs.yml").read_text()
    assert re.search(r"^strict:\s*true\s*$", config, re.M), "mkdocs.yml must keep strict: true"
    silenced = re.findall(r"^\s*((?:warn_\w+|warnings))\s*:\s*(?:false|no|off)\b", config, re.M | re.I)
    assert not silenced, f"mkdocs.yml turns docstring warnings off: {silenced}"
    build = [line for line in (ROOT / "Makefile").read_text().splitlines() if "mkdocs build" in line]
    assert build and all("--strict" in line for line in build), build
    # mkdocs --quiet raises the log level to ERROR: the warnings are dropped before --strict counts them
    assert not any("--quiet" in line or " -q" in line for line in build), build


SPHINX_ROLE = re.compile(r":(?:meth|class|func|data|attr|mod|obj|exc):`")


def test_no_docstring_uses_a_sphinx_role():
    """mkdocstrings renders ``:meth:`fit``` literally; docstrings write plain ``fit`` (double backticks)."""
    found = []
    for path in sorted((ROOT / "src").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=False)
                if doc and SPHINX_ROLE.search(doc):
                    found.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 1)}")
    assert not found, f"Sphinx roles in docstrings (write ``name`` instead): {found}"


def test_a_claim_with_no_full_run_states_the_measured_cost_of_a_stopped_seed(tmp_path, toy, monkeypatch):
    from icml24.core import snapshot as snapshots
    from icml24.core.store import Store

    tool = _load_tool("docs_claims")
    monkeypatch.setattr(tool, "SNAPSHOT", tmp_path / "snap")
    snapshots.record_unfinished("toy", "square", 0, 1200, "icml24 run toy:square --full --seeds 0", tmp_path / "snap")
    with Store(tmp_path / "s.sqlite") as opened:
        row = next(x for x in tool.claims_markdown(toy.PAPER, opened).splitlines() if "x squared exceeds 3" in x)
    full = row.split(" | ")[5]
    assert "no full run recorded" in full and "seed 0 ran 20.0 min on" in full and "more than 40.0 min" in full
    tool_time = _load_tool("time_full_seed")
    with pytest.raises(SystemExit):  # one experiment, a positive limit
        tool_time.main(["toy", "--limit", "10"])
    with pytest.raises(SystemExit):
        tool_time.main(["toy:square", "--limit", "0"])


def test_the_browser_check_reads_each_claim_rows_verdicts_from_the_rendered_table():
    tool = _load_tool("check_site_verdicts")
    head = "".join(f"<th>{h}</th>" for h in ("#", "Claim", tool.QUICK, tool.FULL, "Null's verdict"))
    rows = ["<td>1</td><td>a</td><td><strong>holds</strong> (x = 1)</td><td><strong>fails</strong> (x = 0)</td>"
            "<td><strong>fails</strong></td>",
            "<td>2</td><td>b</td><td><strong>holds</strong></td><td>no full run recorded (icml24 run p:e --full: 3 "
            "seed(s); seed 0 ran 10.0 min on 2 cores without finishing and was stopped)</td><td>fails</td>",
            "<td>3</td><td>c</td><td>not run yet (icml24 run p)</td><td>no full run recorded (3 seed(s); no seed "
            "measured yet)</td><td>not run yet (icml24 run p --null)</td>"]
    dom = f"<html><body><table><tr><td>other</td></tr></table><table><thead><tr>{head}</tr></thead><tbody>" + \
        "".join(f"<tr>{r}</tr>" for r in rows) + "</tbody></table></body></html>"
    parsed = tool.claim_rows(dom)
    assert [r["#"] for r in parsed] == ["1", "2", "3"] and parsed[0][tool.QUICK] == "holds (x = 1)"
    assert tool.row_problems(parsed[0]) == [] and tool.row_problems(parsed[1]) == []
    problems = tool.row_problems(parsed[2])
    assert len(problems) == 4 and any("no quick verdict" in p for p in problems)
    assert any("measured cost" in p for p in problems) and "Null's verdict: not run yet" in problems
    assert tool.claim_rows("<html><table><tr><th>x</th></tr></table></html>") == []


def test_a_control_left_out_of_make_reproduce_says_why_and_what_one_quick_seed_costs(tmp_path, toy, monkeypatch):
    from icml24.cli import main
    from icml24.core import snapshot as snapshots
    from icml24.core.store import Store

    tool = _load_tool("docs_claims")
    monkeypatch.setattr(tool, "SNAPSHOT", tmp_path / "snap")
    store = tmp_path / "s.sqlite"
    assert main(["run", "toy:square", "--seeds", "0", "--backend", "inline", "--store", str(store)]) == 0
    with Store(store) as opened:
        row = next(x for x in tool.claims_markdown(toy.PAPER, opened).splitlines() if "x squared exceeds 3" in x)
        assert "declared cheap" not in row  # nothing recorded in the snapshot: no cost is claimed
        snapshots.write_snapshot(opened, {"toy": toy.PAPER}, "icml24 run toy:square", tmp_path / "snap")
        row = next(x for x in tool.claims_markdown(toy.PAPER, opened).splitlines() if "x squared exceeds 3" in x)
    oracle = row.split(" | ")[7]
    assert oracle.startswith("not run (") and "runs only the controls declared cheap" in oracle
    assert "s per quick seed recorded" in oracle


def test_every_claim_row_of_a_fresh_clones_pages_shows_its_verdicts(tmp_path):
    """What `make site-check` reads in Chromium, read from the generated pages: from the committed snapshot, each
    claim has a quick verdict, a paper-scale verdict or the measured cost of a seed that did not finish, and no
    cell says "not run yet" (issue #57)."""
    tool, check = _load_tool("docs_claims"), _load_tool("check_site_verdicts")
    tool.write_all(store_path=None, out=tmp_path / "papers")
    shipped = {path.stem for path in tool.SNAPSHOT.glob("*.json")}  # the package's papers (not a test's toy paper)
    pages = sorted(p for p in (tmp_path / "papers" / "_claims").glob("[!_]*.md") if p.stem in shipped)
    assert len(pages) >= 19
    problems = {page.stem: [f"claim {i}: {p}" for i, row in enumerate(check.markdown_claim_rows(page.read_text()), 1)
                            for p in check.row_problems(row)] for page in pages}
    assert all(check.markdown_claim_rows(page.read_text()) for page in pages)
    assert not {slug: p for slug, p in problems.items() if p}
