"""The package's structure holds, read statically from the imports (``ast``) of ``src/srtopo``: the folders import
each other without a cycle, nothing in the product imports the experiments, ``pyspark`` is imported only under
``srtopo/runners/spark`` and ``clingo.Control`` used in one module, the IR imports neither Spark nor clingo; and no
comment points at planning notes."""
from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
# the graph is read by the script that draws docs/import-graph.png: one reading of the imports for both
_spec = importlib.util.spec_from_file_location("import_graph", ROOT / "scripts" / "import_graph.py")
graph_of = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(graph_of)
folder, imports, modules = graph_of.folder, graph_of.imports, graph_of.modules

MODULES = modules(SRC / "srtopo")
IMPORTS = {name: imports(path, name) for name, path in MODULES.items()}
EXPERIMENTS = modules(ROOT / "experiments")
MODULE_GRAPH = graph_of.module_graph(MODULES)


def project_edges(name: str) -> set[str]:
    """The modules of the package that ``name`` imports."""
    return set(MODULE_GRAPH.successors(name))


def folder_graph() -> nx.DiGraph:
    return graph_of.folder_graph(MODULE_GRAPH)


def test_no_import_cycle_among_the_projects_modules():
    cycles = list(nx.simple_cycles(MODULE_GRAPH))
    assert not cycles, f"import cycles: {cycles[:3]}"
    assert MODULE_GRAPH.number_of_edges() > 100     # the graph was really built


def test_the_folders_import_each_other_without_a_cycle():
    graph = folder_graph()
    assert {"srtopo.ir", "srtopo.io", "srtopo.consistency", "srtopo.rules", "srtopo.streamlog", "srtopo.runners",
            "srtopo.cli", "srtopo.solving"} <= set(graph)
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, "folder import cycles: " + "; ".join(
        " -> ".join(c + [c[0]]) + " (" + ", ".join(
            f"{a}->{b}: {sorted(m for m in MODULES if folder(m) == a and any(folder(t) == b for t in project_edges(m)))}"
            for a, b in zip(c, c[1:] + c[:1])) + ")" for c in cycles[:3])
    assert graph.has_edge("srtopo.rules", "srtopo.ir") and graph.has_edge("srtopo.cli", "srtopo.runners")


def test_no_product_module_imports_the_experiments():
    users = {name: sorted(f for f in found if f.split(".")[0] == "experiments") for name, found in IMPORTS.items()}
    assert not {name: found for name, found in users.items() if found}


def test_pyspark_is_imported_only_under_the_spark_runner():
    users = {name for name, found in IMPORTS.items() if any(f == "pyspark" or f.startswith("pyspark.") for f in found)}
    assert users and all(name.startswith("srtopo.runners.spark.") for name in users), users


def test_clingo_control_is_used_in_one_module():
    users = {name for name, path in MODULES.items() if re.search(r"\bControl\(", path.read_text(encoding="utf-8"))}
    assert users == {"srtopo.solving.control"}


def test_the_ir_imports_no_spark_no_clingo_and_no_topology_kind():
    ir = {name: found for name, found in IMPORTS.items() if folder(name) == "srtopo.ir"}
    assert {"srtopo.ir.topology", "srtopo.ir.records", "srtopo.ir.lateness"} <= set(ir)
    for name, found in ir.items():
        assert not {f for f in found if f.split(".")[0] in ("pyspark", "py4j", "clingo")}, name
        assert not {f for f in found if f.startswith("srtopo.") and folder(f) not in (
            "srtopo.ir", "srtopo.errors", "srtopo.concepts")}, name


KIND_FOLDERS = {"srtopo.consistency", "srtopo.rules", "srtopo.streamlog"}

#: folder -> folders it must never import: the front ends stand apart (what both need from a logic program is
#: ``logic``, below both), and a kind's package does not depend on the runners that run it (calibration, which
#: measures runners, is a folder above both)
FORBIDDEN = {"srtopo.streamlog": {"srtopo.rules"}, "srtopo.rules": {"srtopo.streamlog"},
             "srtopo.logic": {"srtopo.rules", "srtopo.streamlog", "srtopo.runners", "srtopo.consistency"},
             "srtopo.consistency": {"srtopo.runners", "srtopo.calibration"}}


@pytest.mark.parametrize("source", sorted(FORBIDDEN))
def test_front_ends_stand_apart_and_kinds_do_not_import_their_runners(source):
    offenders = {name: sorted(t for t in project_edges(name) if folder(t) in FORBIDDEN[source])
                 for name in MODULES if folder(name) == source}
    assert any(folder(name) == source for name in MODULES), source
    assert not {name: found for name, found in offenders.items() if found}, offenders


