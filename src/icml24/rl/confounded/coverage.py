"""How well the behaviour data cover a target policy: the coverage ratio of the stage variable X_t (our reading).

The estimator regresses on X_t = (A_t, H_{t-1}, O_0) (Sec. 4), and the suboptimality bound (Sec. 5) pays for the
gap between the law of X_t under the comparator policy and under the behaviour policy: partial coverage asks that
ratio to be finite for the optimal policy only, not for every policy. For a tabular bridge class the supremum of
E^pi[f(X_t)^2] / E^b[f(X_t)^2] over functions f of X_t is the largest density ratio

    C(pi) = max_t max_x d_t^pi(x) / d_t^b(x),

infinite where the behaviour never reaches an x that pi does. ``stage_distribution`` computes d_t exactly by a
forward pass over (latent state, O_0, history), in the cell order of ``HistoryInstrument``.
"""

from __future__ import annotations

import numpy as np

from .simulator import DiscreteEmission


def stage_distribution(pomdp, policy: np.ndarray | None = None) -> list[np.ndarray]:
    """d_t(x) = p(A_t = a, H_{t-1} = h, O_0 = o_0) for t = 1..T, each flat in ``HistoryInstrument`` order.

    ``policy=None`` is the (latent, confounded) behaviour policy; else a memoryless observation policy.
    """
    if not isinstance(pomdp.emission, DiscreteEmission) or not isinstance(pomdp.negative_control, DiscreteEmission):
        raise ValueError("stage_distribution needs discrete observations and negative control (a tabular POMDP)")
    S, A, O = pomdp.n_states, pomdp.n_actions, pomdp.emission.n_values
    pol = None if policy is None else pomdp.check_policy(policy)
    emit, P = pomdp.emission.probs, pomdp.transitions
    # alpha[s, h, o0] = p(S_t = s, H_{t-1} = h, O_0 = o0); one history cell before the first step
    alpha = (pomdp.initial[:, None] * pomdp.negative_control.probs)[:, None, :]
    out = []
    for t in range(pomdp.horizon):
        act = (np.broadcast_to(pomdp.behaviour[:, None, :], (S, O, A)) if pol is None
               else np.broadcast_to(pol[t][None], (S, O, A)))  # pi(a | s, o)
        # joint[s, h, o0, o, a] = alpha * p(o | s) * pi(a | s, o)
        joint = alpha[:, :, :, None, None] * emit[:, None, None, :, None] * act[:, None, None, :, :]
        out.append(joint.sum(axis=(0, 3)).transpose(2, 0, 1).reshape(-1))  # (a, h, o0), a outermost
        # next history h' = h * (O A) + o * A + a; alpha'[s'] = sum_s joint * P_a(s, s')
        nxt = np.einsum("shkoa,asz->zhoak", joint, P)
        alpha = nxt.reshape(S, -1, alpha.shape[2])
    return out


def coverage_ratio(pomdp, policy: np.ndarray) -> float:
    """C(pi) = max_t max_x d_t^pi(x) / d_t^b(x) (inf where the behaviour never reaches a cell pi reaches)."""
    worst = 0.0
    for target, behaviour in zip(stage_distribution(pomdp, policy), stage_distribution(pomdp)):
        reached = target > 1e-15
        if np.any(reached & (behaviour <= 0)):
            return float("inf")
        worst = max(worst, float(np.max(target[reached] / behaviour[reached])))
    return worst
