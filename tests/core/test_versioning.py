"""Code versions."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_code_version_covers_imported_field_packages(toy):
    from icml24.core.versioning import _imported_subpackages, code_version

    source = "from icml24.graph import X\nimport icml24.data.graphs\nfrom icml24.core import Paper\nimport numpy\n"
    assert _imported_subpackages(source) == {"graph", "data"}
    assert code_version(toy.square) == code_version(toy.slow)  # same module, same code
    assert code_version(toy.square).startswith("0.")


def test_two_methods_of_one_field_do_not_share_a_version():
    from icml24.core.versioning import code_files

    root = ROOT / "src" / "icml24"
    genco = code_files("from icml24.generative import GenCO\n", root)
    rpg = code_files("from icml24.generative import RuleBasedPlanner\n", root)
    assert root / "generative" / "genco" / "layer.py" in genco and root / "generative" / "rpg" / "unet.py" in rpg
    assert not any("rpg" in f.parts for f in genco) and not any("genco" in f.parts for f in rpg)
    assert root / "generative" / "__init__.py" in genco and root / "_validation.py" in genco
    est = code_files("from icml24.llm import GPT\n", root)  # exported by the subpackage's own __init__ (".est")
    assert root / "llm" / "est" / "model.py" in est and not any("act" in f.parts for f in est)
    whole = code_files("import icml24.generative\n", root)  # an import the table cannot resolve takes the field
    assert genco | rpg <= whole
