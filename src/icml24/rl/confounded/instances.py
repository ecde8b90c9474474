"""Ready-made confounded POMDPs: the tabular toy, a continuous-observation instance, random instances."""

from __future__ import annotations

import numpy as np

from icml24._random import check_random_state

from .simulator import ConfoundedPOMDP, DiscreteEmission, GaussianEmission


def tabular_toy(horizon: int = 3, confounding: float = 1.0) -> ConfoundedPOMDP:
    """|S| = 2, |A| = 2, |O| = 3, |O_0| = 2, T = 3 (the third-party study's toy).

    ``confounding`` in [0, 1] moves the behaviour policy from uniform (0: no confounding) to the latent-aware
    pi_b = [[.75, .25], [.25, .75]] (1).
    """
    if not 0 <= confounding <= 1:  # NaN fails too
        raise ValueError(f"confounding must lie in [0, 1] (0: uniform behaviour, 1: latent-aware), got {confounding}")
    aware = np.array([[0.75, 0.25], [0.25, 0.75]])
    behaviour = confounding * aware + (1 - confounding) * 0.5
    return ConfoundedPOMDP(
        emission=DiscreteEmission([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]]),
        transitions=[[[0.9, 0.1], [0.3, 0.7]], [[0.5, 0.5], [0.1, 0.9]]],
        reward_probs=[[0.9, 0.2], [0.1, 0.8]],
        initial=[0.6, 0.4],
        behaviour=behaviour,
        negative_control=DiscreteEmission([[0.85, 0.15], [0.2, 0.8]]),
        horizon=horizon,
    )


def partial_coverage_toy(horizon: int = 3) -> ConfoundedPOMDP:
    """The toy with a third action the behaviour policy takes almost only in the latent state where it pays.

    Action 2 pays 0.75 in state 1 (action 1 pays 0.8 there) and nothing in state 0; the behaviour policy takes it
    with probability 0.5 in state 1 and 0.02 in state 0, so the logs cover it where it is good and barely where it
    is bad. The optimal observation policy uses actions 0 and 1 only (well covered); a choice that trusts the
    poorly covered action's estimates (the plug-in's extrapolation from state 1, or the naive model's confounded
    average) takes action 2 in some cell.
    """
    return ConfoundedPOMDP(
        emission=DiscreteEmission([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]]),
        transitions=[[[0.9, 0.1], [0.3, 0.7]], [[0.5, 0.5], [0.1, 0.9]], [[0.7, 0.3], [0.2, 0.8]]],
        reward_probs=[[0.9, 0.2, 0.0], [0.1, 0.8, 0.75]],
        initial=[0.6, 0.4],
        behaviour=[[0.735, 0.245, 0.02], [0.25, 0.25, 0.5]],
        negative_control=DiscreteEmission([[0.85, 0.15], [0.2, 0.8]]),
        horizon=horizon,
    )


def continuous_toy(horizon: int = 3) -> ConfoundedPOMDP:
    """|S| = 3 latent levels, |A| = 2, o ~ N(mu_s, 0.6^2) read in 4 bins by policies, O_0 ~ N(nu_s, 0.5^2).

    Action 1 is good in the high state and bad in the low one; the behaviour policy knows the state.
    """
    stay = np.array([[0.8, 0.2, 0.0], [0.15, 0.7, 0.15], [0.0, 0.2, 0.8]])
    push = np.array([[0.4, 0.5, 0.1], [0.1, 0.4, 0.5], [0.05, 0.15, 0.8]])
    return ConfoundedPOMDP(
        emission=GaussianEmission([-1.2, 0.0, 1.2], 0.6, edges=[-0.6, 0.0, 0.6]),
        transitions=[stay, push],
        reward_probs=[[0.7, 0.1], [0.5, 0.5], [0.2, 0.9]],
        initial=[0.4, 0.3, 0.3],
        behaviour=[[0.85, 0.15], [0.5, 0.5], [0.15, 0.85]],
        negative_control=GaussianEmission([-1.0, 0.0, 1.0], 0.5),
        horizon=horizon,
    )


def _simplex(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.dirichlet(np.ones(shape[-1]), size=shape[:-1])


def random_tabular(random_state=None, n_states: int = 2, n_actions: int = 2, n_obs: int = 3,
                   n_o0: int = 2, horizon: int = 3, check: bool = True) -> ConfoundedPOMDP:
    """A random instance (Dirichlet tables); ``n_o0 < n_states`` makes completeness fail."""
    rng = check_random_state(random_state)
    return ConfoundedPOMDP(
        emission=DiscreteEmission(_simplex(rng, (n_states, n_obs))),
        transitions=_simplex(rng, (n_actions, n_states, n_states)),
        reward_probs=rng.uniform(size=(n_states, n_actions)),
        initial=_simplex(rng, (n_states,)),
        behaviour=_simplex(rng, (n_states, n_actions)),
        negative_control=DiscreteEmission(_simplex(rng, (n_states, n_o0))),
        horizon=horizon,
        check=check,
    )


def random_continuous(random_state=None, n_states: int = 3, n_actions: int = 2, horizon: int = 3,
                      n_bins: int = 4) -> ConfoundedPOMDP:
    """A random Gaussian-observation instance with distinct means."""
    rng = check_random_state(random_state)
    means = np.sort(rng.uniform(-2, 2, n_states)) + np.arange(n_states) * 0.1
    return ConfoundedPOMDP(
        emission=GaussianEmission(means, rng.uniform(0.3, 1.0), edges=np.sort(rng.uniform(-1.5, 1.5, n_bins - 1))),
        transitions=_simplex(rng, (n_actions, n_states, n_states)),
        reward_probs=rng.uniform(size=(n_states, n_actions)),
        initial=_simplex(rng, (n_states,)),
        behaviour=_simplex(rng, (n_states, n_actions)),
        negative_control=GaussianEmission(np.sort(rng.uniform(-2, 2, n_states)) + np.arange(n_states) * 0.1, 0.5),
        horizon=horizon,
    )
