"""Pruners on one interface: every method ends at the budget, shares one init per width, and padding a narrow
network into a wide batch changes nothing."""

import pytest
import torch

from icml24.pruning import METHODS, BatchedMaskedMLP, PrunerComparison, cubist_spiral, train_batched


@pytest.fixture(scope="module")
def study():
    x, y = cubist_spiral(256)
    return PrunerComparison((3, 5), 14, epochs=2, batch_size=64, imp_rounds=3, synflow_iterations=5,
                            score_points=128).fit(x, y, generator=torch.Generator().manual_seed(0))


def test_every_method_at_every_width_ends_at_or_below_the_budget(study):
    for method in METHODS:
        for w in (3, 5):
            assert study.nnz_[(method, w)] <= 14 and (method, w) in study.accuracy_
            assert [tuple(m.shape) for m in study.masks_[(method, w)]] == [(w, 2), (w, w), (w, w), (1, w)]
    assert study.nnz_[("dense", 5)] == 10 + 50 + 5
    assert study.nnz_[("snip", 5)] == 14 and study.nnz_[("imp", 3)] == 14 and study.nnz_[("prospr", 5)] == 14
    assert {"prospr", "rigl"} <= set(METHODS)


def test_padding_into_a_wider_batch_changes_nothing():
    x, y = cubist_spiral(256)
    narrow = BatchedMaskedMLP((2, 3, 3, 3, 1), 1, generator=torch.Generator().manual_seed(3))
    study = PrunerComparison((3, 6), 12, methods=("snip",), epochs=2, batch_size=64, score_points=256)
    study.fit(x, y, generator=torch.Generator().manual_seed(4), inits={3: narrow})
    alone = BatchedMaskedMLP((2, 3, 3, 3, 1), 1)
    alone.load_snapshot(narrow.snapshot())
    gen = torch.Generator().manual_seed(4)
    torch.randperm(len(x), generator=gen)  # the scoring subset draw
    BatchedMaskedMLP((2, 6, 6, 6, 1), 1, generator=gen)  # the width-6 init draw
    from icml24.pruning import snip
    alone.set_masks(snip(alone, x[:256], y[:256], 12))
    train_batched(alone, x, y, epochs=2, batch_size=64, generator=gen)
    assert abs(float(alone.accuracy(x, y)[0]) - study.accuracy_[("snip", 3)]) < 1e-6


def test_bad_settings_are_rejected():
    with pytest.raises(ValueError, match="unknown methods"):
        PrunerComparison((3,), 10, methods=("obd",))
    with pytest.raises(ValueError, match="nnz must be in"):
        PrunerComparison((3,), 100)
    with pytest.raises(ValueError, match="imp_rounds"):
        PrunerComparison((3,), 10, imp_rounds=1)
    with pytest.raises(ValueError, match="inits"):
        PrunerComparison((3,), 10).fit(*cubist_spiral(256), inits={3: BatchedMaskedMLP((2, 4, 4, 4, 1), 1)})


def test_tries_train_independent_initialisations_and_keep_the_best():
    x, y = cubist_spiral(400)
    study = PrunerComparison((3,), 24, ("snip", "gmp", "imp"), epochs=2, imp_rounds=3, tries=3)
    study.fit(x, y, generator=torch.Generator().manual_seed(0))
    assert len(study.try_inits_[3]) == 3 and study.inits_[3] is study.try_inits_[3][0]
    for key, accs in study.try_accuracy_.items():
        assert len(accs) == 3 and study.accuracy_[key] == max(accs) == accs[study.best_try_[key]]
    assert not torch.equal(study.try_inits_[3][0].weights[0], study.try_inits_[3][1].weights[0])
    with pytest.raises(ValueError, match="tries"):
        PrunerComparison((3,), 24, tries=0)
