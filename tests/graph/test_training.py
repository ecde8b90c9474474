"""fit_node_classifier: best-validation selection, early stopping, seeding through a generator only."""

import math

import pytest
import torch
from torch import nn
from torch_geometric.data import Data

from icml24.data import csbm
from icml24.graph import GCN, MLP, fit_node_classifier, forked_rng


class Scripted(nn.Module):
    """A model whose evaluation after training epoch t returns the logits ``script[t - 1]``.

    Its epoch counter is a buffer, so restoring the selected state restores the selected epoch's predictions.
    """

    def __init__(self, script):
        super().__init__()
        self.script = script
        self.weight = nn.Parameter(torch.zeros(()))
        self.register_buffer("epoch", torch.zeros((), dtype=torch.long))

    def forward(self, x, edge_index):
        if self.training:
            self.epoch += 1
            return torch.zeros(x.shape[0], self.script.shape[2]) + self.weight
        return self.script[self.epoch - 1]


def scripted_data(val_acc_per_epoch, test_acc_per_epoch):
    """Four val and four test nodes (label 0); predicting class 1 on a node makes it wrong."""
    y = torch.zeros(10, dtype=torch.long)
    val, test = torch.arange(2, 6), torch.arange(6, 10)
    script = torch.zeros(len(val_acc_per_epoch), 10, 2)
    for t, (v, s) in enumerate(zip(val_acc_per_epoch, test_acc_per_epoch)):
        script[t, :, 0] = 1.0
        script[t, val[int(4 * v):], 1] = 2.0  # the last 4 * (1 - v) val nodes predicted wrong
        script[t, test[int(4 * s):], 1] = 2.0
    mask = torch.zeros(10, dtype=torch.bool)
    train_mask, val_mask, test_mask = mask.clone(), mask.clone(), mask.clone()
    train_mask[:2], val_mask[val], test_mask[test] = True, True, True
    data = Data(x=torch.zeros(10, 1), y=y, edge_index=torch.empty(2, 0, dtype=torch.long), train_mask=train_mask,
                val_mask=val_mask, test_mask=test_mask)
    return data, script


def test_best_validation_selection_picks_the_first_best_epoch_and_restores_it():
    val = [0.25, 0.75, 0.5, 0.75, 0.25]
    test = [0.0, 0.5, 1.0, 1.0, 1.0]
    data, script = scripted_data(val, test)
    model = Scripted(script)
    result = fit_node_classifier(model, data, epochs=5, reset=False)
    assert result.val_history == tuple(val)
    assert result.best_epoch == 2 and result.val_acc == 0.75  # the first of the two best epochs
    assert result.test_acc == 0.5  # test accuracy of that same epoch, not the best test accuracy
    assert result.epochs == 5
    assert int(model.epoch) == 2 and not model.training  # the selected state is loaded, in eval mode


def test_patience_stops_after_that_many_evaluations_without_improvement():
    data, script = scripted_data([0.25, 0.75, 0.5, 0.5, 1.0, 1.0], [0.0] * 6)
    result = fit_node_classifier(Scripted(script), data, epochs=6, patience=1, reset=False)
    assert result.epochs == 4 and result.best_epoch == 2  # epochs 3 and 4 did not improve: 2 > patience
    data, script = scripted_data([0.25, 0.5, 0.75, 1.0], [0.0] * 4)
    result = fit_node_classifier(Scripted(script), data, epochs=4, eval_every=3, reset=False)
    assert result.val_history == (0.75, 1.0) and result.best_epoch == 4  # epochs 3 and 4 (the last) evaluated


@pytest.fixture(scope="module")
def graph():
    return csbm(num_nodes=120, num_features=16, num_classes=3, homophily=0.9, feature_signal=2.0, random_state=0,
                avg_degree=5.0, split=(0.3, 0.2))


