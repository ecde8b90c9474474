"""gdem claims: what GDEM is said to reach and beat, read from the experiments' metrics, with each claim's null,
oracle (a perfect condensation in GDEM's slot) and instance family (edge homophily: CiteSeer and CSBM graphs)."""

from __future__ import annotations

from icml24.core import Claim, Family, NoOracle, Null, Oracle

from .experiments import _tag, accuracy, cross_architecture, efficiency

# Accuracy gaps are means over seeds of accuracies in steps of 0.1 point (CiteSeer: 1,000 test nodes) or 0.83 (the
# CSBM graphs: 120 test nodes); a gap under half a CiteSeer step is a tie (equal means differ by ~1e-13 in float64).
TIE = 0.05
# L_e is a float32 sum of K <= 120 terms: rounding moves final / initial by ~K * 2^-24 ~ 1e-5 at most, so a decrease
# counts from 1e-4 of the initial value on (the null's ratio is exactly 1).
LOSS_TOL = 1e-4
GRAPHS = ("citeseer", "csbm")  # the graphs the accuracy claims read: CiteSeer, else the family member's CSBM graph


def _read(m: dict[str, float], name: str, rate: float | None = None) -> float:
    """``<graph>_<name>_<rate tag>`` (``<graph>_<name>`` without a rate) of the first of ``GRAPHS`` the run holds."""
    keys = [f"{graph}_{name}" + ("" if rate is None else f"_{_tag(rate)}") for graph in GRAPHS]
    return m[next((key for key in keys if key in m), keys[0])]


def _gap(m: dict[str, float], baseline: str, rate: float) -> float:
    return _read(m, "gdem", rate) - _read(m, baseline, rate)


GCOND_NULL = Null("GCond (its own graph and projected seconds) in GDEM's slot", {"method": "gcond"})
WHOLE = Oracle("the whole graph in GDEM's slot: a perfect condensation gives the whole-graph GCN's accuracy",
               {"method": "whole"})
WHOLE_PER_ARCHITECTURE = Oracle("each architecture trained on the whole graph (a perfect condensation) in GDEM's "
                                "graph's slot", {"method": "whole"})
EXACT = Oracle("the exact minimiser of L_e (U' the first K unit vectors, X' the real directions: L_e = 0)",
               {"optimizer": "exact"})


def _homophily(share: float, key: str) -> Family:
    """CiteSeer (edge homophily 0.74; the paper's graph, the experiment's own instance) and the 240-node CSBM graph
    at edge homophily 0.8, 0.6 and 0.3 (3 classes: 1/3 is a random graph; 0.3 is the issue #56 case where a random
    coreset beat both GDEM and the whole graph). Same labels, features and split at every homophily."""
    members = {"citeseer": {}}
    for h in (0.8, 0.6, 0.3):
        members[f"csbm h={h}"] = {key: ["csbm"] if key == "datasets" else "csbm", "homophily": h}
    return Family("edge homophily: CiteSeer (0.74) and CSBM graphs at 0.8, 0.6 and 0.3", members, share=share)


# Chosen before measuring: the accuracy claims run GDEM with CiteSeer's official configurations (at r = 0.25 every
# eigenvector is a low-frequency one, ratio 1.0), which speak of homophilous graphs; the heterophilic member is in
# the family so that its verdict is stored and shown, and the claims must hold on the other three.
HOMOPHILOUS = 0.75
ACCURACY_SCOPE = _homophily(HOMOPHILOUS, "datasets")
ACCURACY_ALL = _homophily(1.0, "datasets")
ARCHITECTURE_SCOPE = _homophily(HOMOPHILOUS, "dataset")
EFFICIENCY_ALL = _homophily(1.0, "dataset")
SCOPE = ("; on at least 3 of 4 graphs: CiteSeer and CSBM at edge homophily 0.8 and 0.6 are its scope (CiteSeer's "
         "official configurations keep low-frequency eigenvectors), CSBM at 0.3 is shown beside them")