def test_the_runners_dispatch_through_the_registry_of_kinds():
    """The runners import no topology kind and never branch on one; only a kind's own Spark job (named in
    ``srtopo.kinds``) imports its kind, and no other."""
    from srtopo.kinds import KINDS
    jobs = {kind.spark: kind.name for kind in KINDS.values() if kind.spark}
    assert set(jobs) <= set(MODULES) and len(jobs) >= 2
    for name in MODULES:
        if not name.startswith("srtopo.runners"):
            continue
        reached = {folder(t) for t in project_edges(name)} & KIND_FOLDERS
        allowed = {"srtopo." + jobs[name]} if name in jobs else set()
        assert reached <= allowed, f"{name} imports {sorted(reached - allowed)}"
        text = MODULES[name].read_text(encoding="utf-8")
        assert not re.search(r"\bkind\s*[!=]=|[!=]=\s*\"(consistency|rules|streamlog)\"", text), \
            f"{name} branches on the topology kind"
        assert not re.search(r"^class \w*(Checker|Reasoner|Evaluator)\b", text, re.M), name


def test_every_registered_kind_brings_a_compiler_and_a_local_executor():
    import importlib

    from srtopo.kinds import KINDS
    assert {"consistency", "rules", "streamlog"} <= set(KINDS)
    for kind in KINDS.values():
        executor = kind.local_executor()
        assert executor.SOURCES and callable(executor.run) and callable(executor.stopped_note), kind.name
        module, function = kind.compiler.split(":")
        assert callable(getattr(importlib.import_module(module), function)), kind.name
        assert kind.local.startswith(f"srtopo.{kind.name}.") and module.startswith(f"srtopo.{kind.name}.")


def test_the_only_installed_top_level_name_is_srtopo(tmp_path):
    text = (ROOT / "setup.cfg").read_text()
    assert re.search(r"^package_dir =\n\s+=src$", text, re.M) and re.search(r"^where = src$", text, re.M)
    assert sorted(p.name for p in SRC.iterdir() if not p.name.endswith(".egg-info")) == ["srtopo"]
    for name in ("topology", "ontology", "experiments"):     # the old folders, the checkout's experiments
        proc = subprocess.run([sys.executable, "-c", f"import {name}"], cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode != 0 and f"No module named '{name}'" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "srtopo", "--help"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0 and "compile" in proc.stdout and "reason" in proc.stdout


def test_comments_cite_papers_by_title_not_planning_notes():
    pattern = re.compile(r"DESIGN|\bseed 00\d|\bthe issue\b|\bissue #?\d")
    offenders = []
    for top in (SRC, ROOT / "experiments", ROOT / "tests", ROOT / "scripts", ROOT / "docs"):
        for path in top.rglob("*"):
            if path.suffix in (".py", ".md", ".sh") and "results" not in path.parts and path != Path(__file__):
                for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                    if pattern.search(line):
                        offenders.append(f"{os.path.relpath(path, ROOT)}:{number}: {line.strip()[:80]}")
    assert not offenders, "\n".join(offenders[:20])


@pytest.mark.slow
def test_no_eval_pickle_or_shell_anywhere_in_the_package_or_the_experiments():
    """Stream data and programs are parsed, never run: no eval or exec, no pickle (or marshal, shelve), no
    shell (``shell=True``, ``os.system``, ``os.popen``)."""
    offenders = []
    for name, path in {**MODULES, **EXPERIMENTS}.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        file = os.path.relpath(path, ROOT)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else \
                    f"{getattr(func.value, 'id', '')}.{func.attr}" if isinstance(func, ast.Attribute) else ""
                if called in ("eval", "exec", "os.system", "os.popen"):
                    offenders.append(f"{file}:{node.lineno}: {called}()")
                if any(k.arg == "shell" and getattr(k.value, "value", False) is True for k in node.keywords):
                    offenders.append(f"{file}:{node.lineno}: shell=True")
        found = IMPORTS[name] if name in IMPORTS and MODULES[name] == path else imports(path, name)
        offenders += [f"{file}: imports {m}" for m in found
                      if m.split(".")[0] in ("pickle", "marshal", "shelve", "dill", "cloudpickle")]
    assert not offenders, "\n".join(offenders)


def test_the_import_graph_script_draws_the_folders(tmp_path, capsys):
    """``scripts/import_graph.py`` (which drew docs/import-graph.png) still runs on the code as it is."""
    assert graph_of.main(["--out", str(tmp_path / "graph.png")]) == 0
    assert (tmp_path / "graph.png").stat().st_size > 10_000
    assert "runners          -> rules" in capsys.readouterr().out


def test_every_registered_runner_offers_what_the_command_line_calls():
    """The CLI reads a runner's name, summary, flags and options only through the protocol; the Spark runner is
    also a streaming runner (``start``), as the latency experiments use it."""
    import argparse

    from srtopo.runners import RUNNERS, get_runner
    from srtopo.runners.protocol import Runner, StreamingRunner
    for name in RUNNERS:
        runner = get_runner(name)
        assert isinstance(runner, Runner), name
        parser = argparse.ArgumentParser()
        type(runner).add_arguments(parser)
        options = type(runner).options_from_args(parser.parse_args([]))
        assert isinstance(options, runner.options_type) and runner.summary
        # --checkpoint is added for every command that runs a topology; only the runners that keep one claim it
        assert set(runner.flag_kinds) - {"checkpoint"} <= {a.dest for a in parser._actions}, name
    assert isinstance(get_runner("spark"), StreamingRunner) and not isinstance(get_runner("local"), StreamingRunner)
