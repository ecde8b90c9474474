"""Bridge functions and the identification chain (Hong, Qi & Xu, ICML 2024, Sec. 3).

A bridge is linear in the features phi of the observation it integrates: b(a, o~, y) = phi(o~)^T theta[a, :, y].
- Reward bridge theta_R[t][a, i, c] solves sum_o~ p(o~ | s) b_R(a, o~, c) = E[R 1{cell(O) = c} | s, a]
  (the latent reward-emission equation, summed over r with weight r).
- Dynamic bridge theta_D[t][a, i, j, c] solves sum_o~ p(o~ | s) b_D(a, o~, j, c) = p(c | s) sum_s' P_a(s, s')
  E[phi_j(O') | s'] (the latent dynamic-emission equation, with o~' integrated against the next bridge's phi).
- The chain: g_1 = p(O_1); g_{t+1}(o~') = sum_o~ b_D(a_t, o~, o~', o_t) g_t(o~); f_t = sum_o~ b_R g_t; V = sum over
  histories of prod_j pi(a_j | o_j) sum_r r f_t. Only phi-moments of g_t enter, m_t = sum_o~ g_t(o~) phi(o~), and
  for a memoryless policy the sum over histories factorizes into m_{t+1} = A_t^T m_t, V = sum_t u_t^T m_t.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .simulator import check_policy


@dataclass
class Bridges:
    """``initial`` m_1 = E[phi(O_1)] (d,); ``reward[t]`` (A, d, C); ``dynamic[t]`` (A, d, d, C) for t < T - 1."""

    initial: np.ndarray
    reward: list[np.ndarray]
    dynamic: list[np.ndarray]
    residuals: dict[str, float] = field(default_factory=dict)

    @property
    def horizon(self) -> int:
        return len(self.reward)

    def blocks(self) -> list[np.ndarray]:
        """Every parameter block, in a fixed order: m_1, theta_R[0..T-1], theta_D[0..T-2]."""
        return [self.initial, *self.reward, *self.dynamic]

    def with_blocks(self, blocks: list[np.ndarray]) -> Bridges:
        T = self.horizon
        return Bridges(blocks[0], list(blocks[1:T + 1]), list(blocks[T + 1:]))

    def block_names(self) -> list[str]:
        return (["initial"] + [f"reward_t{t + 1}" for t in range(self.horizon)]
                + [f"dynamic_t{t + 1}" for t in range(self.horizon - 1)])


def true_bridges(pomdp, features) -> Bridges:
    """The minimum-norm solutions of the latent bridge equations (pseudo-inverse of E[phi(O) | s]).

    They exist when E[phi(O) | s] has rank |S| (Assumption 3.2); ``residuals`` records how well they solve them.
    """
    emb = features.mean_embedding(pomdp.emission)  # (S, d): E[phi(O) | s]
    cells = pomdp.emission.cell_probs()  # (S, C)
    pinv = np.linalg.pinv(emb)
    S, d = emb.shape
    target_r = np.einsum("sc,sa->asc", cells, pomdp.reward_probs)  # E[R 1{c} | s, a]
    reward = np.einsum("is,asc->aic", pinv, target_r)
    next_emb = np.einsum("asz,zj->asj", pomdp.transitions, emb)  # sum_s' P_a(s, s') E[phi(O') | s']
    target_d = np.einsum("sc,asj->asjc", cells, next_emb)
    dynamic = np.einsum("is,asjc->aijc", pinv, target_d)
    residuals = {"reward": float(np.abs(np.einsum("si,aic->asc", emb, reward) - target_r).max()),
                 "dynamic": float(np.abs(np.einsum("si,aijc->asjc", emb, dynamic) - target_d).max())}
    T = pomdp.horizon
    return Bridges(pomdp.initial @ emb, [reward] * T, [dynamic] * (T - 1), residuals)


def _policy_of(bridges: Bridges, policy: np.ndarray, name: str = "policy") -> np.ndarray:
    """The policy checked against the bridges' horizon, cells and actions (reward[t] is (A, d, C))."""
    n_actions, _, n_cells = bridges.reward[0].shape
    return check_policy(policy, bridges.horizon, n_cells, n_actions, name=name)


def _contract(bridges: Bridges, policy: np.ndarray):
    u = [np.einsum("ca,aic->i", policy[t], bridges.reward[t]) for t in range(bridges.horizon)]
    A = [np.einsum("ca,aijc->ij", policy[t], bridges.dynamic[t]) for t in range(bridges.horizon - 1)]
    return u, A


def _forward(bridges: Bridges, A: list[np.ndarray]) -> list[np.ndarray]:
    m = [np.asarray(bridges.initial, dtype=float)]
    for At in A:
        m.append(At.T @ m[-1])  # g_{t+1} = sum_o~ b_D g_t, in phi-moments
    return m


def chain_value(bridges: Bridges, policy: np.ndarray) -> float:
    """V(pi; b) by the identification chain, for a memoryless policy (T, C, A)."""
    policy = _policy_of(bridges, policy)
    u, A = _contract(bridges, policy)
    m = _forward(bridges, A)
    return float(sum(ut @ mt for ut, mt in zip(u, m)))  # V = sum_t sum_r r f_t


def chain_gradients(bridges: Bridges, policy: np.ndarray) -> tuple[float, list[np.ndarray]]:
    """V(pi; b) and dV/d(block) for every block (V is linear in each block, so these are exact slopes)."""
    return _gradients(bridges, _policy_of(bridges, policy))


def _gradients(bridges: Bridges, policy: np.ndarray) -> tuple[float, list[np.ndarray]]:
    """``chain_gradients`` for a policy already checked (the pessimistic inner loop calls it many times)."""
    T = bridges.horizon
    u, A = _contract(bridges, policy)
    m = _forward(bridges, A)
    lam = [None] * T  # adjoint: lam_t = dV/dm_t
    lam[T - 1] = u[T - 1]
    for t in reversed(range(T - 1)):
        lam[t] = u[t] + A[t] @ lam[t + 1]
    grad_r = [np.einsum("ca,i->aic", policy[t], m[t]) for t in range(T)]
    grad_d = [np.einsum("ca,i,j->aijc", policy[t], m[t], lam[t + 1]) for t in range(T - 1)]
    value = float(sum(ut @ mt for ut, mt in zip(u, m)))
    return value, [lam[0], *grad_r, *grad_d]


def bridge_error(estimate: Bridges, truth: Bridges) -> dict[str, float]:
    """Root-mean-square (over steps) Frobenius distance of the reward and dynamic bridges, and of m_1."""
    out = {"reward": float(np.sqrt(np.mean([np.sum((e - t) ** 2) for e, t in zip(estimate.reward, truth.reward)]))),
           "initial": float(np.linalg.norm(estimate.initial - truth.initial))}
    out["dynamic"] = (float(np.sqrt(np.mean([np.sum((e - t) ** 2) for e, t in zip(estimate.dynamic, truth.dynamic)])))
                      if truth.dynamic else 0.0)
    return out
