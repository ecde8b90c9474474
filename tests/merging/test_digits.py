import numpy as np
import pytest
import torch

from icml24.data import TASK_SPECS, pretraining_mixture, pretraining_specs
from icml24.merging.digits import Backbone, BroadBase, SmallPretrained, build_broad_base, derived_head, train


def test_backbone_is_seeded_and_training_lowers_the_loss():
    a, b = Backbone(8, 16, torch.Generator().manual_seed(0)), Backbone(8, 16, torch.Generator().manual_seed(0))
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    c = Backbone(8, 16, random_state=0)  # an int seeds the same torch stream
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), c.state_dict().values()))
    g = torch.Generator().manual_seed(1)
    x, y = torch.randn(64, 8, generator=g), torch.randint(0, 3, (64,), generator=g)
    head = torch.nn.Linear(16, 3)
    loss = lambda: float(torch.nn.functional.cross_entropy(head(a(x)), y))  # noqa: E731
    before = loss()
    train(a, head, x, y, epochs=20, lr=1e-2, random_state=g)
    assert loss() < before
    with pytest.raises(ValueError, match="optimizer"):
        train(a, head, x, y, 1, 0.1, g, optimizer="lbfgs")


def test_derived_head_averages_the_rows_of_its_label_map():
    base = torch.nn.Linear(4, 10)
    head = derived_head(base, "invert+parity", 2)
    assert torch.allclose(head.weight[0], base.weight[0::2].mean(0)) and not head.weight.requires_grad
    assert torch.allclose(derived_head(base, "rot90", 10).bias, base.bias)


def test_pretraining_mixture_holds_out_every_task():
    specs = pretraining_specs()
    assert len(specs) >= 30 and not set(specs) & set(TASK_SPECS)
    x, y = pretraining_mixture("digits", specs, indices=np.arange(20))
    assert x.shape == (len(specs), 20, 64) and y.shape == (len(specs), 20) and y.max() <= 9


def test_both_digit_settings_give_flat_weights_and_an_evaluator():
    built = build_broad_base("digits", 12, 1, 1, 2, split_seed=0, random_state=torch.Generator().manual_seed(0))
    broad = BroadBase(built, "digits", 2, 12, 1)
    base, tuned, ev = broad.finetune(5, 0.01, lambda t: torch.Generator().manual_seed(t))
    assert tuned.shape == (2, base.numel()) and not torch.equal(tuned[0], base)
    assert 0.0 <= ev.accuracy(tuned[1], 1, "test") <= 1.0
    small = SmallPretrained("digits", 2, 12, 1, split_seed=0, random_state=torch.Generator().manual_seed(0))
    base, tuned, ev = small.finetune(1, 0.02, "sgd", lambda t: torch.Generator().manual_seed(t))
    assert tuned.shape == (2, base.numel()) and 0.0 <= ev.accuracy(base, 0, "val") <= 1.0
