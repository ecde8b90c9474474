"""The failure-landscape reward and the official DQN as it runs (tests/parity/failure-landscape.json, recorded by
tools/parity/record_failure_landscape.py from somsagar07/FailureShiftRL under stable-baselines3 2.2.1).

* our ``failure_reward`` equals the official ``get_reward`` on fixed logits and labels, each entry to the tolerance
  float32's conditioning there allows (the official score is a float32 probability; ours is computed from the logits
  in float64): derived in the fixture's ``tolerance_derivation``, never from a gap seen on one machine. The same
  tolerances still tell a planted bug (the guard dropped, the factor 10 changed, p used for the log-odds);
* ``DQNExplorer.official`` builds, under the installed stable-baselines3, the agent the official script built under
  2.2.1: the same settings, no gradient update, epsilon 0.6 after training, and the same training queries;
* every saved official agent records stable-baselines3 2.2.1, learning_starts 50,000 and 0 gradient updates.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from parity_fixture import assert_close, case, load_fixture

from icml24.rl.failures import OFFICIAL_SB3_2_2_1, DQNExplorer, FailureEnv, digit_concepts, failure_reward

FIXTURE = load_fixture("failure-landscape")


def _reward_case():
    entry = case(FIXTURE, "reward")
    logits = np.array(entry["inputs"]["logits"], dtype=np.float32)
    return entry, logits, np.array(entry["inputs"]["labels"]), np.array(entry["values"])


def test_reward_equals_the_official_get_reward():
    entry, logits, labels, official = _reward_case()
    reward, failure, _ = failure_reward(torch.from_numpy(logits), labels)
    assert reward.dtype == torch.float64
    assert_close(reward, official, entry["tolerance"], "reward")
    assert ((official == -1.0) == ~failure.numpy()).all() and failure.any() and (~failure).any()
    assert official.max() > 160  # p so near 1 that the float32 score is 1.0: the reward is the 1e-7 guard's


def _mutant_rewards(logits: np.ndarray) -> dict[str, np.ndarray]:
    """The reward of ``failure_reward`` with one planted bug each, from the same float64 log-sum-exp."""
    z = logits.astype(np.float64)
    log_total = np.log(np.exp(z - z.max(1, keepdims=True)).sum(1)) + z.max(1)
    log_p = z.max(1) - log_total
    rest = np.exp(z - log_total[:, None])
    rest[np.arange(len(z)), z.argmax(1)] = 0.0
    q = rest.sum(1)
    return {"guard dropped": 10 * np.abs(log_p - np.log(q)), "factor 9": 9 * np.abs(log_p - np.log(q + 1e-7)),
            "factor 11": 11 * np.abs(log_p - np.log(q + 1e-7)), "p as the log-odds": 10 * np.abs(np.exp(log_p)),
            "log p as the log-odds": 10 * np.abs(log_p), "guard 1e-6": 10 * np.abs(log_p - np.log(q + 1e-6))}


@pytest.mark.parametrize("bug", ["guard dropped", "factor 9", "factor 11", "p as the log-odds",
                                 "log p as the log-odds", "guard 1e-6"])
def test_the_per_entry_tolerance_still_tells_a_planted_bug(bug):
    entry, logits, labels, official = _reward_case()
    failure = official != -1.0
    mutant = np.where(failure, _mutant_rewards(logits)[bug], -1.0)
    with pytest.raises(AssertionError, match="beyond their tolerance"):
        assert_close(mutant, official, entry["tolerance"], bug)


@pytest.fixture(scope="module")
def environment():
    from icml24.data import digits
    from icml24.rl.failures import train_classifier

    x, y, shape = digits()  # the recipe in the fixture's inputs.environment
    x = x.reshape(-1, *shape)
    order = np.random.default_rng(0).permutation(len(x))
    model = train_classifier(x[order[:800]], y[order[:800]], epochs=15, random_state=0)
    return FailureEnv(model, x[order[800:1000]], y[order[800:1000]], digit_concepts(), precompute=True)


def test_the_official_configuration_runs_as_under_sb3_2_2_1(environment):
    entry = case(FIXTURE, "dqn_settings")
    official = entry["values"]
    ours = DQNExplorer.official(total_timesteps=entry["inputs"]["steps"], random_state=entry["inputs"]["seed"])
    ours.fit(environment)
    agent = ours.model_
    linears = [m for m in agent.q_net.q_net if hasattr(m, "out_features")]
    got = {"learning_rate": agent.learning_rate, "learning_starts": agent.learning_starts,
           "train_freq": agent.train_freq.frequency, "batch_size": agent.batch_size, "buffer_size": agent.buffer_size,
           "gamma": agent.gamma, "tau": agent.tau, "gradient_steps": agent.gradient_steps,
           "target_update_interval": agent.target_update_interval, "exploration_fraction": agent.exploration_fraction,
           "exploration_initial_eps": agent.exploration_initial_eps,
           "exploration_final_eps": agent.exploration_final_eps, "max_grad_norm": agent.max_grad_norm,
           "net_arch": [m.out_features for m in linears[:-1]]}
    assert got == official["settings"]
    assert ours.n_updates_ == official["n_updates"] == 0  # learning_starts 50,000: the Q-network never trains
    assert agent.exploration_rate == pytest.approx(official["exploration_rate_after"])
    assert ours.training_.actions.tolist() == official["actions"]  # the same (uniformly random) training queries
    assert ours.training_.failures_per_query == pytest.approx(official["failures_per_query"])


def test_every_saved_official_agent_never_learned():
    agents = case(FIXTURE, "saved_agents")["values"]
    assert len(agents) >= 8
    for name, agent in agents.items():
        assert agent["sb3"] == [2, 2, 1], name
        assert agent["_n_updates"] == 0 and agent["learning_starts"] == OFFICIAL_SB3_2_2_1["learning_starts"], name
        assert agent["num_timesteps"] <= agent["learning_starts"], name
        for key in ("learning_rate", "batch_size", "exploration_initial_eps", "exploration_final_eps",
                    "exploration_fraction", "gamma", "target_update_interval"):
            assert agent[key] == OFFICIAL_SB3_2_2_1[key], (name, key)
