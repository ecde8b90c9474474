"""agent-smith claims and regimes: the paper's infection numbers, the theory's curves and the real society."""

from __future__ import annotations

from icml24.core import Claim, Family, NoOracle, Oracle, Regime, SingleInstance

from .experiments import defence, real_society, rounds_vs_size, scaling, sensitivity, table1

RECURRENCE = Oracle("the large-N recurrence (Eq. 5) in the simulation's slot: the ideal infection curve from the "
                    "same c0 at the same rates (carriers c_t, infected alpha c_t)", {"simulator": "recurrence"},
                    cheap=True)  # no agents: microseconds per curve
IDEAL_IMAGE = Oracle("an ideal adversarial image in the crafted image's slot: retrieved and jailbreaking in every chat "
                     "(alpha = beta = 1), spread from one agent by the pair-wise chat simulation",
                     {"image": "ideal"}, cheap=True)  # no society trained: under a second at N = 256
SINGLE_RUN = NoOracle("the claim compares our runs' spread with the paper's single stochastic run; its perfect "
                      "stand-in is the official round loop, which our simulation equals at these rates (tests/parity), "
                      "and the noiseless recurrence has no run-to-run spread to compare")

RATES = {"alpha = beta = 1 (the paper's)": {}, "alpha 0.76, beta 0.8": {"alpha": 0.76, "beta": 0.8}}
SCALING_RATES = Family(
    "infection rates at N = 2^14 / 2^17 / 2^20, c0 = 1/1024: the paper's (alpha = beta = 1, gamma = 0), alpha 0.76 / "
    "beta 0.8, the same with a purge gamma 0.1, and alpha = beta = 0.6",
    members={**RATES, "alpha 0.76, beta 0.8, gamma 0.1": {"alpha": 0.76, "beta": 0.8, "gamma": 0.1},
             "alpha = beta = 0.6": {"alpha": 0.6, "beta": 0.6}},
    share=0.75)
DEFENCE_RATES = Family(
    "rates and sizes of the defence sweep: beta 0.8 / alpha 0.76 at N = 2^16 (the sweep's), beta 1 / alpha 0.95, "
    "beta 0.6 / alpha 0.57 at N = 2^14",
    members={"beta 0.8, N = 2^16": {}, "beta 1": {"alpha": 0.95, "beta": 1.0},
             "beta 0.6, N = 2^14": {"alpha": 0.57, "beta": 0.6, "num_agents": 2**14}},
    share=1.0)
GROWTH_RATES = Family(
    "infection rates of the one-seeded-agent growth: alpha = beta = 1 (the paper's), alpha 0.76 / beta 0.8, "
    "alpha = beta = 0.6",
    members={**RATES, "alpha = beta = 0.6": {"alpha": 0.6, "beta": 0.6}}, share=1.0)
SOCIETY_SIZES = Family(
    "number of agents in the real society: 128 (quick's), 64 and 256 (Table 1's); full: 256, 64 and 128",
    members={"N = 128": {}, "N = 64": {"num_agents": 64}, "N = 256": {"num_agents": 256}},
    full={"N = 256": {}, "N = 64": {"num_agents": 64}, "N = 128": {"num_agents": 128}},
    share=2 / 3)

CLAIMS = [
    Claim(
        "At the paper's rates and seeding (c0 = 1/1024), the current infection ratio at round 22 matches App. E.1 "
        "(95.03 / 96.02 / 96.23% at N = 2^14 / 2^17 / 2^20) within 3 run-to-run standard deviations",
        experiment=scaling,
        check=lambda m: m["current22_max_z"] <= 3,
        paper="App. E.1: current infection ratio at round 22 of 95.03 / 96.02 / 96.23% for N = 2^14 / 2^17 / 2^20",
        oracle=SINGLE_RUN,
        family=SingleInstance("App. E.1 reports the round-22 ratio at the paper's rates and c0 = 1/1024 only; its "
                              "three sizes are all in the experiment"),
    ),
    Claim(
        "With 2^20 agents, c0 = 1/1024 and the paper's rates, the cumulative infection ratio reaches ~100% (99.9%) "
        "within 27-31 rounds",
        experiment=scaling,
        check=lambda m: 27 <= m["largest_rounds_to_level_cumulative"] <= 31,
        paper="Fig. 1: p_t reaches ~100% after 27-31 chat rounds at N ~ 1M (c0 = 1/1024, App. E.1)",
        oracle=RECURRENCE,
        family=SingleInstance("Fig. 1's 27-31 rounds is one run at N ~ 2^20, c0 = 1/1024 and the paper's rates"),
    ),
    Claim(
        "Simulation and recurrence (Eq. 5) agree: mean |c_sim - c_rec| over rounds < 0.03 for N >= 2^14, on at least "
        "3 of 4 rate settings",
        experiment=scaling,
        check=lambda m: m["mad_recurrence_large"] < 0.03,
        paper="App. B, Fig. 9: simulation at N = 2^14 matches the theory",
        oracle=RECURRENCE, family=SCALING_RATES,
    ),
    Claim(
        "N = 256 with one seeded agent at the paper's rates: cumulative p_16, p_24 and the first round >= 90% match "
        "Table 1's low-diversity cells (93.75%, 99.61%, 15.0) within 3 run-to-run standard deviations",
        experiment=table1,
        check=lambda m: m["table1_max_z"] <= 3,
        paper="Table 1 (low diversity): p_16 93.75% / 15.0 rounds to 90%; cumulative p_24 99.5-99.6%",
        oracle=SINGLE_RUN,
        family=SingleInstance("Table 1's low-diversity cells are one society: N = 256, one seeded agent, the "
                              "paper's rates"),
    ),
    Claim(
        "Containment: beta <= 2 gamma drives the carrier ratio below 0.02; beta > 2 gamma settles within 0.05 of "
        "1 - 2 gamma / beta; on every one of 3 (beta, N) settings",
        experiment=defence,
        check=lambda m: m["max_contained_final"] < 0.02 and m["max_uncontained_gap"] <= 0.05,
        paper="Sec. 3.1 Remark II, Eq. 7, 14, 15: provably restraining iff beta <= 2 gamma",
        oracle=RECURRENCE, family=DEFENCE_RATES,
    ),
    Claim(
        "Infection is exponential: rounds to 90% carriers are linear in ln N (R^2 >= 0.9, log-log slope < 0.3), on "
        "every one of 3 rate settings",
        experiment=rounds_vs_size,
        check=lambda m: m["infection_r2_vs_ln_n"] >= 0.9 and m["infection_loglog_slope"] < 0.3,
        paper="Eq. 8 / Remark I: O(log N) rounds; Fig. 3: sequential jailbreak grows linearly",
        oracle=RECURRENCE, family=GROWTH_RATES,
    ),
    Claim(
        "The real society at the paper's budget (a border of 7% of the pixels): the crafted image infects >= 90% of "
        "agents within 32 rounds, in at least 2 of 3 society sizes",
        experiment=real_society,
        check=lambda m: m["crafted_cumulative_final"] >= 0.9,
        paper="Table 1: border h = 6 on 336 px, cumulative p_24 99.5-99.6% at N = 256; Fig. 3: a clean image "
              "infects none",
        oracle=IDEAL_IMAGE, family=SOCIETY_SIZES,
    ),
]

