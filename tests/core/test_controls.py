"""Oracles and instance families: declared with their checks, judged from the store, read by the verdict."""

import pytest

from icml24.core import Family, NoOracle, Oracle, SingleInstance
from icml24.core.registry import Claim, Paper, Verdict, experiment
from icml24.core.verdicts import ClaimResult, FamilyResult


def _paper():
    paper = Paper(slug="controls-toy", title="t")

    @experiment(paper, quick={"x": 2.0})
    def square(ctx, x: float = 1.0, shift: float = 0.0) -> dict[str, float]:
        return {"value": x * x + shift}

    return paper, square


@pytest.mark.parametrize("kwargs, message", [
    ({"label": "", "members": {"a": {}, "b": {}}, "share": 0.5}, "label"),
    ({"label": "f", "members": {"a": {}}, "share": 0.5}, "at least two"),
    ({"label": "f", "members": {"a": {}, "b": 3}, "share": 0.5}, "member 'b'"),
    ({"label": "f", "members": {"a": {}, "b": {}}, "share": 0.0}, "share"),
    ({"label": "f", "members": {"a": {}, "b": {}}, "share": 1.5}, "share"),
    ({"label": "f", "members": {"a": {}, "b": {}}, "share": True}, "share"),
    ({"label": "f", "members": {"a": {}, "b": {}}, "share": 0.5, "full": {"a": {}}}, "full must"),
])
def test_a_malformed_family_is_refused_with_what_to_fix(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Family(**kwargs)


def test_oracles_and_single_instances_need_their_text():
    with pytest.raises(ValueError, match="overrides"):
        Oracle("perfect", {})
    with pytest.raises(ValueError, match="reason"):
        NoOracle(" ")
    with pytest.raises(ValueError, match="reason"):
        SingleInstance("")


@pytest.mark.parametrize("share, n, required", [(1.0, 3, 3), (0.5, 4, 2), (0.6, 3, 2), (2 / 3, 3, 2), (0.01, 5, 1)])
def test_required_members_is_the_ceiling_of_the_share(share, n, required):
    family = Family("f", {str(i): {} if i == 0 else {"x": i} for i in range(n)}, share=share)
    assert family.required(n) == required


def test_members_and_oracles_must_name_real_parameters():
    paper, square = _paper()
    with pytest.raises(ValueError, match="takes no parameter|does not take"):
        Claim("c", experiment=square, check=lambda m: True, family=Family("f", {"own": {}, "bad": {"y": 1}}, 0.5))
    with pytest.raises(ValueError, match="does not take"):
        Claim("c", experiment=square, check=lambda m: True, oracle=Oracle("o", {"y": 1}))
    with pytest.raises(TypeError, match="oracle must be"):
        Claim("c", experiment=square, check=lambda m: True, oracle="perfect")
    with pytest.raises(TypeError, match="family must be"):
        Claim("c", experiment=square, check=lambda m: True, family={"own": {}})


def test_claim_level_controls_override_the_experiments_and_grids_are_distinct():
    paper, square = _paper()
    family = Family("shifts", {"own": {}, "up": {"shift": 1.0}, "down": {"shift": -1.0}}, share=0.5)
    square.family, square.oracle = family, Oracle("x = 9", {"x": 9.0})
    first = Claim("a", experiment=square, check=lambda m: m["value"] > 3)
    second = Claim("b", experiment=square, check=lambda m: True, oracle=NoOracle("why"),
                   family=SingleInstance("one"))
    assert first.resolved_family is family and isinstance(second.resolved_family, SingleInstance)
    assert isinstance(second.resolved_oracle, NoOracle) and square.oracles() == [square.oracle]
    assert square.family_grid() == [{}, {"shift": 1.0}, {"shift": -1.0}]
    assert square.member_config(family, "up") == {"x": 2.0, "shift": 1.0}


def _member(status: str) -> ClaimResult:
    if status == "out of regime":
        return ClaimResult(None, None, Verdict("not run", {}, "out of regime: uncovered"), "quick")
    return ClaimResult(None, None, Verdict(status, {}), "quick")


@pytest.mark.parametrize("statuses, share, expected", [
    (["holds", "holds", "fails"], 0.6, "holds"),
    (["holds", "fails", "fails"], 0.6, "fails"),
    (["holds", "holds", "not run"], 0.6, "not run"),  # a verdict never rests silently on the members that ran
    (["holds", "error", "holds"], 0.5, "error"),
    (["holds", "holds", "holds"], 1.0, "holds"),
    (["holds", "holds", "fails"], 1.0, "fails"),
    (["holds", "holds", "out of regime"], 0.6, "holds"),  # judged: outside the claim's scope, not holding
    (["holds", "out of regime", "fails"], 0.6, "fails"),
])
def test_the_family_verdict_counts_members_against_the_declared_share(statuses, share, expected):
    family = Family("f", {f"m{i}": {} if i == 0 else {"x": i} for i in range(3)}, share=share)
    result = FamilyResult(family, {f"m{i}": _member(s) for i, s in enumerate(statuses)})
    assert result.status == expected
    if expected in ("holds", "fails"):
        failing = [f"m{i}" for i, s in enumerate(statuses) if s == "fails"]
        assert result.text().startswith(f"holds on {statuses.count('holds')} of 3 instances")
        assert all(m in result.text() for m in failing)
