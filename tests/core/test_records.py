"""Recorded runs: a full-only claim judged by its own check on a run kept in the repository, labelled as such."""

import importlib.util
import json
from pathlib import Path

import pytest

from icml24.core import Claim, Paper, experiment
from icml24.core import records as recorded_runs
from icml24.core.report import write_report
from icml24.core.store import RunRecord, Store
from icml24.core.verdicts import evaluate_paper
from icml24.core.versioning import code_version

ROOT = Path(__file__).resolve().parents[2]


def _paper():
    paper = Paper(slug="tmp-recorded", title="t")

    @experiment(paper, quick={"x": 1.0}, full={"x": 3.0})
    def grow(ctx, x: float = 1.0, y: float = 0.0) -> dict[str, float]:
        return {"value": x * x}

    Claim("value exceeds 5 at paper scale", experiment=grow, check=lambda m: m["value"] > 5, setting="full")
    Claim("value is positive", experiment=grow, check=lambda m: m["value"] > 0)
    Claim("another metric at paper scale", experiment=grow, check=lambda m: m["value"] > 0 and m["other"] > 0,
          setting="full")
    return paper, grow


@pytest.fixture()
def recorded(tmp_path, monkeypatch):
    monkeypatch.setattr(recorded_runs, "records_folder", lambda exp: tmp_path / "records")
    paper, grow = _paper()
    made = Store(tmp_path / "made.sqlite")
    config = grow.config(full=True, overrides={"y": 1.0})  # a part of the full setting, named in the label
    made.put(RunRecord(paper.slug, grow.name, config, 0, code_version(grow), "full", "ok", {"value": 9.0}, 12.0))
    path = recorded_runs.write_record(made, grow, [0], "icml24 run tmp-recorded:grow --full --seeds 0 --set y=1")
    return paper, grow, path, Store(tmp_path / "empty.sqlite")


def test_a_full_only_claim_reads_the_recorded_run_when_the_store_has_none(recorded):
    paper, grow, path, empty = recorded
    full_only, any_setting, _ = evaluate_paper(paper, empty)
    assert full_only.verdict.status == "holds" and full_only.verdict.measured == {"value": 9.0}
    assert full_only.mode == "full (recorded)" and full_only.num_seeds == 1
    assert "recorded run (full setting, seed(s) 0, code " in full_only.recorded and "not re-run" in full_only.recorded
    assert "changed from the setting: y=1.0" in full_only.recorded and "STALE" not in full_only.recorded
    assert any_setting.verdict.status == "not run" and not any_setting.recorded  # only full-only claims read it


def test_a_partial_record_lacking_a_claims_metric_is_not_run_and_a_whole_one_is_an_error(recorded, tmp_path):
    paper, grow, path, empty = recorded
    partial = evaluate_paper(paper, empty)[2]  # the record changed y from the full setting
    assert partial.verdict.status == "not run" and "covers part of the setting" in partial.verdict.message
    assert "no metric 'other'" in partial.verdict.message and partial.recorded
    assert "it recorded value = 9" in partial.verdict.message  # what the part did measure stays visible
    whole = Store(tmp_path / "whole.sqlite")
    whole.put(RunRecord(paper.slug, grow.name, grow.config(full=True), 0, code_version(grow), "full", "ok",
                        {"value": 9.0}))
    recorded_runs.write_record(whole, grow, [0], "icml24 run tmp-recorded:grow --full --seeds 0")
    assert evaluate_paper(paper, empty)[2].verdict.status == "error"  # the whole setting ran and lacks it


def test_the_verdict_is_the_claims_own_check_and_a_changed_code_is_stale(recorded):
    paper, grow, path, empty = recorded
    data = json.loads(path.read_text())
    data["seeds"]["0"]["metrics"]["value"] = 4.0
    data["code_version"] = "0.0+oldcode"
    path.write_text(json.dumps(data))
    result = evaluate_paper(paper, empty)[0]
    assert result.verdict.status == "fails" and "STALE: the experiment's code is now" in result.recorded


def test_a_stored_full_run_wins_over_the_record(recorded, tmp_path):
    paper, grow, path, _ = recorded
    store = Store(tmp_path / "full.sqlite")
    store.put(RunRecord(paper.slug, grow.name, grow.config(full=True), 0, code_version(grow), "full", "ok",
                        {"value": 1.0}))
    result = evaluate_paper(paper, store)[0]
    assert result.verdict.status == "fails" and result.mode == "full" and not result.recorded


def test_report_and_docs_label_the_recorded_verdict(recorded, tmp_path):
    paper, grow, path, empty = recorded
    md, _ = write_report({paper.slug: paper}, empty, tmp_path / "out")
    row = next(line for line in md.read_text().splitlines() if "| value exceeds 5 at paper scale |" in line)
    assert "holds" in row and "recorded run (full setting" in row and "not re-run" in row
    spec = importlib.util.spec_from_file_location("docs_claims", ROOT / "tools" / "docs_claims.py")
    docs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(docs)
    for store in (None, empty):  # with no store at all, too
        table = docs.claims_markdown(paper, store)
        line = next(x for x in table.splitlines() if "value exceeds 5" in x)
        assert "**holds** (value = 9" in line and "recorded run" in line
        partial = next(x for x in table.splitlines() if "another metric" in x)
        assert "not run (the experiment returned no metric" in partial and "it recorded value = 9" in partial


def test_bad_records_are_refused_by_name(recorded, tmp_path):
    paper, grow, path, empty = recorded
    with pytest.raises(ValueError, match=r"seed\(s\) \[1\]"):
        recorded_runs.write_record(Store(tmp_path / "made.sqlite"), grow, [0, 1], "x")
    with pytest.raises(ValueError, match="holds no run"):
        recorded_runs.write_record(empty, grow, [0], "x")
    path.write_text("{}")
    result = evaluate_paper(paper, empty)[0]
    assert result.verdict.status == "error" and "is malformed" in result.verdict.message
