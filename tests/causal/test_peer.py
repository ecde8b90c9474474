"""The causal-learn peer: our GES on causal-learn's local score gives causal-learn's own GES output."""

import numpy as np
import pytest

from icml24.causal import GES, CausalLearnScore, causallearn_ges

pytest.importorskip("causallearn")


def test_same_score_same_search_same_cpdag():
    rng = np.random.default_rng(0)
    a = rng.standard_normal(60)
    b = np.tanh(a) + 0.3 * rng.standard_normal(60)
    c = b**2 + 0.3 * rng.standard_normal(60)
    data = np.column_stack([a, b, c])
    theirs, seconds = causallearn_ges(data, "marginal")
    ours = GES(CausalLearnScore("marginal").fit(data)).fit().cpdag_
    assert seconds > 0 and (ours == theirs).all()


def test_bad_score_names():
    with pytest.raises(ValueError, match="score must be"):
        causallearn_ges(np.zeros((5, 2)), "bic")
    with pytest.raises(ValueError, match="one column per variable"):
        CausalLearnScore().fit(np.zeros((5, 3)), groups=[[0, 1], [2]])
    with pytest.raises(ValueError, match="score must be"):
        CausalLearnScore("bic").fit(np.random.default_rng(0).standard_normal((5, 2)))
