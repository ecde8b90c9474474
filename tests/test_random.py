"""icml24._random: the one seed argument (random_state) of every method."""

import numpy as np
import pytest
import torch

from icml24._random import check_random_state, seed_int, spawn, torch_generator


def test_int_gives_the_streams_of_the_seed_it_replaces():
    assert np.array_equal(check_random_state(3).random(5), np.random.default_rng(3).random(5))
    assert torch.equal(torch.rand(5, generator=torch_generator(3)),
                       torch.rand(5, generator=torch.Generator().manual_seed(3)))
    assert check_random_state(np.int64(3)).random() == np.random.default_rng(3).random()
    assert seed_int(7) == 7


def test_a_generator_is_shared_not_copied():
    rng = np.random.default_rng(0)
    assert check_random_state(rng) is rng
    g = torch.Generator().manual_seed(1)
    assert torch_generator(g) is g


def test_derived_streams_are_deterministic():
    a = torch.rand(3, generator=torch_generator(np.random.default_rng(5)))
    b = torch.rand(3, generator=torch_generator(np.random.default_rng(5)))
    assert torch.equal(a, b)
    legacy = [check_random_state(np.random.RandomState(2)).random() for _ in range(2)]
    assert legacy[0] == legacy[1]
    from_torch = [check_random_state(torch.Generator().manual_seed(4)).random() for _ in range(2)]
    assert from_torch[0] == from_torch[1]
    assert seed_int(np.random.default_rng(1)) == seed_int(np.random.default_rng(1))
    seq = np.random.SeedSequence(9)
    assert check_random_state(seq).random() == np.random.default_rng(np.random.SeedSequence(9)).random()


def test_drawing_from_a_legacy_state_advances_it():
    state = np.random.RandomState(0)
    first, second = check_random_state(state).random(), check_random_state(state).random()
    assert first != second


def test_none_is_fresh_and_leaves_global_state_alone():
    np.random.seed(0)
    torch.manual_seed(0)
    before_np, before_torch = np.random.get_state()[1].copy(), torch.get_rng_state().clone()
    assert check_random_state(None).random() != check_random_state(None).random()
    torch_generator(None)
    spawn(None, 2)
    assert np.array_equal(np.random.get_state()[1], before_np) and torch.equal(torch.get_rng_state(), before_torch)


def test_spawn_gives_independent_deterministic_children():
    children = spawn(3, 4)
    again = spawn(3, 4)
    draws = [c.random() for c in children]
    assert draws == [c.random() for c in again]
    assert len(set(draws)) == 4
    assert spawn(3, 0) == []
    rng = np.random.default_rng(3)
    assert [c.random() for c in spawn(rng, 2)] != [c.random() for c in spawn(rng, 2)]  # new children each call
    assert [c.random() for c in spawn(np.random.SeedSequence(3), 2)] == [c.random() for c in spawn(3, 2)]


@pytest.mark.parametrize("bad", [-1, True, 1.5, "3", [1, 2], object()])
def test_bad_random_state_names_the_argument(bad):
    for fn in (check_random_state, torch_generator, seed_int):
        with pytest.raises(ValueError, match="random_state"):
            fn(bad)
    with pytest.raises(ValueError, match="seed_of_x"):
        check_random_state(bad, name="seed_of_x")


@pytest.mark.parametrize("n", [-1, 1.0, True])
def test_bad_spawn_count(n):
    with pytest.raises(ValueError, match="n must be"):
        spawn(0, n)
