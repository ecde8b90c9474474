"""confounded-pomdp instance families: which action the behaviour policy rarely logs and how rarely (issue #56), and
how noisily the continuous observation reveals the latent state. Each generator passes through the experiment's own
instance at its default (the same tables, so the same numbers)."""

from __future__ import annotations

import math

from icml24.rl import ConfoundedPOMDP, GaussianEmission, continuous_toy, partial_coverage_toy, tabular_toy

TOY_OPTIMAL_RATE = 0.75  # the toy's pi_b(a = 1 | s = 1): action 1 pays 0.8 in latent state 1 (action 0 pays 0.1)
PARTIAL_RATE = 0.02  # the partial-coverage toy's rate of its rarely logged action
RARE = ("bad", "optimal")
TOY_OBS_SCALE = 0.6  # the continuous toy's observation noise sd


def _rate(name: str, rate: float, high: float = 1.0) -> float:
    if not isinstance(rate, (int, float)) or not math.isfinite(rate) or not 0 < rate < high:
        raise ValueError(f"{name} must lie strictly between 0 and {high} (a logging probability), got {rate!r}")
    return float(rate)


def _with_behaviour(base: ConfoundedPOMDP, behaviour) -> ConfoundedPOMDP:
    return ConfoundedPOMDP(emission=base.emission, transitions=base.transitions, reward_probs=base.reward_probs,
                           initial=base.initial, behaviour=behaviour, negative_control=base.negative_control,
                           horizon=base.horizon)


def toy_logging(optimal_rate: float = TOY_OPTIMAL_RATE) -> ConfoundedPOMDP:
    """The third party's toy with pi_b(optimal action | latent state 1) = ``optimal_rate`` (the toy: 0.75).

    Latent state 0 keeps its [0.75, 0.25]. 0.98 logs the bad action rarely there (0.02); 0.2 and 0.02 log the
    optimal action rarely (issue #56's instance: 0.02, the optimal policy's coverage ratio ~1.1e4).
    """
    rate = _rate("optimal_rate", optimal_rate)
    if rate == TOY_OPTIMAL_RATE:
        return tabular_toy()
    return _with_behaviour(tabular_toy(), [[0.75, 0.25], [1 - rate, rate]])


def partial_logging(rare: str = "bad", rate: float = PARTIAL_RATE) -> ConfoundedPOMDP:
    """The partial-coverage toy with one action logged at ``rate`` in one latent state.

    ``rare="bad"``: the third action (pays 0 in state 0) logged at ``rate`` in state 0, the rest split 3:1 over
    actions 0 and 1 as in the toy (the toy: 0.02). ``rare="optimal"``: the optimal action of state 1 (action 1,
    pays 0.8) logged at ``rate`` in state 1, action 0 keeping 0.25 and the third action the rest (the toy: 0.25).
    """
    if rare not in RARE:
        raise ValueError(f"rare must be one of {', '.join(RARE)}, got {rare!r}")
    base = partial_coverage_toy()
    if rare == "bad":
        r = _rate("rate", rate)
        if r == PARTIAL_RATE:
            return base
        return _with_behaviour(base, [[0.75 * (1 - r), 0.25 * (1 - r), r], [0.25, 0.25, 0.5]])
    r = _rate("rate", rate, high=0.75)
    return _with_behaviour(base, [base.behaviour[0], [0.25, r, 0.75 - r]])


def continuous_noise(obs_scale: float = TOY_OBS_SCALE) -> ConfoundedPOMDP:
    """The continuous toy with observation noise sd ``obs_scale`` (the toy: 0.6): how well o reveals the state."""
    base = continuous_toy()
    if not isinstance(obs_scale, (int, float)) or not math.isfinite(obs_scale) or obs_scale <= 0:
        raise ValueError(f"obs_scale must be a positive observation sd, got {obs_scale!r}")
    if obs_scale == TOY_OBS_SCALE:
        return base
    emission = GaussianEmission(base.emission.means, obs_scale, edges=base.emission.edges)
    return ConfoundedPOMDP(emission=emission, transitions=base.transitions, reward_probs=base.reward_probs,
                           initial=base.initial, behaviour=base.behaviour, negative_control=base.negative_control,
                           horizon=base.horizon)