REGIMES = [
    Regime("The current ratio at round 22 per size and the cumulative rounds to 99% / 99.9% / 99.99% at the largest "
           "size (the paper's '~100%' read at three levels)", experiment=scaling,
           metrics=["largest_log2_size", "largest_current_round22", "largest_rounds_to_99_cumulative",
                    "largest_rounds_to_level_cumulative", "largest_rounds_to_9999_cumulative"],
           paper="App. E.1: 96.23% at round 22 (2^20); Fig. 1: ~100% after 27-31 rounds"),
    Regime("Table 1 cells measured at the paper's rates (means over seeds)", experiment=table1,
           metrics=["cumulative_p16", "rounds_to_90_cumulative", "cumulative_p24", "current_p16",
                    "rounds_to_90_current"], paper="Table 1 low diversity: 93.75% / 15.0; p_24 99.61%"),
    Regime("Rounds to 90% carriers per unit ln N beside Eq. 8's 2 / (beta - 2 gamma), and the sequential "
           "jailbreak's log-log slope (1 by its one-agent-per-round schedule)", experiment=rounds_vs_size,
           metrics=["infection_slope_vs_ln_n", "theory_slope_vs_ln_n", "sequential_loglog_slope"],
           paper="Eq. 8: 2 / (beta - 2 gamma); Fig. 3: sequential linear in N"),
    Regime("Fig. 3 baselines at N = 256 after 32 rounds: the infectious image, the sequential jailbreak (33/256 by "
           "its schedule) and a non-infectious jailbroken image (beta = 0: only its seed)", experiment=rounds_vs_size,
           metrics=["baseline_infectious_cumulative_final", "baseline_sequential_cumulative_final",
                    "baseline_noninfectious_cumulative_final"],
           paper="Fig. 3 (left): sequential ~1/8; prompt injections infect none"),
    Regime("Sensitivity to the rates (figure): current ratio at round 22 and rounds to 99.9% cumulative at "
           "beta = 0.8 / 0.9 / 1 with jailbreak 1 (alpha = beta) and at beta = 1 with jailbreak 0.9",
           experiment=sensitivity,
           metrics=["b0p8_j1p0_current_round22", "b0p9_j1p0_current_round22", "b1p0_j1p0_current_round22",
                    "b1p0_j0p9_current_round22", "b0p9_j1p0_rounds_to_level_cumulative",
                    "b1p0_j0p9_rounds_to_level_cumulative"],
           paper="App. E.4: alpha = retrieval x jailbreak <= beta"),
    Regime("The real society's clean control (the attack's out-of-kind starting image, unoptimized): cumulative "
           "infection, the responder's HARMFUL rate on out-of-kind and on album images, and the attack's validation "
           "JSR", experiment=real_society,
           metrics=["clean_cumulative_final", "clean_ood_harmful_rate", "clean_harmful_rate", "attack_val_jsr"],
           paper="Fig. 3: a clean image infects none"),
    Regime("Infection against the perturbation budget (figure): cumulative infection after 32 rounds per border width "
           "h on 112 px (h = 2 is the paper's 7% of the pixels)", experiment=real_society,
           metrics=["h1_cumulative_final", "h2_cumulative_final", "h4_cumulative_final", "h8_cumulative_final",
                    "h4_beta", "h8_beta", "border_fraction"],
           paper="Sec. 4.3, Fig. 4: failures with h < 6 come from low alpha while beta stays high"),
]
