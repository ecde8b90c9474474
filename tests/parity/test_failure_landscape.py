"""The failure-landscape reward and the official DQN as it runs (tests/parity/failure-landscape.json, recorded by
tools/parity/record_failure_landscape.py from somsagar07/FailureShiftRL under stable-baselines3 2.2.1).

* our ``failure_reward`` equals the official ``get_reward`` on fixed logits and labels (to 1e-4 absolute + 1e-5
  relative: the official score is a float32 probability turned into a float64 log, ours stays float32);
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


def test_reward_equals_the_official_get_reward():
    entry = case(FIXTURE, "reward")
    logits = torch.tensor(entry["inputs"]["logits"], dtype=torch.float32)
    reward, failure, _ = failure_reward(logits, np.array(entry["inputs"]["labels"]))
    official = np.array(entry["values"])
    assert_close(reward.double(), official, entry["tolerance"], "reward", rtol=entry["rtol"])
    assert ((official == -1.0) == ~failure.numpy()).all() and failure.any() and (~failure).any()
    assert official.max() > 100  # confident failures, where the 1e-7 guard of the log-odds matters


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
