"""rp claims: what Generalized RP, the GCN's NTK and the CSBM sweep are said to show, read from the experiments'
metrics."""

from __future__ import annotations

from icml24.core import Claim, NoOracle, SingleInstance

from .experiments import RANDOM_GRAPH_CORA, accuracy, alignment, heterophily

#: an accuracy difference counts only beyond this: test accuracies are fractions of >= 700 nodes averaged over <= 10
#: seeds (steps >= 1.4e-4); anything below 1e-6 is rounding
TOL = 1e-6
#: an alignment rise counts only beyond this: the NTK is formed in float32 (u = 6e-8 per entry) and its centred
#: alignment summed in float64 over n^2 entries moves by ~1e-5 at most from rounding; the paper's rises are 0.05
#: and 0.37
ALIGN_TOL = 1e-4

CLAIMS = [
    Claim("Generalized RP reaches GCN's test accuracy (within 0.5 points) on every graph of the instance, on at "
          "least 3 of the 4 instances (Cora and CiteSeer together; CSBM graphs at edge homophily 0.9, 0.7, 0.5)",
          experiment=accuracy, check=lambda m: m["rp_minus_gcn_min"] >= -0.005,
          paper="README table: Cora 82.7 vs GCN 81.9, CiteSeer 73.0 vs 71.6"),
    Claim("Basic RP (k chosen on validation, all four candidates timed) reaches GCN's Cora accuracy within 1 point "
          "in at most a fifth of GCN's training time (200 epochs, same thread); Generalized RP's cost is reported "
          "beside it", experiment=accuracy,
          check=lambda m: (m["cora_gcn_over_rp_basic_time"] >= 5.0
                           and m["cora_rp_basic_acc"] >= m["cora_gcn_acc"] - 0.01),
          family=SingleInstance("a wall-time claim on the one graph we time (Cora, beside the accuracy claim); the "
                                "paper's speed-ups are per step on OGB graphs, offline here, and basic RP reads no "
                                "features, so its accuracy on feature-driven graphs is not the paper's claim"),
          paper="RP is 12-14x faster per step than GNNs on OGB (basic RP) at comparable accuracy"),
    Claim("On Cora, A(S^4, YY^T) = 0.106 +- 0.01", experiment=alignment,
          check=lambda m: abs(m["align_s4_y"] - 0.106) <= 0.01, null=RANDOM_GRAPH_CORA,
          oracle=NoOracle("a property of Cora's graph and labels, computed exactly: no method's output enters it"),
          family=SingleInstance("the paper's reference value is Cora's own (the dashed line of its Cora figure)"),
          paper="dashed reference line of the Cora alignment figure, ~0.105"),
    Claim("During GCN training the NTK aligns with the graph and the labels: once the GCN has fit its training "
          "labels (training accuracy >= 0.9), A(NTK, S^4) and A(NTK, YY^T) both end higher than at initialization "
          "(by more than 1e-4), on at least 3 of the 4 graphs (Cora, CiteSeer, CSBM at edge homophily 0.9 and 0.2)",
          experiment=alignment,
          check=lambda m: (m["train_acc_final"] >= 0.9 and m["ntk_graph_final"] > m["ntk_graph_init"] + ALIGN_TOL
                           and m["ntk_label_final"] > m["ntk_label_init"] + ALIGN_TOL),
          paper="Cora figure (full graph): 0.038 -> 0.092 and 0.028 -> 0.40 over 50k SGD steps"),
    Claim("On CSBM, RP's and GCN's accuracy and A(S^4, YY^T) rise with homophily while the MLP's accuracy stays flat "
          "beside them (its spread over the levels at most a quarter of the smaller of RP's and GCN's rises), on at "
          "least 2 of the 3 CSBM instances (5 classes at degree 10, 3 classes, degree 5)",
          experiment=heterophily,
          # the MLP's flatness is judged against the graph methods' rise: a fixed 5-point bar failed every smoke
          # run from the test split's and the levels' own draws alone (300 nodes: 0.14), whatever was in RP's slot
          check=lambda m: (m["rp_vs_homophily_spearman"] >= 0.9 and m["gcn_vs_homophily_spearman"] >= 0.9
                           and m["align_vs_homophily_spearman"] >= 0.9 and m["mlp_range_over_graph_rise"] <= 0.25),
          paper="Section 5: alignment of the graph with the labels governs GNN generalization"),
    Claim("On CSBM the graph helps or hurts by homophily: RP loses to the MLP at the strongest heterophily and beats "
          "it by at least 10 points at the strongest homophily, on at least 2 of the 3 CSBM instances (5 classes at "
          "degree 10, 3 classes, degree 5)",
          experiment=heterophily,
          check=lambda m: m["rp_mlp_gap_low"] < -TOL and m["rp_mlp_gap_high"] >= 0.10,
          paper="RP ranks 4th of 10 on heterophilic graphs; GNNs lose to MLPs under heterophily"),
]

REGIMES: list = []
