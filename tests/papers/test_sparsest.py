"""The sparsest reproduction: smoke runs through the runner, claims that can fail, settings and regime."""

import inspect
import math

import pytest
from smoke_runs import smoke_summaries

from icml24.core import labelled
from icml24.core.verdicts import claims_of
from icml24.papers import sparsest as paper
from icml24.papers.sparsest import claims, experiments, slots


@pytest.fixture(scope="module")
def smoke_metrics(tmp_path_factory):
    return smoke_summaries(paper, tmp_path_factory.mktemp("sparsest"), seeds=[0, 1])


def test_smoke_runs_give_finite_metrics_the_regime_and_decidable_claims(smoke_metrics):
    for name, summary in smoke_metrics.items():
        assert summary["num_seeds"] == 2 and all(math.isfinite(v) for v in summary.values())
        assert {"target", "num_points", "train_steps"} <= set(summary)  # the regime is in the metrics
        for claim in claims_of(paper.PAPER.experiments[name]):
            assert claim.evaluate(summary).status in {"holds", "fails"}
    # the pruners are judged at the nonzero count the search found for the same seed (shared through the cache)
    assert smoke_metrics["pruners"]["nnz_budget"] == smoke_metrics["search"]["search_nnz"]


def _good():
    return {
        "search": {"search_all_reached": 1.0, "search_max_nnz": 26.0, "budget_max_success_rate": 0.1,
                   "budget_min_gap_over_margin": 0.03, "equal_compute_sparser_seeds": 0.0},
        "pruners": {"max_success_rate": 0.2, "guarded_seeds_min_wide": 2.0, "search_success_rate": 1.0,
                    "target": 0.95,
                    "accuracy_drop_narrow_to_wide": 0.1, "success_drop_narrow_to_wide": 0.1,
                    "regime_widths": 3.0, "accuracy_drop_in_regime": 0.1, "success_drop_in_regime": 0.1,
                    "dead_path_fraction": 0.6, "mean_dead_weights": 3.0},
    }


def test_every_claim_can_fail(claims_can_fail):
    bad = [
        {"search_max_nnz": 48.0},  # the search needs more weights than the budget on some seed
        {"max_success_rate": 0.8},  # some pruner finds the sparse network most of the time
        {"accuracy_drop_in_regime": -0.05},  # wider starts prune better
        {"dead_path_fraction": 0.0, "mean_dead_weights": 0.0},  # pruned networks are clean
        {"budget_max_success_rate": 0.75},  # as many tries as the search rescue the pruners
        {"equal_compute_sparser_seeds": 1.0},  # GMP at equal compute found a sparser network on some seed
    ]
    claims_can_fail(paper.CLAIMS, _good(), bad)


def test_pruner_claim_needs_guarded_seeds_and_the_searchs_success_at_that_budget():
    claim = paper.CLAIMS[1]
    assert claim.evaluate({**_good()["pruners"], "guarded_seeds_min_wide": 1.0}).status == "fails"
    assert claim.evaluate({**_good()["pruners"], "search_success_rate": 2 / 3}).status == "fails"


def _seed(dense: dict[int, float], acc: dict[int, float], nnz: float = 25.0) -> dict[str, float]:
    row = {"target": 0.95, "search_reached_budget": 1.0, "nnz_budget": nnz}
    for w in dense:
        row.update({labelled("dense_accuracy", width=w): dense[w], labelled("dense_trained", width=w):
                    float(dense[w] >= 0.95), labelled("accuracy", method="snip", width=w): acc[w],
                    labelled("success", method="snip", width=w): float(acc[w] >= 0.95),
                    labelled("dead_weights", method="snip", width=w): 0.0})
    return row


def test_the_dense_guard_counts_pruner_successes_only_on_seeds_whose_dense_network_trained():
    stalled = _seed({3: 0.6, 8: 0.51, 32: 1.0}, {3: 0.5, 8: 0.97, 32: 0.6})  # width 8 stalls: its success is moot
    trained = _seed({3: 0.6, 8: 0.99, 32: 1.0}, {3: 0.5, 8: 0.9, 32: 0.6})
    out = experiments._pruners_summary([stalled, trained, trained])
    seeds, rate = (lambda w: out[labelled("guarded_seeds", width=w)]), labelled("success_rate", width=8)
    assert seeds(8) == 2 and seeds(3) == 0 and out["guarded_seeds_min_wide"] == 2
    assert out[rate] == 0.0 and out["max_success_rate"] == 0.0  # the stalled seed's 0.97 not counted
    assert labelled("success_rate", width=3) not in out  # no guarded seed at width 3
    out = experiments._pruners_summary([_seed({8: 0.99}, {8: 0.97}), _seed({8: 0.99}, {8: 0.9})])
    assert out["max_success_rate"] == 0.5
    assert experiments._pruners_summary([_seed({8: 0.5}, {8: 0.5})])["max_success_rate"] == 1.0  # nothing guarded


