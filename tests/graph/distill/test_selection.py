import pytest
import torch

from icml24.data import csbm
from icml24.graph.distill import prepare_real_graph, select_gdem, train_on_synthetic

SHARED = dict(init_epochs=5, mlp_epochs=10, hidden=16, eigen_k=10, ratio=0.8)


def small_graph():
    data = csbm(num_nodes=150, num_features=12, num_classes=3, homophily=0.85, feature_signal=2.5, random_state=0,
                avg_degree=5.0, split=(0.3, 0.2))
    data.x = data.x.abs()
    return data


def test_keeps_the_best_validation_candidate_and_never_reads_test(monkeypatch):
    data = small_graph()
    real = prepare_real_graph(data)
    candidates = [dict(epochs=2), dict(epochs=4)]
    model, scores = select_gdem(data, candidates, 0.2, random_state=0, eval_epochs=10, real=real, **SHARED)
    assert [s["candidate"] for s in scores] == [0, 1]
    best = max(range(2), key=lambda i: (scores[i]["val_acc"], -i))
    assert model.epochs == candidates[best]["epochs"] and model.selection_ == scores
    # the choice must not move when the test labels change: scramble them and select again
    scrambled = real.clone()
    scrambled.y = real.y.clone()
    scrambled.y[real.test_mask] = (real.y[real.test_mask] + 1) % 3
    again, again_scores = select_gdem(data, candidates, 0.2, random_state=0, eval_epochs=10, real=scrambled, **SHARED)
    assert again_scores == scores and again.epochs == model.epochs
    result = train_on_synthetic(model.graph_, real, epochs=10, random_state=torch.Generator().manual_seed(0))
    assert result["val_acc"] == pytest.approx(scores[best]["val_acc"])


def test_errors():
    data = small_graph()
    with pytest.raises(ValueError, match="at least one candidate"):
        select_gdem(data, [], 0.2)
    no_val = data.clone()
    no_val.val_mask = torch.zeros_like(data.val_mask)
    with pytest.raises(ValueError, match="val_mask"):
        select_gdem(no_val, [dict(epochs=1)], 0.2)
