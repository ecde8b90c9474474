import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_starts_with_the_two_commands():
    text = README.read_text()
    first_block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in first_block.splitlines() if line.strip()]
    assert commands == ["make reproduce", "make test"]


def test_readme_library_example_runs(capsys):
    code = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})
    accuracy = float(capsys.readouterr().out.split()[-1])
    assert accuracy > 0.8


def test_paper_counts_are_generated_from_the_registry():
    import subprocess
    import sys

    root = README.parent
    proc = subprocess.run([sys.executable, str(root / "tools" / "sync_counts.py"), "--check"], capture_output=True,
                          text=True, cwd=root)
    assert proc.returncode == 0, proc.stderr


def _readme_commands() -> list[list[str]]:
    import shlex

    text = README.read_text()
    section = text[text.index("## The command line"):]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [shlex.split(line.split("#")[0])[1:] for line in block.splitlines() if line.startswith("icml24 ")]


def test_every_readme_command_is_accepted(tmp_path, capsys):
    """Each command of the README's command-line section, as written; long ones with --dry-run (plan, no work)."""
    from icml24.cli import main
    from icml24.core.store import Store

    store = tmp_path / "readme.sqlite"
    Store(store).close()
    commands = _readme_commands()
    assert len(commands) >= 8
    for argv in commands:
        extra = ["--store", str(store)] if argv[0] in ("list", "run", "reproduce", "sweep", "report") else []
        if argv[0] in ("run", "reproduce", "sweep"):
            extra.append("--dry-run")
        if argv[0] == "report":
            argv = [a if a != "results" else str(tmp_path / "report") for a in argv]
        code = main([*argv, *extra])
        assert code == 0, f"`icml24 {' '.join(argv)}` exited {code}: {capsys.readouterr().err}"


def test_the_method_table_is_current():
    """README's "Where each method lives" is what the paper modules import (python tools/method_table.py)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("method_table", README.parent / "tools" / "method_table.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    readme = README.read_text()
    assert tool.rewrite(readme) == readme, "the README's method table is stale: run python tools/method_table.py"
    assert readme.count("| rp | `icml24.graph.rp` | `GeneralizedRP`, `ResidualPropagation` |") == 1


def _data_forms() -> set[str]:
    """Every ICML24_DATA=... value the README and the docs show a user (relative or absolute)."""
    texts = [README.read_text()] + [p.read_text() for p in (README.parent / "docs").rglob("*.md")]
    return {m for text in texts for m in re.findall(r"ICML24_DATA=([^\s`$\"')]+)", text)}


def test_every_data_form_the_docs_show_serves_a_test_that_changes_folder():
    """The README's own `ICML24_DATA=../shared/data make test`: a relative form names the folder from the repository,
    and a test that changes folder (and the CLI it runs there) must still read it (tests/conftest.py makes it
    absolute; so does the Makefile). Runs one such test in a fresh pytest with each form."""
    import os
    import subprocess
    import sys

    root = README.parent
    forms = _data_forms()
    assert "../shared/data" in forms
    for form in sorted(forms):
        if not (root / form / "Cora" / "raw").is_dir():
            continue  # an example path of the docs' that names no folder on this machine
        env = {**os.environ, "ICML24_DATA": form}
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                               "tests/core/test_report.py::test_report_from_another_folder_keeps_figures_and_counts_not_run"],
                              cwd=root, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"ICML24_DATA={form}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
