import numpy as np
import pytest
import torch

from icml24.sbi.simformer import Simformer
from icml24.sbi.tasks import gaussian_linear
from icml24.sbi.transformer import ScoreTransformer

TINY = dict(num_layers=1, num_heads=2, head_dim=4, id_dim=4, value_dim=4, condition_dim=2, time_dim=8)


def test_score_transformer_shapes_and_output_scaling():
    torch.manual_seed(0)
    net = ScoreTransformer(5, **TINY)
    x, t = torch.randn(3, 5), torch.rand(3)
    condition = torch.zeros(3, 5, dtype=torch.bool)
    out = net(x, t, condition, torch.ones(3))
    assert out.shape == (3, 5)
    assert torch.allclose(net(x, t, condition, torch.full((3,), 2.0)), out / 2, atol=1e-6)
    # sigma(t) is clipped at 1e-3
    assert torch.allclose(net(x, t, condition, torch.full((3,), 1e-6)), out / 1e-3, rtol=1e-4)


def test_attention_mask_blocks_information_flow():
    torch.manual_seed(0)
    net = ScoreTransformer(3, **{**TINY, "num_layers": 2})
    mask = torch.eye(3, dtype=torch.bool)
    mask[1, 0] = True  # node 1 attends to node 0; node 0 attends only to itself
    x = torch.randn(1, 3)
    changed = x.clone()
    changed[0, 2] += 5.0  # node 2 is seen by nobody else
    args = (torch.rand(1), torch.zeros(1, 3, dtype=torch.bool), torch.ones(1))
    a, b = net(x, *args, mask), net(changed, *args, mask)
    assert torch.allclose(a[0, :2], b[0, :2]) and not torch.allclose(a[0, 2], b[0, 2])
    changed_zero = x.clone()
    changed_zero[0, 0] += 5.0
    c = net(changed_zero, *args, mask)
    assert not torch.allclose(a[0, 1], c[0, 1])  # node 0 reaches node 1


def _trained(graph_kind="undirected", steps=3):
    task = gaussian_linear(2)
    joint = task.simulate_joint(200, torch.Generator().manual_seed(0))
    model = Simformer(4, graph=task.graph, graph_kind=graph_kind, seed=0, **TINY)
    return task, model.append_simulations(joint[:, :2], joint[:, 2:]).train(max_steps=steps, batch_size=32)


@pytest.mark.parametrize("graph_kind", ["dense", "undirected", "directed"])
def test_train_and_sample_keep_conditioned_entries(graph_kind):
    task, model = _trained(graph_kind)
    assert model.steps_trained_ == 3 and all(np.isfinite(model.loss_history_))
    samples = model.sample(7, condition={2: 0.3, 3: -0.1}, num_steps=5, generator=torch.Generator().manual_seed(1))
    assert samples.shape == (7, 4)
    assert torch.all(samples[:, 2] == 0.3) and torch.all(samples[:, 3] == torch.tensor(-0.1))
    assert torch.isfinite(samples).all()
    ode = model.sample(4, condition=torch.tensor([float("nan"), 0.5, float("nan"), float("nan")]), method="ode",
                       num_steps=3)
    assert torch.all(ode[:, 1] == 0.5)
    assert model.sample_posterior(5, torch.tensor([0.1, 0.2]), num_steps=2).shape == (5, 2)
    assert model.sample_likelihood(5, torch.tensor([0.1, 0.2]), num_steps=2).shape == (5, 2)


def test_conditioned_entries_receive_no_loss():
    task, model = _trained(steps=1)
    x0 = torch.randn(16, 4)
    observed = torch.ones(16, 4, dtype=torch.bool)
    observed[:, 0] = False
    model.network_.zero_grad()
    loss = model.loss(x0, torch.Generator().manual_seed(0), observed)
    assert float(loss.detach()) > 0
    all_observed = torch.ones(16, 4, dtype=torch.bool)
    assert float(model.loss(x0, torch.Generator().manual_seed(0), all_observed).detach()) == 0.0


def test_same_seed_same_model_and_validation_errors():
    _, first = _trained()
    _, second = _trained()
    assert first.loss_history_ == second.loss_history_
    with pytest.raises(ValueError, match="append_simulations"):
        Simformer().train()
    with pytest.raises(ValueError, match="needs a graph"):
        Simformer(graph_kind="directed")
    with pytest.raises(ValueError, match="rows"):
        Simformer().append_simulations(torch.zeros(3, 1), torch.zeros(2, 1))
    with pytest.raises(ValueError, match="every variable"):
        first.sample(2, condition={0: 0.0, 1: 0.0, 2: 0.0, 3: 0.0})
    assert "graph_kind='directed'" in repr(Simformer(graph=np.eye(2), graph_kind="directed"))


def test_guidance_pushes_samples_into_interval():
    """With a zero score (pure noise model) guidance alone must move samples into the interval."""
    from icml24.sbi.sampling import euler_maruyama, interval_potential
    from icml24.sbi.sde import VESDE

    sde = VESDE(sigma_min=0.01, sigma_max=1.0)
    x_init = torch.randn(200, 2, generator=torch.Generator().manual_seed(0))
    condition = torch.zeros(2, dtype=torch.bool)
    zero_score = lambda x, t: torch.zeros_like(x)  # noqa: E731
    free = euler_maruyama(zero_score, sde, x_init, condition, 50, torch.Generator().manual_seed(1))
    guided = euler_maruyama(zero_score, sde, x_init, condition, 50, torch.Generator().manual_seed(1),
                            guidance=interval_potential(0, 1.0, 2.0, sharpness=20.0))
    inside = lambda s: float(((s[:, 0] > 1.0) & (s[:, 0] < 2.0)).float().mean())  # noqa: E731
    assert inside(guided) > inside(free) + 0.3
    assert torch.allclose(guided[:, 1], free[:, 1])  # the other coordinate is untouched


@pytest.mark.slow
def test_learned_posterior_of_a_linear_gaussian_is_close_to_closed_form():
    """End to end: theta ~ N(0, 0.1), x ~ N(theta, 0.1) -> p(theta | x = 0.4) = N(0.2, 0.05)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        task = gaussian_linear(1)
        joint = task.simulate_joint(2000, torch.Generator().manual_seed(0))
        model = Simformer(graph=task.graph, num_layers=2, seed=0).append_simulations(joint[:, :1], joint[:, 1:])
        model.train(max_steps=1500, batch_size=256)
        samples = model.sample_posterior(1000, torch.tensor([0.4]), num_steps=50,
                                         generator=torch.Generator().manual_seed(1))
    finally:
        torch.set_num_threads(threads)
    assert abs(float(samples.mean()) - 0.2) < 0.06
    assert 0.15 < float(samples.std()) < 0.35


def test_num_variables_is_checked():
    with pytest.raises(ValueError, match="num_variables=3"):
        Simformer(3, **TINY).append_simulations(torch.zeros(10, 2), torch.zeros(10, 2)).train(max_steps=1)
    with pytest.raises(ValueError, match="graph has 2 nodes"):
        Simformer(3, graph=np.eye(2))
