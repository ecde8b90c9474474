"""Where a paper's method lives (icml24 show SLUG and the README's table read it)."""

from icml24.cli import main
from icml24.core import registry
from icml24.core.locations import main_classes, method_locations


def test_rp_lives_in_graph_rp_with_its_baselines_elsewhere():
    paper = registry.get_paper("rp")
    locations = method_locations(paper)
    assert locations["icml24.graph.rp"] == ["GeneralizedRP", "ResidualPropagation"]
    assert not any(home.startswith(("icml24.core", "icml24.data", "icml24.papers")) for home in locations)
    assert "GeneralizedRP" in main_classes(paper)


def test_show_prints_where_the_method_lives(capsys):
    assert main(["show", "rp"]) == 0
    out = capsys.readouterr().out
    assert "Where the method lives" in out and "icml24.graph.rp: GeneralizedRP, ResidualPropagation" in out


def test_a_paper_without_a_module_has_no_locations():
    assert method_locations(registry.Paper(slug="x", title="x")) == {}
