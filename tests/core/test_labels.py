"""Labelled metrics: keys round-trip typed labels, select filters and orders, plain and _std keys stay out."""

import numpy as np
import pytest

from icml24.core import labelled, select
from icml24.core.labels import parse
from icml24.core.store import RunRecord
from icml24.core.verdicts import aggregate


def test_key_is_canonical_and_sorted():
    assert labelled("regret", policy="eoo", d=2, eps=0.1) == "regret[d=2,eps=0.1,policy=eoo]"
    assert labelled("regret", d=2, eps=0.1) == labelled("regret", eps=0.1, d=2)


@pytest.mark.parametrize("value", [0, -3, 2, 10**12, 0.1, 2.0, -0.5, 1e-05, 1e20, 3.141592653589793, True, False,
                                   "eoo", "a-b_c.d", "x1", "1x", "lambda:0.5", "+"])
def test_round_trip_keeps_value_and_type(value):
    name, labels = parse(labelled("m", v=value))
    assert name == "m"
    assert labels == {"v": value} and type(labels["v"]) is type(value)


def test_numpy_scalars_are_written_as_python_numbers():
    key = labelled("m", n=np.int64(3), x=np.float32(0.5), b=np.bool_(True))
    assert key == "m[b=True,n=3,x=0.5]"
    assert select({key: 1.0}, "m") == [({"b": True, "n": 3, "x": 0.5}, 1.0)]
    assert type(select({key: 1.0}, "m")[0][0]["n"]) is int


def test_int_and_float_stay_apart():
    assert labelled("m", d=2) != labelled("m", d=2.0)
    ((labels, _),) = select({labelled("m", d=2.0): 1.0}, "m")
    assert isinstance(labels["d"], float)


def test_select_filters_and_orders_deterministically():
    metrics = {}
    for policy in ("eoo", "greedy"):
        for d in (10, 2):
            for eps in (0.5, 0.1):
                metrics[labelled("regret", d=d, eps=eps, policy=policy)] = d * eps + (policy == "eoo")
    rows = select(metrics, "regret", policy="eoo")
    assert [(r["d"], r["eps"]) for r, _ in rows] == [(2, 0.1), (2, 0.5), (10, 0.1), (10, 0.5)]
    assert all(r["policy"] == "eoo" for r, _ in rows)
    assert [v for _, v in rows] == [1.2, 2.0, 2.0, 6.0]
    assert select(metrics, "regret", d=10, eps=0.5, policy="greedy") == [
        ({"d": 10, "eps": 0.5, "policy": "greedy"}, 5.0)]
    assert select(metrics, "regret", d=10.0, eps=0.5, policy="greedy")[0][1] == 5.0  # numbers compare by value
    assert select(metrics, "regret", policy="other") == []
    assert select(metrics, "regret", missing=1) == []
    assert len(select(metrics, "regret")) == 8
    shuffled = dict(reversed(list(metrics.items())))
    assert select(shuffled, "regret") == select(metrics, "regret")


def test_strings_and_numbers_do_not_match_each_other():
    metrics = {labelled("m", k=1): 1.0, labelled("m", k="a1"): 2.0, labelled("m", k=True): 3.0}
    assert select(metrics, "m", k=1) == [({"k": 1}, 1.0)]
    assert select(metrics, "m", k=True) == [({"k": True}, 3.0)]
    assert select(metrics, "m", k="a1") == [({"k": "a1"}, 2.0)]


def test_plain_std_and_other_names_are_not_confused():
    key = labelled("acc", rate=0.5)
    metrics = {key: 0.8, key + "_std": 0.01, "acc": 0.7, "acc_std": 0.02, "acc_rate": 0.5, "num_seeds": 3.0,
               labelled("acc_gap", rate=0.5): 0.1, labelled("accuracy", rate=0.5): 0.2}
    assert select(metrics, "acc") == [({"rate": 0.5}, 0.8)]
    assert parse(key + "_std") is None and parse("acc") is None and parse("acc[]") is None


def test_select_reads_the_means_the_runner_aggregates():
    key = labelled("acc", rate=0.25)
    records = [RunRecord(paper="p", experiment="e", config={}, seed=s, code_version="", mode="quick", status="ok",
                         metrics={key: v})
               for s, v in enumerate((0.5, 0.7))]
    summary = aggregate(records)
    assert key + "_std" in summary
    assert select(summary, "acc") == [({"rate": 0.25}, pytest.approx(0.6))]


def test_a_label_may_be_called_name():
    assert select({labelled("m", name="x"): 1.0}, "m", name="x") == [({"name": "x"}, 1.0)]


@pytest.mark.parametrize("name", ["", "a b", "a[b", "a]", "a,b", "a=b", 3, None])
def test_bad_metric_name_raises(name):
    with pytest.raises(ValueError, match="metric name"):
        labelled(name, d=1)
    with pytest.raises(ValueError, match="metric name"):
        select({}, name)


@pytest.mark.parametrize("value", ["", "a,b", "a=b", "a]", "[a", "a b", "2", "0.1", "nan", "inf", "1e5", "True",
                                   "1_000"])
def test_string_value_that_breaks_or_misreads_raises(value):
    with pytest.raises(ValueError, match="label v"):
        labelled("m", v=value)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), None, [1], (1, 2)])
def test_bad_value_raises(value):
    with pytest.raises(ValueError, match="label v"):
        labelled("m", v=value)


def test_bad_label_name_and_empty_labels_raise():
    with pytest.raises(ValueError, match="label name"):
        labelled("m", **{"a-b": 1})
    with pytest.raises(ValueError, match="label name"):
        select({}, "m", **{"a b": 1})
    with pytest.raises(ValueError, match="at least one label"):
        labelled("m")
    with pytest.raises(ValueError, match="label v"):
        select({}, "m", v="a,b")
