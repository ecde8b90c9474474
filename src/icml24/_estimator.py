"""The estimator contract every method follows (scikit-learn's, issues #46 and #58).

``__init__`` stores each parameter verbatim under its own name (no validation, no conversion: the kind's call
checks them), learned state ends in ``_``, and ``Estimator`` (scikit-learn's ``BaseEstimator``) gives
``get_params``/``set_params``, so ``sklearn.base.clone`` and grid searches work on every method. Each method kind
(``icml24._contract``) has its base here, naming it in ``KIND``: a learner with ``fit`` derives from
``Estimator``, an sbi-style sampler from ``Sampler``, a batched bandit policy from ``Policy``, a
simulation or online learner with ``run`` from ``Simulator``, an explorer with ``explore`` from
``Explorer``.
"""

from __future__ import annotations

from sklearn.base import BaseEstimator

from ._contract import ESTIMATOR, EXPLORER, POLICY, SAMPLER, SIMULATOR


class Estimator(BaseEstimator):
    """Base of every icml24 learner: scikit-learn's parameter protocol, our own ``__repr__`` where a class has one."""

    KIND = ESTIMATOR


class Sampler(Estimator):
    """Base of an sbi-style sampler: ``append_simulations(theta, x)`` -> ``train()`` -> ``sample_posterior()``."""

    KIND = SAMPLER


class Policy(Estimator):
    """Base of a batched bandit policy: ``reset(arms, horizon, random_state)``, ``next_batch``, ``update``."""

    KIND = POLICY


class Simulator(Estimator):
    """Base of a simulation or online learner played to its horizon by ``run(...)``."""

    KIND = SIMULATOR


class Explorer(Estimator):
    """Base of an explorer: ``explore(env, budget, random_state)`` spends a query budget on an environment."""

    KIND = EXPLORER