def test_width_claim_fails_when_fewer_than_two_widths_train_densely():
    claim = paper.CLAIMS[2]
    assert claim.evaluate({**_good()["pruners"], "regime_widths": 1.0}).status == "fails"
    assert claim.evaluate({**_good()["pruners"], "success_drop_in_regime": -0.3}).status == "fails"


def test_the_width_comparison_starts_at_the_narrowest_width_in_the_regime():
    def seed(dense3, acc3):
        return _seed({3: dense3, 8: 0.99, 32: 1.0}, {3: acc3, 8: 0.9, 32: 0.6})
    out = experiments._pruners_summary([seed(0.6, 0.5), seed(0.7, 0.5)])  # width 3 cannot train: 8 -> 32 is compared
    assert out["regime_widths"] == 2 and out["regime_narrowest_width"] == 8
    assert out["accuracy_drop_in_regime"] == pytest.approx(0.3)
    out = experiments._pruners_summary([seed(0.99, 0.97), seed(0.97, 0.97)])  # all three train: 3 -> 32
    assert out["regime_narrowest_width"] == 3 and out["success_drop_in_regime"] == 1.0


def test_budget_claim_needs_a_successful_search_and_a_gap():
    claim = paper.CLAIMS[4]
    assert claim.evaluate({**_good()["search"], "search_all_reached": 0.0}).status == "fails"
    # a pruner within the evaluation set's noise of the winner on some seed
    assert claim.evaluate({**_good()["search"], "budget_min_gap_over_margin": -0.001}).status == "fails"
    rows = [{"search_reached": 1.0, "search_nnz": 25.0, "search_accuracy": 0.962, "budget_gap": gap,
             "budget_margin": 0.004, "budget_success_rate": 0.1} for gap in (0.03, 0.003)]
    out = experiments._search_summary(rows)  # the second seed's gap is inside 2 standard errors
    assert out["budget_min_gap_over_margin"] == pytest.approx(-0.001) and out["search_all_reached"] == 1.0


def test_the_pruner_in_the_search_slot_is_the_budget_studys_own_run(tmp_path):
    from icml24.core import Context

    config = {**experiments.search.config(setting="smoke"), "phase1_grid": [], "method": "gmp"}
    m = experiments.search(Context(seed=0, out_dir=tmp_path), **config)
    assert m[labelled("budget_accuracy", method="gmp")] == m["search_accuracy"] and m["budget_gap"] <= 0.0
    assert m["budget_tries"] >= 1.0 and m["masks_evaluated"] >= m["budget_tries"]  # the search's networks per level
    assert m["equal_compute_nnz"] == m["search_nnz"] and m["equal_compute_sparser"] == 0.0  # GMP's own walk: a tie
    with pytest.raises(ValueError, match="method"):
        experiments.search(Context(seed=0, out_dir=tmp_path), **{**config, "method": "bogus"})


def test_the_oracle_is_a_recorded_sparse_network_whose_accuracy_is_measured_on_the_runs_points():
    from icml24.pruning import cubist_spiral

    net = slots.oracle_network()
    assert int(sum(float(m.sum()) for m in net.masks)) == 17
    for n in (400, 2_000):
        x, y = cubist_spiral(n)
        found = slots.oracle_found((3, 3, 3), 0.95, x, y, max_masks=4, inits=1)
        assert found["nnz"] == 17 and found["reached"] == 1.0 and 0.95 <= found["accuracy"] < 1.0
        assert found["level_networks"] == [slots.networks_at((3, 3, 3), 14, 4, 1)] and found["levels"] == [17]
        assert slots.oracle_found((3, 3, 3), 0.99, x, y, 4, 1)["reached"] == 0.0  # measured against the target
    with pytest.raises(ValueError, match="widths"):
        slots.oracle_found((4, 4, 4), 0.95, x, y, 4, 1)


