"""collective-cert claims and regimes: the certified ratios the paper reports and the certificates' soundness."""

from __future__ import annotations

from icml24.core import Claim, Family, NoOracle, Oracle, Regime, SingleInstance

from .experiments import (
    CITESEER_TOLERANCE,
    OFFICIAL_SAMPLEWISE,
    ONE_HOP_CERTIFICATE,
    PAPER_CITESEER_5PCT,
    TWO_HOP_IN_SOUND_SLOT,
    official_votes,
    own_smoothing,
    soundness,
)


def _near(measured: float, paper: float, tolerance: float) -> bool:
    return abs(measured - paper) <= tolerance


INTRACTABLE = NoOracle("a perfect certifier gives the exact worst case over every injection of rho nodes (or the "
                       "exact binary program LP2 relaxes), intractable at these budgets on a real graph; the soundness "
                       "claims run the exact certificate on tiny graphs")
EXACT_PAPER = Oracle("the exact certificate (the exhaustive attack's own flips and their maximum per injection) in "
                     "the paper's certificate's slot", {"paper_hops": 0})  # the exhaustive attack still runs: not cheap
EXACT_SOUND = Oracle("the exact certificate (the exhaustive attack's own flips and their maximum per injection) in "
                     "the 3-hop certificate's slot", {"sound_hops": 0})
TINY_GRAPHS = Family(
    "tiny random graphs (a random tree plus one edge, random (p_e, p_n) and base classifiers): 4 nodes (the "
    "experiment's draws), 4 nodes on a disjoint instance stream (1000), 3 nodes",
    members={"4 nodes": {}, "4 nodes, instance stream 1000": {"instance_seed": 1000}, "3 nodes": {"num_nodes": 3}},
    share=2 / 3)
GRAPHS = Family("the paper's two graphs with our smoothed GCN: CiteSeer (the experiment's) and Cora-ML",
                members={"CiteSeer": {}, "Cora-ML": {"dataset": "cora_ml"}}, share=1.0)
MAJORITY = 0.5  # the collective certificate certifies a majority of the targets
NOTHING = 0.005  # sample-wise certifies nothing: below one target in 100 per seed on average

