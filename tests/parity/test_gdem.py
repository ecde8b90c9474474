"""GDEM against the official code (liuyang-tian/GDEM): eigenbasis-matching loss, class means, distillation steps."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from parity_fixture import assert_close, case, load_fixture

from icml24.graph.distill.gdem import alternate
from icml24.graph.distill.losses import class_embedding_means, eigenbasis_matching_loss, subspace_directions

FIXTURE = load_fixture("gdem")
INPUTS = case(FIXTURE, "eigenbasis_matching_loss")["inputs"]


def tensor(name: str) -> torch.Tensor:
    value = np.asarray(INPUTS[name])
    return torch.as_tensor(value, dtype=torch.long if value.dtype.kind == "i" else torch.float32)


def real_side() -> tuple[torch.Tensor, torch.Tensor]:
    rows = tensor("train")
    num_classes = int(tensor("y").max()) + 1
    directions = subspace_directions(tensor("eigenvectors"), tensor("x"))
    means = class_embedding_means(tensor("eigenvalues"), tensor("eigenvectors"), tensor("x"), tensor("y")[rows],
                                  num_classes, rows=rows)
    return directions, means


def test_eigenbasis_matching_loss_and_class_means_match_official():
    c = case(FIXTURE, "eigenbasis_matching_loss")
    directions, means = real_side()
    ours = eigenbasis_matching_loss(directions, subspace_directions(tensor("u_syn"), tensor("x_syn")))
    assert_close(float(ours), c["values"]["loss"], c["tolerance"], "L_e")
    assert_close(means.numpy(), c["values"]["real_class_means"], c["tolerance"], "real class means")


@pytest.mark.parametrize("name", ["step_eigenvectors", "steps_u_x_x"])
def test_distillation_steps_match_official(name):
    c = case(FIXTURE, name)
    a = c["inputs"]
    directions, means = real_side()
    num_classes = int(tensor("y").max()) + 1
    u, x, _ = alternate(directions, means, tensor("eigenvalues"), tensor("u_syn"), tensor("x_syn"), tensor("y_syn"),
                        num_classes, epochs=a["epoch"], epochs_u=a["e1"], epochs_x=a["e2"], alpha=a["alpha"],
                        beta=a["beta"], gamma=a["gamma"], lr_eigenvectors=a["lr_eigenvec"], lr_features=a["lr_feat"])
    assert not np.allclose(u.numpy(), np.asarray(INPUTS["u_syn"]))  # the step moved U'
    assert_close(u.numpy(), c["values"]["eigenvectors"], c["tolerance"], f"{name}: U'")
    assert_close(x.numpy(), c["values"]["features"], c["tolerance"], f"{name}: X'")
