import pytest
import torch
from torch import nn

from icml24.merging import (
    StateDictLayout,
    TALLMasks,
    TaskArithmetic,
    TaskVectors,
    TIESMerging,
    compute_task_vectors,
    select_coefficient,
)


def _model(seed):
    with torch.random.fork_rng():  # a seeded init without touching the test session's global RNG
        torch.manual_seed(seed)
        return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))


def test_layout_roundtrip_skips_integer_buffers():
    sd = _model(0).state_dict()
    layout = StateDictLayout.from_state_dict(sd)
    assert "1.num_batches_tracked" not in layout.keys
    assert layout.num_params == sum(v.numel() for v in sd.values() if v.is_floating_point())
    back = layout.unflatten(layout.flatten(sd), like=sd)
    assert set(back) == set(sd)
    for k in sd:
        assert torch.equal(back[k], sd[k])


def test_task_vectors_are_differences():
    base, a, b = (_model(s).state_dict() for s in range(3))
    tv = compute_task_vectors(base, [a, b])
    layout = StateDictLayout.from_state_dict(base)
    assert torch.allclose(tv[1], layout.flatten(b) - layout.flatten(base))


def test_mergers_fitted_on_task_vectors_share_one_tensor_and_agree():
    g = torch.Generator().manual_seed(0)
    base, tuned = torch.randn(300, generator=g), torch.randn(4, 300, generator=g)
    shared = TaskVectors(base, tuned)
    assert torch.equal(shared.vectors, tuned - base) and len(shared[:2]) == 2
    for merger in (TaskArithmetic(0.3), TIESMerging(0.2), TALLMasks(0.4)):
        a, b = type(merger)(**merger.get_params()), type(merger)(**merger.get_params())
        a.fit(base, shared[:3]), b.fit(base, tuned[:3])
        assert a.task_vectors_.data_ptr() == shared.vectors.data_ptr()  # a view, not a copy
        assert torch.equal(a.multitask_vector_, b.multitask_vector_)
    with pytest.raises(ValueError, match="theta_0"):
        TaskArithmetic(0.3).fit(base + 1, shared)
    with pytest.raises(TypeError, match="slice"):
        shared[0]


def test_task_arithmetic_closed_form_and_grid_choice():
    base = torch.zeros(5)
    tuned = torch.tensor([[1.0, 0, 0, 0, 0], [0, 2.0, 0, 0, 0]])
    ta = TaskArithmetic(scaling=0.5).fit(base, tuned)
    assert torch.allclose(ta.merge(), torch.tensor([0.5, 1.0, 0, 0, 0]))
    # score peaks where the first coordinate equals 0.3
    ta = TaskArithmetic(scaling=[0.1, 0.3, 0.7]).fit(base, tuned, score=lambda v: -abs(float(v[0]) - 0.3))
    assert ta.scaling_ == 0.3 and len(ta.scaling_scores_) == 3


def test_errors_say_what_to_fix():
    with pytest.raises(ValueError, match="score"):
        TaskArithmetic(scaling=[0.1, 0.2]).fit(torch.zeros(3), torch.zeros(2, 3))
    with pytest.raises(ValueError, match="parameters"):
        TaskArithmetic().fit(torch.zeros(3), torch.zeros(2, 4))
    with pytest.raises(ValueError, match="not fitted"):
        TaskArithmetic().merge()
    assert select_coefficient([1, 2, 3], lambda c: 1.0)[0] == 1.0


def test_merge_returns_state_dict():
    base, a = _model(0).state_dict(), _model(1).state_dict()
    merged = TaskArithmetic(scaling=1.0).fit(base, [a]).merge()
    for k in a:
        if a[k].is_floating_point():
            assert torch.allclose(merged[k], a[k], atol=1e-6)
    assert "TaskArithmetic(scaling=1.0)" == repr(TaskArithmetic(scaling=1.0))


def test_not_fitted_error_is_a_value_and_attribute_error():
    from icml24._validation import NotFittedError

    with pytest.raises(NotFittedError) as info:
        TaskArithmetic().merged_vector()
    assert isinstance(info.value, ValueError) and isinstance(info.value, AttributeError)


def test_nan_inputs_rejected_at_every_entry_point():
    from icml24.merging import task_arithmetic_vector

    tuned = torch.ones(2, 3)
    tuned[0, 1] = float("nan")
    with pytest.raises(ValueError, match="finetuned"):
        TaskArithmetic().fit(torch.zeros(3), tuned)
    with pytest.raises(ValueError, match="finetuned"):
        compute_task_vectors(torch.zeros(3), tuned)
    with pytest.raises(ValueError, match="pretrained"):
        compute_task_vectors(torch.tensor([0.0, float("nan"), 0.0]), torch.ones(2, 3))
    with pytest.raises(ValueError, match="task_vectors"):
        task_arithmetic_vector(tuned)
    with pytest.raises(ValueError, match="scaling"):
        TaskArithmetic(scaling=float("nan")).fit(torch.zeros(3), torch.ones(2, 3))  # checked at fit
    with pytest.raises(ValueError, match="scaling"):
        TaskArithmetic(scaling=[0.1, float("inf")]).fit(torch.zeros(3), torch.ones(2, 3), score=lambda v: 0.0)
    with pytest.raises(ValueError, match="scaling"):
        TaskArithmetic(scaling=[]).fit(torch.zeros(3), torch.ones(2, 3))
    with pytest.raises(ValueError, match="finite"):
        TaskArithmetic(scaling=[0.1, 0.2]).fit(torch.zeros(3), torch.ones(2, 3), score=lambda v: float("nan"))
    with pytest.raises(ValueError, match="finite"):
        select_coefficient([1.0, 2.0], lambda c: float("nan"))
