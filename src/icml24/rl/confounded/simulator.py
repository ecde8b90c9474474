"""A confounded POMDP with a finite latent state (Hong, Qi & Xu, ICML 2024, Sec. 2-3) and exact dynamic programming.

Latent s_t; the observation o_t ~ p(o | s_t) is emitted *before* the action; the behaviour policy a ~ pi_b(a | s_t)
reads the latent state (the confounding); reward r ~ Bernoulli(r(s, a)); s' ~ P_a(s, .); the negative control
O_0 ~ p(o_0 | s_1) is a pre-decision proxy of s_1. Observations are discrete (a table) or continuous (Gaussian per
state); a policy acts on the *cell* of o_t (the observation itself, or a bin of a continuous one), so any
time-varying stochastic memoryless policy is an array ``(T, n_cells, n_actions)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from icml24._random import check_random_state
from icml24._validation import check_finite, check_positive_int


def _stochastic(name: str, matrix: np.ndarray, axis: int = -1) -> np.ndarray:
    matrix = np.asarray(check_finite(name, matrix), dtype=float)
    if (matrix < 0).any() or not np.allclose(matrix.sum(axis=axis), 1.0, atol=1e-9):
        raise ValueError(f"{name} must be non-negative with rows summing to 1 (a probability table)")
    return matrix


def check_policy(policy, horizon: int | None = None, n_cells: int | None = None,
                 n_actions: int | None = None, name: str = "policy") -> np.ndarray:
    """A memoryless policy as a float ``(T, n_cells, n_actions)`` array of probabilities; a ``(n_cells, n_actions)``
    one is stationary (broadcast over T, which then must be given). Rejects NaN/inf, negative entries and rows
    that do not sum to 1, and any dimension that differs from the given ones."""
    policy = np.asarray(check_finite(name, policy), dtype=float)
    if policy.ndim == 2 and horizon is not None:
        policy = np.broadcast_to(policy, (int(horizon), *policy.shape))
    if policy.ndim != 3:
        raise ValueError(f"{name} must be a (T, n_cells, n_actions) array (or (n_cells, n_actions) when the horizon "
                         f"is known), got shape {policy.shape}")
    want = (horizon, n_cells, n_actions)
    if any(w is not None and int(w) != got for w, got in zip(want, policy.shape)):
        shown = tuple("?" if w is None else int(w) for w in want)
        raise ValueError(f"{name} must have shape (T, n_cells, n_actions) = {shown}, got {policy.shape}")
    if (policy < 0).any():
        raise ValueError(f"{name} has negative probabilities; every entry must be in [0, 1]")
    if np.abs(policy.sum(axis=-1) - 1.0).max(initial=0.0) > 1e-8:
        raise ValueError(f"{name} rows must sum to 1 over actions (a distribution pi_t(. | cell) per step and cell)")
    return policy


def check_episodes(data, n_actions: int, horizon: int | None = None, min_episodes: int = 1) -> None:
    """Raise unless ``data`` is ``Trajectories`` with integer actions in 0..n_actions - 1 (and the given horizon)."""
    if not isinstance(data, Trajectories):
        raise ValueError(f"data must be Trajectories (o0, obs, actions, rewards), got {type(data).__name__}")
    if data.n < min_episodes:
        raise ValueError(f"need at least {min_episodes} episodes, got {data.n}")
    actions = np.asarray(data.actions)
    if not (np.issubdtype(actions.dtype, np.integer) or np.array_equal(actions, np.round(actions))):
        raise ValueError("actions must be integers (action indices)")
    if actions.size and (actions.min() < 0 or actions.max() >= n_actions):
        raise ValueError(f"actions must lie in 0..{n_actions - 1}, got values in {actions.min()}..{actions.max()}")
    if horizon is not None and data.horizon != horizon:
        raise ValueError(f"episodes have horizon {data.horizon}, expected {horizon}")


def _draw(cdf_rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One categorical draw per row of a cumulative table (vectorized inverse CDF)."""
    return (cdf_rows < rng.random((cdf_rows.shape[0], 1))).sum(axis=1).clip(max=cdf_rows.shape[1] - 1)


class DiscreteEmission:
    """p(o | s) as a table ``probs[s, o]``; the policy cell of o is o itself."""

    def __init__(self, probs: np.ndarray):
        self.probs = _stochastic("probs", np.atleast_2d(probs))
        self.n_states, self.n_values = self.probs.shape
        self.n_cells = self.n_values

    def sample(self, states: np.ndarray, random_state=None) -> np.ndarray:
        return _draw(np.cumsum(self.probs, axis=1)[states], check_random_state(random_state))

    def cell(self, values: np.ndarray) -> np.ndarray:
        return np.asarray(values, dtype=np.int64)

    def cell_probs(self) -> np.ndarray:
        """p(cell | s), shape (S, n_cells)."""
        return self.probs

    def distinct_levels(self) -> int:
        """How many latent states the emission can tell apart (the rank of p(o | s))."""
        return int(np.linalg.matrix_rank(self.probs))


