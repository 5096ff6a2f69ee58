"""The README's Python API example runs as printed (from the repository root, as a new user would)."""
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_python_example_runs(capsys):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(blocks[0], "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    assert "topology tex (ltm-1,1,1)" in out and '"subject":"http://x/bob","time":3' in out


def test_readme_commands_on_the_bundled_examples_run_as_printed(capsys, tmp_path):
    """Every local ``srtopo`` line of "Using it" exits 0 from the repository root (Spark's lines are run by the
    end-to-end tests; calibration is long)."""
    import shlex
    import shutil

    from srtopo.cli import main
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Using it\n.*?```bash\n(.*?)```", text, re.S).group(1)
    lines = [line.split(" #")[0].strip() for line in block.splitlines() if line.startswith("srtopo ")]
    runnable = [line for line in lines if "--engine spark" not in line and "calibrate" not in line
                and ("../shared" not in line or (ROOT.parent / "shared").exists())]
    assert len(runnable) >= 10
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    cwd = os.getcwd()
    os.chdir(tmp_path)         # what a command writes (t.json) lands beside the examples, not in the checkout
    try:
        for line in runnable:
            words = [w.replace("../shared", str(ROOT.parent / "shared")) for w in shlex.split(line)[1:]]
            target = words[words.index(">") + 1] if ">" in words else None
            words = words[:words.index(">")] if target else words
            assert main(words) == 0, line
            out = capsys.readouterr().out
            if target:
                Path(target).write_text(out, encoding="utf-8")
    finally:
        os.chdir(cwd)
