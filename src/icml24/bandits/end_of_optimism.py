"""EndOA: the asymptotically optimal algorithm of "The End of Optimism" (Lattimore & Szepesvári, AISTATS 2017)."""

from __future__ import annotations

import numpy as np

from icml24._validation import check_positive

from .allocation import optimal_allocation
from .batched import BatchedPolicy
from .linucb import ucb_arm


class EndOfOptimism(BatchedPolicy):
    r"""EndOA as the E4 paper's official code runs it (a fully sequential baseline; every pull is a batch).

    1. **Warm-up.** Pull every arm ``ceil(sqrt(log T))`` times; estimate ``theta`` and the gaps.
    2. **Success phase.** Solve the optimal allocation ``w`` (see ``optimal_allocation``), set ``w_{x*} = T``
       and pull the arms round-robin, arm ``x`` while it has had at most ``w_x f_T`` pulls,
       ``f_T = 2 (1 + 1/log T) log T + c d log(d log T)``. After every pull, if the estimate moved by more
       than ``2 eps_t`` (``max |theta_t - theta_{t-1}| > 2 eps_t``, ``eps_t = max_x ||x||^2_{V_t^{-1}} sqrt(g_T)``,
       ``g_T = 2 (1 + 1/log T) log log T + c d log(d log T)``), switch to
    3. **Recovery.** LinUCB with radius ``nu_t = max(sqrt(128 d log t), 8/3 log t)`` to the end.

    The success phase is played in blocks: the per-pull test is evaluated on a whole block at once (cumulative
    Gram matrices, batched inverses) and the pulls after the first failure are dropped (``update`` returns the
    number used), which is exactly the sequential algorithm.

    Args:
        reg (float, default 1.0): ridge of the least-squares estimate.
        c (float, default 1.0): the constant ``c`` of ``f_T`` and ``g_T``.
        block (int, default 1024): success-phase pulls checked per block.
    """

    sequential = True

    def __init__(self, reg: float = 1.0, c: float = 1.0, block: int = 1024):
        self.reg = reg  # stored as given; reset() checks them (_check_params)
        self.c = c
        self.block = block

    def _check_params(self) -> None:
        check_positive("reg", self.reg)
        check_positive("c", self.c, allow_zero=True)
        if self.block < 1:
            raise ValueError(f"block must be >= 1, got {self.block}")

    def __repr__(self) -> str:
        return f"EndOfOptimism(reg={self.reg}, c={self.c}, block={self.block})"

    def reset(self, arms, horizon, random_state=None) -> None:
        super().reset(arms, horizon, random_state)
        if self.horizon_ < 16:
            raise ValueError(f"EndOA needs horizon >= 16 (log log T > 0), got {self.horizon_}")
        self.phase_ = "warmup"
        self.sequence_ = np.zeros(0, dtype=np.intp)
        self.position_ = 0
        self.info_ = {"recovery_at": -1}

    def _success_sequence(self) -> np.ndarray:
        """The round-robin pull order of the whole success phase (it depends only on the pull limits)."""
        num_arms, dim = self.arms_.shape
        horizon = self.horizon_
        log_t = np.log(horizon)
        means = self.arms_ @ self.stats_.theta
        best = int(np.argmax(means))
        weights = optimal_allocation(self.arms_, means[best] - means, best=best).weights
        weights[best] = horizon
        f_t = 2 * (1 + 1 / log_t) * log_t + self.c * dim * np.log(dim * log_t)
        # arm x is pulled while its success-phase count <= w_x f_T, i.e. floor(w_x f_T) + 1 times
        limits = np.minimum(np.floor(weights * f_t) + 1, horizon).astype(np.int64)
        limits[best] = 0
        rounds = int(limits.max())
        remaining = horizon - self.stats_.num_pulls
        mask = limits[None, :] > np.arange(rounds)[:, None]
        mask[:, best] = True
        multi = np.nonzero(mask)[1][:remaining]
        return np.concatenate([multi, np.full(max(remaining - multi.size, 0), best)])

    def next_batch(self, remaining: int) -> np.ndarray:
        num_arms = self.arms_.shape[0]
        if self.phase_ == "warmup":
            return np.full(num_arms, int(np.ceil(np.sqrt(np.log(self.horizon_)))), dtype=np.int64)
        if self.phase_ == "success":
            self.block_ = self.sequence_[self.position_: self.position_ + min(self.block, remaining)]
            return np.bincount(self.block_, minlength=num_arms)
        dim = self.arms_.shape[1]
        t = self.stats_.num_pulls
        radius = max(np.sqrt(128 * dim * np.log(t)), 8 / 3 * np.log(t))
        inverse = self.stats_.gram_inverse
        return self._one_pull(ucb_arm(self.arms_, inverse @ self.stats_.target, inverse, radius))

    def pull_order(self, counts: np.ndarray) -> np.ndarray:
        if self.phase_ == "success" and counts.sum() == self.block_.size:
            return self.block_
        return super().pull_order(counts)

    def _first_jump(self, arm_sequence: np.ndarray, rewards: np.ndarray) -> tuple[int, bool]:
        """Pulls used up to and including the first where ``theta`` jumps by more than ``2 eps_t``; jumped?"""
        dim = self.arms_.shape[1]
        log_t = np.log(self.horizon_)
        g_t = 2 * (1 + 1 / log_t) * np.log(log_t) + self.c * dim * np.log(dim * log_t)
        x = self.arms_[arm_sequence]  # [n, d]
        grams = self.stats_.gram + np.cumsum(x[:, :, None] * x[:, None, :], axis=0)  # V_t   [n, d, d]
        targets = self.stats_.target + np.cumsum(rewards[:, None] * x, axis=0)  # b_t   [n, d]
        inverses = np.linalg.inv(grams)
        thetas = np.einsum("nde,ne->nd", inverses, targets)
        previous = np.vstack([self.stats_.theta[None, :], thetas[:-1]])
        jumps = np.abs(thetas - previous).max(axis=1)
        eps = np.einsum("kd,nde,ke->nk", self.arms_, inverses, self.arms_).max(axis=1) * np.sqrt(g_t)
        broken = np.flatnonzero(jumps > 2 * eps)
        return (int(broken[0]) + 1, True) if broken.size else (arm_sequence.shape[0], False)

    def update(self, arm_sequence, rewards):
        if self.phase_ == "success" and arm_sequence is self.block_:
            used, jumped = self._first_jump(arm_sequence, rewards)
            self.stats_.add(arm_sequence[:used], rewards[:used])
            self.position_ += used
            if jumped:
                self.phase_ = "recovery"
                self.info_["recovery_at"] = self.stats_.num_pulls
            return used
        self.stats_.add(arm_sequence, rewards)
        if self.phase_ == "warmup":
            self.sequence_ = self._success_sequence()
            self.position_ = 0
            self.phase_ = "success"
        return None
