"""The package's structure holds: one import root, no import cycle, pyspark and clingo.Control each imported in
one place, an IR without engine imports, no comment pointing at planning notes."""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
#: the folders that make up the package srtopo (setup.cfg package_dir)
PACKAGE_DIRS = {"srtopo": ROOT / "srtopo", "srtopo.topology": ROOT / "topology", "srtopo.ontology": ROOT / "ontology",
                "srtopo.rules": ROOT / "rules", "srtopo.streamlog": ROOT / "streamlog",
                "srtopo.experiments": ROOT / "experiments"}


def modules() -> dict[str, Path]:
    out = {}
    for package, folder in PACKAGE_DIRS.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join((package,) + parts)] = path
    return out


def imports(path: Path, name: str) -> set[str]:
    """Every module named by an import statement anywhere in the file (functions included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:
                base = ".".join(name.split(".")[:-node.level] + [node.module])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


MODULES = modules()
IMPORTS = {name: imports(path, name) for name, path in MODULES.items()}


def test_no_import_cycle_among_the_projects_modules():
    graph = nx.DiGraph()
    graph.add_nodes_from(MODULES)
    for name, found in IMPORTS.items():
        for target in found:
            if target in MODULES and target != name and not name.startswith(target + "."):
                graph.add_edge(name, target)
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, f"import cycles: {cycles[:3]}"
    assert graph.number_of_edges() > 100     # the graph was really built


def test_pyspark_is_imported_only_by_the_spark_package():
    users = {name for name, found in IMPORTS.items() if any(f == "pyspark" or f.startswith("pyspark.") for f in found)}
    assert users and all(name.startswith("srtopo.topology.spark.") for name in users), users


def test_clingo_control_is_used_only_by_the_solver():
    users = {name for name, path in MODULES.items() if re.search(r"\bControl\(", path.read_text(encoding="utf-8"))}
    assert users == {"srtopo.rules.solver"}


def test_the_ir_imports_no_engine_and_no_ontology():
    found = IMPORTS["srtopo.topology.ir"]
    assert not {f for f in found if f.split(".")[0] in ("pyspark", "clingo")}
    assert not {f for f in found if f.startswith(("srtopo.ontology", "srtopo.rules"))}


def test_the_only_installed_top_level_name_is_srtopo(tmp_path):
    text = (ROOT / "setup.cfg").read_text()
    mapped = re.findall(r"^\s+(\S+) = \S+$", text.split("package_dir =")[1].split("packages =")[0], re.M)
    listed = re.findall(r"^\s+(srtopo\S*|\w+)$", text.split("packages =")[1].split("install_requires")[0], re.M)
    assert {p.split(".")[0] for p in mapped + listed} == {"srtopo"}
    for cwd in (tmp_path, ROOT):     # elsewhere: not found; in the checkout: the folder says what to import
        proc = subprocess.run([sys.executable, "-c", "import topology"], cwd=cwd, capture_output=True, text=True)
        assert proc.returncode != 0
        assert ("No module named 'topology'" in proc.stderr) or ("import srtopo.topology" in proc.stderr)
    proc = subprocess.run([sys.executable, "-m", "srtopo", "--help"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0 and "compile" in proc.stdout and "reason" in proc.stdout


def test_comments_cite_papers_by_title_not_planning_notes():
    pattern = re.compile(r"DESIGN|\bseed 00\d|\bthe issue\b|\bissue #?\d")
    offenders = []
    for folder in list(PACKAGE_DIRS.values()) + [ROOT / "tests", ROOT / "scripts", ROOT / "docs"]:
        for path in folder.rglob("*"):
            if path.suffix in (".py", ".md", ".sh") and "results" not in path.parts and path != Path(__file__):
                for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                    if pattern.search(line):
                        offenders.append(f"{os.path.relpath(path, ROOT)}:{number}: {line.strip()[:80]}")
    assert not offenders, "\n".join(offenders[:20])


def test_no_eval_pickle_or_shell_anywhere_in_the_package():
    """Stream data and programs are parsed, never run: no eval or exec, no pickle (or marshal, shelve), no
    shell (``shell=True``, ``os.system``, ``os.popen``)."""
    offenders = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            where = f"{os.path.relpath(path, ROOT)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else \
                    f"{getattr(func.value, 'id', '')}.{func.attr}" if isinstance(func, ast.Attribute) else ""
                if called in ("eval", "exec", "os.system", "os.popen"):
                    offenders.append(f"{where}: {called}()")
                if any(k.arg == "shell" and getattr(k.value, "value", False) is True for k in node.keywords):
                    offenders.append(f"{where}: shell=True")
        offenders += [f"{os.path.relpath(path, ROOT)}: imports {m}" for m in IMPORTS[name]
                      if m.split(".")[0] in ("pickle", "marshal", "shelve", "dill", "cloudpickle")]
    assert not offenders, "\n".join(offenders)
