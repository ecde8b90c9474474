"""Pruners on one interface: every method ends at the budget, a given init trains as it would alone, random
inits are re-drawn before SNIP and GraSP as the official code does, the grid is chosen on validation points."""

import pytest
import torch

from icml24.pruning import METHODS, BatchedMaskedMLP, PrunerComparison, cubist_spiral, train_batched


@pytest.fixture(scope="module")
def study():
    x, y = cubist_spiral(256)
    return PrunerComparison((3, 5), 14, epochs=2, batch_size=64, imp_rounds=3, synflow_iterations=5,
                            score_points=128).fit(x, y, random_state=0)


def test_every_method_at_every_width_ends_at_or_below_the_budget(study):
    for method in METHODS:
        for w in (3, 5):
            assert study.nnz_[(method, w)] <= 14 and (method, w) in study.accuracy_
            assert [tuple(m.shape) for m in study.masks_[(method, w)]] == [(w, 2), (w, w), (w, w), (1, w)]
    assert study.nnz_[("dense", 5)] == 10 + 50 + 5
    assert study.nnz_[("snip", 5)] == 14 and study.nnz_[("imp", 3)] == 14 and study.nnz_[("prospr", 5)] == 14
    assert {"prospr", "rigl"} <= set(METHODS)


def test_a_given_init_trains_the_same_in_the_comparison_as_alone():
    x, y = cubist_spiral(256)
    narrow = BatchedMaskedMLP((2, 3, 3, 3, 1), 1, random_state=3)
    study = PrunerComparison((3, 6), 12, methods=("snip",), epochs=3, batch_size=64, score_points=256)
    study.fit(x, y, random_state=4, inits={3: narrow})
    alone = BatchedMaskedMLP((2, 3, 3, 3, 1), 1)
    alone.load_snapshot(narrow.snapshot())
    gen = torch.Generator().manual_seed(4)
    BatchedMaskedMLP((2, 6, 6, 6, 1), 1, random_state=gen)  # the width-6 init draw
    idx = torch.randperm(len(x), generator=gen)[:256]  # the scoring subset; SNIP scores its first minibatch
    from icml24.pruning import snip
    alone.set_masks(snip(alone, x[idx][:64], y[idx][:64], 12))  # a given init is not re-drawn
    train_batched(alone, x, y, epochs=3, batch_size=64, random_state=gen)
    assert abs(float(alone.accuracy(x, y)[0]) - study.accuracy_[("snip", 3)]) < 1e-6
    live = [(m * (w != 0))[0] for m, w in zip(alone.masks, alone.weights)]
    assert all(torch.equal(a, b) for a, b in zip(live, study.masks_[("snip", 3)]))


def test_leaving_the_dense_network_out_changes_no_other_network():
    x, y = cubist_spiral(256)
    kw = {"epochs": 2, "batch_size": 64, "score_points": 128, "tries": 2}
    runs = [PrunerComparison((3,), 14, ("snip", "gmp", "rigl"), dense=d, **kw).fit(
        x, y, random_state=5) for d in (True, False)]
    assert ("dense", 3) in runs[0].accuracy_ and ("dense", 3) not in runs[1].accuracy_
    for key in (("snip", 3), ("gmp", 3), ("rigl", 3)):
        assert runs[0].try_accuracy_[key] == runs[1].try_accuracy_[key]
    imp = PrunerComparison((3,), 14, ("imp",), dense=False, imp_rounds=2, **kw).fit(x, y)
    assert ("dense", 3) in imp.accuracy_  # IMP starts from it, so it trains anyway


def test_random_inits_are_redrawn_xavier_normal_before_snip_and_grasp():
    x, y = cubist_spiral(256)
    kw = {"methods": ("snip", "grasp", "synflow"), "epochs": 1, "batch_size": 64, "synflow_iterations": 3}
    on = PrunerComparison((16,), 40, **kw).fit(x, y, random_state=0)
    off = PrunerComparison((16,), 40, redraw=False, **kw).fit(x, y, random_state=0)
    assert on.try_inits_[16][0].weights[1].abs().max() <= 0.25  # the uniform init, +-1/sqrt(16)
    redrawn = BatchedMaskedMLP((2, 16, 16, 16, 1), 1).xavier_normal_(torch.Generator().manual_seed(1))
    spread = redrawn.weights[1].detach()
    assert abs(float(spread.std()) - (2 / 32) ** 0.5) < 0.05 and spread.abs().max() > 0.25
    assert on.masks_[("synflow", 16)][1].equal(off.masks_[("synflow", 16)][1])  # SynFlow is never re-drawn
    assert any(not a.equal(b) for a, b in zip(on.masks_[("snip", 16)], off.masks_[("snip", 16)]))