def test_the_equal_compute_claim_counts_seeds_where_gmp_was_sparser():
    rows = [{"search_reached": 1.0, "search_nnz": 24.0, "search_accuracy": 0.96, "equal_compute_sparser": flag}
            for flag in (0.0, 1.0, 0.0)]
    out = experiments._search_summary(rows)
    assert out["equal_compute_sparser_seeds"] == 1.0
    claim = paper.CLAIMS[5]
    assert claim.evaluate({**_good()["search"], **out}).status == "fails"
    assert claim.evaluate({**_good()["search"], "equal_compute_sparser_seeds": 0.0}).status == "holds"
    assert claim.resolved_null.overrides == {"method": "snip"}  # GMP in the slot would tie by construction


@pytest.mark.parametrize("claim, key", [(2, "accuracy_drop_in_regime"), (3, "mean_dead_weights"),
                                        (4, "budget_min_gap_over_margin")])
def test_a_rounding_size_gain_does_not_count(claim, key):
    good = _good()[paper.CLAIMS[claim].experiment.name]
    assert paper.CLAIMS[claim].evaluate({**good, key: 1e-12}).status == "fails"
    assert paper.CLAIMS[claim].evaluate({**good, key: 1e-4}).status == "holds"  # one point of 10,000 is a gain
    assert claims.TOL < 1 / 50_000  # below the finest accuracy step (the paper's 50,000 points)


def test_every_search_claim_speaks_for_the_family_and_the_issues_gmp_cases_are_members():
    search_family, pruner_family = experiments.search.family, experiments.pruners.family
    assert {} in search_family.members.values() and {} in pruner_family.members.values()
    assert any(16 in o.get("widths", []) for o in pruner_family.members.values())  # GMP from width 16 (issue #56)
    for claim in paper.CLAIMS:
        assert claim.resolved_family is (search_family if claim.experiment is experiments.search else pruner_family)
    assert experiments.search.oracle.overrides == {"method": "oracle"}


