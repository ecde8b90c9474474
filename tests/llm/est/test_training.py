"""The training loop: same tokens for baseline and EST, FLOPs bookkeeping, and resume == uninterrupted run."""

import numpy as np
import pytest

from icml24._validation import NotFittedError
from icml24.llm.est import (
    EvolvingSubnetworkSchedule,
    EvolvingSubnetworkTrainer,
    GPTConfig,
    fit_lockstep,
    subnetwork_flops,
)

CONFIG = GPTConfig(vocab_size=32, block_size=16, n_layer=2, n_head=2, n_embd=16)


def _tokens(n, seed):
    rng = np.random.default_rng(seed)
    return (np.cumsum(rng.integers(0, 3, n)) % 32).astype(np.uint8)  # a learnable random walk


def _trainer(schedule=None, **kw):
    args = {"steps": 12, "batch_size": 4, "eval_every": 4, "eval_batches": 2, "lr": 3e-3, "random_state": 5}
    return EvolvingSubnetworkTrainer(CONFIG, schedule, **{**args, **kw})


def test_resume_from_checkpoint_continues_the_same_loss_curve(tmp_path):
    train, val = _tokens(2000, 0), _tokens(400, 1)
    straight = _trainer().fit(train, val)
    path = tmp_path / "ckpt.pt"
    first = _trainer(checkpoint_path=path).fit(train, val, stop_after=5)
    assert first.steps_done_ == 5 and path.exists()
    resumed = _trainer(checkpoint_path=path).fit(train, val)
    assert resumed.steps_done_ == 12
    np.testing.assert_array_equal(resumed.train_loss_, straight.train_loss_)
    np.testing.assert_array_equal(resumed.step_flops_, straight.step_flops_)
    assert [e["val_loss"] for e in resumed.evals_] == [e["val_loss"] for e in straight.evals_]
    # and a run that does not restore its state would differ (the test can fail)
    fresh = _trainer(checkpoint_path=tmp_path / "other.pt", random_state=6).fit(train, val)
    assert not np.array_equal(fresh.train_loss_, straight.train_loss_)


def test_a_crafted_checkpoint_is_refused_without_running_it(tmp_path):
    import torch

    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))  # unpickling would create the marker file

    path = tmp_path / "ckpt.pt"
    torch.save({"model": Payload()}, path)
    train, val = _tokens(2000, 0), _tokens(400, 1)
    with pytest.raises(ValueError, match="refused"):
        _trainer(checkpoint_path=path).fit(train, val)
    assert not marker.exists()


def test_baseline_and_est_share_the_data_and_start_but_not_the_flops():
    train, val = _tokens(2000, 0), _tokens(400, 1)
    base = _trainer(EvolvingSubnetworkSchedule.full()).fit(train, val)
    est = _trainer().fit(train, val)
    assert base.train_loss_[0] != est.train_loss_[0]  # step 0 is a subnetwork in EST
    full = subnetwork_flops(CONFIG, None, 4, 16)
    assert np.all(base.step_flops_ == full) and base.flops_saving() == 0.0
    assert np.all(est.step_flops_[6:] == full) and np.all(est.step_flops_[:6] < full)
    assert 0.2 < est.flops_saving() < 0.4
    assert [e["tokens"] for e in base.evals_] == [e["tokens"] for e in est.evals_] == [256, 512, 768]
    assert base.final_val_loss_ < np.log(32)  # it learns


def test_same_seed_same_run_and_errors():
    train, val = _tokens(2000, 0), _tokens(400, 1)
    calls = []
    a, b = _trainer(steps=3).fit(train, val, progress=lambda *c: calls.append(c)), _trainer(steps=3).fit(train, val)
    np.testing.assert_array_equal(a.train_loss_, b.train_loss_)
    assert calls == [(1, 3), (2, 3), (3, 3)]  # the one progress protocol: (done, total) after each step
    with pytest.raises(ValueError, match="progress"):
        _trainer(steps=3).fit(train, val, progress="bar")
    with pytest.raises(NotFittedError):
        _ = _trainer().model_
    with pytest.raises(ValueError, match="outside"):
        _trainer().fit(np.full(100, 40), val)
    with pytest.raises(ValueError, match="NaN"):
        _trainer().fit(np.full(100, np.nan), val)
    with pytest.raises(ValueError, match="steps"):
        _trainer(steps=0).fit(train, val)
    lr = _trainer(steps=100, warmup=0.1)
    assert lr.learning_rate(0) < lr.learning_rate(9) and lr.learning_rate(9) == pytest.approx(3e-3)
    assert lr.learning_rate(99) == pytest.approx(3e-4, rel=0.01)


def test_lockstep_runs_end_exactly_where_their_own_fits_end():
    train, val = _tokens(2000, 0), _tokens(400, 1)
    alone = [_trainer(EvolvingSubnetworkSchedule.full()).fit(train, val), _trainer(steps=9).fit(train, val)]
    together = fit_lockstep([_trainer(EvolvingSubnetworkSchedule.full()), _trainer(steps=9)], train, val)
    for a, b in zip(alone, together):
        np.testing.assert_array_equal(a.train_loss_, b.train_loss_)  # own model, optimizer and seed streams
        assert [e["val_loss"] for e in a.evals_] == [e["val_loss"] for e in b.evals_]
        assert b.step_seconds_.shape == b.step_cpu_seconds_.shape == (b.steps_done_,)
        assert np.all(b.step_seconds_ > 0) and np.all(b.step_cpu_seconds_ >= 0)
    assert together[1].steps_done_ == 9 and together[0].steps_done_ == 12
    with pytest.raises(ValueError, match="at least one"):
        fit_lockstep([], train, val)
