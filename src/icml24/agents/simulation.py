"""Vectorized infectious-jailbreak simulation (Gu et al., "Agent Smith", ICML 2024, Sec. 3.1-3.3 and App. B).

N agents chat in randomized pairs every round. Each agent holds a FIFO image album of ``album_size`` slots; the
only album content that matters is the adversarial image V_adv, so an agent's state is the *age* of its newest
copy of V_adv (0 = just pushed, -1 = absent). One round (paper, Sec. 3.2 and Alg. 1):

1. a uniformly random perfect matching splits the agents into N/2 (questioner, answerer) pairs;
2. a questioner that carries V_adv at the start of the round retrieves it with probability beta (Eq. 2);
3. the retrieved image is pushed into the ANSWERER's album (FIFO: every answerer's album receives one image, so
   every copy of V_adv in an answerer's album ages by one and is evicted at age ``album_size``);
4. a defence purges V_adv from each start-of-round carrier with probability gamma (Eq. 3); only start-of-round
   carriers can recover, so new carriers never recover in the round they are infected (Eq. 5);
5. a carrier shows the symptom (a harmful output) with probability alpha (Eq. 1), so p_t ~ alpha c_t (Eq. 4).

The text history (``history_size``) does not change who carries the virus; it is kept as a recorded setting.
"""

from __future__ import annotations

import numpy as np

from .._validation import FittedAttributes, check_finite, check_positive


def random_matching(rng: np.random.Generator, num_agents: int) -> tuple[np.ndarray, np.ndarray]:
    """A uniformly random perfect matching as (questioners, answerers), each of length N/2 (a permutation split)."""
    perm = rng.permutation(num_agents)
    half = num_agents // 2
    return perm[:half], perm[half:]


def _check_rate(name: str, value: float) -> float:
    check_positive(name, value, allow_zero=True)
    if value > 1:
        raise ValueError(f"{name} is a probability and must be <= 1, got {value}")
    return float(value)