def test_the_grid_trains_every_setting_and_keeps_the_best_on_validation_points():
    x, y = cubist_spiral(512)
    xv, yv = cubist_spiral(300, random_state=1)
    from icml24.pruning import OFFICIAL_GRID
    study = PrunerComparison((3,), 20, ("snip", "gmp"), epochs=2, settings=OFFICIAL_GRID, tries=2)
    study.fit(x, y, random_state=0, validation=(xv, yv))
    assert len(OFFICIAL_GRID) == 9 and {lr for lr, _ in OFFICIAL_GRID} == {0.05, 0.1, 0.2}
    for key in study.try_accuracy_:
        for k in range(2):
            runs = [study.results_[(*key, k, s)] for s in range(9)]
            assert study.validation_accuracy_[key][k] == max(r[1] for r in runs)
            chosen = OFFICIAL_GRID.index(study.setting_[key][k])
            assert study.try_accuracy_[key][k] == runs[chosen][0]
    with pytest.raises(ValueError, match="validation"):
        PrunerComparison((3,), 20, ("snip",), epochs=1, settings=OFFICIAL_GRID).fit(x, y)
    with pytest.raises(ValueError, match="schedule"):
        PrunerComparison((3,), 20, settings=[(0.1, "linear")]).fit(x, y)
    with pytest.raises(ValueError, match="lr"):
        PrunerComparison((3,), 20, settings=[(float("nan"), "cosine")]).fit(x, y)


def _no_work(*args, **kwargs):
    raise AssertionError("a network was scored or trained before the bad setting was refused")


def test_bad_settings_are_rejected_at_fit(monkeypatch):
    x, y = cubist_spiral(256)
    monkeypatch.setattr("icml24.pruning.pruners.train_batched", _no_work)
    monkeypatch.setattr("icml24.pruning.pruners.at_init_masks", _no_work)
    bad = [({"methods": ("obd",)}, "unknown methods"), ({"nnz": 100}, "nnz must be in"),
           ({"imp_rounds": 1}, "imp_rounds"), ({"nnz": None}, "nnz is required"), ({"widths": (3, 0)}, "widths"),
           ({"methods": "snip"}, "sequence of method names"), ({"epochs": 0}, "epochs"),
           ({"rigl_delta": 1.5}, "rigl_delta"), ({"settings": [0.1]}, "settings must be")]
    for change, words in bad:
        study = PrunerComparison(**{"widths": (3,), "nnz": 10, **change})  # stored as given
        assert all(study.get_params()[k] is v for k, v in change.items())
        with pytest.raises(ValueError, match=words):
            study.fit(x, y)  # refused before any network is drawn or trained
    with pytest.raises(ValueError, match="inits"):
        PrunerComparison((3,), 10).fit(x, y, inits={3: BatchedMaskedMLP((2, 4, 4, 4, 1), 1)})
    with pytest.raises(AssertionError, match="before the bad setting"):  # the guard itself bites on a valid study
        PrunerComparison((3,), 10, ("snip",), epochs=1).fit(x, y)


def test_the_comparison_is_a_scikit_learn_estimator_and_an_int_seed_is_its_generator():
    from sklearn.base import clone

    study = PrunerComparison((3,), 14, ("snip", "rigl"), epochs=1, batch_size=64, score_points=64)
    assert clone(study).get_params() == study.get_params() and study.set_params(tries=2).tries == 2
    x, y = cubist_spiral(256)
    a = clone(study).fit(x, y, random_state=7)
    b = clone(study).fit(x, y, random_state=torch.Generator().manual_seed(7))
    assert a.try_accuracy_ == b.try_accuracy_ and a.settings_ == ((0.1, "cosine"),)


def test_tries_train_independent_initialisations_and_keep_the_best():
    x, y = cubist_spiral(400)
    study = PrunerComparison((3,), 24, ("snip", "gmp", "imp"), epochs=2, imp_rounds=3, tries=3)
    study.fit(x, y, random_state=0)
    assert len(study.try_inits_[3]) == 3 and study.inits_[3] is study.try_inits_[3][0]
    for key, accs in study.try_accuracy_.items():
        assert len(accs) == 3 and study.accuracy_[key] == max(accs) == accs[study.best_try_[key]]
    assert not torch.equal(study.try_inits_[3][0].weights[0], study.try_inits_[3][1].weights[0])
    with pytest.raises(ValueError, match="tries"):
        PrunerComparison((3,), 24, tries=0).fit(x, y)
