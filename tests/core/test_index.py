"""The papers' static index (icml24/papers/index.json) that `icml24 list` and `icml24 show` read (issue #59)."""

from icml24.core import index


def test_the_index_is_current():
    """The index is what the paper modules declare: python tools/paper_index.py rewrites it."""
    assert index.render(index.build()) == index.index_path().read_text(encoding="utf-8"), \
        "src/icml24/papers/index.json is stale: run python tools/paper_index.py"


def test_an_entry_whose_module_changed_is_read_from_the_module(monkeypatch):
    """A paper edited since the index was written (its source hash differs), or missing from it, is described from
    its imported module: the CLI never prints a stale index."""
    e4 = index.stored()["e4"]
    monkeypatch.setattr(index, "stored", lambda package=index.PACKAGE: {"e4": {**e4, "source": "0" * 16, "title": "?"}})
    assert index.entry("e4") == e4
    monkeypatch.setattr(index, "stored", lambda package=index.PACKAGE: {})
    assert index.entry("e4") == e4


def test_entries_describe_claims_with_their_ids_and_the_extras_a_paper_needs():
    entries = index.stored()
    assert set(entries) == set(index.registry.paper_modules())
    for slug, entry in entries.items():
        assert [c["id"] for c in entry["claims"]] == list(range(1, len(entry["claims"]) + 1))
        assert entry["extras"], f"{slug} imports no field package"
    assert entries["rp"]["extras"] == ["graph"] and entries["hellinger-sdr"]["extras"] == ["sdr"]
