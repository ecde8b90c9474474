"""One seed argument for every method: scikit-learn's ``random_state`` (issue #46).

A method that draws random numbers takes ``random_state=None`` and turns it into generators here, at the start
of ``fit``/``run`` (never in ``__init__``, which stores it verbatim):

- ``None``: fresh OS entropy (not reproducible; the global numpy/torch state is never read or moved);
- an ``int`` >= 0: ``np.random.default_rng(random_state)`` / ``torch.Generator().manual_seed(random_state)``, the
  same streams as the ``seed=`` arguments this replaces, so results do not move;
- a ``numpy.random.Generator``: used as is (shared: drawing from it advances the caller's generator);
- a ``numpy.random.SeedSequence``: ``default_rng`` of it;
- a legacy ``numpy.random.RandomState`` (what ``sklearn.utils.check_random_state`` returns): accepted; a new
  Generator is seeded from 128 bits drawn from it (which advances it);
- a ``torch.Generator``: accepted likewise (a numpy Generator seeded from 128 bits it draws; used as is by
  ``torch_generator``).

Independent sub-streams come from ``spawn`` (``SeedSequence.spawn``), never from ``seed + k`` offsets: nearby
integer seeds are distinct seeds but the idiom hides which streams a method uses, and two methods adding their
own offsets to one seed collide.
"""

from __future__ import annotations

from typing import Any

import numpy as np

RandomState = Any  # None | int | np.random.Generator | np.random.SeedSequence | np.random.RandomState | torch.Generator

_ACCEPTED = ("None, an int >= 0, a numpy Generator, SeedSequence or RandomState, or a torch Generator")


def _is_torch_generator(value: object) -> bool:
    return type(value).__module__.split(".")[0] == "torch" and type(value).__name__ == "Generator"


def _entropy_from(random_state: Any) -> list[int]:
    """128 bits drawn from a legacy RandomState or a torch Generator (advancing it)."""
    if isinstance(random_state, np.random.RandomState):
        return [int(x) for x in random_state.randint(0, 2**32, size=4, dtype=np.uint64)]
    import torch

    return [int(x) for x in torch.randint(0, 2**31, (4,), generator=random_state, dtype=torch.int64)]


def check_random_state(random_state: RandomState = None, name: str = "random_state") -> np.random.Generator:
    """A numpy Generator from ``random_state`` (see the module docstring), or a ValueError naming ``name``."""
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state)
    if isinstance(random_state, (bool, np.bool_)):
        raise ValueError(f"{name} must be {_ACCEPTED}, got the bool {random_state!r}")
    if isinstance(random_state, (int, np.integer)):
        if random_state < 0:
            raise ValueError(f"{name} must be an int >= 0, got {random_state}")
        return np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.RandomState) or _is_torch_generator(random_state):
        return np.random.default_rng(_entropy_from(random_state))
    raise ValueError(f"{name} must be {_ACCEPTED}, got {type(random_state).__name__} {random_state!r}")


def torch_generator(random_state: RandomState = None, device: str = "cpu", name: str = "random_state"):
    """A ``torch.Generator`` on ``device`` from ``random_state``: an int seeds it directly (``manual_seed``),
    a torch Generator is returned as is, None seeds it from fresh entropy, and a numpy Generator (or RandomState,
    SeedSequence) seeds it from one 63-bit draw (advancing a Generator)."""
    import torch

    if _is_torch_generator(random_state):
        return random_state
    generator = torch.Generator(device=device)
    if random_state is None:
        generator.seed()
        return generator
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, (bool, np.bool_)):
        check_random_state(random_state, name)  # the range check
        return generator.manual_seed(int(random_state))
    rng = check_random_state(random_state, name)
    return generator.manual_seed(int(rng.integers(0, 2**63 - 1, dtype=np.int64)))


def spawn(random_state: RandomState, n: int, name: str = "random_state") -> list[np.random.Generator]:
    """``n`` independent child Generators of ``random_state`` (``SeedSequence.spawn``), deterministic for an int.

    For an int seed the children are those of ``SeedSequence(seed)``; a Generator spawns from its own seed
    sequence (``Generator.spawn``, so repeated calls give new children). Feed a child to ``torch_generator``
    for a torch stream, or to a library as ``int(child.integers(2**31))``.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be an int >= 0, got {n!r}")
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, (bool, np.bool_)):
        check_random_state(random_state, name)
        return [np.random.default_rng(s) for s in np.random.SeedSequence(int(random_state)).spawn(int(n))]
    if isinstance(random_state, np.random.SeedSequence):
        return [np.random.default_rng(s) for s in random_state.spawn(int(n))]
    return check_random_state(random_state, name).spawn(int(n))


def seed_int(random_state: RandomState = None, name: str = "random_state") -> int:
    """An int seed for a library that only takes ints (gymnasium, stable-baselines3): the int itself when
    ``random_state`` is one (results do not move), else one draw in [0, 2**31) from its generator."""
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, (bool, np.bool_)):
        check_random_state(random_state, name)
        return int(random_state)
    return int(check_random_state(random_state, name).integers(0, 2**31))
