"""The confidence set of bridges and pessimistic (max-min) policy optimization (Hong, Qi & Xu, ICML 2024, Sec. 5).

C(xi) = {b : L_hat(b) - L_hat(b_hat) <= xi, ||b|| <= M}, one ellipsoid-ball pair per parameter block (m_1 and the
bridges of every step); the stage-II loss is quadratic, so L_hat(b) - L_hat(b_hat) = <b - b_hat, H (b - b_hat)>.
pi_hat = argmax_{pi in Pi} min_{b in C} V(pi; b). V is multilinear in the blocks, so the inner minimum is found by
block coordinate descent; each block step minimises a linear function over an ellipsoid intersected with a ball
(closed form when the ball is slack, else a one-dimensional search over the ratio of the two multipliers).
Without the ball (``radius_scale=None``) the ellipsoid is long in the null space of the moment equations
(|O| > |S|) and V_low runs away.
"""

from __future__ import annotations

import numpy as np

from icml24._estimator import Estimator
from icml24._validation import FittedAttributes, check_positive

from .identification import Bridges, _gradients, _policy_of


class _Block:
    """{theta : <theta - c, H (theta - c)> <= xi, ||theta||_F <= radius}, theta of shape (rows of H, k)."""

    def __init__(self, center: np.ndarray, hessian: np.ndarray, xi: float, radius: float):
        self.shape = center.shape
        self.c = center.reshape(hessian.shape[0], -1)
        self.h, self.U = np.linalg.eigh(hessian)
        self.h = np.maximum(self.h, 1e-300)
        self.c_rot = self.U.T @ self.c
        self.xi, self.radius = xi, radius

    def excess(self, theta: np.ndarray) -> float:
        diff = self.U.T @ (theta.reshape(self.c.shape) - self.c)
        return float((self.h[:, None] * diff**2).sum())

    def contains(self, theta: np.ndarray, tol: float = 1e-9) -> bool:
        return self.excess(theta) <= self.xi * (1 + tol) and np.linalg.norm(theta) <= self.radius * (1 + tol)

    def _theta(self, g_rot: np.ndarray, mu1: float, mu2: float) -> np.ndarray:
        return (2 * mu1 * self.h[:, None] * self.c_rot - g_rot) / (2 * (mu1 * self.h[:, None] + mu2))

    def argmin_linear(self, grad: np.ndarray) -> np.ndarray:
        """argmin <grad, theta> over the block's set."""
        g_rot = self.U.T @ grad.reshape(self.c.shape)
        if not np.any(g_rot):
            return self.c.reshape(self.shape).copy()
        mu1 = np.sqrt((g_rot**2 / self.h[:, None]).sum() / (4 * self.xi))  # ellipsoid active, ball slack
        theta = self._theta(g_rot, mu1, 0.0)
        if np.linalg.norm(theta) > self.radius:
            theta = self._dual(g_rot, mu1)
        return self._feasible(self.U @ theta).reshape(self.shape)

    def _dual(self, g_rot: np.ndarray, mu1_start: float) -> np.ndarray:
        """Both constraints: theta = c_tau - s G/(2(H + tau)), tau = mu2/mu1, s = 1/mu1 (ellipsoid tight);
        bisection on log tau until the ball is tight. The ball alone wins when its minimiser lies in the ellipsoid."""
        on_ball = -self.radius * g_rot / np.linalg.norm(g_rot)
        if self.excess(self.U @ on_ball) <= self.xi:
            return on_ball
        h = self.h[None, :, None]
        c_rot = self.c_rot[None]

        def points(taus: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            """theta(tau) for many tau at once, and whether the ellipsoid can be made tight there."""
            tau = taus[:, None, None]
            centre, g = h * c_rot / (h + tau), g_rot[None] / (2 * (h + tau))
            a, b = (h * g**2).sum(axis=(1, 2)), (h * g * (centre - c_rot)).sum(axis=(1, 2))
            e0 = (h * (centre - c_rot) ** 2).sum(axis=(1, 2))
            disc = b * b - a * (e0 - self.xi)
            ok = (disc >= 0) & (a > 0)
            s = np.where(ok, (b + np.sqrt(np.maximum(disc, 0))) / np.where(a > 0, a, 1.0), 0.0)
            return centre - s[:, None, None] * g, ok

        lo, hi = -40.0, 40.0
        for _ in range(5):  # a 33-point grid in log tau, zoomed five times: 80 / 32^5 in log tau
            grid = np.linspace(lo, hi, 33)
            theta, ok = points(np.exp(grid))
            outside = ok & (np.linalg.norm(theta, axis=(1, 2)) > self.radius)  # more weight on the ball needed
            k = int(np.nonzero(outside)[0].max()) if outside.any() else -1
            lo, hi = (grid[k], grid[min(k + 1, 32)]) if k >= 0 else (grid[0] - 1.0, grid[0])
        theta, ok = points(np.array([np.exp(hi)]))
        return theta[0] if ok[0] else self.c_rot

    def _feasible(self, theta: np.ndarray) -> np.ndarray:
        """Pull theta toward the centre until both constraints hold (guards the dual's last digits)."""
        step = theta - self.c
        e = self.excess(theta)
        s = min(1.0, np.sqrt(self.xi / e)) if e > 0 else 1.0
        if np.linalg.norm(self.c + s * step) > self.radius:  # largest s with ||c + s step|| <= radius
            a, b, cc = (step**2).sum(), 2 * (self.c * step).sum(), (self.c**2).sum() - self.radius**2
            s = min(s, (-b + np.sqrt(max(b * b - 4 * a * cc, 0.0))) / (2 * a)) if a > 0 else s
        return self.c + s * step


class ConfidenceSet(FittedAttributes, Estimator):
    """C(xi) around a fitted ``TwoStageBridgeEstimator``.

    xi of block k = xi_scale_k * (its number of parameters) / (its sample size: N for m_1, N2 for a bridge), the
    paper's 1/N rate; ``xi_scale`` is one constant or one per block (``calibrate_xi_scale`` chooses them on
    held-out episodes). radius = radius_scale * ||b_hat block|| (``None``: no norm ball).
    """

    _fit_call = "fit(estimator)"

    def __init__(self, xi_scale: float = 1.0, radius_scale: float | None = 2.0, max_sweeps: int = 30,
                 tol: float = 1e-9):
        self.xi_scale, self.radius_scale, self.max_sweeps, self.tol = xi_scale, radius_scale, max_sweeps, tol

    def fit(self, estimator) -> ConfidenceSet:
        center = estimator.bridges_
        n_blocks = len(center.blocks())
        scales = np.broadcast_to(np.asarray(self.xi_scale, dtype=float), (n_blocks,)) if np.ndim(self.xi_scale) == 0 \
            else np.asarray(self.xi_scale, dtype=float)
        if scales.shape != (n_blocks,):
            raise ValueError(f"xi_scale must be one number or one per block ({n_blocks}), got shape {scales.shape}")
        for k, scale in enumerate(scales):
            check_positive(f"xi_scale[{k}]", float(scale))
        if self.radius_scale is not None:
            check_positive("radius_scale", self.radius_scale)
        sizes = [estimator.n_] + [estimator.n2_] * (n_blocks - 1)
        self.blocks_ = []
        for theta, H, n, scale in zip(center.blocks(), estimator.block_hessians(), sizes, scales):
            radius = np.inf if self.radius_scale is None else self.radius_scale * np.linalg.norm(theta)
            self.blocks_.append(_Block(theta, H, scale * theta.size / n, radius))
        self.center_ = center
        return self

    def contains(self, bridges: Bridges) -> np.ndarray:
        """Per block: is the given bridge inside its ellipsoid-ball?"""
        return np.array([blk.contains(theta) for blk, theta in zip(self.blocks_, bridges.blocks())])

    def lower_value(self, policy: np.ndarray) -> tuple[float, Bridges]:
        """min_{b in C} V(pi; b) by block coordinate descent from b_hat, and the minimising bridges."""
        policy = _policy_of(self.center_, policy)
        blocks = [b.copy() for b in self.center_.blocks()]
        current = self.center_.with_blocks(blocks)
        value = _gradients(current, policy)[0]
        for _ in range(self.max_sweeps):
            previous = value
            for k, blk in enumerate(self.blocks_):
                grads = _gradients(current, policy)[1]
                blocks[k] = blk.argmin_linear(grads[k])  # V is linear in block k: exact block minimum
                current = current.with_blocks(blocks)
            value = _gradients(current, policy)[0]
            if previous - value <= self.tol * max(1.0, abs(value)):
                break
        return value, current


class PessimisticPolicyOptimizer(FittedAttributes, Estimator):
    """pi_hat = argmax over a finite policy class of the lower value min_{b in C(xi)} V(pi; b)."""

    _fit_call = "fit(estimator, policies)"

    def __init__(self, xi_scale: float = 1.0, radius_scale: float | None = 2.0, max_sweeps: int = 30):
        self.xi_scale, self.radius_scale, self.max_sweeps = xi_scale, radius_scale, max_sweeps

    def fit(self, estimator, policies: np.ndarray) -> PessimisticPolicyOptimizer:
        policies = np.asarray(policies, dtype=float)
        if policies.ndim != 4 or len(policies) == 0:
            raise ValueError(f"policies must be a non-empty (K, T, C, A) array, got shape {policies.shape}")
        for k, pi in enumerate(policies):
            _policy_of(estimator.bridges_, pi, name=f"policies[{k}]")
        self.confidence_set_ = ConfidenceSet(self.xi_scale, self.radius_scale, self.max_sweeps).fit(estimator)
        self.lower_values_ = np.array([self.confidence_set_.lower_value(pi)[0] for pi in policies])
        self.plug_in_values_ = np.array([estimator.value(pi) for pi in policies])
        self.best_index_ = int(np.argmax(self.lower_values_))
        self.policy_ = policies[self.best_index_]
        return self
