"""Vectorized infectious-jailbreak simulation (Gu et al., "Agent Smith", ICML 2024, Sec. 3.1-3.3 and App. B).

N agents chat in randomized pairs every round. Each agent holds a FIFO image album of ``album_size`` slots; the
only album content that matters is the adversarial image V_adv, so an agent's state is the *age* of its newest
copy of V_adv (0 = just pushed, -1 = absent). One round t (paper, Sec. 3.2 and Alg. 1):

1. a uniformly random perfect matching splits the agents into N/2 (questioner, answerer) pairs;
2. a questioner that carries V_adv at the start of the round retrieves it with probability beta (Eq. 2);
3. the chat's image is pushed into the ANSWERER's album (FIFO: every answerer's album receives one image, so
   every copy of V_adv in an answerer's album ages by one and is evicted at age ``album_size``);
4. a defence purges V_adv from each start-of-round carrier with probability gamma (Eq. 3); only start-of-round
   carriers can recover, so new carriers never recover in the round they are infected (Eq. 5).

Who is *infected* in round t has two definitions (``definition``):

- ``"official"`` (the official code, ``simulation_test_batch.py`` + ``Analyze.ipynb``): an agent is infected in
  round t when its output in that round's chat is the target, which needs V_adv to be the chat's image, i.e.
  retrieved by the chat's questioner. The questioner is infected with probability jailbreak_Q, the answerer with
  jailbreak_A, both given the retrieval; an answerer can be infected in the round it receives V_adv. The rates of
  App. E.4 are then alpha = retrieval x jailbreak, so alpha <= beta, and E[p_t] = alpha c_t (Eq. 4).
- ``"bernoulli"`` (the theory, Eq. 1 and 4): every start-of-round carrier shows the symptom with an independent
  probability alpha, whatever its chat; any alpha in [0, 1].

Curves: ``carriers_[t]`` is c_t at the start of round t (t = 0..rounds, the last one after the final round);
``infected_[t]`` and ``cumulative_[t]`` are the current and cumulative infection ratios of round t's chats
(t = 0..rounds-1), indexed as the official notebook indexes them (round 0 is the first chat).

The text history (``history_size``) does not change who carries the virus; it is kept as a recorded setting.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .._estimator import Simulator
from .._progress import Progress, tracked
from .._random import RandomState, check_random_state
from .._validation import FittedAttributes, check_finite, check_positive

DEFINITIONS = ("official", "bernoulli")


def random_matching(num_agents: int, random_state: RandomState = None) -> tuple[np.ndarray, np.ndarray]:
    """A uniformly random perfect matching as (questioners, answerers), each of length N/2 (a permutation split).

    Pair-wise chat needs an even N: an odd N would leave one agent out of every round, so it is refused.
    ``random_state``: None, an int or a numpy Generator (used as is, so it advances)."""
    if isinstance(num_agents, bool) or int(num_agents) != num_agents or num_agents < 2 or int(num_agents) % 2:
        raise ValueError(f"num_agents must be an even integer >= 2 (every agent chats in a pair), got {num_agents!r}")
    perm = check_random_state(random_state).permutation(int(num_agents))
    half = int(num_agents) // 2
    return perm[:half], perm[half:]


def _check_rate(name: str, value: float) -> float:
    check_positive(name, value, allow_zero=True)
    if value > 1:
        raise ValueError(f"{name} is a probability and must be <= 1, got {value}")
    return float(value)


class InfectionSimulation(FittedAttributes, Simulator):
    """Randomized pair-wise chat of ``num_agents`` agents with one adversarial image (Eq. 5 dynamics).

    ``seed_ratio`` is c_0: ``max(1, round(seed_ratio * N))`` agents start with V_adv in their album (App. E.1 puts
    it into 1024 of 2^20 albums). ``alpha`` is the infection rate of a carrier's chat (Eq. 1): under the official
    definition retrieval x jailbreak, so it must not exceed ``beta``; the jailbreak rate given retrieval is
    alpha / beta; ``alpha=None`` means alpha = beta (official) or 1 (bernoulli). After ``run``: ``carriers_``
    (rounds + 1), ``infected_`` and ``cumulative_`` (rounds each), ``ages_`` (the final state) and ``rates_``
    (App. E.4's beta_t, alpha^Q_t, alpha^A_t per round); see the module docstring for the indexing.

    ``__init__`` stores the parameters as given (scikit-learn's contract: ``clone``, ``get_params``); ``run`` and
    every public step (``initial_ages``, ``draw_round``, ``simulate``) check them first.
    """

    _fit_call = "run(rounds, random_state)"

    def __init__(self, num_agents: int, album_size: int = 10, history_size: int = 3, alpha: float | None = None,
                 beta: float = 1.0, gamma: float = 0.0, seed_ratio: float = 1 / 1024, definition: str = "official"):
        self.num_agents = num_agents
        self.album_size = album_size
        self.history_size = history_size
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma
        self.seed_ratio = seed_ratio
        self.definition = definition

    def _check_params(self) -> None:
        num_agents, album_size, history_size = self.num_agents, self.album_size, self.history_size
        if isinstance(num_agents, bool) or int(num_agents) != num_agents or num_agents < 2 or int(num_agents) % 2:
            raise ValueError(f"num_agents must be an even integer >= 2 (pairs), got {num_agents!r}")
        if int(album_size) != album_size or int(album_size) < 1 or int(history_size) < 0:
            raise ValueError(f"album_size must be an integer >= 1 and history_size >= 0, got {album_size}, "
                             f"{history_size}")
        if self.definition not in DEFINITIONS:
            raise ValueError(f"definition must be one of {', '.join(DEFINITIONS)}, got {self.definition!r}")
        for name in ("beta", "gamma", "seed_ratio") + (("alpha",) if self.alpha is not None else ()):
            _check_rate(name, getattr(self, name))
        if self.definition == "official" and self._alpha > self.beta:
            raise ValueError(f"under the official definition alpha = retrieval x jailbreak (App. E.4) cannot exceed "
                             f"beta (the retrieval rate): got alpha={self.alpha} > beta={self.beta}; lower alpha or "
                             f"pass definition='bernoulli' (the theory's independent symptom draw)")

    @property
    def _alpha(self) -> float:
        """alpha with None resolved: every retrieval jailbreaks (official), a certain symptom (bernoulli)."""
        if self.alpha is None:
            return float(self.beta) if self.definition == "official" else 1.0
        return float(self.alpha)

    @property
    def num_seeded(self) -> int:
        """Agents that start with V_adv: c_0 N, at least one."""
        return max(1, int(round(self.seed_ratio * self.num_agents)))

    @property
    def jailbreak(self) -> float:
        """Jailbreak rate of a chat given V_adv was retrieved (official definition): alpha / beta."""
        return self._alpha / self.beta if self.beta > 0 else 0.0

    def initial_ages(self, random_state: RandomState = None) -> np.ndarray:
        """The starting state: V_adv (age 0) in ``num_seeded`` random albums, absent (-1) elsewhere."""
        self._check_params()
        ages = np.full(int(self.num_agents), -1, dtype=np.int16)
        ages[check_random_state(random_state).permutation(int(self.num_agents))[: self.num_seeded]] = 0
        return ages

    def draw_round(self, random_state: RandomState = None) -> dict[str, np.ndarray]:
        """Every random number one round uses, in a fixed order (a per-agent loop can replay them exactly); a numpy
        Generator ``random_state`` is advanced, so successive calls draw successive rounds."""
        self._check_params()
        num_agents, rng = int(self.num_agents), check_random_state(random_state)
        questioners, answerers = random_matching(num_agents, rng)
        half = questioners.size
        draws = {"questioners": questioners, "answerers": answerers,
                 "retrieve": rng.random(half) < self.beta,  # Eq. 2
                 "purge": rng.random(num_agents) < self.gamma}  # Eq. 3
        if self.definition == "official":
            draws["jailbreak_q"] = rng.random(half) < self.jailbreak  # the question is the target
            draws["jailbreak_a"] = rng.random(half) < self.jailbreak  # the answer is the target
        else:
            draws["symptom"] = rng.random(num_agents) < self._alpha  # Eq. 1
        return draws

    def infected_in_round(self, ages: np.ndarray, draws: dict[str, np.ndarray]) -> np.ndarray:
        """Who is infected in the round that starts in state ``ages`` (a boolean mask over agents)."""
        start = ages >= 0
        if self.definition == "bernoulli":
            return start & draws["symptom"]  # Eq. 4: p_t = alpha c_t in expectation
        q, a = draws["questioners"], draws["answerers"]
        retrieved = start[q] & draws["retrieve"]  # V_adv is this chat's image
        sick = np.zeros(int(self.num_agents), dtype=bool)
        sick[q] = retrieved & draws["jailbreak_q"]
        sick[a] = retrieved & draws["jailbreak_a"]
        return sick

    @staticmethod
    def chat_rates(ages: np.ndarray, draws: dict[str, np.ndarray], sick: np.ndarray) -> dict[str, float]:
        """App. E.4's per-round rates over the chats whose questioner carries V_adv at the start of the round:
        beta_t (retrieval), alpha^Q_t and alpha^A_t (the questioner's / answerer's output is the target); NaN when
        no questioner carries it."""
        q, a = draws["questioners"], draws["answerers"]
        carrier_q = ages[q] >= 0
        if not carrier_q.any():
            return {"beta_t": np.nan, "alpha_q_t": np.nan, "alpha_a_t": np.nan}
        return {"beta_t": float(draws["retrieve"][carrier_q].mean()), "alpha_q_t": float(sick[q][carrier_q].mean()),
                "alpha_a_t": float(sick[a][carrier_q].mean())}

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

    def simulate(self, ages: np.ndarray, rounds: Iterable[dict[str, np.ndarray]]) -> InfectionSimulation:
        """Play the rounds ``rounds`` (draws as ``draw_round`` makes them, e.g. replayed from a recorded run) from
        the state ``ages``; fills ``carriers_``, ``infected_``, ``cumulative_`` and ``ages_``."""
        self._check_params()
        ages = np.asarray(ages, dtype=np.int16)
        if ages.shape != (int(self.num_agents),) or ages.min() < -1 or ages.max() >= self.album_size:
            raise ValueError(f"ages must be {self.num_agents} album ages in [-1, {self.album_size - 1}]")
        ever = np.zeros(int(self.num_agents), dtype=bool)
        carriers, infected, cumulative = [(ages >= 0).mean()], [], []
        rates: dict[str, list[float]] = {"beta_t": [], "alpha_q_t": [], "alpha_a_t": []}
        for draws in rounds:
            sick = self.infected_in_round(ages, draws)
            for key, value in self.chat_rates(ages, draws, sick).items():
                rates[key].append(value)
            ever |= sick
            infected.append(sick.mean())
            cumulative.append(ever.mean())
            ages = self.step(ages, draws)
            carriers.append((ages >= 0).mean())
        self.carriers_ = np.asarray(carriers)
        self.infected_ = np.asarray(infected)
        self.cumulative_ = np.asarray(cumulative)
        self.rates_ = {key: np.asarray(value, dtype=float) for key, value in rates.items()}
        self.ages_ = ages
        return self

    def run(self, rounds: int, random_state: RandomState = None,
            progress: Progress | None = None) -> InfectionSimulation:
        """Simulate ``rounds`` chat rounds from ``initial_ages``; fills the curves (see ``simulate``).

        ``random_state`` (None, an int or a numpy Generator) draws the seeded albums, then every round in turn;
        ``progress(done, total)`` (``icml24._progress``) is called after each round."""
        self._check_params()
        if isinstance(rounds, bool) or int(rounds) != rounds or rounds < 0:
            raise ValueError(f"rounds must be an integer >= 0, got {rounds!r}")
        rng = check_random_state(random_state)
        ages = self.initial_ages(rng)
        draws = (self.draw_round(rng) for _ in range(int(rounds)))
        return self.simulate(ages, tracked(draws, progress, total=int(rounds)))


def first_round_reaching(curve: np.ndarray, level: float) -> int:
    """The first index t with ``curve[t] >= level``, or ``len(curve)`` when the curve never gets there."""
    curve = np.asarray(check_finite("curve", curve), dtype=float)
    check_finite("level", level)
    hits = np.flatnonzero(curve >= level)
    return int(hits[0]) if hits.size else int(curve.size)


def sequential_jailbreak(num_agents: int, rounds: int, per_round: int = 1, seeded: int = 1) -> np.ndarray:
    """Baseline (Fig. 3, left): the adversary jailbreaks ``per_round`` new agents each round and nobody passes the
    virus on, so the infected ratio grows linearly: p_t = min(1, (seeded + per_round t) / N)."""
    if int(num_agents) < 1 or int(per_round) < 1 or int(rounds) < 0 or int(seeded) < 0:
        raise ValueError("num_agents and per_round must be >= 1, rounds and seeded >= 0")
    t = np.arange(int(rounds) + 1)
    return np.minimum(1.0, (int(seeded) + int(per_round) * t) / int(num_agents))


def sequential_rounds_to(num_agents: int, level: float, per_round: int = 1, seeded: int = 1) -> int:
    """Rounds the sequential jailbreak needs to reach the infected ratio ``level`` (no loop over rounds)."""
    check_finite("level", level)
    if not 0 <= level <= 1 or int(num_agents) < 1 or int(per_round) < 1:
        raise ValueError(f"level must lie in [0, 1] and num_agents, per_round >= 1, got {level}")
    need = int(np.ceil(level * num_agents - 1e-9)) - int(seeded)
    return max(0, int(np.ceil(need / int(per_round))))


def rate_grid(num_agents: int, betas, jailbreaks, rounds: int, rng_for, seed_ratio: float = 1 / 1024,
              level: float = 0.999, round_index: int = 22) -> dict[str, np.ndarray]:
    """Sensitivity to the rates (official definition): for every retrieval rate beta and jailbreak rate given
    retrieval (alpha = beta x jailbreak <= beta, App. E.4), the current ratio at ``round_index`` and the first round
    the cumulative ratio reaches ``level``; grids of shape (len(betas), len(jailbreaks)). ``rng_for(beta, jailbreak)``
    gives each cell's generator."""
    grids = {"current": np.zeros((len(betas), len(jailbreaks))), "rounds_to_level": np.zeros((len(betas),
                                                                                              len(jailbreaks)))}
    for i, beta in enumerate(betas):
        for j, jailbreak in enumerate(jailbreaks):
            _check_rate("jailbreak", jailbreak)
            sim = InfectionSimulation(num_agents, alpha=beta * jailbreak, beta=beta, seed_ratio=seed_ratio)
            sim.run(rounds, rng_for(beta, jailbreak))
            grids["current"][i, j] = sim.infected_[min(round_index, rounds - 1)]
            grids["rounds_to_level"][i, j] = first_round_reaching(sim.cumulative_, level)
    return grids