CLAIMS = [
    Claim("On the official Cora-ML votes the official sample-wise rule reproduces the official repository's shipped "
          "curves (within 0.02 at rho = 20, 31 and 50; within 0.10 at rho = 26-30, where our sampler deletes a node's "
          "edges differently) and certifies nothing beyond rho = 30, while the paper's collective LP2 still certifies "
          "a majority of the targets at rho = 160 (the paper's figure; no collective numbers are shipped)",
          experiment=official_votes,
          check=lambda m: all(_near(m[f"samplewise_at_rho{r}"], v, 0.02 if r in (20, 31, 50) else 0.10)
                              for r, v in OFFICIAL_SAMPLEWISE.items())
          and m["samplewise_last_nonzero_rho_max"] <= 30 and m["collective_rho160"] >= MAJORITY,
          paper="official certify_result_tau6_seed2021-2025.pkl: sample-wise 1.00 / 0.994 / 0.964 / 0.686 / 0.0 at "
                "rho = 20 / 26 / 28 / 30 / 31",
          oracle=INTRACTABLE,
          family=SingleInstance("the official repository ships votes and sample-wise curves for Cora-ML only")),
    Claim(f"With our smoothing on CiteSeer at rho = 5% of the graph, the paper's numbers reproduce: sample-wise "
          f"certifies 0.0% and the collective certificate 81.2% (within {CITESEER_TOLERANCE})",
          experiment=own_smoothing,
          check=lambda m: _near(m["collective_5pct"], PAPER_CITESEER_5PCT["collective"], CITESEER_TOLERANCE)
          and m["samplewise_5pct"] <= PAPER_CITESEER_5PCT["samplewise"] + NOTHING,
          paper="abstract: 0.0% (sample-wise) -> 81.2% (collective) on Citeseer, 5% injected nodes",
          oracle=INTRACTABLE,
          family=SingleInstance("the abstract's 0.0% -> 81.2% is CiteSeer's; the claim over graphs is the last one")),
    Claim("Soundness: on tiny graphs no exhaustive injection flips a node certified sample-wise (conservative rule) "
          "or escapes the collective flip condition, and flips do occur; on at least 2 of 3 graph families",
          experiment=soundness,
          check=lambda m: m["samplewise_violations"] == 0 and m["collective_violations"] == 0
          and m["lp_violations"] == 0 and m["flips"] >= 1, null=ONE_HOP_CERTIFICATE,  # counts: >= 1 is "some"
          paper="Theorems (certificates are sound for any base classifier)", oracle=EXACT_PAPER, family=TINY_GRAPHS),
    Claim("The paper's certificate is not sound for a 2-layer GCN with symmetric normalization (receptive field 3 "
          "hops): on the hub-mid-leaf star one injected edge flips more leaves than it allows and 3-hop flips escape "
          "its condition on tiny graphs; the 3-hop certificate has no violation anywhere, and neither has the paper's "
          "for the row-normalized GCN; on at least 2 of 3 graph families",
          experiment=soundness,
          check=lambda m: m["star_sym_violation_h2"] == 1 and m["star_sym_violation_h3"] == 0
          and m["star_row_violation_h2"] == 0 and m["three_hop_violations_paper"] >= 1  # a count
          and m["three_hop_violations_sound"] == 0 and m["three_hop_lp_violations_sound"] == 0,
          null=TWO_HOP_IN_SOUND_SLOT, oracle=EXACT_SOUND, family=TINY_GRAPHS,
          paper="ours (issue 27): the paper's Theorem assumes the 2-hop receptive field of the base GNN"),
    Claim(f"At rho = 5% of the graph our smoothed GCN's targets are certified by the paper's collective certificate "
          f"in a majority (>= {MAJORITY}) while the official sample-wise rule certifies nothing (<= {NOTHING}), on "
          f"both of the paper's graphs (CiteSeer, Cora-ML)",
          experiment=own_smoothing,
          check=lambda m: m["collective_5pct"] >= MAJORITY and m["samplewise_5pct"] <= NOTHING,
          paper="abstract / Sec. 6: the collective certificate certifies most targets where sample-wise certifies "
                "none, on Cora-ML and CiteSeer",
          oracle=INTRACTABLE, family=GRAPHS),
]

# No verdict: an LP identity, a wall time with no slower method to fail at smoke, the sound stand-in's cost (c3 << c2).
REGIMES = [
    Regime("The exact symmetry-reduced LP2 has the same optimum as the paper's LP2 (largest gap over target sets; "
           "an identity of the reduction, tested in tests/graph/certify/test_collective.py)",
           official_votes, metrics=["lp2_optimum_gap_max", "lp2_full_optimum", "lp2_reduced_optimum", "lp2_full_rho"],
           paper="ours: M* = 19.384 at rho = 100 for both"),
    Regime("Wall time of the paper's LP2 at the largest budget (rho = 160, CiteSeer): slowest solve over seeds, "
           "seconds, and its number of variables", own_smoothing,
           metrics=["lp2_full_seconds_max", "lp2_full_variables", "timing_rho"],
           paper="abstract: LP solved within 1 minute on Citeseer"),
    Regime("Official Cora-ML votes, both rules side by side: certified ratio of the paper's 2-hop certificate and the "
           "sound 3-hop one at rho = 100, 160, and the largest drop (budgets, targets). Where the smoothing deletes "
           "little (p <= 0.1) the 3-hop certificate certifies nothing: sound there by abstention", official_votes,
           metrics=["collective_rho100", "collective_sound_rho100", "collective_rho160", "collective_sound_rho160",
                    "sound_cost_max_max"],
           paper="ours: 0.800 vs 0.798 at rho = 100; c3 = -ln(1 - 0.02^3) = 8e-6 vs c2 = 4e-4 at p_e = 0.9, p_n = 0.8"),
    Regime("What soundness for the symmetric GCN costs on our smoothed CiteSeer GCN: the largest drop of the "
           "certified ratio from the 2-hop to the 3-hop certificate, over budgets (5% of the graph included) and "
           "seeds", own_smoothing, metrics=["sound_cost_max_max"], paper="ours: c3 = 8e-6 at p_e = 0.9, p_n = 0.8"),
]
