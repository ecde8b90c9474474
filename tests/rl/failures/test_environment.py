import math

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from icml24.rl.failures import FailureEnv, exhaustive_failure_rates, failure_reward


@pytest.mark.parametrize("mode", ["macro", "micro"])
def test_passes_gymnasiums_env_checker(nut, mode):
    model, _, _, x, y, grid = nut
    check_env(FailureEnv(model, x, y, grid, mode=mode), skip_render_check=True)
    if mode == "macro":
        check_env(FailureEnv(model, x[:20], y[:20], grid, precompute=True), skip_render_check=True)


def test_macro_step_pays_the_paper_reward_and_ends_the_episode(nut):
    model, _, _, x, y, grid = nut
    env = FailureEnv(model, x, y, grid)
    truth = exhaustive_failure_rates(model, x, y, grid)
    action = int(np.argmax(truth.rates))
    seen = {True: 0, False: 0}
    for i in range(len(y)):
        env.reset(options={"index": i})
        _, reward, terminated, truncated, info = env.step(action)
        assert terminated and not truncated and info["failure"] == truth.failures[action, i]
        seen[info["failure"]] += 1
        if info["failure"]:
            p = float(model(grid.perturb_actions(env.images[i:i + 1], [action])).detach().softmax(-1).max())
            assert math.isclose(reward, 10 * abs(math.log(p / (1 - p + 1e-7))), rel_tol=1e-4)
        else:
            assert reward == -1.0
    assert seen[True] and seen[False]


def test_precomputed_table_gives_the_same_outcomes_as_stepping(nut):
    model, _, _, x, y, grid = nut
    live, table = FailureEnv(model, x[:30], y[:30], grid), FailureEnv(model, x[:30], y[:30], grid, precompute=True)
    rng = np.random.default_rng(1)
    for _ in range(60):
        i, a = int(rng.integers(30)), int(rng.integers(125))
        live.reset(options={"index": i})
        table.reset(options={"index": i})
        o1, r1, *_ , f1 = live.step(a)
        o2, r2, *_ , f2 = table.step(a)
        assert f1["failure"] == f2["failure"] and math.isclose(r1, r2, rel_tol=1e-4, abs_tol=1e-4)
        np.testing.assert_allclose(o1, o2, atol=1e-5)
    assert (live.query_log()[1] == table.query_log()[1]).all()


def test_micro_mode_accumulates_factors_penalizes_steps_and_truncates(nut):
    model, _, _, x, y, grid = nut
    env = FailureEnv(model, x, y, grid, mode="micro", alpha=5.0, max_steps=40)
    blur = grid.names.index("blur")
    failed = 0
    for i in range(10):
        env.reset(options={"index": i})
        steps, terminated, truncated = 0, False, False
        while not (terminated or truncated):
            obs, reward, terminated, truncated, info = env.step(blur)
            steps += 1
            assert math.isclose(info["factors"][blur], 0.1 * steps, rel_tol=1e-5)
            if not terminated:
                assert reward == -1.0
        if terminated:
            failed += 1
            clean_image = env.images[i:i + 1]
            logits = model(grid.perturb(clean_image, info["factors"][None])).detach()
            r, f, _ = failure_reward(logits, y[i:i + 1])
            assert bool(f[0]) and math.isclose(reward, float(r[0]) - 5.0 * steps, rel_tol=1e-4, abs_tol=1e-4)
        else:
            assert steps == 40
    assert failed >= 5  # a sigma of up to 4 pixels breaks an 8x8 digit


def test_bad_construction_and_actions_say_what_to_fix(nut):
    model, _, _, x, y, grid = nut
    with pytest.raises(ValueError, match="mode must be one of"):
        FailureEnv(model, x, y, grid, mode="meso")
    with pytest.raises(ValueError, match="divide by 16"):
        FailureEnv(model, x * 16, y, grid)
    bad = x.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="images contains NaN"):
        FailureEnv(model, bad, y, grid)
    env = FailureEnv(model, x, y, grid)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="outside"):
        env.step(125)