CLAIMS = [
    Claim("GDEM at r = 0.25 and 0.5 reaches within 1 point of the GCN trained on the whole graph" + SCOPE,
          experiment=accuracy,
          check=lambda m: min(_read(m, "gdem", 0.25), _read(m, "gdem", 0.5)) >= _read(m, "whole") - 1.0,
          paper="GDEM 72.3 / 72.6 at r = 0.25 / 0.5 vs whole graph 71.7 on CiteSeer (Table 2); our pre-study "
                "72.3 / 71.7",
          oracle=WHOLE, family=ACCURACY_SCOPE),
    Claim("GDEM beats a random coreset of the same size by at least 5 points (r = 0.25 and 0.5)" + SCOPE,
          experiment=accuracy,
          check=lambda m: min(_gap(m, "random", 0.25), _gap(m, "random", 0.5)) >= 5.0,
          paper="Table 2 (GCond's coreset numbers, CiteSeer): random 54.4 / 64.2 vs GDEM 72.3 / 72.6; pre-study "
                "71.7 vs 60.3",
          oracle=WHOLE, family=ACCURACY_SCOPE),
    Claim("GNN architectures (GCN, SGC, APPNP, ChebNet) trained on one GDEM graph (r = 0.5) agree within 3 points"
          + SCOPE,
          experiment=cross_architecture,
          check=lambda m: m["gnn_spread"] <= 3.0,
          paper="Table 4: GDEM generalizes across architectures with small spread (about 70-73 on CiteSeer)",
          oracle=WHOLE_PER_ARCHITECTURE, family=ARCHITECTURE_SCOPE),
    Claim("GDEM is more accurate than GCond (gradient matching) at equal reduction rate (r = 0.25 and 0.5), by more "
          "than half a CiteSeer test node (0.05 points)" + SCOPE,
          experiment=accuracy, null=GCOND_NULL,
          # a tie (equal accuracies, or means equal up to rounding) is no win: the gap counts beyond TIE
          check=lambda m: min(_gap(m, "gcond", 0.25), _gap(m, "gcond", 0.5)) > TIE,
          paper="Table 2: GDEM 72.3 / 72.6 vs GCond 70.5 / 70.6 at r = 0.25 / 0.5 on CiteSeer (judged on full only, "
                "GCond at its official 600 epochs: quick truncates it to 10, a baseline below its strength, and "
                "reports this claim as not run with the command; the recorded full run in "
                "src/icml24/papers/gdem/records judges it)",
          setting="full", oracle=WHOLE, family=ACCURACY_SCOPE),
    Claim("GDEM (eigendecomposition + initialization + distillation) is at least 2x faster than GCond at equal "
          "reduction rate (r = 0.25 and 0.5), on every graph of the homophily family (CiteSeer, CSBM at 0.8, 0.6, "
          "0.3)",
          experiment=accuracy, null=GCOND_NULL,
          check=lambda m: min(_read(m, "seconds_ratio", 0.25), _read(m, "seconds_ratio", 0.5)) >= 2.0,
          paper="Sec. 5.4: GDEM distils much faster than gradient matching (GCond's 600 epochs; quick projects "
                "its time linearly from 10 epochs)",
          oracle=NoOracle("a speed claim: no condensation is perfect in time (the whole graph, the accuracy "
                          "claims' oracle, has no distillation to time)"),
          family=ACCURACY_ALL),
    Claim("GDEM's alternating optimization lowers the eigenbasis-matching loss L_e (r = 0.25) by more than 1e-4 of "
          "its initial value, on every graph of the homophily family (CiteSeer, CSBM at 0.8, 0.6, 0.3)",
          experiment=efficiency,
          check=lambda m: m["eigen_loss_ratio_r025"] <= 1.0 - LOSS_TOL,
          paper="Eq. (7) is the objective GDEM minimizes (final / initial L_e; the official r = 0.25 config)",
          oracle=EXACT, family=EFFICIENCY_ALL),
]

REGIMES = []
