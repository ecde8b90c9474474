"""sparsest claims and regimes: what the search finds, and what the pruners fail to find at its budget."""

from __future__ import annotations

from icml24.core import Claim, Null, Regime

from .experiments import pruners, search

#: an accuracy gain counts only beyond this: accuracies are fractions of <= 50,000 points (steps >= 2e-5, a mean over
#: <= 10 seeds >= 2e-6); anything below 1e-6 is rounding (dead-weight means are of integer counts)
TOL = 1e-6

CLAIMS = [
    Claim(
        "On every seed the combinatorial search reaches the target training accuracy (95%; 90% on the family's "
        "90% instance) with <= 35 nonzero weights, on every instance of the family ((3, 3, 3) and (4, 4, 4) at "
        "95%, (3, 3, 3) at 90%)",
        experiment=search,
        check=lambda m: m["search_all_reached"] >= 1 and m["search_max_nnz"] <= 35,
        paper="Sec. 3-4: ideal sparse networks (about 30 nonzeros at 95%) exist far below what pruners find",
    ),
    Claim(
        "At the nonzero count the search reached on the same seed, every pruner (best of the official 9 settings, "
        "chosen on validation points) succeeds on <= 40% of the seeds whose dense network of that width trained "
        "(at least 2 such seeds at every width >= 8), while the search succeeds on every seed, for both sweeps of "
        "starting widths (3, 8, 32 and 8, 16, 24). At the search's budget only: with more weights pruners do "
        "succeed (issue #56: GMP from width 16 on 5 of 5 seeds at 40 nonzeros)",
        experiment=pruners,
        check=lambda m: (m["max_success_rate"] <= 0.4 and m["guarded_seeds_min_wide"] >= 2
                         and m["search_success_rate"] >= 1),
        paper="Fig. 1, Sec. 4: no pruner finds the sparsest networks",
    ),
    Claim(
        "Over-parameterisation hurts: pruned accuracy and success fall from the narrowest to the widest start "
        "among the widths whose dense network trains on at least two seeds (at least two such widths), for both "
        "sweeps of starting widths (3, 8, 32 and 8, 16, 24)",
        experiment=pruners,
        check=lambda m: (m["regime_widths"] >= 2 and m["accuracy_drop_in_regime"] > TOL
                         and m["success_drop_in_regime"] >= -TOL),
        paper="Sec. 4.2: pruning from wider networks performs worse",
    ),
    Claim(
        "Pruned networks contain disconnected paths: >= 25% of pruned networks keep weights on no "
        "input-to-output path, for both sweeps of starting widths (3, 8, 32 and 8, 16, 24)",
        experiment=pruners,
        check=lambda m: m["dead_path_fraction"] >= 0.25 and m["mean_dead_weights"] > TOL,
        paper="Sec. 5: pruners leave disconnected paths",
    ),
    Claim(
        "At the search's winning nonzero count and width, every pruner given as many trained networks (fresh "
        "initialisations x the official grid) as the search trained at that level stays below the winner by more "
        "than 2 binomial standard errors of the evaluation set, and <= 40% of pruners reach the target, on every "
        "seed, on every instance of the family (equal networks at one level; the next claim compares at equal "
        "compute)",
        experiment=search,
        check=lambda m: (m["search_all_reached"] >= 1 and m["budget_max_success_rate"] <= 0.4
                         and m["budget_min_gap_over_margin"] > TOL),
        paper="Sec. 4-5 and issue #40: judge every pruner at the budget the search succeeds at",
    ),
    Claim(
        "At equal compute GMP (the strongest pruner, from the search's width) does not find a sparser network than "
        "the search: walking the search's nonzero levels upward with as many trained networks per level as the "
        "search trained there, it reaches the target at no level below the search's winning count, on every "
        "seed, on every instance of the family",
        experiment=search,
        check=lambda m: m["search_all_reached"] >= 1 and m["equal_compute_sparser_seeds"] == 0,
        # GMP in the search's slot (the experiment's null) walks the very networks of the comparison: a tie by
        # construction. SNIP there (the search replaced by a pruner at initialisation) holds only if GMP at equal
        # compute cannot undercut it either
        null=Null("SNIP (a pruner at initialisation) in the search's slot: the same nonzero levels, as many fresh "
                  "initialisations per level as the search trains masks", {"method": "snip"}),
        paper="Sec. 4-5 and issue #56: the budget claim at equal compute (GMP reached 95% at 17, 20, 18 nonzeros "
              "where the search needed 24)",
    ),
]

REGIMES = [
    Regime("Search strength: random eligible masks per nonzero level (x inits per mask) and the masks trained",
           experiment=search, metrics=["masks_per_level", "inits_per_mask", "masks_evaluated", "search_seeds_reached"],
           paper="Sec. 3.2: the paper trains every mask"),
    Regime("Fixed init (BENCH-95): each pruner once from the search winner's initialisation (its setting chosen on "
           "validation points), against the search's median mask at that level (one network against a typical "
           "one) and against the winner (the best of every mask)",
           experiment=search, metrics=["fixed_init_success_rate", "fixed_init_best_pruner_accuracy",
                                       "search_median_mask_accuracy", "fixed_init_gap_to_median_mask",
                                       "fixed_init_gap_to_winner", "budget_margin"],
           paper="Sec. 5: fixed-init runs still get stuck at suboptimal solutions"),
    Regime("Per-seed dense guard: seeds whose dense network of each width reached the target",
           experiment=pruners, metrics=["guarded_seeds_min_wide", "nnz_budget", "search_success_rate"],
           paper="issue #40: count pruner successes only where the dense network trained"),
]