def test_same_generator_same_fit_and_global_rng_untouched(graph):
    models = [GCN(graph.num_features, 3) for _ in range(3)]
    state = torch.get_rng_state()
    fits = [fit_node_classifier(model, graph, epochs=15, random_state=torch.Generator().manual_seed(seed))
            for model, seed in zip(models, (0, 0, 1))]
    assert torch.equal(torch.get_rng_state(), state)  # initialization and dropout drew from the generator only
    assert fits[0].val_history == fits[1].val_history and fits[0].test_acc == fits[1].test_acc
    assert torch.equal(models[0].lin1.weight, models[1].lin1.weight)
    assert not torch.equal(models[0].lin1.weight, models[2].lin1.weight)
    with forked_rng():
        GCN(graph.num_features, 3)
    assert torch.equal(torch.get_rng_state(), state)


def test_random_state_int_is_its_torch_generator_and_none_leaves_global_rng_alone(graph):
    """One seed name (#46): an int ``s`` gives the fit of ``torch.Generator().manual_seed(s)``; None draws fresh
    entropy and never reads or moves torch's global generator."""
    models = [GCN(graph.num_features, 3) for _ in range(2)]
    by_int = fit_node_classifier(models[0], graph, epochs=10, random_state=3)
    by_generator = fit_node_classifier(models[1], graph, epochs=10, random_state=torch.Generator().manual_seed(3))
    assert by_int.val_history == by_generator.val_history and torch.equal(models[0].lin1.weight, models[1].lin1.weight)
    model = GCN(graph.num_features, 3)
    state = torch.get_rng_state()
    fit_node_classifier(model, graph, epochs=2)
    assert torch.equal(torch.get_rng_state(), state)
    with pytest.raises(ValueError, match="random_state"):
        fit_node_classifier(GCN(graph.num_features, 3), graph, epochs=2, random_state=-1)


def test_training_learns_and_eval_data_and_perturb(graph):
    gen = torch.Generator().manual_seed(0)
    result = fit_node_classifier(GCN(graph.num_features, 3), graph, epochs=60, random_state=gen)
    assert result.test_acc > 0.8 and 1 <= result.best_epoch <= 60 and result.seconds > 0
    assert set(result.as_dict()) == {"best_epoch", "val_acc", "test_acc", "epochs", "seconds"}
    # train on the training nodes' induced copy, select and test on the whole graph
    train = graph.train_mask.nonzero().view(-1)
    small = Data(x=graph.x[train], y=graph.y[train], edge_index=torch.empty(2, 0, dtype=torch.long))
    result = fit_node_classifier(MLP(graph.num_features, 3), small, epochs=30, eval_data=graph,
                                 random_state=torch.Generator().manual_seed(0))
    assert result.test_acc > 0.5
    calls = []

    def perturb(edge_index, generator):
        calls.append(generator)
        return edge_index[:, torch.rand(edge_index.shape[1], generator=generator) < 0.5]

    gen = torch.Generator().manual_seed(0)
    fit_node_classifier(GCN(graph.num_features, 3), graph, epochs=10, eval_every=5, perturb=perturb, random_state=gen)
    assert len(calls) == 12 and all(g is gen for g in calls)  # 10 training forwards, 2 evaluations


def test_input_checks(graph):
    no_val = graph.clone()
    del no_val.val_mask
    with pytest.raises(ValueError, match="validation"):
        fit_node_classifier(MLP(graph.num_features, 3), no_val, epochs=2)
    with pytest.raises(ValueError, match="bool mask"):
        fit_node_classifier(MLP(graph.num_features, 3), graph, epochs=2, val=torch.ones(3, dtype=torch.bool))
    with pytest.raises(ValueError, match="positive"):
        fit_node_classifier(MLP(graph.num_features, 3), graph, epochs=0)
    result = fit_node_classifier(MLP(graph.num_features, 3), graph, epochs=2, test=torch.tensor([], dtype=torch.long))
    assert math.isnan(result.test_acc)
