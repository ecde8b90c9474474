"""Mixed data as input: discrete masks, pandas categoricals, and clear errors for strings, complex and gaps."""

import numpy as np
import pandas as pd
import pytest

from icml24.causal import GES, LearnedKernelScore, MarginalKernelScore, generate
from icml24.causal.inputs import as_mixed
from icml24.causal.likelihood import DISCRETE_CHILD_WIDTH, WIDTH_BOUNDS


def _frame(n=50, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(n)
    level = pd.Categorical(np.where(a > 0.5, "high", np.where(a < -0.5, "low", "mid")),
                           categories=["low", "mid", "high"])
    return pd.DataFrame({"a": a, "level": level, "flag": a + rng.standard_normal(n) > 0,
                         "count": rng.poisson(np.exp(0.5 * a)).astype(int)})


def test_a_frame_with_categoricals_becomes_codes_and_a_discrete_mask():
    frame = _frame()
    matrix, mask = as_mixed(frame)
    assert matrix.dtype == float and matrix.shape == (50, 4)
    assert mask.tolist() == [False, True, True, False]  # categorical and boolean columns are discrete
    assert set(np.unique(matrix[:, 1])) <= {0.0, 1.0, 2.0}
    _, mask = as_mixed(frame, discrete=["count"])  # a user marks an integer column discrete by name
    assert mask.tolist() == [False, True, True, True]
    _, mask = as_mixed(as_mixed(frame)[0], discrete=[1, 3])  # a plain array: only what the user marks
    assert mask.tolist() == [False, True, False, True]
    _, mask = as_mixed(np.zeros((5, 3)), discrete=np.array([True, False, True]))
    assert mask.tolist() == [True, False, True]


def test_discrete_data_start_the_child_width_at_the_official_0_01_clamped():
    frame = _frame()
    continuous = LearnedKernelScore().fit(frame[["a", "count"]])
    mixed = LearnedKernelScore().fit(frame)
    assert not continuous.discrete_.any() and mixed.discrete_.any()
    _, init_c, _ = continuous.problem(0, [1])
    _, init_m, _ = mixed.problem(0, [1])
    assert init_m[1] == max(DISCRETE_CHILD_WIDTH, WIDTH_BOUNDS[0]) and init_c[1] > WIDTH_BOUNDS[0]
    assert np.isfinite(mixed.local_score(0, [1])) and np.isfinite(MarginalKernelScore(epochs=5).fit(frame).local_score(
        1, [0]))


@pytest.mark.parametrize("bad,match", [
    (pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "name": ["x", "y", "x", "z"]}), "column 'name' holds"),
    (pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "z": [1j, 2j, 1, 0]}), "column 'z' is complex"),
    (pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "c": pd.Categorical(["u", None, "u", "v"])}), "column 'c' has missing"),
    (np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]) * 1j, "complex"),
    (np.array([["1.0", "a"], ["2", "b"], ["3", "c"]], dtype=object), "data column 1 holds non-numeric"),
])
def test_strings_complex_and_gaps_are_refused_naming_the_column(bad, match):
    with pytest.raises(ValueError, match=match):
        LearnedKernelScore().fit(bad)


def test_bad_discrete_masks_are_refused():
    with pytest.raises(ValueError, match="one entry per data column"):
        as_mixed(np.zeros((4, 3)), discrete=np.array([True, False]))
    with pytest.raises(ValueError, match="neither a column index"):
        as_mixed(np.zeros((4, 3)), discrete=[5])
    with pytest.raises(ValueError, match="neither a column index"):
        as_mixed(_frame(), discrete=["nope"])


def test_the_mixed_generator_marks_its_binned_columns_and_ges_runs_on_them():
    data = generate(4, 60, 0.7, variant="mixed", random_state=np.random.default_rng(1))
    assert data.discrete.sum() == 2
    assert all(len(np.unique(c)) <= 20 for c in data.data[:, data.discrete].T)
    score = LearnedKernelScore(max_iter=5, max_fun=5).fit(data.data, data.groups, discrete=data.discrete)
    search = GES(score).fit()
    assert search.cpdag_.shape == (4, 4)
