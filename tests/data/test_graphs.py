import re

import numpy as np
import pytest
import torch

from icml24.data import csbm, edge_homophily, planetoid


@pytest.mark.parametrize("name, nodes, features, classes, train", [
    ("cora", 2708, 1433, 7, 140),
    ("citeseer", 3327, 3703, 6, 120),
])
def test_planetoid_public_split(name, nodes, features, classes, train):
    data = planetoid(name)
    assert data.num_nodes == nodes and data.num_features == features
    assert int(data.y.max()) + 1 == classes
    assert int(data.train_mask.sum()) == train
    assert int(data.val_mask.sum()) == 500 and int(data.test_mask.sum()) == 1000
    assert not (data.train_mask & data.test_mask).any()
    assert data.is_undirected()


def test_planetoid_missing_names_folder_and_variable(tmp_path):
    with pytest.raises(FileNotFoundError, match="ICML24_DATA") as info:
        planetoid("cora", root=tmp_path, download=False)
    assert str(tmp_path / "Cora" / "raw") in str(info.value)
    with pytest.raises(ValueError, match="unknown Planetoid dataset"):
        planetoid("imagenet")


@pytest.mark.parametrize("homophily", [0.1, 0.3, 0.5, 0.7, 0.9])
def test_csbm_homophily_matches(homophily):
    data = csbm(num_nodes=2000, num_features=20, num_classes=3, homophily=homophily, random_state=1)
    assert abs(edge_homophily(data.edge_index, data.y) - homophily) < 0.05
    assert data.is_undirected() and not data.has_self_loops()
    assert int(data.train_mask.sum() + data.val_mask.sum() + data.test_mask.sum()) == 2000


def test_csbm_is_seeded_and_informative():
    a, b = csbm(300, 10, 2, 0.5, random_state=4), csbm(300, 10, 2, 0.5, random_state=4)
    assert torch.equal(a.x, b.x) and torch.equal(a.edge_index, b.edge_index)
    strong = csbm(1000, 10, 2, 0.5, feature_signal=5.0, random_state=0)
    means = torch.stack([strong.x[strong.y == c].mean(0) for c in range(2)])
    assert (means[0] - means[1]).norm() > 1.0
    with pytest.raises(ValueError, match="homophily"):
        csbm(homophily=1.5)


def test_csbm_random_state_is_a_generator_or_its_int():
    """One seed name (#46): a numpy Generator is used as is, so ``default_rng(4)`` draws the graph of ``4``."""
    a, b = csbm(300, 10, 2, 0.5, random_state=4), csbm(300, 10, 2, 0.5, random_state=np.random.default_rng(4))
    assert torch.equal(a.x, b.x) and torch.equal(a.edge_index, b.edge_index) and torch.equal(a.test_mask, b.test_mask)
    assert not torch.equal(a.x, csbm(300, 10, 2, 0.5, random_state=5).x)
    with pytest.raises(ValueError, match="random_state"):
        csbm(300, 10, 2, 0.5, random_state=-1)


def test_a_crafted_planetoid_pickle_is_refused_before_it_is_read(tmp_path):
    """The raw files are pickles: one whose bytes differ from the recorded SHA-256 is never unpickled."""
    import pickle
    import shutil

    from icml24.data import data_root

    folder = tmp_path / "Cora" / "raw"
    shutil.copytree(data_root() / "Cora" / "raw", folder)
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))  # unpickling would create the marker file

    (folder / "ind.cora.x").chmod(0o644)
    (folder / "ind.cora.x").write_bytes(pickle.dumps(Payload()))
    with pytest.raises(ValueError, match="SHA-256"):
        planetoid("cora", root=tmp_path, download=False)
    assert not marker.exists()
    assert planetoid("cora").num_nodes == 2708  # the recorded files themselves pass


def test_a_missing_data_folder_is_refused_and_nothing_is_created(tmp_path, monkeypatch):
    from icml24.data import check_data_root

    missing = tmp_path / "no-such-folder"
    monkeypatch.setenv("ICML24_DATA", str(missing))
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        check_data_root()
    with pytest.raises(FileNotFoundError, match="does not exist"):
        planetoid("citeseer")
    assert not missing.exists()


def test_a_relative_data_folder_that_names_nothing_says_where_it_looked(tmp_path, monkeypatch):
    from icml24.data import check_data_root

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ICML24_DATA", "../no-such-data")
    with pytest.raises(FileNotFoundError) as refused:
        check_data_root()
    assert str((tmp_path.parent / "no-such-data").resolve()) in str(refused.value)
    with pytest.raises(FileNotFoundError, match=re.escape(str((tmp_path.parent / "no-such-data").resolve()))):
        planetoid("cora")


def test_planetoid_missing_only_checks_and_says_where_and_how(tmp_path):
    from icml24.data import planetoid_missing

    assert planetoid_missing(["cora", "CiteSeer", "csbm"]) == []  # the shared data has both; csbm needs no file
    lines = planetoid_missing(["cora", "csbm", "citeseer"], root=tmp_path)
    assert len(lines) == 2 and str(tmp_path / "Cora" / "raw") in lines[0] and "planetoid('citeseer')" in lines[1]
    assert not any(tmp_path.iterdir())  # nothing created, nothing downloaded
