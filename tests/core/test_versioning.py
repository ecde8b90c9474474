"""Code versions."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_code_version_covers_imported_field_packages(toy):
    from icml24.core.versioning import _imported_subpackages, code_version

    source = "from icml24.graph import X\nimport icml24.data.graphs\nfrom icml24.core import Paper\nimport numpy\n"
    assert _imported_subpackages(source) == {"graph", "data"}
    assert code_version(toy.square) == code_version(toy.slow)  # same module, same code
    assert code_version(toy.square).startswith("0.")
