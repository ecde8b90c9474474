"""rs-OFUL: rarely switching OFUL (Abbasi-Yadkori, Pál & Szepesvári 2011), the E4 paper's batched baseline."""

from __future__ import annotations

import numpy as np

from icml24._validation import check_positive

from .batched import BatchedPolicy


class RarelySwitchingOFUL(BatchedPolicy):
    r"""Rarely switching OFUL with the official E4 code's confidence radius.

    A batch starts by recomputing ``theta = V^{-1} b`` and choosing the optimistic arm

        ``a = argmax_x <x, theta> + nu_t ||x||_{V^{-1}}``,   ``nu_t = max(sqrt(128 d log t), 8/3 log t)``

    (``nu_0 = 1``), then pulls ``a`` until ``det V`` has grown by the factor ``1 + C``. Pulling one arm ``n``
    times multiplies ``det V`` by ``1 + n ||x_a||^2_{V^{-1}}``, so the batch is ``floor(C / ||x_a||^2_{V^{-1}}) + 1``
    pulls, computed in closed form. The radius is very conservative (the paper's choice), so rs-OFUL explores a lot.

    Args:
        reg (float, default 1.0): ridge of the least-squares estimate.
        switch_factor (float, default 0.5): ``C``; a new batch starts when ``det V`` grows by ``1 + C``.
    """

    def __init__(self, reg: float = 1.0, switch_factor: float = 0.5):
        self.reg = reg  # stored as given; reset() checks them (_check_params)
        self.switch_factor = switch_factor

    def _check_params(self) -> None:
        check_positive("reg", self.reg)
        check_positive("switch_factor", self.switch_factor)

    def __repr__(self) -> str:
        return f"RarelySwitchingOFUL(reg={self.reg}, switch_factor={self.switch_factor})"

    def next_batch(self, remaining: int) -> np.ndarray:
        t = self.stats_.num_pulls
        dim = self.arms_.shape[1]
        radius = 1.0 if t == 0 else max(np.sqrt(128 * dim * np.log(t)), 8 / 3 * np.log(t))
        norms = self.stats_.arm_norms()
        arm = int(np.argmax(self.arms_ @ self.stats_.theta + radius * np.sqrt(norms)))
        counts = np.zeros(self.arms_.shape[0], dtype=np.int64)
        counts[arm] = min(int(np.floor(self.switch_factor / norms[arm])) + 1, remaining)
        return counts
