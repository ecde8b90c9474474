"""Every parity fixture is well-formed, has its test and its recorder (tests/fixtures/parity_fixture.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from parity_fixture import PARITY, load_fixture

ROOT = PARITY.parents[1]
SLUGS = sorted(p.stem for p in PARITY.glob("*.json"))


@pytest.mark.parametrize("slug", SLUGS)
def test_fixture_is_complete(slug):
    data = load_fixture(slug)
    assert data["paper"] == slug
    assert (PARITY / f"test_{slug.replace('-', '_')}.py").exists(), f"{slug}.json has no test_{slug}.py"
    assert (ROOT / data["recorded"]["script"]).exists(), f"{slug}: recorder {data['recorded']['script']} missing"


def test_load_fixture_refuses_a_fixture_without_its_source(tmp_path, monkeypatch):
    import json

    import parity_fixture

    (tmp_path / "bad.json").write_text(json.dumps({"paper": "bad", "source": {"repository": "x/y", "commit": "abc"},
                                                   "recorded": {"script": "tools/parity/x.py"}, "cases": [{}]}))
    monkeypatch.setattr(parity_fixture, "PARITY", Path(tmp_path))
    with pytest.raises(ValueError, match="commit"):
        parity_fixture.load_fixture("bad")


def test_assert_close_fails_outside_the_tolerance():
    from parity_fixture import assert_close

    assert assert_close([1.0, 2.0], [1.0, 2.0 + 1e-9], 1e-8) < 1e-8
    with pytest.raises(AssertionError, match="official"):
        assert_close([1.0, 2.0], [1.0, 2.1], 1e-3, "toy")


def test_assert_close_holds_each_entry_to_its_own_tolerance():
    from parity_fixture import assert_close

    assert assert_close([1.0, 100.0], [1.0 + 1e-9, 100.5], [1e-8, 1.0]) == pytest.approx(0.5)
    with pytest.raises(AssertionError, match="entry 0"):  # the loose entry's tolerance does not cover the tight one
        assert_close([1.0, 100.0], [1.0 + 1e-6, 100.5], [1e-8, 1.0], "toy")
    with pytest.raises(AssertionError, match="tolerances"):
        assert_close([1.0, 2.0], [1.0, 2.0], [1e-8, 1e-8, 1e-8], "toy")


def test_at_least_twelve_papers_have_a_fixture():
    """Issue #35's floor: parity fixtures for at least 12 papers whose official code runs."""
    assert len(SLUGS) >= 12, SLUGS
