"""Baselines that ignore the confounding: the naive observation-MDP plug-in, importance sampling, doubly robust.

All three treat the policy cell of o_t as if it were the state, so the behaviour policy pi_b(a | s) is read as
pi_b(a | o); under confounding (pi_b depends on the latent s) each is biased however large N is.
"""

from __future__ import annotations

import numpy as np

from icml24._estimator import Estimator
from icml24._validation import FittedAttributes, check_positive_int

from .simulator import check_episodes, check_policy


class NaiveObservationMDP(FittedAttributes, Estimator):
    """Count-based, time-inhomogeneous MDP on observation cells fitted to the logs, evaluated by DP.

    Unvisited (cell, action) pairs get reward 0 and a uniform next cell.
    """

    def __init__(self, n_cells: int, n_actions: int, cell_edges=None):
        self.n_cells, self.n_actions, self.cell_edges = n_cells, n_actions, cell_edges

    def _check_params(self) -> None:
        check_positive_int("n_cells", self.n_cells)
        check_positive_int("n_actions", self.n_actions)

    def cells(self, obs: np.ndarray) -> np.ndarray:
        if self.cell_edges is None:
            return np.asarray(obs, dtype=np.int64)
        return np.searchsorted(np.sort(np.asarray(self.cell_edges, dtype=float)), obs).astype(np.int64)

    def fit(self, data) -> NaiveObservationMDP:
        self._check_params()
        check_episodes(data, self.n_actions)
        C, A, T = self.n_cells, self.n_actions, data.horizon
        c, a, r = self.cells(data.obs), data.actions, data.rewards
        if c.min() < 0 or c.max() >= C:
            raise ValueError(f"observation cells must lie in 0..{C - 1}; check n_cells / cell_edges")
        steps = np.broadcast_to(np.arange(T), c.shape)
        counts = np.zeros((T, C, A))
        np.add.at(counts, (steps, c, a), 1.0)
        rsum = np.zeros((T, C, A))
        np.add.at(rsum, (steps, c, a), r)
        trans = np.zeros((T, C, A, C))
        np.add.at(trans, (steps[:, :-1], c[:, :-1], a[:, :-1], c[:, 1:]), 1.0)
        seen = counts > 0
        self.counts_ = counts
        self.rewards_ = np.divide(rsum, counts, out=np.zeros_like(rsum), where=seen)
        rows = trans.sum(axis=3, keepdims=True)
        self.transitions_ = np.where(rows > 0, trans / np.maximum(rows, 1e-300), 1.0 / C)
        self.initial_ = np.bincount(c[:, 0], minlength=C) / data.n
        cell_counts = counts.sum(axis=2, keepdims=True)
        self.behaviour_ = np.where(cell_counts > 0, counts / np.maximum(cell_counts, 1e-300), 1.0 / A)
        return self

    def fit_population(self, pomdp) -> NaiveObservationMDP:
        """The N -> infinity limit of ``fit`` on logs of ``pomdp``'s behaviour policy, from its exact joint law.

        p_b(s_t, c_t, a_t) = p_b(s_t) p(c_t | s_t) pi_b(a_t | s_t); the fitted reward is E[R_t | c_t, a_t], the
        transition p(c_{t+1} | c_t, a_t), both averaging over the latent state as the behaviour saw it: the bias
        that remains is the method's, not the sample's.
        """
        self._check_params()
        if (pomdp.n_cells, pomdp.n_actions) != (self.n_cells, self.n_actions):
            raise ValueError(f"the POMDP has {pomdp.n_cells} cells and {pomdp.n_actions} actions, this model "
                             f"{self.n_cells} and {self.n_actions}")
        emit = pomdp.emission.cell_probs()  # p(c | s), (S, C)
        joint = np.einsum("ts,sc,sa->tsca", pomdp.state_occupancy(None), emit, pomdp.behaviour)
        counts = joint.sum(axis=1)  # p_b(c_t, a_t), (T, C, A)
        seen = counts > 0
        safe = np.where(seen, counts, 1.0)
        next_cell = np.einsum("asz,zk->ask", pomdp.transitions, emit)  # p(c' | s, a)
        self.counts_ = counts
        self.rewards_ = np.where(seen, np.einsum("tsca,sa->tca", joint, pomdp.reward_probs) / safe, 0.0)
        self.transitions_ = np.where(seen[..., None], np.einsum("tsca,ask->tcak", joint, next_cell)
                                     / safe[..., None], 1.0 / self.n_cells)
        self.initial_ = pomdp.initial @ emit
        self.behaviour_ = np.where(counts.sum(axis=2, keepdims=True) > 0,
                                   counts / np.maximum(counts.sum(axis=2, keepdims=True), 1e-300), 1.0 / self.n_actions)
        return self

    def value(self, policy: np.ndarray) -> float:
        """V(pi) on the fitted observation MDP (forward recursion over the cell occupancy)."""
        policy = self._policy(policy)
        mu, total = self.initial_, 0.0
        for t in range(policy.shape[0]):
            total += float(np.einsum("c,ca,ca->", mu, policy[t], self.rewards_[t]))
            mu = np.einsum("c,ca,cak->k", mu, policy[t], self.transitions_[t])
        return total

    def q_values(self, policy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Q_t(c, a) and V_t(c) of ``policy`` on the fitted MDP, shapes (T, C, A) and (T + 1, C)."""
        policy = self._policy(policy)
        T = policy.shape[0]
        q = np.zeros((T, self.n_cells, self.n_actions))
        v = np.zeros((T + 1, self.n_cells))
        for t in reversed(range(T)):
            q[t] = self.rewards_[t] + self.transitions_[t] @ v[t + 1]
            v[t] = (policy[t] * q[t]).sum(axis=1)
        return q, v

    def _policy(self, policy: np.ndarray) -> np.ndarray:
        return check_policy(policy, self.rewards_.shape[0], self.n_cells, self.n_actions)


def _ratios(model: NaiveObservationMDP, data, policy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative ratios rho_{1:t} = prod_j pi(a_j | c_j) / pi_b_hat(a_j | c_j), shape (N, T), and the cells."""
    policy = model._policy(policy)
    check_episodes(data, model.n_actions, horizon=policy.shape[0])
    c, a = model.cells(data.obs), data.actions
    if c.min() < 0 or c.max() >= model.n_cells:
        raise ValueError(f"observation cells must lie in 0..{model.n_cells - 1}; check n_cells / cell_edges")
    t = np.broadcast_to(np.arange(data.horizon), c.shape)
    ratio = policy[t, c, a] / np.maximum(model.behaviour_[t, c, a], 1e-12)
    return np.cumprod(ratio, axis=1), c


def importance_sampling(data, policy: np.ndarray, model: NaiveObservationMDP) -> float:
    """Per-decision importance sampling with the observation-level propensity pi_b_hat(a | c) of ``model``."""
    rho, _ = _ratios(model, data, policy)
    return float((rho * data.rewards).sum(axis=1).mean())


def doubly_robust(data, policy: np.ndarray, model: NaiveObservationMDP) -> float:
    """Per-decision doubly robust estimate (Jiang & Li, 2016) with the naive MDP's Q as the model part."""
    rho, c = _ratios(model, data, policy)
    q, v = model.q_values(policy)
    T, n = data.horizon, data.n
    t = np.broadcast_to(np.arange(T), c.shape)
    v_next = np.concatenate([v[t[:, 1:], c[:, 1:]], np.zeros((n, 1))], axis=1)
    correction = rho * (data.rewards - q[t, c, data.actions] + v_next)
    return float((v[0, c[:, 0]] + correction.sum(axis=1)).mean())
