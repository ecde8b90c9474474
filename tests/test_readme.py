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
