"""The kinds of class icml24 exports, one contract each (issue #58); ``tests/test_contract.py`` checks every class
of the README's method table against the contract of its kind.

Five kinds of **method**. Each follows scikit-learn's parameter protocol (``icml24._estimator.Estimator``):
``__init__`` stores every argument verbatim under its own name (no validation, no conversion), so ``clone`` and
``get_params``/``set_params`` work; the kind's call below checks the parameters, turns ``random_state`` (default
``None``) into streams (``icml24._random``), refuses NaN/inf input with a message naming the argument and reports
``progress(done, total)`` where it loops; what it learns ends in ``_``, and reading that before the call raises
``NotFittedError``.

- ``estimator``: ``fit(...)`` returns the estimator, then predicts or exposes what it learned (GeneralizedRP,
  KernelRidgeless, the SDR family, the merging methods, ...).
- ``sampler``: sbi's interface, ``append_simulations(theta, x)`` -> ``train(...)`` -> ``sample_posterior(...)``
  (Simformer, NPE).
- ``policy``: a batched bandit policy, ``reset(arms, horizon, random_state)`` / ``next_batch(remaining)`` /
  ``update(arm_sequence, rewards)``, played by ``icml24.bandits.run_batched``.
- ``simulator``: ``run(...)`` plays a process or an online learner to its horizon and keeps the trajectory
  (InfectionSimulation, the low-rank bandits' regret learners).
- ``explorer``: ``explore(env, budget, random_state)`` spends a query budget on an environment and returns what it
  saw (the failure-landscape baselines).

Four kinds of **building block**, which are not methods and so not bound by the parameter protocol:

- ``module``: a torch ``nn.Module`` (a network: ``forward``); its constructor builds the parameters.
- ``environment``: the problem a method meets (a bandit, a gymnasium environment, a merging setting); it draws
  observations from a ``random_state`` argument of the call that draws.
- ``component``: a building block fixed by its arguments (a number format, a feature map, a solver, a schedule),
  checked and derived at construction; the same input gives the same output.
- ``record``: a value (a configuration, a result, an exception).

A class names its kind in ``KIND`` (the method bases in ``icml24._estimator`` set it); a torch module, a scikit-learn
estimator, a gymnasium environment, a dataclass or an exception gets its kind from that base (``kind_of``).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

ESTIMATOR, SAMPLER, POLICY, SIMULATOR, EXPLORER = "estimator", "sampler", "policy", "simulator", "explorer"
MODULE, ENVIRONMENT, COMPONENT, RECORD = "module", "environment", "component", "record"
METHOD_KINDS = (ESTIMATOR, SAMPLER, POLICY, SIMULATOR, EXPLORER)
BLOCK_KINDS = (MODULE, ENVIRONMENT, COMPONENT, RECORD)
KINDS = METHOD_KINDS + BLOCK_KINDS

# the call of each method kind that learns or plays: it takes random_state and progress where the kind has them
MAIN_CALL = {ESTIMATOR: "fit", SAMPLER: "train", POLICY: "reset", SIMULATOR: "run", EXPLORER: "explore"}


@runtime_checkable
class Parameters(Protocol):
    """scikit-learn's parameter protocol, shared by every method kind."""

    def get_params(self, deep: bool = True) -> dict[str, Any]: ...

    def set_params(self, **params: Any) -> Any: ...


@runtime_checkable
class EstimatorProtocol(Parameters, Protocol):
    def fit(self, *args: Any, **kwargs: Any) -> Any: ...


@runtime_checkable
class SamplerProtocol(Parameters, Protocol):
    def append_simulations(self, theta: Any, x: Any) -> Any: ...

    def train(self, *args: Any, **kwargs: Any) -> Any: ...

    def sample_posterior(self, num_samples: int, x_observed: Any, **kwargs: Any) -> Any: ...


@runtime_checkable
class PolicyProtocol(Parameters, Protocol):
    def reset(self, arms: Any, horizon: int, random_state: Any = None) -> None: ...

    def next_batch(self, remaining: int) -> Any: ...

    def update(self, arm_sequence: Any, rewards: Any) -> Any: ...


@runtime_checkable
class SimulatorProtocol(Parameters, Protocol):
    def run(self, *args: Any, **kwargs: Any) -> Any: ...


@runtime_checkable
class ExplorerProtocol(Parameters, Protocol):
    def explore(self, env: Any, budget: int, random_state: Any = None) -> Any: ...


@runtime_checkable
class ModuleProtocol(Protocol):
    def forward(self, *args: Any, **kwargs: Any) -> Any: ...

    def parameters(self, recurse: bool = True) -> Any: ...


@runtime_checkable
class EnvironmentProtocol(Protocol):
    """Any object: an environment's contract is behavioural (``random_state=None`` where it draws; the same
    ``random_state`` gives the same draws)."""


@runtime_checkable
class ComponentProtocol(Protocol):
    """Any object: a component's contract is behavioural (deterministic, validated at construction)."""


@runtime_checkable
class RecordProtocol(Protocol):
    """Any value."""


PROTOCOLS: dict[str, type] = {
    ESTIMATOR: EstimatorProtocol, SAMPLER: SamplerProtocol, POLICY: PolicyProtocol, SIMULATOR: SimulatorProtocol,
    EXPLORER: ExplorerProtocol, MODULE: ModuleProtocol, ENVIRONMENT: EnvironmentProtocol,
    COMPONENT: ComponentProtocol, RECORD: RecordProtocol,
}


def _bases(cls: type) -> set[str]:
    return {f"{base.__module__}.{base.__qualname__}" for base in cls.__mro__}


def kind_of(cls: type) -> str:
    """The kind of ``cls``: its ``KIND`` attribute, else the kind its base implies (a torch ``nn.Module``: module;
    a scikit-learn ``BaseEstimator``: estimator; a gymnasium ``Env``: environment; a dataclass or an exception:
    record), else a ValueError."""
    kind = getattr(cls, "KIND", None)
    if kind is None:
        bases = _bases(cls)
        if "torch.nn.modules.module.Module" in bases:
            kind = MODULE
        elif "sklearn.base.BaseEstimator" in bases:  # a scikit-learn estimator (KernelRidgeless)
            kind = ESTIMATOR
        elif "gymnasium.core.Env" in bases:
            kind = ENVIRONMENT
        elif issubclass(cls, BaseException) or "__dataclass_fields__" in cls.__dict__:
            kind = RECORD
    if kind not in KINDS:
        raise ValueError(f"{cls.__qualname__} has no kind: set KIND to one of {', '.join(KINDS)} "
                         f"(icml24._contract), got {kind!r}")
    return kind