class GaussianEmission:
    """o | s ~ N(means[s], scale^2); the policy cell of o is its bin between ``edges`` (len n_cells - 1)."""

    KIND = "environment"  # icml24._contract

    def __init__(self, means: np.ndarray, scale: float, edges: np.ndarray = (0.0,)):
        self.means = np.asarray(check_finite("means", means), dtype=float).ravel()
        self.scale = float(check_finite("scale", scale))
        if self.scale <= 0:
            raise ValueError(f"scale must be > 0, got {scale}")
        self.edges = np.sort(np.asarray(check_finite("edges", edges), dtype=float).ravel())
        self.n_states, self.n_cells = self.means.size, self.edges.size + 1

    def sample(self, states: np.ndarray, random_state=None) -> np.ndarray:
        return self.means[states] + self.scale * check_random_state(random_state).standard_normal(np.shape(states))

    def cell(self, values: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.edges, np.asarray(values, dtype=float)).astype(np.int64)

    def cell_probs(self) -> np.ndarray:
        bounds = np.concatenate([[-np.inf], self.edges, [np.inf]])
        cdf = ndtr((bounds[None, :] - self.means[:, None]) / self.scale)
        return np.diff(cdf, axis=1)

    def distinct_levels(self) -> int:
        return int(np.unique(np.round(self.means, 12)).size)


@dataclass
class Trajectories:
    """N logged episodes: ``o0`` (N,), ``obs``/``actions``/``rewards`` (N, T); ``states`` (N, T) is private truth."""

    o0: np.ndarray
    obs: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    states: np.ndarray | None = None

    def __post_init__(self):
        for name in ("o0", "obs", "actions", "rewards"):
            check_finite(name, getattr(self, name))
        n = len(self.o0)
        if not (self.obs.shape == self.actions.shape == self.rewards.shape and self.obs.shape[0] == n):
            raise ValueError(f"obs, actions, rewards must all be (N, T) with N = len(o0) = {n}; got "
                             f"{self.obs.shape}, {self.actions.shape}, {self.rewards.shape}")

    @property
    def n(self) -> int:
        return len(self.o0)

    @property
    def horizon(self) -> int:
        return self.obs.shape[1]

    def subset(self, index: np.ndarray) -> Trajectories:
        states = None if self.states is None else self.states[index]
        return Trajectories(self.o0[index], self.obs[index], self.actions[index], self.rewards[index], states)


