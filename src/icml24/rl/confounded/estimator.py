"""The two-stage bridge estimator (Hong, Qi & Xu, ICML 2024, Sec. 4), in the primal form of its kernels.

Split the N episodes into N1 (stage I) and N2 (stage II). At each step t, with W_t = (A_t, O_t) and
X_t = (A_t, H_{t-1}, O_0):
1. Stage I, kernel ridge regression (penalty lambda1) of phi_W(W_t) and of the outcome features psi(Y_t) on the
   features of X_t: the conditional mean embedding mu_hat(x) = E_hat[phi_W(W) | x] and p_hat(y | x).
2. Stage II, closed form: minimise (1/N2) sum_i ||mu_hat(x_i)^T theta - p_hat(. | x_i)||^2 + lambda2 ||theta||^2,
   theta = (M^T M / N2 + lambda2 I)^{-1} M^T P / N2, the primal twin of alpha = (G + N2 lambda2 I)^{-1} p_hat with
   G = (Gamma^T K_W Gamma) (.) K_Y.
Outcomes: the reward bridge targets psi_R = R_t e_{cell(O_t)}; the dynamic bridge
psi_D = phi(O_{t+1}) (x) e_{cell(O_t)}.
With delta kernels everywhere this is the tabular estimator: mu_hat(w | x) = n(w, x) / (n(x) + N1 lambda1).
"""

from __future__ import annotations

import numpy as np

from icml24._estimator import Estimator
from icml24._random import RandomState, check_random_state
from icml24._validation import FittedAttributes, check_positive, check_positive_int

from .identification import Bridges
from .simulator import check_episodes


