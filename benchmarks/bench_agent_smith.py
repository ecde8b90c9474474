"""Vectorized InfectionSimulation against a per-agent loop (one step per pair per round, as the official
simulation loops over chats) on 2^12 agents: equal curves (carriers and the official current infection ratio) for
the same seed, time ratio in one run; then the acceptance timing of 2^20 agents x 32 rounds (< 60 s), and our cost
per agent-round beside the official round loop's with stand-in models (tests/parity/agent-smith.json, CPU seconds
on the recording machine).

Times are medians of ``--repeats`` (>= 5) runs after a warm-up (the 2^20-agent run: one, it is the acceptance
timing); exits 1 when the vectorized and the per-agent curves differ.

    python benchmarks/bench_agent_smith.py [--log2-agents 12] [--rounds 32] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from _timing import median_of

from icml24.agents import InfectionSimulation


def loop_run(sim: InfectionSimulation, rounds: int, rng: np.random.Generator) -> np.ndarray:
    """The same dynamics, one agent / one pair at a time, replaying the simulation's random draws."""
    ages = [int(a) for a in sim.initial_ages(rng)]
    carriers, current = [sum(a >= 0 for a in ages) / sim.num_agents], []
    for _ in range(rounds):
        draws = sim.draw_round(rng)
        start = [a >= 0 for a in ages]
        new = list(ages)
        sick = 0
        for i in range(len(draws["questioners"])):
            q, a = int(draws["questioners"][i]), int(draws["answerers"][i])
            if start[q] and draws["retrieve"][i]:  # V_adv is this chat's image: the official infection count
                sick += int(draws["jailbreak_q"][i]) + int(draws["jailbreak_a"][i])
            age = new[a] + 1 if new[a] >= 0 else -1  # the answerer's album receives one image
            if age >= sim.album_size:
                age = -1
            if start[q] and draws["retrieve"][i]:
                age = 0  # V_adv retrieved by the questioner enters the answerer's album
            new[a] = age
        for agent in range(sim.num_agents):
            if start[agent] and draws["purge"][agent]:
                new[agent] = -1
        ages = new
        carriers.append(sum(a >= 0 for a in ages) / sim.num_agents)
        current.append(sick / sim.num_agents)
    return np.concatenate([carriers, current])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log2-agents", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if args.repeats < 5:
        parser.error("--repeats must be >= 5 (the median of at least 5 runs)")
    sim = InfectionSimulation(2**args.log2_agents, alpha=0.76, beta=0.8, gamma=0.05, seed_ratio=1 / 256)

    def vectorized():
        sim.run(args.rounds, np.random.default_rng(0))
        return np.concatenate([sim.carriers_, sim.infected_])

    fast, t_fast = median_of(vectorized, repeats=args.repeats, clock=time.process_time)
    slow, t_slow = median_of(lambda: loop_run(sim, args.rounds, np.random.default_rng(0)), repeats=args.repeats,
                             clock=time.process_time)
    equal = bool(np.array_equal(fast, slow))
    print(f"(secondary) N=2^{args.log2_agents}, {args.rounds} rounds: vectorized {t_fast:.4f} s, per-agent loop "
          f"{t_slow:.3f} s (median CPU of {args.repeats}), ratio {t_slow / t_fast:.0f}x; curves equal: {equal} "
          f"(final carriers {fast[-1]:.4f})")
    if not equal:
        print("FAIL: the vectorized and the per-agent curves differ", file=sys.stderr)
    big = InfectionSimulation(2**20, alpha=1.0, beta=1.0, gamma=0.0, seed_ratio=1 / 1024)
    start, cpu = time.perf_counter(), time.process_time()
    big.run(32, np.random.default_rng(0))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"N=2^20, 32 rounds: {wall:.2f} s wall, {cpu:.2f} s CPU (acceptance: < 60 s; cumulative infected "
          f"{big.cumulative_[-1]:.4f})")
    fixture = Path(__file__).resolve().parents[1] / "tests" / "parity" / "agent-smith.json"
    if fixture.exists():
        recorded = json.loads(fixture.read_text())
        case = recorded["cases"][0]
        n, r = case["inputs"]["num_agents"], case["inputs"]["rounds"]
        official = case["official_seconds"] / (n * r)
        ours = cpu / (2**20 * 32)
        where = f"{recorded['recorded']['machine']}, {recorded['recorded']['date']}"
        print(f"per agent-round: ours {ours * 1e9:.0f} ns CPU vs the official round loop with stand-in models "
              f"{official * 1e6:.1f} us CPU recorded on {where} (N={n}, {r} rounds): ratio {official / ours:.0f}x")
    return 0 if equal else 1


if __name__ == "__main__":
    sys.exit(main())
