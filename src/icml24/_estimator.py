"""The estimator contract every learner with ``fit`` follows (scikit-learn's, issue #46).

``__init__`` stores each parameter verbatim under its own name (no validation, no conversion: ``fit`` checks
them), learned state ends in ``_``, and :class:`Estimator` (scikit-learn's ``BaseEstimator``) gives
``get_params``/``set_params``, so ``sklearn.base.clone`` and grid searches work on every learner.
"""

from __future__ import annotations

from sklearn.base import BaseEstimator


class Estimator(BaseEstimator):
    """Base of every icml24 learner: scikit-learn's parameter protocol, our own ``__repr__`` where a class has one."""