def stage_two(M: np.ndarray, P: np.ndarray, lam2: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stage II in closed form, every index y at once: theta = (M^T M / N2 + lambda2 I)^{-1} M^T P / N2.

    M (N2, A d): the stage-I conditional means of phi_W at the stage-II points; P (N2, |Y|): the targets p_hat(y | x).
    Returns theta (A d, |Y|), H = M^T M / N2 + lambda2 I (the ellipsoid's matrix) and the design M^T M / N2.
    """
    n2 = M.shape[0]
    design = M.T @ M / n2
    H = design + lam2 * np.eye(design.shape[0])
    return np.linalg.solve(H, M.T @ P / n2), H, design


class TwoStageBridgeEstimator(FittedAttributes, Estimator):
    """Estimate b_R and b_D at every step from confounded logs.

    Args:
        obs_features (DeltaFeatures | RBFFeatures): features of the observation (the kernel of the bridges' o~
            input).
        instrument (HistoryInstrument): features of X_t = (A_t, H_{t-1}, O_0).
        n_actions (int): number of actions.
        n_cells (int): number of policy cells of an observation.
        cell_edges (array | None): bin edges of a continuous observation (``None``: the observation is its own cell).
        lambda1 (float | None): stage-I ridge; default 1 / N1.
        lambda2 (float | None): stage-II ridge; default ``lambda2_scale / sqrt(N2)``.
        lambda2_scale (float): the scale of the default stage-II ridge (default 0.03).
        split (float): fraction of episodes for stage I, in (0, 1).
        random_state (None | int | Generator): seed of the split.
    """

    def __init__(self, obs_features, instrument, n_actions: int, n_cells: int, cell_edges=None,
                 lambda1: float | None = None, lambda2: float | None = None, lambda2_scale: float = 0.03,
                 split: float = 0.7, random_state: RandomState = None):
        self.obs_features, self.instrument = obs_features, instrument
        self.n_actions, self.n_cells, self.cell_edges = n_actions, n_cells, cell_edges
        self.lambda1, self.lambda2, self.lambda2_scale = lambda1, lambda2, lambda2_scale
        self.split, self.random_state = split, random_state

    def cells(self, obs: np.ndarray) -> np.ndarray:
        if self.cell_edges is None:
            return np.asarray(obs, dtype=np.int64)
        return np.searchsorted(np.sort(np.asarray(self.cell_edges, dtype=float)), obs).astype(np.int64)

    def _w_features(self, actions: np.ndarray, phi: np.ndarray) -> np.ndarray:
        """phi_W(a, o) = e_a (x) phi(o): the delta kernel on the action times the observation kernel."""
        out = np.zeros((len(actions), self.n_actions, phi.shape[1]))
        out[np.arange(len(actions)), actions] = phi
        return out.reshape(len(actions), -1)

    def fit(self, data) -> TwoStageBridgeEstimator:
        """Fit every bridge from ``data`` (``Trajectories`` logged by the behaviour policy)."""
        check_positive_int("n_actions", self.n_actions)
        check_positive_int("n_cells", self.n_cells)
        if not 0 < self.split < 1:
            raise ValueError(f"split must be in (0, 1), got {self.split}")
        check_episodes(data, self.n_actions, min_episodes=4)  # 4: both stages get at least 2
        n, T = data.n, data.horizon
        perm = check_random_state(self.random_state).permutation(n)
        n1 = int(round(self.split * n))
        first, second = data.subset(perm[:n1]), data.subset(perm[n1:])
        n2 = n - n1
        lam1 = check_positive("lambda1", self.lambda1 if self.lambda1 is not None else 1.0 / n1)
        lam2 = check_positive("lambda2", self.lambda2 if self.lambda2 is not None else self.lambda2_scale / np.sqrt(n2))
        phi = self.obs_features.transform(data.obs.reshape(-1)).reshape(n, T, -1)
        d, C = phi.shape[2], self.n_cells
        cells = self.cells(data.obs)
        if cells.min() < 0 or cells.max() >= C:
            raise ValueError(f"observation cells must lie in 0..{C - 1}; check n_cells / cell_edges")
        onehot_c = np.eye(C)[cells]  # (n, T, C)

        reward, dynamic, hessians, signal = [], [], [], []
        for t in range(T):
            w = self._w_features(data.actions[:, t], phi[:, t])  # (n, A d)
            targets = [w, data.rewards[:, t, None] * onehot_c[:, t]]  # psi_R = R e_c
            if t < T - 1:
                targets.append(np.einsum("nj,nc->njc", phi[:, t + 1], onehot_c[:, t]).reshape(n, -1))  # psi_D
            stacked = np.concatenate(targets, axis=1)
            pred = self._stage_one(first, second, stacked[perm[:n1]], t, n1 * lam1)  # conditional means
            theta, H, design = stage_two(pred[:, :w.shape[1]], pred[:, w.shape[1]:], lam2)
            reward.append(theta[:, :C].reshape(self.n_actions, d, C))
            if t < T - 1:
                dynamic.append(theta[:, C:].reshape(self.n_actions, d, d, C))
            hessians.append(H)
            signal.append(np.sort(np.linalg.eigvalsh(design))[::-1])
        self.bridges_ = Bridges(phi[:, 0].mean(axis=0), reward, dynamic)  # m_1 = E_hat[phi(O_1)]
        self.hessians_ = hessians
        self.design_eigenvalues_ = signal
        self.n1_, self.n2_, self.n_, self.lambda1_, self.lambda2_ = n1, n2, n, lam1, lam2
        return self

    def _stage_one(self, first, second, targets: np.ndarray, t: int, ridge: float) -> np.ndarray:
        """Stage I: kernel ridge regression of the targets on the features of X_t (one solve for all outputs),
        predicted at the stage-II points. A one-hot instrument has a diagonal Gram matrix (the cell counts), so
        its solve is a per-cell mean with ``ridge`` pseudo-counts: n(w, x) / (n(x) + N1 lambda1)."""
        if getattr(self.instrument, "discrete", False):
            cells1, cells2 = self.instrument.index(first, t), self.instrument.index(second, t)
            dim = self.instrument.dim(t)
            sums = np.zeros((dim, targets.shape[1]))
            np.add.at(sums, cells1, targets)
            coef = sums / (np.bincount(cells1, minlength=dim) + ridge)[:, None]
            return coef[cells2]
        x1 = self.instrument.transform(first, t)
        gram = x1.T @ x1 + ridge * np.eye(x1.shape[1])
        return self.instrument.transform(second, t) @ np.linalg.solve(gram, x1.T @ targets)

    def block_hessians(self) -> list[np.ndarray]:
        """H of each block of ``bridges_.blocks()``: L_hat(b) - L_hat(b_hat) = <b - b_hat, H (b - b_hat)>.

        m_1 is a sample mean (H = I, over all N episodes); the reward and dynamic bridges of step t share
        H_t = M_t^T M_t / N2 + lambda2 I acting on their (A d) rows.
        """
        T = len(self.hessians_)
        return [np.eye(self.bridges_.initial.size), *self.hessians_, *self.hessians_[:T - 1]]

    def value(self, policy: np.ndarray) -> float:
        """The plug-in OPE estimate V(pi; b_hat)."""
        from .identification import chain_value

        return chain_value(self.bridges_, policy)