def test_settings_follow_the_paper():
    full = paper.PAPER.experiments["pruners"].full
    assert {3, 8, 32} <= set(full["widths"]) and full["imp_rounds"] == 5
    assert paper.PAPER.experiments["pruners"].seeds["full"] == 5
    assert paper.PAPER.experiments["pruners"].quick["widths"] == [3, 8, 32]
    assert all(claim.setting == "" for claim in paper.CLAIMS)  # quick evaluates every claim
    quick = paper.PAPER.experiments["search"].quick
    assert quick["epochs"] * (quick["num_points"] // 128) >= 4800  # the regime note's 4,928-step recipe
    assert paper.PAPER.experiments["pruners"].quick["epochs"] == quick["epochs"]
    assert {"prospr", "rigl"} <= set(experiments.PRUNERS)
    pruners_quick = paper.PAPER.experiments["pruners"].quick
    assert quick["max_masks_per_nnz"] * quick["inits"] >= 106  # the strength chosen on seeds 0-4 (deviations)
    for key in ("max_masks_per_nnz", "inits", "levels_per_run", "num_points", "epochs", "lr"):  # one search per seed
        assert pruners_quick[key] == quick[key], key
    for name in ("search", "pruners"):  # the official 9-setting grid at quick and full
        fn = paper.PAPER.experiments[name].fn
        assert inspect.signature(fn).parameters["grid"].default is True
    assert len(experiments.OFFICIAL_GRID) == 9
    search_full = paper.PAPER.experiments["search"].full
    assert search_full["num_points"] == 50_000 and search_full["epochs"] == 50 and search_full["max_masks_per_nnz"] == 0
    defaults = {k: v.default for k, v in inspect.signature(experiments.search.fn).parameters.items()}
    assert tuple(defaults["widths"]) == (3, 3, 3) and defaults["target"] == 0.95
    assert {claim.experiment.name for claim in paper.CLAIMS} == set(paper.PAPER.experiments)


def _bad_inputs():
    """32 bad inputs at the public boundaries of icml24.pruning, each with the words its ValueError must say."""
    import torch

    import icml24.pruning as P

    x, y = P.cubist_spiral(256)
    xn = x.clone()
    xn[0, 0] = float("nan")
    net = lambda: P.BatchedMaskedMLP((2, 3, 3, 3, 1), 2, random_state=0)  # noqa: E731
    return {
        "spiral: too few points": (lambda: P.cubist_spiral(10), "num_points"),
        "spiral: NaN points": (lambda: P.cubist_spiral(float("nan")), "integer"),
        "validation: one point": (lambda: P.spiral_validation(1000, 1), "num_validation"),
        "mlp: one layer size": (lambda: P.BatchedMaskedMLP((2,), 1), "widths"),
        "mlp: no networks": (lambda: P.BatchedMaskedMLP((2, 3, 1), 0), "num_networks"),
        "mlp: fractional mask": (lambda: P.BatchedMaskedMLP((2, 3, 1), 1, [torch.full((3, 2), 0.5), torch.ones(1, 3)]),
                                 "0/1"),
        "forward: wrong input size": (lambda: net()(torch.zeros(5, 3)), "x must be"),
        "accuracy: labels of other points": (lambda: net().accuracy(x, y[:10]), "y must be"),
        "train: labels not 0/1": (lambda: P.train_batched(net(), x, y * 2, epochs=1), "0/1"),
        "train: fewer labels than points": (lambda: P.train_batched(net(), x, y[:200], epochs=1), "y must be"),
        "train: batch size 0": (lambda: P.train_batched(net(), x, y, epochs=1, batch_size=0), "batch_size"),
        "train: no epochs": (lambda: P.train_batched(net(), x, y, epochs=0), "epochs"),
        "train: negative lr": (lambda: P.train_batched(net(), x, y, epochs=1, lr=-0.1), "lr"),
        "train: NaN momentum": (lambda: P.train_batched(net(), x, y, epochs=1, momentum=float("nan")), "momentum"),
        "train: negative weight decay": (lambda: P.train_batched(net(), x, y, epochs=1, weight_decay=-1.0),
                                         "weight_decay"),
        "train: NaN point": (lambda: P.train_batched(net(), xn, y, epochs=1), "NaN"),
        "keep_top: more than the weights": (lambda: P.keep_top([torch.rand(1, 3, 2)], 10), "nnz"),
        "snip: NaN point": (lambda: P.snip(net(), xn, y, 5), "NaN"),
        "synflow: no iterations": (lambda: P.synflow(net(), 10, iterations=0), "iterations"),
        "iterative snip: no iterations": (lambda: P.iterative_snip(net(), x, y, 10, iterations=0), "iterations"),
        "prospr: NaN lr": (lambda: P.prospr(net(), x, y, 10, lr=float("nan")), "lr"),
        "gmp: negative budget": (lambda: P.GradualMagnitude(-1), "nnz"),
        "imp schedule: one round": (lambda: P.geometric_nnz(1, 1, 100, 10), "rounds"),
        "rigl: empty budget": (lambda: P.RigL(0), "nnz"),
        "search: no inits": (lambda: P.CombinatorialSearch(inits=0).fit(x, y), "inits"),  # at fit (the contract)
        "search: negative masks per level": (lambda: P.CombinatorialSearch(max_masks_per_nnz=-1).fit(x, y),
                                             "max_masks_per_nnz"),
        "search: no levels per run": (lambda: P.CombinatorialSearch(levels_per_run=0).fit(x, y), "levels_per_run"),
        "search: flat labels": (lambda: P.CombinatorialSearch(epochs=1, max_nnz=13).fit(x, y[:, 0]), "y must be"),
        "phase 1: empty grid": (lambda: P.minimal_widths(x, y, 0.9, [], epochs=1), "grid"),
        "phase 1: wider than the network": (lambda: P.minimal_widths(x, y, 0.9, [17], epochs=1), "grid"),
        "phase 1: NaN target": (lambda: P.minimal_widths(x, y, float("nan"), [2], epochs=1), "target"),
        "pruners: NaN validation point": (lambda: P.PrunerComparison((3,), 10, ("snip",), epochs=1).fit(
            x, y, validation=(xn, y)), "validation x"),
    }


BAD = _bad_inputs()


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_gives_a_clear_value_error(name):
    call, words = BAD[name]
    with pytest.raises(ValueError, match=words):
        call()


def test_the_bad_input_list_is_the_issues_32():
    assert len(BAD) == 32
