import pytest

from icml24.core import Paper, experiment
from icml24.core.params import convert, parse_grid, parse_seeds, parse_value

PAPER = Paper(slug="tmp-params", title="t")


@experiment(PAPER, quick={"rates": [0.25, 0.5]})
def typed(ctx, rates: list[float] = (0.5,), names: list[str] = ("a",), sizes: list[int] = (1,),
          pair: tuple[int, float] = (1, 2.0), flag: bool = False, horizon: int = 10) -> dict[str, float]:
    return {}


def test_sequences_parse_by_type_hint():
    assert parse_value(typed, "rates", "0.25,0.5") == [0.25, 0.5]
    assert parse_value(typed, "names", "cora, citeseer") == ["cora", "citeseer"]
    assert parse_value(typed, "sizes", "10,20") == [10, 20]
    assert parse_value(typed, "pair", "3,0.5") == (3, 0.5)
    assert parse_value(typed, "flag", "yes") is True
    assert convert(tuple[int, ...], "1,2,3") == (1, 2, 3)


@pytest.mark.parametrize("key, text, expected", [
    ("sizes", "1,x", "expects list[int]"),
    ("rates", "", "expects list[float]"),
    ("pair", "1,2,3", "expects tuple[int, float]"),
    ("flag", "maybe", "expects bool"),
])
def test_bad_values_name_the_type(key, text, expected):
    with pytest.raises(ValueError, match=expected.replace("[", r"\[").replace("]", r"\]")):
        parse_value(typed, key, text)


def test_sweep_grid_separates_sequence_points_by_semicolon():
    grid = parse_grid(typed, ["rates=0.25,0.5;1.0", "horizon=10,20"], allow_lists=True)
    assert {"rates": [1.0], "horizon": 20} in grid and len(grid) == 4
    (single,) = parse_grid(typed, ["rates=0.25,0.5"], allow_lists=False)
    assert single == {"rates": [0.25, 0.5]}


def test_seed_lists_and_scalar_values(toy):
    assert parse_seeds("0-3") == [0, 1, 2, 3]
    assert parse_seeds("5,1,1") == [1, 5]
    for bad in ("a-b", "3-1", "", "-1"):
        with pytest.raises(ValueError, match="--seeds"):
            parse_seeds(bad)
    assert parse_value(toy.square, "x", "2.5") == 2.5
    assert parse_value(toy.square, "noisy", "true") is True
    with pytest.raises(ValueError, match="expects float"):
        parse_value(toy.square, "x", "abc")
    with pytest.raises(ValueError, match="expects int"):
        parse_value(toy.square, "repeats", "1.5")
    grid = parse_grid(toy.square, ["x=1,2", "label=u,v"], allow_lists=True)
    assert len(grid) == 4 and {"x": 2.0, "label": "v"} in grid