class InfectionSimulation(FittedAttributes):
    """Randomized pair-wise chat of ``num_agents`` agents with one adversarial image (Eq. 5 dynamics).

    ``seed_ratio`` is c_0: ``max(1, round(seed_ratio * N))`` agents start with V_adv in their album (App. E.1 puts
    it into 1024 of 2^20 albums). After ``run``: ``carriers_``, ``infected_`` (current) and ``cumulative_``
    (ever infected) ratios, each of length rounds + 1 (index t = start of round t), and ``ages_`` (final state).
    """

    _fit_call = "run(rounds, rng)"

    def __init__(self, num_agents: int, album_size: int = 10, history_size: int = 3, alpha: float = 1.0,
                 beta: float = 1.0, gamma: float = 0.0, seed_ratio: float = 1 / 1024):
        if int(num_agents) < 2 or int(num_agents) % 2:
            raise ValueError(f"num_agents must be an even number >= 2 (pairs), got {num_agents}")
        if int(album_size) < 1 or int(history_size) < 0:
            raise ValueError(f"album_size must be >= 1 and history_size >= 0, got {album_size}, {history_size}")
        self.num_agents = int(num_agents)
        self.album_size = int(album_size)
        self.history_size = int(history_size)
        self.alpha = _check_rate("alpha", alpha)
        self.beta = _check_rate("beta", beta)
        self.gamma = _check_rate("gamma", gamma)
        self.seed_ratio = _check_rate("seed_ratio", seed_ratio)

    @property
    def num_seeded(self) -> int:
        """Agents that start with V_adv: c_0 N, at least one."""
        return max(1, int(round(self.seed_ratio * self.num_agents)))

    def initial_ages(self, rng: np.random.Generator) -> np.ndarray:
        """The starting state: V_adv (age 0) in ``num_seeded`` random albums, absent (-1) elsewhere."""
        ages = np.full(self.num_agents, -1, dtype=np.int16)
        ages[rng.permutation(self.num_agents)[: self.num_seeded]] = 0
        return ages

    def draw_round(self, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Every random number one round uses, in a fixed order (a per-agent loop can replay them exactly)."""
        questioners, answerers = random_matching(rng, self.num_agents)
        return {"questioners": questioners, "answerers": answerers,
                "retrieve": rng.random(questioners.size) < self.beta,  # Eq. 2
                "purge": rng.random(self.num_agents) < self.gamma,  # Eq. 3
                "symptom": rng.random(self.num_agents) < self.alpha}  # Eq. 1

    def step(self, ages: np.ndarray, draws: dict[str, np.ndarray]) -> np.ndarray:
        """One chat round on the state ``ages`` (a new array is returned); ``draws`` from ``draw_round``."""
        q, a = draws["questioners"], draws["answerers"]
        start = ages >= 0
        new = ages.copy()
        aged = new[a]  # every answerer's album receives one image: FIFO ageing and eviction
        aged = np.where(aged >= 0, aged + 1, aged)
        aged[aged >= self.album_size] = -1
        transmit = start[q] & draws["retrieve"]  # the virus goes Q -> A, from start-of-round carriers only
        aged[transmit] = 0
        new[a] = aged
        new[start & draws["purge"]] = -1  # Eq. 5: recovery of start-of-round carriers only
        return new

    def run(self, rounds: int, rng: np.random.Generator) -> InfectionSimulation:
        """Simulate ``rounds`` chat rounds; fills ``carriers_``, ``infected_``, ``cumulative_`` and ``ages_``."""
        if int(rounds) < 0:
            raise ValueError(f"rounds must be >= 0, got {rounds}")
        ages = self.initial_ages(rng)
        ever = np.zeros(self.num_agents, dtype=bool)
        carriers, infected, cumulative = [], [], []
        symptom = rng.random(self.num_agents) < self.alpha
        for t in range(int(rounds) + 1):
            if t:
                draws = self.draw_round(rng)
                ages = self.step(ages, draws)
                symptom = draws["symptom"]
            carry = ages >= 0
            sick = carry & symptom  # Eq. 4: p_t = alpha c_t in expectation
            ever |= sick
            carriers.append(carry.mean())
            infected.append(sick.mean())
            cumulative.append(ever.mean())
        self.carriers_ = np.asarray(carriers)
        self.infected_ = np.asarray(infected)
        self.cumulative_ = np.asarray(cumulative)
        self.ages_ = ages
        return self


def first_round_reaching(curve: np.ndarray, level: float) -> int:
    """The first index t with ``curve[t] >= level``, or ``len(curve)`` when the curve never gets there."""
    curve = np.asarray(check_finite("curve", curve), dtype=float)
    hits = np.flatnonzero(curve >= level)
    return int(hits[0]) if hits.size else int(curve.size)


def sequential_jailbreak(num_agents: int, rounds: int, per_round: int = 1, seeded: int = 1) -> np.ndarray:
    """Baseline (Fig. 3, left): the adversary jailbreaks ``per_round`` new agents each round and nobody passes the
    virus on, so the infected ratio grows linearly: p_t = min(1, (seeded + per_round t) / N)."""
    if int(num_agents) < 1 or int(per_round) < 1 or int(rounds) < 0:
        raise ValueError("num_agents and per_round must be >= 1 and rounds >= 0")
    t = np.arange(int(rounds) + 1)
    return np.minimum(1.0, (int(seeded) + int(per_round) * t) / int(num_agents))


def sequential_rounds_to(num_agents: int, level: float, per_round: int = 1, seeded: int = 1) -> int:
    """Rounds the sequential jailbreak needs to reach the infected ratio ``level`` (no loop over rounds)."""
    need = int(np.ceil(level * num_agents - 1e-9)) - int(seeded)
    return max(0, int(np.ceil(need / int(per_round))))
