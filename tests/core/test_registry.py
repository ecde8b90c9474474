import math

import pytest

from icml24.core import Claim, Context, Paper, experiment
from icml24.core.registry import discover, register_module, resolve


def test_discover_finds_package_papers_and_toy():
    import toy_paper

    register_module(toy_paper)
    papers = discover()
    assert "toy" in papers
    assert set(papers["toy"].experiments) == {"square", "broken", "crash", "slow", "coin", "die"}
    assert len(papers["toy"].claims) == 5


def test_resolve_errors_name_the_fix():
    import toy_paper

    register_module(toy_paper)
    with pytest.raises(ValueError, match="no paper 'nosuch'"):
        resolve("nosuch")
    with pytest.raises(ValueError, match="has no experiment 'nope'.*square"):
        resolve("toy:nope")
    assert [e.name for e in resolve("toy:square")] == ["square"]


def test_every_paper_module_is_named_after_its_slug():
    from icml24.core.registry import paper_modules

    for slug, module in paper_modules().items():
        assert discover()[slug].slug == slug, f"{module} must declare PAPER.slug = {slug!r}"


def test_config_layers_and_unknown_keys():
    import toy_paper

    exp = toy_paper.square
    assert exp.config() == {"x": 2.0, "noisy": False, "label": "a", "repeats": 1}
    assert exp.config(full=True)["x"] == 3.0
    assert exp.config(overrides={"x": 5.0})["x"] == 5.0
    with pytest.raises(ValueError, match="takes no parameter bogus"):
        exp.config(overrides={"bogus": 1})


def test_claim_verdicts_holds_fails_error():
    import toy_paper

    holds, fails, nan_claim, *_ = toy_paper.PAPER.claims
    assert holds.evaluate({"value": 4.0}).status == "holds"
    verdict = fails.evaluate({"value": 4.0, "other": 1.0})
    assert verdict.status == "fails"
    assert verdict.measured == {"value": 4.0}  # only what the check read
    nan_verdict = nan_claim.evaluate({"value": math.nan})
    assert nan_verdict.status == "error" and "non-finite" in nan_verdict.message
    assert holds.evaluate({}).status == "error"
    missing = holds.evaluate({"something_else": 1.0})
    assert missing.status == "error" and "value" in missing.message


def test_broken_check_is_an_error_not_an_exception():
    paper = Paper(slug="tmp-broken-check", title="t")

    @experiment(paper)
    def e(ctx) -> dict[str, float]:
        return {"a": 1.0}

    claim = Claim("divides by zero", experiment=e, check=lambda m: m["a"] / 0 > 1)
    verdict = claim.evaluate({"a": 1.0})
    assert verdict.status == "error" and "ZeroDivisionError" in verdict.message


def test_a_check_that_raises_out_of_regime_reads_not_run_with_the_reason():
    from icml24.core import OutOfRegime

    paper = Paper(slug="tmp-out-of-regime", title="t")

    @experiment(paper)
    def e(ctx) -> dict[str, float]:
        return {"a": 1.0}

    def check(m):
        if m["a"] < 2:
            raise OutOfRegime("a is below 2")
        return m["a"] > 3

    claim = Claim("a above 3 where a >= 2", experiment=e, check=check)
    verdict = claim.evaluate({"a": 1.0})
    assert verdict.status == "not run" and verdict.message == "out of regime: a is below 2"
    assert verdict.measured == {"a": 1.0}
    assert claim.evaluate({"a": 2.5}).status == "fails" and claim.evaluate({"a": 4.0}).status == "holds"


def test_claim_needs_a_registered_experiment():
    with pytest.raises(TypeError, match="decorated with @experiment"):
        Claim("x", experiment=lambda ctx: {}, check=lambda m: True)


def test_same_seed_same_metrics(tmp_path):
    import toy_paper

    first = toy_paper.square(Context(seed=7, out_dir=tmp_path), x=1.0, noisy=True)
    second = toy_paper.square(Context(seed=7, out_dir=tmp_path), x=1.0, noisy=True)
    third = toy_paper.square(Context(seed=8, out_dir=tmp_path), x=1.0, noisy=True)
    assert first == second
    assert first != third


def test_a_null_names_real_parameters_and_says_what_it_is():
    from icml24.core import Null

    paper = Paper(slug="nulltest", title="t")

    @experiment(paper, quick={"x": 1.0}, null=Null("x = 0", {"x": 0.0}))
    def exp(ctx, x: float = 1.0, method: str = "ours") -> dict[str, float]:
        return {"x": x}

    own = Null("the baseline", {"method": "baseline"})
    first = Claim("x is positive", experiment=exp, check=lambda m: m["x"] > 0)
    second = Claim("x beats the baseline", experiment=exp, check=lambda m: m["x"] > 0, null=own)
    third = Claim("x is below 2", experiment=exp, check=lambda m: m["x"] < 2, null=Null("again", {"x": 0.0}))
    assert first.resolved_null is exp.null and second.resolved_null is own
    assert [n.key for n in exp.nulls()] == ["x=0.0", "method='baseline'"]  # the third shares the first's runs
    assert third.resolved_null.key == first.resolved_null.key
    assert exp.null_config(own, setting="quick") == {"x": 1.0, "method": "baseline"}
    assert exp.null_config(exp.null, overrides={"method": "other"}, setting="quick") == {"x": 0.0, "method": "other"}
    with pytest.raises(ValueError, match="does not take"):
        Claim("bad", experiment=exp, check=lambda m: True, null=Null("typo", {"methd": "x"}))
    with pytest.raises(ValueError, match="label"):
        Null("", {"x": 1.0})
    with pytest.raises(ValueError, match="non-empty dict"):
        Null("nothing", {})
    with pytest.raises(TypeError, match="Null"):
        experiment(paper, quick={}, null={"x": 0.0})(lambda ctx, x=1.0: {"x": x})


def test_a_regime_needs_metric_names():
    from icml24.core import Regime

    paper = Paper(slug="regimetest", title="t")

    @experiment(paper)
    def exp(ctx) -> dict[str, float]:
        return {"ratio": 1.0}

    with pytest.raises(ValueError, match="list of metric names"):
        Regime("a ratio", experiment=exp, metrics="ratio")
    Regime("a ratio", experiment=exp, metrics=["ratio"])
    assert [r.text for r in paper.regimes] == ["a ratio"]


def test_a_paper_registered_through_a_module_of_its_package_belongs_to_the_package(monkeypatch):
    """Running one of a paper package's experiments first (its module imports the package's PAPER) must not make
    that module the paper's: the index and the method table read the package (order-dependent before)."""
    import types

    from icml24.core.registry import Paper, _declaring_module

    paper = Paper(slug="pkg-toy", title="t", authors="a", code="https://example.org")
    package, module = types.ModuleType("pkgtoy"), types.ModuleType("pkgtoy.experiments")
    package.PAPER = module.PAPER = paper
    monkeypatch.setitem(__import__("sys").modules, "pkgtoy", package)
    monkeypatch.setitem(__import__("sys").modules, "pkgtoy.experiments", module)
    assert _declaring_module("pkgtoy.experiments", paper) == "pkgtoy"
    assert _declaring_module("pkgtoy.experiments", Paper(slug="other", title="t", authors="a",
                                                         code="https://example.org")) == "pkgtoy.experiments"
