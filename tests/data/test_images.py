import random

import numpy as np
import pytest

from icml24.data.images import TASK_SPECS, derive_task, digits, image_tasks, mnist1d, split_indices


def test_digits_shape_and_range():
    x, y, shape = digits()
    assert x.shape == (1797, 64) and shape == (8, 8)
    assert x.min() == 0.0 and x.max() == 1.0 and set(np.unique(y)) == set(range(10))


def test_input_transforms_on_a_known_image():
    x = np.arange(4, dtype=np.float32).reshape(1, 4)  # image [[0, 1], [2, 3]]
    y = np.array([7])
    rot, _, _ = derive_task(x, y, "rot90", (2, 2))
    assert rot.reshape(2, 2).tolist() == np.rot90(x.reshape(2, 2)).tolist()
    assert derive_task(x, y, "rot90+rot270", (2, 2))[0].tolist() == x.tolist()
    assert derive_task(x, y, "invert", (2, 2), (0.0, 3.0))[0].tolist() == [[3, 2, 1, 0]]
    assert derive_task(x, y, "flip", (2, 2))[0].tolist() == [[1, 0, 3, 2]]
    perm = derive_task(x, y, "perm:1", (2, 2))[0]
    assert sorted(perm[0].tolist()) == [0, 1, 2, 3]
    assert np.array_equal(perm, derive_task(x, y, "perm:1", (2, 2))[0])  # fixed permutation


def test_one_dimensional_rotation_is_circular_shift():
    x = np.arange(8, dtype=np.float32).reshape(1, 8)
    out = derive_task(x, np.array([0]), "rot90", (8,))[0]
    assert out.tolist() == [np.roll(np.arange(8), 2).tolist()]


def test_label_maps():
    x = np.zeros((10, 4), np.float32)
    y = np.arange(10)
    assert derive_task(x, y, "parity", (2, 2))[1].tolist() == [0, 1] * 5
    _, y_gt4, k = derive_task(x, y, "gt4", (2, 2))
    assert y_gt4.tolist() == [0] * 5 + [1] * 5 and k == 2
    assert derive_task(x, y, "mod3", (2, 2))[2] == 3
    assert derive_task(x, y, "shift:3", (2, 2))[1].tolist() == [(v + 3) % 10 for v in range(10)]
    with pytest.raises(ValueError, match="unknown"):
        derive_task(x, y, "blur", (2, 2))


def test_splits_partition_and_tasks_share_inputs():
    train, val, test = split_indices(100, random_state=0)
    assert len(set(train) | set(val) | set(test)) == 100 and len(test) == 20
    tasks = image_tasks("digits", specs=TASK_SPECS[:4], random_state=0)
    assert [t.name for t in tasks] == list(TASK_SPECS[:4])
    parity = tasks[3]
    assert parity.num_classes == 2 and set(np.unique(parity.y_train)) == {0, 1}
    assert np.allclose(tasks[2].x_train, 1.0 - parity.x_train)  # inversion of the same images


def test_mnist1d_generated_offline_without_touching_global_rng():
    pytest.importorskip("mnist1d")
    np.random.seed(3)
    random.seed(3)
    before = (np.random.random(), random.random())
    np.random.seed(3)
    random.seed(3)
    x, y, shape = mnist1d(num_samples=200, random_state=42)
    assert x.shape == (200, 40) and shape == (40,) and set(np.unique(y)) == set(range(10))
    assert (np.random.random(), random.random()) == before


def test_label_maps_exported_from_the_package_face():
    from icml24.data import LABEL_MAPS, label_map

    assert LABEL_MAPS == {"parity": 2, "gt4": 2, "mod3": 3, "mod5": 5, "shift": 10}
    assert label_map("rot90").tolist() == list(range(10))  # input transforms keep the labels
    assert label_map("invert+parity").tolist() == [0, 1] * 5
    assert label_map("shift:3").tolist() == [(d + 3) % 10 for d in range(10)]
    assert label_map("shift:3+parity").tolist() == [(d + 3) % 2 for d in range(10)]  # composed left to right
    for spec in TASK_SPECS:  # the same map derive_task applies to the labels
        y = np.arange(10)
        assert label_map(spec).tolist() == derive_task(np.zeros((10, 64), np.float32), y, spec, (8, 8))[1].tolist()
    with pytest.raises(ValueError, match="unknown task step"):
        label_map("blur")


def test_permutations_are_dataset_constants_not_run_seeds():
    from icml24.data.images import PERMUTATION_SEED

    x = np.arange(16, dtype=np.float32).reshape(1, 16)
    np.random.seed(0)
    first = derive_task(x, np.array([0]), "perm:2", (4, 4))[0]
    np.random.seed(99)
    assert np.array_equal(first, derive_task(x, np.array([0]), "perm:2", (4, 4))[0])
    expected = x[:, np.random.default_rng([PERMUTATION_SEED, 2]).permutation(16)]
    assert np.array_equal(first, expected)
    assert not np.array_equal(first, derive_task(x, np.array([0]), "perm:3", (4, 4))[0])


def test_nan_inputs_rejected():
    x = np.zeros((2, 4), np.float32)
    x[1, 1] = np.nan
    with pytest.raises(ValueError, match="x contains NaN"):
        derive_task(x, np.array([0, 1]), "rot90", (2, 2))
