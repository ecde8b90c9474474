"""Loader of the collective-certificate graphs and official votes."""

import os
from pathlib import Path

import numpy as np
import pytest

from icml24.data import cert_graph, cert_split, cert_votes

HAVE_DATA = (Path(os.environ.get("ICML24_DATA", "/nonexistent")) / "collective-cert" / "cora_ml.npz").is_file()
needs_data = pytest.mark.skipif(not HAVE_DATA, reason="set ICML24_DATA to the folder holding collective-cert/")


@needs_data
@pytest.mark.parametrize("name,nodes,edges,classes", [("cora_ml", 2810, 7981, 7), ("citeseer", 2110, 3668, 6)])
def test_graph_shapes(name, nodes, edges, classes):
    data = cert_graph(name)
    assert data.num_nodes == nodes and data.x.shape[0] == nodes
    assert data.edge_index.shape == (2, 2 * edges)
    src, dst = data.edge_index
    assert (src != dst).all()
    assert set(map(tuple, data.edge_index.T.tolist())) == set(map(tuple, data.edge_index.flip(0).T.tolist()))
    assert int(data.y.max()) + 1 == classes and set(np.unique(data.x.numpy())) <= {0.0, 1.0}


@needs_data
def test_votes_and_split():
    votes = cert_votes()
    assert votes["num_samples"] == 100_000
    assert votes["top2"].shape == (2810, 2)
    assert np.all(votes["count_top"] >= votes["count_runner_up"])
    y = cert_graph("cora").y.numpy()
    train, val, test = cert_split(y, 50, 2020)
    assert train.size == val.size == 350 and test.size == 2810 - 700
    assert np.bincount(y[train]).tolist() == [50] * 7
    assert not set(train) & set(val) and not set(test) & (set(train) | set(val))
    again = cert_split(y, 50, 2020)
    assert all(np.array_equal(a, b) for a, b in zip((train, val, test), again))


def test_missing_folder_names_folder_and_variable(tmp_path):
    with pytest.raises(FileNotFoundError, match="ICML24_DATA") as err:
        cert_graph("cora_ml", root=tmp_path)
    assert str(tmp_path / "collective-cert") in str(err.value)
    with pytest.raises(ValueError, match="unknown graph"):
        cert_graph("pubmed", root=tmp_path)


def test_root_comes_from_data_root(tmp_path, monkeypatch):
    """No root: $ICML24_DATA, else ~/.cache/icml24 (icml24.data.data_root), like every other loader."""
    monkeypatch.setenv("ICML24_DATA", str(tmp_path / "env"))
    with pytest.raises(FileNotFoundError) as err:
        cert_votes()
    assert str(tmp_path / "env" / "collective-cert") in str(err.value)
    monkeypatch.delenv("ICML24_DATA")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    with pytest.raises(FileNotFoundError) as err:
        cert_graph("citeseer")
    assert str(tmp_path / "home" / ".cache" / "icml24" / "collective-cert") in str(err.value)


def test_split_random_state_int_is_the_official_seed_and_generators_are_accepted():
    """An int re-seeds ``RandomState(int)`` (the official procedure); a Generator gives one int draw, reproducibly."""
    y = np.random.default_rng(0).integers(0, 3, 600)
    train, _, _ = cert_split(y, 50, random_state=7)
    first = np.random.RandomState(7).permutation(np.flatnonzero(y == 0))[:50]
    assert set(first) <= set(train) and len(train) == 150
    drawn = [cert_split(y, 50, random_state=np.random.default_rng(1)) for _ in range(2)]
    assert all(np.array_equal(a, b) for a, b in zip(*drawn))


def test_split_rejects_small_classes():
    with pytest.raises(ValueError, match="fewer than"):
        cert_split(np.array([0] * 10 + [1] * 200), n_per_class=50)


def test_cert_missing_names_each_missing_file(tmp_path):
    from icml24.data import cert_graph_file, cert_missing, cert_votes_file

    files = [cert_graph_file("cora"), cert_votes_file("cora_ml")]
    assert files == ["cora_ml.npz", "cora_ml_gcn_votes_pe0.9_pn0.8.npz"]
    assert cert_missing(files) == []  # the shared data folder holds them
    lines = cert_missing(files, root=tmp_path)
    assert len(lines) == 2 and all(str(tmp_path / "collective-cert") in line for line in lines)
