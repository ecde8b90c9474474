"""Field-agnostic machinery: paper registry, experiment context, results store, runner, report."""

from icml24.core.context import Context, seed_everything
from icml24.core.labels import labelled, select
from icml24.core.registry import (
    Claim,
    Experiment,
    Family,
    NoOracle,
    Null,
    Oracle,
    OutOfRegime,
    Paper,
    Regime,
    SingleInstance,
    Verdict,
    discover,
    experiment,
)

__all__ = ["Claim", "Context", "Experiment", "Family", "NoOracle", "Null", "Oracle", "OutOfRegime", "Paper", "Regime",
           "SingleInstance", "Verdict", "discover", "experiment", "labelled", "seed_everything", "select"]
