"""One full-batch training loop for node classifiers, with best-validation model selection.

Adam on the cross-entropy of the training nodes; after every ``eval_every`` epochs the model predicts in eval mode
and the weights with the best validation accuracy (the first best, strictly ``>``) are kept, with the test accuracy
of that same evaluation. This is the protocol of the GCN/GAT papers, of graph distillation (train on a small graph,
select and test on the real one: ``eval_data``) and of randomized smoothing (train and select under random graph
perturbations: ``perturb``).
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from icml24._random import torch_generator

__all__ = ["TrainingResult", "fit_node_classifier", "forked_rng"]


@dataclass(frozen=True)
class TrainingResult:
    """What ``fit_node_classifier`` measured.

    Attributes:
        best_epoch (int): the (1-based) epoch whose weights were kept.
        val_acc (float): validation accuracy at ``best_epoch``.
        test_acc (float): test accuracy at ``best_epoch`` (``nan`` without test nodes).
        epochs (int): epochs run (fewer than asked when ``patience`` stopped training).
        seconds (float): wall time of the loop.
        val_history (tuple[float, ...]): validation accuracy of every evaluation, in order.
    """

    best_epoch: int
    val_acc: float
    test_acc: float
    epochs: int
    seconds: float
    val_history: tuple[float, ...]

    def as_dict(self) -> dict[str, float]:
        """The scalars as floats: ``best_epoch``, ``val_acc``, ``test_acc``, ``epochs``, ``seconds``."""
        return {"best_epoch": float(self.best_epoch), "val_acc": self.val_acc, "test_acc": self.test_acc,
                "epochs": float(self.epochs), "seconds": self.seconds}


@contextlib.contextmanager
def forked_rng(random_state=None) -> Iterator[None]:
    """Run a block on a private copy of torch's global generator, restored afterwards.

    With ``random_state`` (an int, a torch or numpy Generator; ``icml24._random.torch_generator``), the copy
    is seeded from one draw of its torch generator, so the block's global-RNG users (module initialization,
    dropout, library code that takes no generator) are determined by it; with ``None``, the block starts from
    the current global state (nothing is seeded). Either way the caller's global state is left as it was.
    """
    seed = None
    if random_state is not None:
        seed = int(torch.randint(0, 2**62, (1,), generator=torch_generator(random_state)))
    with torch.random.fork_rng(devices=list(range(torch.cuda.device_count()))):
        if seed is not None:
            torch.manual_seed(seed)
        yield


def _reset(module: nn.Module) -> None:
    """``module.reset_parameters()``, or that of each child when the module has none (PyG's ``reset``)."""
    if hasattr(module, "reset_parameters"):
        module.reset_parameters()
        return
    for child in module.children():
        _reset(child)


def _nodes(given, data, name: str, num_nodes: int, required: bool) -> Tensor | None:
    """Node ids from a bool mask or ids (``given``, else ``data.<name>``)."""
    nodes = given if given is not None else getattr(data, name, None)
    if nodes is None:
        if required:
            raise ValueError(f"best-validation selection needs validation nodes: set data.{name} or pass "
                             f"{name.removesuffix('_mask')}=<bool mask or node ids>")
        return None
    nodes = torch.as_tensor(nodes)
    if nodes.dtype == torch.bool:
        if nodes.shape != (num_nodes,):
            raise ValueError(f"{name} must be a bool mask of shape [{num_nodes}], got {tuple(nodes.shape)}")
        nodes = nodes.nonzero().view(-1)
    if required and nodes.numel() == 0:
        raise ValueError(f"{name} selects no node; best-validation selection needs at least one validation node")
    return nodes.long()


def _graph(data) -> Tensor:
    """The graph argument of the model: ``data.adj`` (a propagation matrix used as given) or ``data.edge_index``."""
    adj = getattr(data, "adj", None)
    graph = adj if adj is not None else getattr(data, "edge_index", None)
    if graph is None:
        raise ValueError("data needs edge_index [2, num_edges] (or adj, a propagation matrix [num_nodes, num_nodes])")
    return graph


def _accuracy(predicted: Tensor, y: Tensor, nodes: Tensor | None) -> float:
    if nodes is None or nodes.numel() == 0:
        return math.nan
    return float((predicted[nodes] == y[nodes]).float().mean())


def fit_node_classifier(model: nn.Module, data, epochs: int = 200, lr: float = 0.01, weight_decay: float = 5e-4,
                        patience: int | None = None, random_state=None, *,
                        eval_data=None, train=None, val=None, test=None, eval_every: int = 1,
                        perturb: Callable[[Tensor, torch.Generator | None], Tensor] | None = None,
                        reset: bool = True) -> TrainingResult:
    """Train ``model(x, graph) -> logits`` full-batch; keep the weights with the best validation accuracy.

    Args:
        model (nn.Module): e.g. ``GCN``; left in eval mode with the selected weights.
        data (Data): ``x``, ``y``, ``edge_index`` (or ``adj``, a propagation matrix used as given, which then
            takes precedence) and ``train_mask`` (every node trains when it has none).
        epochs (int, default 200), lr (float, default 0.01), weight_decay (float, default 5e-4): Adam.
        patience (int, optional): stop once more than ``patience`` evaluations in a row brought no better
            validation accuracy (default: run every epoch).
        random_state (None, int, torch or numpy Generator): every random draw of the fit (initialization,
            dropout, ``perturb``) derives from its torch generator (``icml24._random.torch_generator``: an int
            ``s`` is ``torch.Generator().manual_seed(s)``, a torch Generator is used as is, ``None`` is fresh
            entropy), and torch's global generator is left untouched (``forked_rng``).
        eval_data (Data, optional): the graph to select and test on (``x``, ``y``, graph, ``val_mask``,
            ``test_mask``); default ``data``. Graph distillation trains on a small graph and selects on the real one.
        train, val, test (bool mask or node ids, optional): override ``train_mask`` of ``data`` and ``val_mask``,
            ``test_mask`` of ``eval_data``.
        eval_every (int, default 1): epochs between evaluations (the last epoch is always evaluated).
        perturb (callable, optional): ``perturb(graph, generator) -> graph``, a random graph drawn before every
            forward pass, training and evaluation alike (training under noise, e.g. randomized smoothing); it
            receives the fit's torch generator.
        reset (bool, default True): redraw the parameters (``reset_parameters``) from ``random_state`` first, so
            that the fit starts fresh; ``False`` continues from the current weights.

    Returns:
        ``TrainingResult``.
    """
    if epochs < 1 or eval_every < 1:
        raise ValueError(f"epochs and eval_every must be positive, got epochs={epochs}, eval_every={eval_every}")
    if patience is not None and patience < 0:
        raise ValueError(f"patience must be None or >= 0, got {patience}")
    eval_data = data if eval_data is None else eval_data
    x, y, graph = data.x, data.y, _graph(data)
    eval_x, eval_y, eval_graph = eval_data.x, eval_data.y, _graph(eval_data)
    train_nodes = _nodes(train, data, "train_mask", y.shape[0], required=False)
    val_nodes = _nodes(val, eval_data, "val_mask", eval_y.shape[0], required=True)
    test_nodes = _nodes(test, eval_data, "test_mask", eval_y.shape[0], required=False)
    train_y = y if train_nodes is None else y[train_nodes]
    generator = torch_generator(random_state)

    def draw(g: Tensor) -> Tensor:
        return g if perturb is None else perturb(g, generator)

    with forked_rng(generator):
        if reset:
            _reset(model)
        optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
        best_val, best_test, best_epoch, best_state = -1.0, math.nan, 0, None
        history: list[float] = []
        stale, epoch = 0, 0
        start = time.perf_counter()
        for epoch in range(1, epochs + 1):
            model.train()
            optimizer.zero_grad()
            out = model(x, draw(graph))
            F.cross_entropy(out if train_nodes is None else out[train_nodes], train_y).backward()
            optimizer.step()
            if epoch % eval_every and epoch != epochs:
                continue
            model.eval()
            with torch.no_grad():
                predicted = model(eval_x, draw(eval_graph)).argmax(dim=1)
            val_acc = _accuracy(predicted, eval_y, val_nodes)
            history.append(val_acc)
            if val_acc > best_val:
                best_val, best_epoch, stale = val_acc, epoch, 0
                best_test = _accuracy(predicted, eval_y, test_nodes)
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            else:
                stale += 1
                if patience is not None and stale > patience:
                    break
        seconds = time.perf_counter() - start
    model.load_state_dict(best_state)
    model.eval()
    return TrainingResult(best_epoch=best_epoch, val_acc=best_val, test_acc=best_test, epochs=epoch, seconds=seconds,
                          val_history=tuple(history))
