"""Linear Thompson sampling (Agrawal & Goyal 2013; Russo & Van Roy 2014): the sequential randomised baseline."""

from __future__ import annotations

import numpy as np

from icml24._validation import check_positive

from .batched import BatchedPolicy


class LinTS(BatchedPolicy):
    r"""Sequential linear Thompson sampling (one pull per batch).

    At round ``t`` draw ``theta~ ~ N(theta_t, v^2 V_t^{-1})`` and pull ``argmax_x <x, theta~>``. With ``v = sigma``
    and ``reg = 1/prior variance`` this is exact posterior sampling for Gaussian noise and a Gaussian prior;
    Agrawal & Goyal's worst-case analysis inflates ``v`` by ``sqrt(d log(1/delta))``.

    Args:
        reg (float, default 1.0): ridge (prior precision).
        scale (float, default 1.0): ``v``, the posterior scale.
    """

    sequential = True

    def __init__(self, reg: float = 1.0, scale: float = 1.0):
        self.reg = reg  # stored as given; reset() checks them (_check_params)
        self.scale = scale

    def _check_params(self) -> None:
        check_positive("reg", self.reg)
        check_positive("scale", self.scale, allow_zero=True)

    def __repr__(self) -> str:
        return f"LinTS(reg={self.reg}, scale={self.scale})"

    def next_batch(self, remaining: int) -> np.ndarray:
        inverse = self.stats_.gram_inverse
        theta = inverse @ self.stats_.target
        chol = np.linalg.cholesky((inverse + inverse.T) / 2)
        sample = theta + self.scale * chol @ self.rng_.standard_normal(theta.shape[0])
        return self._one_pull(int(np.argmax(self.arms_ @ sample)))