class ConfoundedPOMDP:
    """A finite-latent confounded POMDP of horizon T (the paper's model, Sec. 2).

    transitions[a, s, s'] = P(s' | s, a); reward_probs[s, a] = P(r = 1 | s, a); behaviour[s, a] = pi_b(a | s)
    (latent: the confounding); emission and negative_control are ``DiscreteEmission`` or ``GaussianEmission``.
    ``check_completeness`` (on by default) refuses an instance where identification cannot hold.
    """

    KIND = "environment"  # icml24._contract

    def __init__(self, emission, transitions, reward_probs, initial, behaviour, negative_control, horizon: int = 3,
                 check: bool = True):
        self.emission, self.negative_control = emission, negative_control
        self.transitions = _stochastic("transitions", transitions)
        self.reward_probs = np.asarray(check_finite("reward_probs", reward_probs), dtype=float)
        self.initial = _stochastic("initial", initial)
        self.behaviour = _stochastic("behaviour", behaviour)
        self.horizon = int(horizon)
        self.n_actions, self.n_states = self.transitions.shape[:2]
        shapes = {"reward_probs": (self.reward_probs.shape, (self.n_states, self.n_actions)),
                  "behaviour": (self.behaviour.shape, (self.n_states, self.n_actions)),
                  "initial": (self.initial.shape, (self.n_states,)),
                  "emission states": ((emission.n_states,), (self.n_states,)),
                  "negative_control states": ((negative_control.n_states,), (self.n_states,))}
        for name, (got, want) in shapes.items():
            if tuple(got) != tuple(want):
                raise ValueError(f"{name} has shape {tuple(got)}, expected {tuple(want)} (S={self.n_states}, "
                                 f"A={self.n_actions})")
        if self.horizon < 1:
            raise ValueError(f"horizon must be >= 1, got {horizon}")
        if check:
            self.check_completeness()

    @property
    def n_cells(self) -> int:
        return self.emission.n_cells

    def check_completeness(self) -> None:
        """Raise unless the negative control and the emission each separate the |S| latent states.

        Completeness (Assumption 3.3) needs p(o_0 | s_1) to have rank |S| (so |O_0| >= |S|); the bridge equations
        (Assumption 3.2) need the emission to have rank |S|.
        """
        s = self.n_states
        nc = self.negative_control
        values = getattr(nc, "n_values", None)
        if values is not None and values < s:
            raise ValueError(f"completeness fails: the negative control O_0 takes |O_0| = {values} values but there "
                             f"are |S| = {s} latent states, so E[b | O_0] cannot determine b; use a negative control "
                             f"with at least |S| values (and a rank-|S| table p(o_0 | s))")
        if nc.distinct_levels() < s:
            raise ValueError(f"completeness fails: p(o_0 | s) separates only {nc.distinct_levels()} of the |S| = {s} "
                             f"latent states; make its rows (or Gaussian means) linearly independent")
        if self.emission.distinct_levels() < s:
            raise ValueError(f"the bridge equations have no solution: p(o | s) separates only "
                             f"{self.emission.distinct_levels()} of the |S| = {s} latent states")

    # ---------------------------------------------------------------- policies
    def check_policy(self, policy: np.ndarray) -> np.ndarray:
        """A memoryless policy as ``(T, n_cells, n_actions)``; a ``(n_cells, n_actions)`` one is stationary."""
        return check_policy(policy, self.horizon, self.n_cells, self.n_actions)

    def latent_policy(self, policy: np.ndarray) -> np.ndarray:
        """pi_eff[t, s, a] = sum_c p(c | s) pi_t(a | c): the observation policy folded onto the latent state."""
        return np.einsum("sc,tca->tsa", self.emission.cell_probs(), self.check_policy(policy))

    # ---------------------------------------------------------------- exact values
    def value(self, policy: np.ndarray) -> float:
        """Exact V(pi) = E^pi[sum_t R_t] by backward dynamic programming on the latent chain."""
        return self._dp(self.latent_policy(policy))

    def behaviour_value(self) -> float:
        """Exact value of the (latent, confounded) behaviour policy."""
        return self._dp(np.broadcast_to(self.behaviour, (self.horizon, self.n_states, self.n_actions)))

    def _dp(self, latent_policy: np.ndarray) -> float:
        v = np.zeros(self.n_states)
        for t in reversed(range(self.horizon)):
            q = self.reward_probs + np.einsum("asz,z->sa", self.transitions, v)  # Bellman backup
            v = (latent_policy[t] * q).sum(axis=1)
        return float(self.initial @ v)

    def state_occupancy(self, policy: np.ndarray | None = None) -> np.ndarray:
        """p^pi(s_t = s), shape (T, S); ``None`` is the behaviour policy."""
        pol = (np.broadcast_to(self.behaviour, (self.horizon, self.n_states, self.n_actions)) if policy is None
               else self.latent_policy(policy))
        occ = np.empty((self.horizon, self.n_states))
        occ[0] = self.initial
        for t in range(1, self.horizon):
            occ[t] = np.einsum("s,sa,asz->z", occ[t - 1], pol[t - 1], self.transitions)
        return occ

    # ---------------------------------------------------------------- sampling
    def sample(self, n: int, random_state=None, policy: np.ndarray | None = None) -> Trajectories:
        """n episodes under the behaviour policy (``policy=None``) or an observation policy (on-policy roll-outs);
        ``random_state``: None, an int or a numpy Generator."""
        n = check_positive_int("n", n)  # the number of episodes
        rng = check_random_state(random_state)
        T, S = self.horizon, self.n_states
        pol = None if policy is None else self.check_policy(policy)
        states = np.empty((n, T), dtype=np.int64)
        actions = np.empty((n, T), dtype=np.int64)
        rewards = np.empty((n, T))
        s = _draw(np.cumsum(self.initial)[None, :].repeat(n, 0), rng)
        o0 = self.negative_control.sample(s, rng)
        obs_list = []
        for t in range(T):
            states[:, t] = s
            o = self.emission.sample(s, rng)
            obs_list.append(o)
            probs = self.behaviour[s] if pol is None else pol[t][self.emission.cell(o)]
            a = _draw(np.cumsum(probs, axis=1), rng)
            actions[:, t] = a
            rewards[:, t] = (rng.random(n) < self.reward_probs[s, a]).astype(float)
            cdf = np.cumsum(self.transitions, axis=2)[a, s]  # (n, S): row of P_a for each episode
            s = _draw(cdf, rng) if S > 1 else np.zeros(n, dtype=np.int64)
        return Trajectories(o0, np.stack(obs_list, axis=1), actions, rewards, states)


def deterministic_policies(n_cells: int, n_actions: int, horizon: int) -> np.ndarray:
    """All stationary deterministic memoryless policies: (n_actions**n_cells, T, n_cells, n_actions)."""
    n_cells, n_actions = check_positive_int("n_cells", n_cells), check_positive_int("n_actions", n_actions)
    horizon = check_positive_int("horizon", horizon)
    choice = np.array(np.meshgrid(*[np.arange(n_actions)] * n_cells, indexing="ij")).reshape(n_cells, -1).T
    onehot = np.eye(n_actions)[choice]  # (K, C, A)
    return np.repeat(onehot[:, None], horizon, axis=1)
